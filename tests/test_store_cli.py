"""The store rules from the command line: a user's folder survives ``--overwrite``, a second
job on a store that a running job writes is refused before it writes, and ``daskfair show``
calls a damaged run corrupt without printing its numbers."""

import os
import re
import subprocess
import sys
import time

import numpy as np
import pytest

from daskfair.cli import main
from daskfair.store import open_run
from daskfair.store.lease import LEASE_NAME

FCE_HAR = ["fce", "--pool", "har", "--runs", "10", "--clusters", "6", "--no-progress"]
# the same job, long enough (about 15 s) for a second job to meet it while it writes
FCE_HAR_LONG = ["fce", "--pool", "har", "--runs", "20", "--clusters", "6", "--tol", "0",
                "--max-iter", "40", "--chunk-rows", "1000", "--workers", "1", "--no-progress"]


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
    store = tmp_path / "same.zarr"
    first = subprocess.Popen(
        [sys.executable, "-m", "daskfair.cli", *FCE_HAR_LONG, "--store", str(store)],
        cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while not (store / LEASE_NAME).exists() and first.poll() is None:
        assert time.monotonic() < deadline, "the first job never took the lease"
        time.sleep(0.02)
    second = ["fce", "--pool", "ds", "--runs", "10", "--clusters", "7", "--no-progress",
              "--workers", "1", "--store", str(store)]
    for extra, says in (([], "being written by another run"),
                        (["--overwrite"], "being written by another run"),
                        (["--break-lock", "--overwrite"], "not breaking the lock.*holder is "
                                                          "alive")):
        proc = _cli([*second, *extra], tmp_path, env)
        assert proc.returncode == 2, proc.stderr
        assert re.search(says, proc.stderr), proc.stderr
        assert "command 'daskfair fce --pool har" in proc.stderr
        assert f"pid {first.pid}" in proc.stderr
        assert first.poll() is None  # it was refused while the first job was writing
    out, err = first.communicate(timeout=300)
    assert first.returncode == 0, err
    assert f"written to {store}" in out

    solo = tmp_path / "solo.zarr"
    proc = _cli([*FCE_HAR_LONG, "--store", str(solo)], tmp_path, env)
    assert proc.returncode == 0, proc.stderr
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
    assert "status:    CORRUPT" in out and "array 'labels' has 6 files" in out
    assert "0.6061" not in out and "arrays:" not in out
    assert main(["plot", str(path)]) == 2
    assert "is corrupt" in capsys.readouterr().err
