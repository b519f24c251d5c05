"""SAfairKM against VfairKM in the seed's own setting (its Figure 1, Figure 8 and Table 1).

The authors' Adult (sex, J = 2) and Bank (marital, J = 3) arrays, z-scored, rows
L2-normalised, 5,000 rows subsampled; K = 10 and K = 5. SAfairKM: 30 starting labels, the four
pairs (25, 0), (20, 4), (15, 3), (5, 2), q = 1, budget 1,500, the seed's iteration counts
(Adult 2,500; Bank 8,000 for K = 10 and 1,500 for K = 5) or as many as fit in
``--minutes``. VfairKM: μ from 0 to μ_max in 20 steps, μ_max found as the seed describes
("fairness error below 0.01 or no longer decreasing": doubling from 50), one task per μ.

Reports per front: points, hypervolume (common reference: 1.05 × the largest cost of both
fronts, balance 0), balance range, wall seconds and CPU seconds (this process, and the worker
processes on a cluster) per non-dominated point, next to the seed's Table 1 CPU seconds per
point. SAfairKM runs twice: with daskfair's weak dominance filter and with the seed's strict
one (Algorithm 3, line 8: ties and duplicates stay, so the list reaches the budget of 1,500
points within a few iterations). By default everything runs in this process (the library's
default without a client); ``--workers N`` uses a LocalCluster of N worker processes.

    python benchmarks/safairkm_seed.py [--minutes 10] [--workers N] [--only adult:10]
"""

from __future__ import annotations

import argparse
import os
import time

import distributed
import numpy as np
import psutil

from _common import RESULTS, pyplot, write_result
from daskfair import VFairKMeans, pareto_front, vfairkm_front
from daskfair.datasets import load_dataset, preprocess_safairkm
from daskfair.runtime.clients import task_client

# the seed's Table 1: CPU seconds per non-dominated point (SAfairKM, VfairKM)
SEED_TABLE1 = {("adult", 10): (18.52, 40.43), ("bank", 10): (59.12, 76.29),
               ("adult", 5): (14.88, 15.08), ("bank", 5): (11.97, 50.31)}
SEED_ITERATIONS = {("adult", 10): 2500, ("bank", 10): 8000, ("adult", 5): 2500,
                   ("bank", 5): 1500}
SEED_MU_MAX = {("adult", 10): 3260, ("bank", 10): 2440, ("adult", 5): 6190,
               ("bank", 5): 4790}


def _own() -> float:
    t = psutil.Process(os.getpid()).cpu_times()
    return t.user + t.system


def cpu_seconds(client) -> tuple[float, float]:
    """CPU time (user + system) so far: this process (client and scheduler, or every thread
    of the in-process path), the worker processes."""
    if not hasattr(client, "run"):
        return _own(), 0.0
    return _own(), sum(client.run(_own).values())


def mu_max(X, s, k) -> float:
    """Double μ from 50 until the KL fairness error is < 0.01 or stops decreasing."""
    mu, best = 50.0, np.inf
    while mu < 1e6:
        err = VFairKMeans(k, fairness_weight=mu, random_state=0).fit(
            X, sensitive_features=s).fairness_error_
        if err < 0.01:
            return mu
        if not err < best:
            return mu / 2
        best, mu = err, 2 * mu
    return mu


