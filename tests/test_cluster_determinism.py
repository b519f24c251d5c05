"""Same seed, same result: 1, 2 and 4 worker processes, three chunkings, all three methods.

Every result is compared bit for bit. Row-block statistics are summed over canonical row
blocks that depend on the data's shape only (``daskfair._blocks.canonical_rows``), so the
input's chunking does not change a single bit; randomness is keyed by task, member and
iteration, never by worker.
"""

import dask
import dask.array as da
import distributed
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from daskfair._blocks import align_rows, block_sum, canonical_rows
from daskfair.ensemble import FairClusteringEnsemble, base_clusterings
from daskfair.fkr.estimators import FairKernelRegressor
from daskfair.safairkm import pareto_front

N = 4000
CHUNKINGS = (500, 1000, (700, 1300, 37, 963, 1000))
# canonical blocks of 512 rows: the 4,000 rows are 8 blocks, so the tree sums and FCE's
# block-to-block carry are exercised (with the default size they would be one block)
BLOCK_ROWS = {"daskfair.block-rows": 512}


def _data():
    rng = np.random.default_rng(0)
    s = rng.integers(0, 2, N)
    X = rng.normal(size=(N, 4)) + s[:, None]
    return X, s, X[:, 0] - X[:, 1] ** 2 + s


def _fit_all(client, X, s, y, rows):
    dX = da.from_array(X, chunks=(rows, 4))
    ds = da.from_array(s, chunks=(rows,))
    assert len(align_rows(dX)[0].chunks[0]) == 8
    fkr = FairKernelRegressor("rbf", n_fair_features=5, n_landmarks=300, random_state=1)
    pred = fkr.fit(dX, y, sensitive_features=ds).predict(dX).compute()
    base = base_clusterings(dX, n_clusters=4, n_runs=6, methods=("kmeans", "spectral"),
                            random_state=2, sample_size=2000, client=client)
    fce = FairClusteringEnsemble(4, random_state=3).fit(base, sensitive_features=ds)
    front = pareto_front(dX, sensitive_features=ds, n_clusters=3, n_init=6, max_iter=15,
                         random_state=4, client=client)
    return {"FKR predictions": pred, "base clusterings": base.compute(),
            "FCE labels": fce.labels_.compute(), "FCE objective": fce.objective_,
            "front cost": front.cost, "front labels": front.labels}


@pytest.mark.cluster
def test_same_seed_same_result_for_1_2_4_workers_and_three_chunkings():
    X, s, y = _data()
    results = {}
    for n_workers in (1, 2, 4):
        with distributed.LocalCluster(n_workers=n_workers, threads_per_worker=1,
                                      dashboard_address=None) as cluster, \
                distributed.Client(cluster) as client:
            chunkings = CHUNKINGS if n_workers == 2 else CHUNKINGS[:1]
            for rows in chunkings:
                with dask.config.set(BLOCK_ROWS):
                    results[n_workers, str(rows)] = _fit_all(client, X, s, y, rows)
    assert len(results) == 5
    (ref_key, ref), *others = results.items()
    for key, res in others:
        for name, value in res.items():
            np.testing.assert_array_equal(value, ref[name], err_msg=f"{name}: {key} vs {ref_key}")


