"""The same seed, the same result: whatever the chunking
======================================================

daskfair's results depend on the data and the seed only: not on how the rows are cut into
blocks, nor on how many workers run them. Sums over rows run over canonical blocks set by the
data's shape, and the randomness is keyed by those blocks, by iteration and by member. Here
one data set is fitted three times — as a numpy array and as dask arrays in blocks of 250 and
of 1,000 rows — by FairKernelClassifierCV and by the fair clustering ensemble, and the results
are compared bit for bit (``tests/test_cluster_determinism.py`` does the same on 1, 2 and 4
worker processes).

Run it from the repository root::

    python examples/determinism.py
"""

import dask.array as da
import numpy as np
from sklearn.cluster import KMeans

from daskfair import FairClusteringEnsemble, FairKernelClassifierCV, make_fair_regression


def main() -> None:
    X, score, s = (np.asarray(a) for a in make_fair_regression(3000, 5, random_state=0))
    y = (score > np.median(score)).astype(int)
    inputs = {"numpy": (X, y, s)}
    for rows in (250, 1000):
        inputs[f"dask, blocks of {rows}"] = (da.from_array(X, chunks=(rows, 5)),
                                             da.from_array(y, chunks=rows),
                                             da.from_array(s, chunks=rows))

    scores = {}
    for name, (Xi, yi, si) in inputs.items():
        clf = FairKernelClassifierCV(disparity_bound=0.02, n_landmarks=200, random_state=0)
        clf.fit(Xi, yi, sensitive_features=si)
        scores[name] = np.asarray(clf.decision_function(X))
        print(f"{name:<20} chosen {clf.best_params_}, threshold {clf.best_threshold_:.6f}")
    first = next(iter(scores.values()))
    print("FairKernelClassifierCV scores identical bit for bit:",
          all(np.array_equal(first, v) for v in scores.values()))

    base = np.column_stack([KMeans(4, n_init=1, init="random", random_state=i).fit_predict(X)
                            for i in range(8)])
    labels = {}
    for rows in (None, 250, 1000):
        b = base if rows is None else da.from_array(base, chunks=(rows, 8))
        fce = FairClusteringEnsemble(4, random_state=0).fit(b, sensitive_features=s)
        labels[rows] = np.asarray(fce.labels_)
    print("FCE consensus labels identical:",
          all(np.array_equal(labels[None], v) for v in labels.values()))


if __name__ == "__main__":
    main()
