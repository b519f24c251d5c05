"""Run checkpoints, resume checks, FCE store/resume and the iteration bar (in process)."""

import io

import dask.array as da
import numpy as np
import pytest

from daskfair.datasets import load_fce_pool
from daskfair.ensemble import FairClusteringEnsemble
from daskfair.progress import IterationBar
from daskfair.store import (
    IncompleteRunError,
    StoreError,
    StoreLockedError,
    create_run,
    open_run,
    resume_run,
)


class _Stop(Exception):
    pass


def _stop_at(n):
    def callback(state):
        if state.n_iter == n:
            raise _Stop
    return callback


def test_commit_checkpoint_switches_then_deletes(tmp_path):
    run = create_run(tmp_path / "r.zarr", kind="t", params={"a": 1})
    run.write_array("checkpoint_1/x", np.arange(3))
    run.commit_checkpoint("checkpoint_1", iteration=1)
    assert run.checkpoint == {"iteration": 1, "group": "checkpoint_1"}
    run.write_array("checkpoint_2/x", np.arange(4))
    run.commit_checkpoint("checkpoint_2", iteration=2)
    assert run.checkpoint["group"] == "checkpoint_2"
    assert "checkpoint_1" not in run.group and "checkpoint_2" in run.group
    with pytest.raises(KeyError, match="was not written"):
        run.commit_checkpoint("checkpoint_3", iteration=3)
    # a group a crash left half-written, never committed, goes with the next commit
    run.write_array("checkpoint_3/x", np.arange(2))
    run.write_array("checkpoint_4/x", np.arange(2))
    run.commit_checkpoint("checkpoint_4", iteration=4)
    assert sorted(run.group.group_keys()) == ["checkpoint_4"]
    run.write_array("checkpoint_5/x", np.arange(2))  # and the completion marker drops all
    run.mark_complete()
    back = open_run(tmp_path / "r.zarr")
    assert back.checkpoint is None and list(back.group.group_keys()) == []


def test_resume_run_refusals(tmp_path):
    with pytest.raises(StoreError, match="nothing to resume"):
        resume_run(tmp_path / "none.zarr", kind="t", params={})
    run = create_run(tmp_path / "r.zarr", kind="t", params={"a": 1, "b": [1, 2]})
    with pytest.raises(ValueError, match="not a 'u' run"):
        resume_run(tmp_path / "r.zarr", kind="u", params={"a": 1, "b": [1, 2]})
    with pytest.raises(ValueError, match=r"parameters differ .*\['b'\]"):
        resume_run(tmp_path / "r.zarr", kind="t", params={"a": 1, "b": [1, 3]})
    with pytest.raises(StoreLockedError, match="being written by another run"):
        resume_run(tmp_path / "r.zarr", kind="t", params={"a": 1, "b": [1, 2]})
    run.close()
    resumed = resume_run(tmp_path / "r.zarr", kind="t", params={"a": 1, "b": (1, 2)})
    assert resumed.kind == "t"
    with pytest.raises(StoreError, match="released its lease"):
        run.set_attrs(x=1)  # the first run gave its lease up: it writes nothing more
    resumed.mark_complete()
    with pytest.raises(ValueError, match="finished run"):
        resume_run(tmp_path / "r.zarr", kind="t", params={"a": 1, "b": [1, 2]})


