"""SD / error trade-off curves of all FKR methods, one plot per data set.

On the authors' splits (the first ``--trials``), the test SD and error of: FKR-F²E (paper
objective) over k; FKR-F²E (mean_discrepancy) over k and over its fairness parameter γ
(at the default k = n/250 capped at the rank); and FKR-F²E (both objectives) and kernel ridge
over the relative ridge penalty α in [1e-8, 1e-2];
FKRR over μ; unconstrained kernel ridge; the constant predictor. Each point is a mean over
the trials; each (data set, method, setting, trial) is a task on the cluster.

    python benchmarks/fkr_tradeoff.py [--trials 10]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from _common import RESULTS, pyplot, write_result
from daskfair.cli.paper.fkr_paper import PAPER_KERNELS, run_method
from daskfair.datasets import load_dataset
from daskfair.runtime.clients import client_context

K_VALUES = (1, 2, 5, 10, 20, 30)  # within the kernels' numerical ranks (≥ 36 here)
GAMMAS = (0.0, 0.1, 1.0, 10.0, 100.0, 1000.0, None)  # None: exact constraint
MUS = (0.0, 0.01, 0.1, 1.0, 10.0, 100.0, 1000.0)
# the ridge penalty relative to tr(K) (daskfair's alpha), from almost none to near-constant
ALPHAS = (1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2)


def settings() -> list[tuple[str, dict]]:
    out = [("constant", {})]
    out += [("FKR-F2E (paper) over k", {"k": k}) for k in K_VALUES]
    out += [("FKR-F2E (mean_discrepancy) over k", {"k": k}) for k in K_VALUES]
    out += [("FKR-F2E (mean_discrepancy) over γ", {"fairness": g}) for g in GAMMAS]
    out += [("FKRR over μ", {"mu": mu}) for mu in MUS]
    out += [("kernel ridge", {})]
    out += [(f"{m} over α", {"alpha": a}) for m in ("FKR-F2E (paper)",
                                                   "FKR-F2E (mean_discrepancy)",
                                                   "kernel ridge") for a in ALPHAS]
    return out


def run(data, name, method, setting, trial, n_landmarks):
    """One (data set, method, setting, split) as a task."""
    train = data["splits"][trial]
    base = method.split(" over ")[0]
    out = run_method(base, data["X"], data["y"], data["s"], train, kernel=PAPER_KERNELS[name],
                     n_fair_features=setting.get("k"),
                     fairness_weight=setting.get("fairness"),
                     fkrr_fairness_weight=setting.get("mu", 0.0),
                     relative_alpha=setting.get("alpha", 1e-4),
                     n_landmarks=n_landmarks, random_state=trial)
    return out["disparity"], out["error"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--trials", type=int, default=10)
    ap.add_argument("--landmarks", type=int, default=1000)
    ap.add_argument("--workers", type=int, default=None)
    args = ap.parse_args()
    grid = settings()
    t0 = time.perf_counter()
    with client_context(n_workers=args.workers, dashboard_address=None) as client:
        futures = {}
        for name in PAPER_KERNELS:
            ds = load_dataset(name)
            # a list, not a dict: scattering a dict would use its keys as task keys and
            # every data set would share the first one's "X"
            X, y, s, splits = client.scatter([ds.X, ds.y.astype(int), ds.sensitive, ds.splits],
                                             broadcast=True, hash=False)
            data = {"X": X, "y": y, "s": s, "splits": splits}
            for i, (method, setting) in enumerate(grid):
                for t in range(args.trials):
                    futures[(name, i, t)] = client.submit(
                        run, data, name, method, setting, t, args.landmarks,
                        key=f"tradeoff-{name}-{i}-{t}")
        results = dict(zip(futures, client.gather(list(futures.values())), strict=True))
    curves = {}
    for name in PAPER_KERNELS:
        curves[name] = []
        for i, (method, setting) in enumerate(grid):
            vals = np.array([results[(name, i, t)] for t in range(args.trials)])
            curves[name].append({"method": method, "setting": setting,
                                 "sd": vals[:, 0].mean(), "error": vals[:, 1].mean()})
    write_result("fkr_tradeoff", {"trials": args.trials, "landmarks": args.landmarks,
                                  "wall_seconds": time.perf_counter() - t0, "curves": curves})
    plt = pyplot()
    fig, axes = plt.subplots(1, len(curves), figsize=(5.5 * len(curves), 4.5))
    for ax, (name, pts) in zip(axes, curves.items(), strict=True):
        for method in dict.fromkeys(p["method"] for p in pts):
            sel = [p for p in pts if p["method"] == method]
            style = "k*" if method == "constant" else "o-"
            ax.plot([p["error"] for p in sel], [p["sd"] for p in sel], style, label=method,
                    markersize=9 if method == "constant" else 4)
        ax.set(title=name, xlabel="test error", ylabel="statistical disparity")
    axes[0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(RESULTS / "fkr_tradeoff.png", dpi=120)


if __name__ == "__main__":
    main()