def one(client, name: str, k: int, minutes: float) -> dict:
    d = load_dataset(f"safairkm_{name}")
    X, s = preprocess_safairkm(d.X, d.sensitive)
    out = {"dataset": name, "K": k, "n": len(X), "groups": np.bincount(s).tolist(),
           "seed_iterations": SEED_ITERATIONS[(name, k)],
           "seed_cpu_s_per_point": dict(zip(("safairkm", "vfairkm"),
                                            SEED_TABLE1[(name, k)], strict=True))}
    # warm the numba caches on every worker so that compilation is not timed
    pareto_front(X, sensitive_features=s, n_clusters=k, max_iter=2, n_init=4,
                 random_state=0, client=client)
    fronts = {}
    for key, dominance in (("safairkm", "weak"), ("safairkm_strict", "strict")):
        (c0, w0), t0 = cpu_seconds(client), time.perf_counter()
        front = pareto_front(X, sensitive_features=s, n_clusters=k, n_init=30,
                             max_iter=SEED_ITERATIONS[(name, k)], budget=1500, random_state=0,
                             time_limit=60 * minutes, dominance=dominance, client=client)
        wall, (c1, w1) = time.perf_counter() - t0, cpu_seconds(client)
        cpu = (c1 - c0) + (w1 - w0)
        fronts[key] = front
        out[key] = {"points": len(front), "iterations": front.history[-1]["iteration"],
                    "dominance": dominance,
                    "wall_s": wall, "cpu_s": cpu, "client_cpu_s": c1 - c0,
                    "worker_cpu_s": w1 - w0, "wall_s_per_point": wall / len(front),
                    "cpu_s_per_point": cpu / len(front),
                    "balance_range": [float(front.balance[0]), float(front.balance[-1])],
                    "cost_range": [float(front.cost[0]), float(front.cost[-1])]}
    front, strict = fronts["safairkm"], fronts["safairkm_strict"]
    (c0, w0), t0 = cpu_seconds(client), time.perf_counter()
    top = mu_max(X, s, k)
    mus = np.linspace(0, top, 20)
    vf = vfairkm_front(X, sensitive_features=s, n_clusters=k, fairness_weights=mus, random_state=0,
                       client=client)
    wall, (c1, w1) = time.perf_counter() - t0, cpu_seconds(client)
    cpu = (c1 - c0) + (w1 - w0)
    out["vfairkm"] = {"points": len(vf), "mu_max": top, "seed_mu_max": SEED_MU_MAX[(name, k)],
                      "wall_s": wall, "cpu_s": cpu, "wall_s_per_point": wall / len(vf),
                      "cpu_s_per_point": cpu / len(vf),
                      "balance_range": [float(vf.balance[0]), float(vf.balance[-1])],
                      "cost_range": [float(vf.cost[0]), float(vf.cost[-1])]}
    ref = (1.05 * max(front.cost.max(), vf.cost.max(), strict.cost.max()), 0.0)
    out["reference"] = ref
    out["safairkm"]["hypervolume"] = front.hypervolume(ref)
    out["safairkm_strict"]["hypervolume"] = strict.hypervolume(ref)
    out["vfairkm"]["hypervolume"] = vf.hypervolume(ref)
    out["speedup_cpu_per_point_vs_seed"] = (SEED_TABLE1[(name, k)][0]
                                            / out["safairkm"]["cpu_s_per_point"])
    out["speedup_cpu_per_point_vs_seed_strict"] = (
        SEED_TABLE1[(name, k)][0] / out["safairkm_strict"]["cpu_s_per_point"])
    out["fronts"] = {"safairkm": [front.cost, front.balance], "vfairkm": [vf.cost, vf.balance],
                     "safairkm_strict": [strict.cost, strict.balance]}
    return out


def plot(runs: list[dict]) -> None:
    plt = pyplot()
    fig, axes = plt.subplots(1, len(runs), figsize=(4.2 * len(runs), 3.6), squeeze=False)
    for ax, r in zip(axes[0], runs, strict=True):
        for key, style in (("safairkm", "o"), ("vfairkm", "s")):
            cost, bal = r["fronts"][key]
            ax.plot(cost, bal, style, ms=3, label=f"{key} ({len(cost)} pts)")
        ax.set_title(f"{r['dataset'].title()} K={r['K']}")
        ax.set_xlabel("clustering cost f1")
        ax.set_ylabel("balance f2")
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(RESULTS / "safairkm_seed.png", dpi=120)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--minutes", type=float, default=10.0, help="cap per SAfairKM front")
    ap.add_argument("--workers", type=int, default=None,
                    help="worker processes of a LocalCluster (default: in this process)")
    ap.add_argument("--only", nargs="*", default=None, help="e.g. adult:10 bank:5")
    args = ap.parse_args()
    todo = [("adult", 10), ("bank", 10), ("adult", 5), ("bank", 5)]
    if args.only:
        todo = [(o.split(":")[0], int(o.split(":")[1])) for o in args.only]
    if args.workers is None:
        client = task_client()
        runs = [one(client, name, k, args.minutes) for name, k in todo]
    else:
        with (distributed.LocalCluster(n_workers=args.workers, threads_per_worker=1,
                                       dashboard_address=None) as cluster,
              distributed.Client(cluster) as client):
            runs = [one(client, name, k, args.minutes) for name, k in todo]
    plot(runs)
    write_result("safairkm_seed", {"workers": args.workers, "minutes_cap": args.minutes,
                                   "runs": runs})


if __name__ == "__main__":
    main()
