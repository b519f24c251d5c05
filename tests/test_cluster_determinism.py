"""Same seed, same result on 1 and 2 worker processes (real multi-process LocalClusters)."""

import dask.array as da
import distributed
import numpy as np
import pytest

from daskfair.ensemble import FairClusteringEnsemble, base_clusterings
from daskfair.regression import FairKernelRegressor
from daskfair.safairkm import pareto_front

pytestmark = pytest.mark.cluster


def _fit_all(n_workers):
    rng = np.random.default_rng(0)
    n = 4000
    s = rng.integers(0, 2, n)
    X = rng.normal(size=(n, 4)) + s[:, None]
    y = X[:, 0] - X[:, 1] ** 2 + s
    with distributed.LocalCluster(n_workers=n_workers, threads_per_worker=1,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        dX = da.from_array(X, chunks=(500, 4))
        fkr = FairKernelRegressor("rbf", n_components=5, n_landmarks=300, random_state=1)
        pred = fkr.fit(dX, y, sensitive_features=s).predict(dX).compute()
        base = base_clusterings(dX, n_clusters=4, n_runs=6, methods=("kmeans", "spectral"),
                                random_state=2, sample_size=2000, client=client)
        fce = FairClusteringEnsemble(4, random_state=3).fit(
            base, sensitive_features=da.from_array(s, chunks=700))
        front = pareto_front(X, sensitive_features=s, n_clusters=3, n_starts=6, n_iter=15,
                             random_state=4, client=client)
        return (pred, base.compute(), fce.labels_.compute(), fce.objective_, front.cost,
                front.labels)


def test_same_seed_same_result_for_one_and_two_workers():
    one = _fit_all(1)
    two = _fit_all(2)
    np.testing.assert_array_equal(one[0], two[0])  # FKR predictions, bit for bit
    np.testing.assert_array_equal(one[1], two[1])  # base clusterings
    np.testing.assert_array_equal(one[2], two[2])  # FCE consensus labels
    np.testing.assert_array_equal(one[3], two[3])  # FCE objective history
    np.testing.assert_array_equal(one[4], two[4])  # SAfairKM front
    np.testing.assert_array_equal(one[5], two[5])  # and its label vectors
