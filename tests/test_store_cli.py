"""The store rules from the command line: a user's folder survives ``--overwrite``, a second
job on a store that a running job writes is refused before it writes, and ``daskfair show``
calls a damaged run corrupt without printing its numbers."""

import os
import re
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from daskfair.cli import main
from daskfair.store import open_run
from daskfair.store.lease import LEASE_NAME

FCE_HAR = ["fce", "--pool", "har", "--n-runs", "10", "--n-clusters", "6", "--no-progress"]
# the first job of the race (the test pauses it, SIGSTOP, while it holds the lease)
FCE_HAR_LONG = ["fce", "--pool", "har", "--n-runs", "10", "--n-clusters", "6", "--tol", "0",
                "--max-iter", "8", "--chunk-rows", "1000", "--workers", "1", "--no-progress"]


@pytest.fixture
def env(data_dir):
    e = {**os.environ, "DASKFAIR_DATA": str(data_dir)}
    e.pop("DASK_SCHEDULER_ADDRESS", None)
    return e


def _cli(args, cwd, env, timeout=300):
    return subprocess.run([sys.executable, "-m", "daskfair.cli", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=timeout)


@pytest.mark.parametrize("command", [
    [*FCE_HAR, "--overwrite"],
    ["safairkm", "--dataset", "safairkm_adult", "--rows", "300", "--overwrite"],
    ["fkr", "--dataset", "ffe_crime", "--overwrite"],
    ["demo", "--pools", "har"],  # the demo replaces a demo run, nothing else
])
def test_a_users_folder_survives_overwrite(command, data_dir, tmp_path, capsys):
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "thesis.tex").write_text(r"\documentclass{book}")
    code = main([*command, "--store", str(folder), "--data-dir", str(data_dir)])
    err = capsys.readouterr().err
    assert code == 2
    assert "is not a daskfair run store (it holds 1 entry: thesis.tex)" in err
    assert "never deletes or empties what it did not write" in err
    assert [p.name for p in folder.iterdir()] == ["thesis.tex"]
    assert (folder / "thesis.tex").read_text() == r"\documentclass{book}"


