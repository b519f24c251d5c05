"""The cost/balance trade-off of fair k-means on Adult, by SAfairKM and by VfairKM
===============================================================================

The SAfairKM authors' Adult arrays (5 numeric features, sex as the group), z-scored, rows
L2-normalised, 5,000 rows sampled, K = 10 — the seed's setting. SAfairKM builds the whole
Pareto front in one run on the Dask cluster (a LocalCluster is started if there is none);
VfairKM needs one fit per penalty μ. The script prints both fronts' extremes and
hypervolumes, three clusterings picked from the front, and writes the plot to
``safairkm_adult_front.png`` (needs matplotlib: ``pip install daskfair[plot]``).

Run it from the repository root::

    python examples/safairkm_adult.py [--max-iter 300] [--out safairkm_adult_front.png]
"""

import argparse

import numpy as np

from daskfair import pareto_front, vfairkm_front
from daskfair.cli.plots import plot_fronts
from daskfair.datasets import load_dataset, preprocess_safairkm


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--max-iter", type=int, default=300)
    ap.add_argument("--out", default="safairkm_adult_front.png")
    args = ap.parse_args()

    d = load_dataset("safairkm_adult")
    X, sex = preprocess_safairkm(d.X, d.sensitive)
    print(f"Adult: {len(X)} rows, groups {np.bincount(sex).tolist()}, best possible "
          f"balance {np.bincount(sex).min() / np.bincount(sex).max():.3f}")

    front = pareto_front(X, sensitive_features=sex, n_clusters=10, n_init=30,
                         max_iter=args.max_iter, random_state=0)
    vf = vfairkm_front(X, sensitive_features=sex, n_clusters=10,
                       fairness_weights=np.linspace(0, 800, 9), random_state=0)
    ref = (1.05 * max(front.cost.max(), vf.cost.max()), 0.0)
    for name, f in (("SAfairKM", front), ("VfairKM", vf)):
        print(f"{name:<9} {len(f):>4} points, cost {f.cost[0]:.4f} → {f.cost[-1]:.4f}, "
              f"balance {f.balance[0]:.3f} → {f.balance[-1]:.3f}, "
              f"hypervolume {f.hypervolume(ref):.5f}")

    # three clusterings from the front: the cheapest, the fairest, and the first one that
    # reaches 90 % of the fairest balance
    pick = {"cheapest": 0, "fairest": len(front) - 1,
            "90% of max balance": int(np.argmax(front.balance >= 0.9 * front.balance[-1]))}
    labels = front.labels
    for what, i in pick.items():
        women = np.bincount(labels[i][sex == 1], minlength=10)
        sizes = np.bincount(labels[i], minlength=10)
        print(f"{what:<19} cost {front.cost[i]:.4f} balance {front.balance[i]:.3f}; "
              f"share of group 1 per cluster {np.round(women / sizes, 2).tolist()}")

    fronts = {"SAfairKM": {"cost": front.cost, "balance": front.balance},
              "VfairKM": {"cost": vf.cost, "balance": vf.balance,
                          "fairness_weight": vf.params["fairness_weight"]}}
    try:
        ax = plot_fronts(fronts, best_balance=np.bincount(sex).min() / np.bincount(sex).max())
    except ImportError as exc:  # matplotlib is the optional `plot` extra
        print(f"no plot: {exc}")
        return
    ax.set_title("Adult, K = 10")
    ax.figure.tight_layout()
    ax.figure.savefig(args.out, dpi=120)
    print(f"front plot written to {args.out}")


if __name__ == "__main__":
    main()
