"""SAfairKM and VfairKM fronts on four synthetic sets shaped like the seed's (its Figure 2).

400 points in 2-D, two groups, K = 2: "equal" has 200 + 200 points, "unequal" 300 + 100;
"ds1" gives each group one Gaussian blob (the groups sit apart, so k-means splits them),
"ds2" gives each group two blobs stacked vertically, the groups side by side (k-means again
splits by group, but a fair clustering can cut the four blobs two ways). The seed's exact
points are not published; these follow its description. SAfairKM: 10
starts, 3 pairs, 400 iterations (the seed's Figures 3, 5-7); VfairKM: 20 values of μ up to
μ_max found by doubling (as in ``safairkm_seed.py``).

    python benchmarks/safairkm_synthetic.py [--workers 2]
"""

from __future__ import annotations

import argparse
import time

import distributed
import numpy as np
from safairkm_seed import mu_max

from _common import RESULTS, pyplot, write_result
from daskfair import pareto_front, vfairkm_front

PAIRS = [(25, 0), (15, 3), (5, 2)]


def synthetic(name: str, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    sizes = (200, 200) if name.startswith("equal") else (300, 100)
    if name.endswith("ds1"):  # one blob per group, 4 std apart
        centers = [[(0.0, 0.0)], [(4.0, 0.0)]]
    else:  # two blobs per group, stacked; the groups side by side
        centers = [[(0.0, 0.0), (0.0, 3.0)], [(5.0, 0.0), (5.0, 3.0)]]
    X, g = [], []
    for group, (n, cs) in enumerate(zip(sizes, centers, strict=True)):
        for i, c in enumerate(cs):
            m = n // len(cs) + (i < n % len(cs))
            X.append(rng.normal(c, 0.7, size=(m, 2)))
            g.append(np.full(m, group))
    return np.vstack(X), np.concatenate(g)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args()
    names = ["equal_ds1", "unequal_ds1", "equal_ds2", "unequal_ds2"]
    runs = []
    with (distributed.LocalCluster(n_workers=args.workers, threads_per_worker=1,
                                   dashboard_address=None) as cluster,
          distributed.Client(cluster) as client):
        for name in names:
            X, g = synthetic(name)
            t0 = time.perf_counter()
            front = pareto_front(X, sensitive_features=g, n_clusters=2, update_pairs=PAIRS,
                                 n_init=10, max_iter=400, random_state=0, client=client)
            t_sa = time.perf_counter() - t0
            t0 = time.perf_counter()
            top = mu_max(X, g, 2)
            vf = vfairkm_front(X, sensitive_features=g, n_clusters=2,
                               fairness_weights=np.linspace(0, top, 20), random_state=0,
                               client=client)
            t_vf = time.perf_counter() - t0
            ref = (1.05 * max(front.cost.max(), vf.cost.max()), 0.0)
            runs.append({
                "dataset": name, "groups": np.bincount(g).tolist(),
                "safairkm": {"points": len(front), "wall_s": t_sa,
                             "hypervolume": front.hypervolume(ref),
                             "balance_range": [front.balance[0], front.balance[-1]],
                             "front": [front.cost, front.balance]},
                "vfairkm": {"points": len(vf), "wall_s": t_vf, "mu_max": top,
                            "hypervolume": vf.hypervolume(ref),
                            "balance_range": [vf.balance[0], vf.balance[-1]],
                            "front": [vf.cost, vf.balance]},
                "reference": ref, "data": [X, g],
            })
    plt = pyplot()
    fig, axes = plt.subplots(2, 4, figsize=(15, 7))
    for col, r in enumerate(runs):
        X, g = r["data"]
        for grp, marker in ((0, "o"), (1, "^")):
            axes[0, col].plot(*X[g == grp].T, marker, ms=2, ls="", label=f"group {grp}")
        axes[0, col].set_title(r["dataset"])
        axes[0, col].legend(fontsize=7)
        for key, style in (("safairkm", "o"), ("vfairkm", "s")):
            cost, bal = r[key]["front"]
            axes[1, col].plot(cost, bal, style, ms=3, label=f"{key} ({len(cost)})")
        axes[1, col].set_xlabel("cost f1")
        axes[1, col].set_ylabel("balance f2")
        axes[1, col].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(RESULTS / "safairkm_synthetic.png", dpi=110)
    for r in runs:
        del r["data"]
    write_result("safairkm_synthetic", {"workers": args.workers, "pairs": PAIRS, "runs": runs})


if __name__ == "__main__":
    main()
