"""Auditing clusterings and classifiers with daskfair's metrics
============================================================

The FCE paper's seven clustering metrics of a k-means clustering and of a label vector that
ignores the features; the fairness of a classifier's predictions (statistical disparity and
equalized odds, equal to fairlearn's); the gap between groups' mean predictions of a regressor.
Every metric takes numpy, pandas or dask inputs and reads a dask input once: the last lines
audit two million lazily generated rows without holding them.

Run it from the repository root::

    python examples/metrics_audit.py
"""

import dask.array as da
import numpy as np
from sklearn.cluster import KMeans

from daskfair import clustering_report, make_fair_blobs
from daskfair.metrics import (
    REPORT_COLUMNS,
    balance,
    demographic_parity_difference,
    equalized_odds_difference,
    regression_report,
)


def main() -> None:
    X, s, y = make_fair_blobs(3000, n_features=2, n_clusters=3, group_bias=0.8, random_state=0)
    X, s, y = np.asarray(X), np.asarray(s), np.asarray(y)
    kmeans = KMeans(3, n_init=10, random_state=0).fit_predict(X)
    blind = np.arange(3000) % 3  # every cluster mixes groups and classes alike

    print(f"{'labels':<12}" + "".join(f"{c:>7}" for c in REPORT_COLUMNS))
    for name, labels in (("k-means", kmeans), ("round robin", blind)):
        r = clustering_report(y, labels, sensitive_features=s)
        print(f"{name:<12}" + "".join(f"{r[c]:>7.3f}" for c in REPORT_COLUMNS))

    # a classifier that says 1 for the blob group 0 prefers
    pred = (kmeans == np.bincount(kmeans[s == 0]).argmax()).astype(int)
    truth = (y == 0).astype(int)
    dpd = demographic_parity_difference(truth, pred, sensitive_features=s)
    print(f"\ndemographic parity difference {dpd:.3f}, "
          f"equalized odds difference "
          f"{equalized_odds_difference(truth, pred, sensitive_features=s):.3f}")
    print("regression:", regression_report(X[:, 0], X[:, 0] + 0.5 * s, sensitive_features=s))

    _, big_s, big_y = make_fair_blobs(2_000_000, n_features=2, n_clusters=3, chunks=250_000,
                                      random_state=0)
    round_robin = da.arange(2_000_000, chunks=big_y.chunks) % 3
    print(f"\n{big_y.shape[0]:,} rows in {big_y.numblocks[0]} blocks, never in memory at once:")
    print(f"balance of the true blobs {balance(big_y, sensitive_features=big_s):.4f}")
    print(f"balance of round robin    "
          f"{balance(round_robin, sensitive_features=big_s):.4f}")


if __name__ == "__main__":
    main()
