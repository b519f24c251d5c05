"""Worker faults in the middle of a fit, on real multi-process LocalClusters.

Each test fits once undisturbed and once with worker processes killed (SIGKILL, as the
kernel's OOM killer or a node failure would) in the middle of the work, and asserts the same
result bit for bit. Two ways to inject a fault:

* from inside a task: a row block whose first computation kills its own worker process, so
  the fault strikes while the pass over the data runs (Dask then retries the block on the
  restarted worker);
* from the client, between iterations of an iterative method: one worker, or every worker at
  once (then nothing of the method's state survives on the cluster, and daskfair restarts
  from its recovery point).
"""

import os
import signal
from pathlib import Path

import dask.array as da
import distributed
import numpy as np
import pytest

from daskfair.ensemble import FairClusteringEnsemble, base_clusterings
from daskfair.fkr.estimators import FairKernelRegressor
from daskfair.safairkm import pareto_front

pytestmark = pytest.mark.cluster

FAULTS = {"injected": 0}


@pytest.fixture(scope="module", autouse=True)
def _report_faults():
    # how many worker processes this module killed (printed with -s, for the notes)
    yield
    print(f"\nworker faults injected and survived: {FAULTS['injected']}")


def _die_once(block: np.ndarray, marker: str, victim: int, block_info=None) -> np.ndarray:
    # the worker computing this block for the first time kills itself mid-task
    if block_info[None]["chunk-location"][0] == victim and not os.path.exists(marker):
        Path(marker).touch()
        os.kill(os.getpid(), signal.SIGKILL)
    return block


def _kill(client, every: bool) -> None:
    pids = client.run(os.getpid)
    targets = sorted(pids) if every else sorted(pids)[-1:]
    for w in targets:
        os.kill(pids[w], signal.SIGKILL)
    FAULTS["injected"] += len(targets)


@pytest.fixture
def cluster_client():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        yield client


def _data(n=6000, d=4, seed=0):
    rng = np.random.default_rng(seed)
    s = rng.integers(0, 2, n)
    X = rng.normal(size=(n, d)) + s[:, None]
    return X, s, X[:, 0] - X[:, 1] ** 2 + s


def test_fkr_fit_survives_a_worker_killed_inside_the_pass(cluster_client, tmp_path):
    X, s, y = _data()
    dX = da.from_array(X, chunks=(500, 4))

    def fit(features):
        est = FairKernelRegressor("rbf", n_fair_features=5, n_landmarks=400, random_state=1)
        return est.fit(features, y, sensitive_features=s).predict(dX).compute()

    ref = fit(dX)
    marker = tmp_path / "died"
    hostile = dX.map_blocks(_die_once, str(marker), 5, dtype=dX.dtype)
    got = fit(hostile)
    assert marker.exists()  # the fault did happen
    FAULTS["injected"] += 1
    np.testing.assert_array_equal(got, ref)


def test_base_clusterings_and_fce_survive_a_worker_killed_inside_a_block(cluster_client,
                                                                        tmp_path):
    X, s, _ = _data()
    dX = da.from_array(X, chunks=(500, 4))
    ds = da.from_array(s, chunks=700)
    marker = tmp_path / "died"
    runs = []
    for features in (dX, dX.map_blocks(_die_once, str(marker), 7, dtype=dX.dtype)):
        base = base_clusterings(features, n_clusters=4, n_runs=6, random_state=2,
                                sample_size=3000, client=cluster_client)
        fce = FairClusteringEnsemble(4, random_state=3, tol=0.0, max_iter=6).fit(
            base, sensitive_features=ds)
        runs.append((base.compute(), fce.labels_.compute(), fce.objective_))
    assert marker.exists()
    FAULTS["injected"] += 1
    for a, b in zip(*runs, strict=True):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("every", [False, True], ids=["one worker", "every worker"])
def test_fce_consensus_survives_workers_killed_between_iterations(cluster_client, every):
    X, s, _ = _data()
    base = base_clusterings(da.from_array(X, chunks=(500, 4)), n_clusters=4, n_runs=6,
                            random_state=2, client=cluster_client).persist()
    ds = da.from_array(s, chunks=700)
    kw = {"random_state": 3, "tol": 0.0, "max_iter": 8}
    ref = FairClusteringEnsemble(4, **kw).fit(base, sensitive_features=ds)
    ref_labels = ref.labels_.compute()
    fired = []

    def kill_at_4(state):
        if state.n_iter == 4 and not fired:
            fired.append(True)
            _kill(cluster_client, every)

    got = FairClusteringEnsemble(4, **kw).fit(base, sensitive_features=ds, callback=kill_at_4)
    assert fired
    np.testing.assert_array_equal(got.labels_.compute(), ref_labels)
    np.testing.assert_array_equal(got.objective_, ref.objective_)


@pytest.mark.parametrize("every, checkpoint_every", [(False, 50), (True, 50), (True, 5)],
                         ids=["one worker", "every worker, from the start",
                              "every worker, from a recovery point"])
def test_safairkm_front_survives_workers_killed_between_iterations(cluster_client, every,
                                                                   checkpoint_every):
    X, s, _ = _data(n=3000)
    kw = {"sensitive_features": s, "n_clusters": 3, "n_init": 6, "max_iter": 20,
          "random_state": 4, "client": cluster_client, "checkpoint_every": checkpoint_every}
    ref = pareto_front(X, **kw)
    ref_labels = ref.labels
    fired = []

    def kill_at_8(t, cost, balance):
        if t == 8 and not fired:
            fired.append(True)
            _kill(cluster_client, every)

    got = pareto_front(X, callback=kill_at_8, **kw)
    assert fired
    np.testing.assert_array_equal(got.cost, ref.cost)
    np.testing.assert_array_equal(got.balance, ref.balance)
    np.testing.assert_array_equal(got.labels, ref_labels)
    assert [h["iteration"] for h in got.history] == list(range(1, 21))