def _chunks(draw_sizes: list[int]) -> tuple[int, ...]:
    # cut N rows at the drawn sizes (the last chunk takes the rest)
    out, left = [], N
    for size in draw_sizes:
        if size >= left:
            break
        out.append(size)
        left -= size
    return (*out, left)


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sizes=st.lists(st.integers(1, 1500), min_size=1, max_size=12))
def test_any_chunking_gives_the_bits_of_numpy_input(sizes):
    """Property: FKR and the FCE consensus on a dask array of any row chunking equal the
    in-memory fit exactly (synchronous scheduler, so this runs in one process)."""
    X, s, y = _data()
    chunks = _chunks(sizes)
    dX = da.from_array(X, chunks=(chunks, 4))
    with dask.config.set(scheduler="synchronous", **BLOCK_ROWS):
        assert len(align_rows(dX)[0].chunks[0]) == 8
        ref = FairKernelRegressor("rbf", n_fair_features=5, n_landmarks=200, random_state=1)
        ref.fit(X, y, sensitive_features=s)
        est = FairKernelRegressor("rbf", n_fair_features=5, n_landmarks=200, random_state=1)
        est.fit(dX, y, sensitive_features=da.from_array(s, chunks=(chunks,)))
        np.testing.assert_array_equal(est.dual_coef_, ref.dual_coef_)
        np.testing.assert_array_equal(est.predict(dX).compute(), ref.predict(X))
        base = np.stack([(X[:, j % 4] > np.quantile(X[:, j % 4], q)).astype(int) +
                         (X[:, (j + 1) % 4] > 0) for j, q in enumerate((.3, .5, .7, .4))], 1)
        fce_ref = FairClusteringEnsemble(3, random_state=0).fit(base, sensitive_features=s)
        fce = FairClusteringEnsemble(3, random_state=0).fit(
            da.from_array(base, chunks=(chunks, 4)), sensitive_features=s)
        np.testing.assert_array_equal(fce.labels_.compute(), fce_ref.labels_)
        np.testing.assert_array_equal(fce.objective_, fce_ref.objective_)


@settings(max_examples=30, deadline=None)
@given(n=st.integers(0, 200_000), width=st.integers(1, 5000))
def test_canonical_rows_cover_the_rows_in_fixed_blocks(n, width):
    rows = canonical_rows(n, width)
    assert sum(rows) == n
    assert len(set(rows[:-1])) <= 1 and all(r > 0 for r in rows)
    assert rows == canonical_rows(n, width)
    if rows:
        assert 1024 <= rows[0] <= 65_536 or len(rows) == 1


def test_block_sum_numpy_and_dask_agree_bit_for_bit():
    rng = np.random.default_rng(5)
    A = rng.normal(size=(70_000, 3)) * 10.0 ** rng.integers(-8, 8, size=(70_000, 1))

    def gram(block):
        return block.T @ block

    with dask.config.set({"daskfair.block-rows": 4096, "scheduler": "synchronous"}):
        want = block_sum(gram, A)
        for chunks in (1000, 33_333, (69_999, 1)):
            got = block_sum(gram, da.from_array(A, chunks=(chunks, 3)))
            np.testing.assert_array_equal(got, want)


@pytest.mark.skipif(len(__import__("os").sched_getaffinity(0)) < 2, reason="needs 2 cores")
def test_fkr_bits_do_not_depend_on_the_clients_blas_threads(data_dir):
    """LAPACK splits its work by the BLAS threads, and the split changes the last bits: the
    client's dense algebra runs on one thread (daskfair/runtime/threads.py). On this fit (the CLI's
    Crime split 3 job) 1 and 2 client threads gave dual coefficients 4e-11 apart before."""
    from threadpoolctl import threadpool_limits

    from daskfair.datasets import load_dataset
    from daskfair.fkr.estimators import FairKernelClassifier
    from daskfair.scaling import ColumnScaler

    d = load_dataset("ffe_crime", data_dir)
    train = d.splits[3]
    X = ColumnScaler().fit(d.X[train]).transform(d.X)[train]
    y, s = d.y[train].astype(int), d.sensitive[train]
    fits = []
    for threads in (1, 2):
        with threadpool_limits(threads):
            clf = FairKernelClassifier("polynomial", degree=4, coef0=0.1, n_fair_features=2,
                                       objective="mean_discrepancy", n_landmarks=300,
                                       random_state=0, threshold=0.5)
            fits.append(clf.fit(X, y, sensitive_features=s).dual_coef_)
    np.testing.assert_array_equal(fits[0], fits[1])