@pytest.mark.parametrize("use_dask", [False, True])
def test_fce_interrupted_and_resumed_equals_uninterrupted(client, data_dir, tmp_path,
                                                          use_dask):
    base, _, groups = load_fce_pool("yale", data_dir)
    base = base[:, :8]
    if use_dask:
        base, groups = da.from_array(base, chunks=(40, -1)), da.from_array(groups, chunks=33)
    kw = {"random_state": 0, "tol": 0.0, "max_iter": 7}
    ref = FairClusteringEnsemble(15, **kw).fit(base, sensitive_features=groups)
    store = tmp_path / "fce.zarr"
    with pytest.raises(_Stop):
        FairClusteringEnsemble(15, **kw).fit(base, sensitive_features=groups, store=store,
                                             callback=_stop_at(4))
    with pytest.raises(IncompleteRunError):
        open_run(store)
    partial = open_run(store, allow_incomplete=True)
    assert partial.checkpoint["iteration"] == 4 and len(partial.checkpoint["objective"]) == 4
    with pytest.raises(ValueError, match="parameters differ"):
        FairClusteringEnsemble(15, **{**kw, "max_iter": 8}).fit(
            base, sensitive_features=groups, store=store, resume=True)
    res = FairClusteringEnsemble(15, **kw).fit(base, sensitive_features=groups, store=store,
                                               resume=True)
    assert res.n_iter_ == ref.n_iter_ == 7
    np.testing.assert_array_equal(np.asarray(res.labels_), np.asarray(ref.labels_))
    np.testing.assert_array_equal(res.objective_, ref.objective_)  # bit for bit
    np.testing.assert_array_equal(res.weights_, ref.weights_)
    done = open_run(store)
    np.testing.assert_array_equal(done.read_array("labels"), np.asarray(ref.labels_))
    assert done.attrs["n_iter"] == 7 and done.checkpoint is None


def test_fce_resume_after_the_last_iteration_takes_no_step(client, data_dir, tmp_path):
    base, _, groups = load_fce_pool("jaffe", data_dir)
    kw = {"random_state": 1, "max_iter": 30}
    ref = FairClusteringEnsemble(10, **kw).fit(base[:, :6], sensitive_features=groups)
    assert ref.converged_
    store = tmp_path / "f.zarr"
    # interrupt right after the converging iteration's checkpoint
    with pytest.raises(_Stop):
        FairClusteringEnsemble(10, **kw).fit(base[:, :6], sensitive_features=groups,
                                             store=store, callback=_stop_at(ref.n_iter_))
    res = FairClusteringEnsemble(10, **kw).fit(base[:, :6], sensitive_features=groups,
                                               store=store, resume=True)
    assert res.n_iter_ == ref.n_iter_ and res.converged_
    np.testing.assert_array_equal(res.labels_, ref.labels_)


def test_fce_resume_needs_a_store(data_dir):
    base, _, groups = load_fce_pool("jaffe", data_dir)
    with pytest.raises(ValueError, match="needs the store"):
        FairClusteringEnsemble(10).fit(base, sensitive_features=groups, resume=True)


def test_iteration_bar_in_a_log_prints_tenths_and_the_last_state():
    out = io.StringIO()
    bar = IterationBar(50, "iterations", stream=out, enabled=True)
    for t in range(1, 24):
        bar.update(t, f"{t} points")
    bar.close()
    lines = out.getvalue().splitlines()
    # every fifth iteration (a tenth of 50) from the first, then the unprinted last state
    assert [ln.split("]")[1].split("/")[0].strip() for ln in lines] == \
        ["1", "6", "11", "16", "21", "23"]
    assert lines[-1].startswith("[" + "#" * 14) and "23 points" in lines[-1]
    silent = io.StringIO()
    quiet = IterationBar(5, "x", stream=silent, enabled=False)
    quiet.update(3)
    quiet.close()
    assert silent.getvalue() == ""


def test_safairkm_refuses_data_that_cannot_fit_on_a_worker():
    import distributed

    from daskfair.safairkm import pareto_front, vfairkm_front

    X = da.zeros((2_000_000, 10), chunks=(100_000, 10))  # 0.19 GiB of rows per worker
    s = da.zeros(2_000_000, chunks=100_000, dtype=int)
    with distributed.LocalCluster(n_workers=1, processes=False, memory_limit="300MB",
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as c:
        for fit in (pareto_front, vfairkm_front):
            kw = {"fairness_weights": [0.0]} if fit is vfairkm_front else {}
            with pytest.raises(ValueError,
                               match=r"0\.19 GiB per worker.*0\.28 GiB.*Subsample the rows"):
                fit(X, sensitive_features=s, n_clusters=3, client=c, **kw)
