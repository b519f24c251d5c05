"""A SAfairKM Pareto front on synthetic blobs, next to VfairKM's fits
==================================================================

2,000 points in which one group sits mostly in some of the blobs, so plain k-means makes
clusters dominated by one group. ``pareto_front`` builds the whole cost/balance front in one
run (in this process: SAfairKM's tasks hold every row, so it needs no cluster); VfairKM needs
one fit per penalty μ. Each point of the front is a clustering: pick one by the balance you
need.

Run it from the repository root::

    python examples/fair_blobs_front.py
"""

import matplotlib.pyplot as plt
import numpy as np

from daskfair import make_fair_blobs, pareto_front, vfairkm_front


def main() -> None:
    X, s, _ = make_fair_blobs(2000, n_features=2, n_clusters=4, group_bias=0.8, random_state=0)
    X, s = np.asarray(X), np.asarray(s)

    front = pareto_front(X, sensitive_features=s, n_clusters=4, n_init=10, max_iter=60,
                         random_state=0)
    base = vfairkm_front(X, sensitive_features=s, n_clusters=4,
                         fairness_weights=[0, 100, 1000, 5000], random_state=0)
    print(f"SAfairKM: {len(front.cost)} points, cost {front.cost.min():.3f}-"
          f"{front.cost.max():.3f}, balance {front.balance.min():.3f}-{front.balance.max():.3f}")
    print(f"VfairKM:  {len(base.cost)} points, balance {base.balance.min():.3f}-"
          f"{base.balance.max():.3f}")
    reference = (1.05 * front.cost.max(), 0.0)
    print(f"hypervolume: SAfairKM {front.hypervolume(reference):.4f}, "
          f"VfairKM {base.hypervolume(reference):.4f}")

    fairest = front.labels[int(np.argmax(front.balance))]
    print("cluster sizes of the fairest point:", np.bincount(fairest, minlength=4))

    ax = front.plot(label="SAfairKM")
    base.plot(ax=ax, label="VfairKM")
    ax.legend()
    plt.show()


if __name__ == "__main__":
    main()