@pytest.mark.cluster
def test_a_second_job_on_a_store_being_written_is_refused(env, tmp_path):
    """The issue's case: two FCE jobs on one store. The second starts while the first holds
    the lease and is refused (with --overwrite too) before it writes; the first's stored
    result equals a solo run's."""
    store, solo = tmp_path / "same.zarr", tmp_path / "solo.zarr"
    # the solo run to compare with, beside the rest (it is mostly waiting on its workers)
    alone_proc = subprocess.Popen(
        [sys.executable, "-m", "daskfair.cli", *FCE_HAR_LONG, "--store", str(solo)],
        cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    first = subprocess.Popen(
        [sys.executable, "-m", "daskfair.cli", *FCE_HAR_LONG, "--store", str(store)],
        cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while not (store / LEASE_NAME).exists() and first.poll() is None:
        assert time.monotonic() < deadline, "the first job never took the lease"
        time.sleep(0.02)
    # paused while it holds the lease: alive, writing, and certain to be so while the second
    # job tries, however slow the machine (its workers and the lease's refresh wait)
    os.kill(first.pid, signal.SIGSTOP)
    second = ["fce", "--pool", "ds", "--n-runs", "10", "--n-clusters", "7", "--no-progress",
              "--workers", "1", "--store", str(store)]
    try:
        for extra, says in (([], "being written by another run"),
                            (["--overwrite"], "being written by another run"),
                            (["--break-lock", "--overwrite"], "not breaking the lock.*holder "
                                                              "is alive")):
            proc = _cli([*second, *extra], tmp_path, env)
            assert proc.returncode == 2, proc.stderr
            assert re.search(says, proc.stderr), proc.stderr
            assert "command 'daskfair fce --pool har" in proc.stderr
            assert f"pid {first.pid}" in proc.stderr
            assert first.poll() is None  # it was refused while the first job was writing
    finally:
        os.kill(first.pid, signal.SIGCONT)
    out, err = first.communicate(timeout=300)
    assert first.returncode == 0, err
    assert f"written to {store}" in out

    _, err = alone_proc.communicate(timeout=300)
    assert alone_proc.returncode == 0, err
    shared, alone = open_run(store, verify="contents"), open_run(solo, verify="contents")
    assert shared.params == alone.params and shared.params["pool"] == "har"
    assert shared.array_names() == alone.array_names()
    for name in alone.array_names():
        np.testing.assert_array_equal(shared.read_array(name), alone.read_array(name))
    strip = lambda d: {k: v for k, v in d.items() if k != "seconds"}  # noqa: E731
    assert strip(shared.attrs["report"]) == strip(alone.attrs["report"])


def test_show_calls_a_damaged_run_corrupt_and_prints_no_numbers(tmp_path, capsys):
    from daskfair.store import create_run

    path = tmp_path / "run.zarr"
    run = create_run(path, kind="fce", params={"clusters": 6})
    run.write_array("labels", np.arange(5000, dtype=np.int32), chunks=(1000,))
    run.mark_complete(report={"ACC": 0.6061})
    assert main(["show", str(path)]) == 0
    assert "0.6061" in capsys.readouterr().out
    chunk = path / "labels" / "c" / "2"
    chunk.write_bytes(chunk.read_bytes()[:100])
    assert main(["show", str(path)]) == 1
    out = capsys.readouterr().out
    assert "status:    CORRUPT" in out and "array 'labels' (its file c/2) has" in out
    assert "0.6061" not in out and "arrays:" not in out
    assert main(["plot", str(path)]) == 2
    assert "is corrupt" in capsys.readouterr().err


SAFAIRKM_SMALL = ["safairkm", "--dataset", "safairkm_adult", "--rows", "300", "--max-iter",
                  "5", "--vfairkm-fairness-weights", "0", "--no-progress"]


def test_a_run_finished_by_another_job_while_the_data_load_is_not_replaced(
        data_dir, tmp_path, capsys, monkeypatch):
    """The store is checked before the data load and again when the run is created: a run
    another job completed there meanwhile is refused, not deleted (no --overwrite given)."""
    from daskfair.cli import commands as cli_commands
    from daskfair.store import create_run

    store = tmp_path / "shared.zarr"
    real_load = cli_commands.load_data

    def load_while_another_job_finishes(args, need_label):
        data = real_load(args, need_label)
        other = create_run(store, kind="fce", params={"pool": "har"})
        other.write_array("labels", np.arange(6))
        other.mark_complete()
        return data

    monkeypatch.setattr(cli_commands, "load_data", load_while_another_job_finishes)
    code = main([*SAFAIRKM_SMALL, "--store", str(store), "--data-dir", str(data_dir)])
    err = capsys.readouterr().err
    assert code == 2 and "already exists: it holds a fce run (complete)" in err
    kept = open_run(store, verify="contents")
    assert kept.kind == "fce" and kept.read_array("labels").tolist() == list(range(6))


def test_an_interrupt_during_the_data_load_says_the_store_is_unchanged(
        data_dir, tmp_path, capsys, monkeypatch):
    from daskfair.cli import commands as cli_commands

    store = tmp_path / "run.zarr"
    assert main([*SAFAIRKM_SMALL, "--store", str(store), "--data-dir", str(data_dir)]) == 0
    capsys.readouterr()
    before = open_run(store).read_array("cost")

    def interrupted(args, need_label):
        raise KeyboardInterrupt

    monkeypatch.setattr(cli_commands, "load_data", interrupted)
    code = main([*SAFAIRKM_SMALL, "--store", str(store), "--overwrite", "--data-dir",
                 str(data_dir)])
    err = capsys.readouterr().err
    assert code == 130
    assert f"interrupted before the run started: {store} is as it was." in err
    np.testing.assert_array_equal(open_run(store, verify="contents").read_array("cost"),
                                  before)


@pytest.mark.parametrize(("kind", "advice"), [
    ("demo", "run daskfair demo again (it replaces its own run)"),
    ("fce", "continue it with the same command and --resume, or replace it with --overwrite"),
    ("fkr", "run the command again with --overwrite")])
def test_show_advises_what_the_unfinished_runs_command_can_do(kind, advice, tmp_path, capsys):
    from daskfair.store import create_run

    create_run(tmp_path / "run.zarr", kind=kind).close()  # interrupted: never completed
    assert main(["show", str(tmp_path / "run.zarr")]) == 1
    out = capsys.readouterr().out
    assert "INCOMPLETE" in out and f"Not a result: {advice}." in out
