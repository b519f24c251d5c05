"""Kill the client process of a SAfairKM front and of an FCE consensus, resume, compare.

Each job runs as ``python -m daskfair.cli`` in its own process group with the LocalCluster
it starts; the test waits for a checkpoint, kills the whole group with SIGKILL (client,
scheduler, workers: nothing gets to clean up), checks that the store is refused as a result,
resumes it with ``--resume`` and compares every stored array with an uninterrupted run.
"""

import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from daskfair.store import IncompleteRunError, StoreError, open_run

pytestmark = pytest.mark.cluster


def _start(args, cwd, env):
    return subprocess.Popen([sys.executable, "-m", "daskfair.cli", *args], cwd=cwd, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)


def _run(args, cwd, env, timeout=300):
    proc = subprocess.run([sys.executable, "-m", "daskfair.cli", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=timeout)
    return proc.returncode, proc.stdout, proc.stderr


def _kill_after_checkpoint(proc, store, iteration, sig=signal.SIGKILL, timeout=240):
    start = time.monotonic()
    while time.monotonic() - start < timeout:
        if proc.poll() is not None:
            out, err = proc.communicate()
            pytest.fail(f"the job ended before it could be killed:\n{out[-1500:]}{err[-1500:]}")
        try:
            ckpt = open_run(store, allow_incomplete=True).checkpoint
        except (StoreError, ValueError, KeyError, OSError):  # not there yet, or mid-write
            ckpt = None
        if ckpt and ckpt["iteration"] >= iteration:
            # The client is frozen before it is signalled, so the run cannot finish between
            # the reading of its checkpoint and the signal: the signal lands mid-run.
            os.kill(proc.pid, signal.SIGSTOP)
            if proc.poll() is not None:
                continue  # it had ended: reported at the loop's top
            try:
                open_run(store)
            except (StoreError, ValueError, KeyError, OSError):  # not committed
                pass
            else:
                os.kill(proc.pid, signal.SIGCONT)
                pytest.fail("the run was complete when the client was frozen")
            if sig == signal.SIGKILL:  # the whole group: nothing gets to clean up
                os.killpg(proc.pid, sig)
            else:  # what a batch system's walltime sends the job first
                os.kill(proc.pid, sig)
                os.kill(proc.pid, signal.SIGCONT)
            proc.wait(timeout=60)
            # read once the client is gone: the checkpoint it got to write before the signal
            return open_run(store, allow_incomplete=True).checkpoint["iteration"]
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)
    pytest.fail("no checkpoint appeared in time")


def _arrays(store):
    import zarr

    run = open_run(store)
    return {name: a[...] for name, a in run.group.members(max_depth=None)
            if isinstance(a, zarr.Array)}


@pytest.fixture
def env(data_dir):
    e = {**os.environ, "DASKFAIR_DATA": str(data_dir)}
    e.pop("DASK_SCHEDULER_ADDRESS", None)
    return e


@pytest.mark.parametrize(("job", "sig"), [
    # Killed by SIGKILL and resumed with --break-lock is also what the default run's
    # tests/test_store_kill_points.py does at a random write of each job (and of its resume),
    # and benchmarks/store_kill_points.py at hundreds of points; a dead holder's messages are
    # tested in test_store.py. The SIGTERM variant runs by default.
    pytest.param("safairkm", signal.SIGKILL, marks=pytest.mark.slow),
    pytest.param("fce", signal.SIGKILL, marks=pytest.mark.slow),
    ("safairkm", signal.SIGTERM)])
def test_kill_the_client_then_resume_gives_the_uninterrupted_result(job, sig, env, tmp_path):
    if job == "safairkm":
        args = ["safairkm", "--dataset", "safairkm_adult", "--rows", "1500", "--n-clusters",
                "4", "--n-init", "6", "--max-iter", "60", "--checkpoint-every", "5",
                "--vfairkm-fairness-weights", "0", "300"]
        kill_at, other = 15, ["--max-iter", "61"]
    else:
        args = ["fce", "--pool", "har", "--n-runs", "20", "--n-clusters", "6", "--tol", "0",
                "--max-iter", "30", "--chunk-rows", "2000"]
        kill_at, other = 3, ["--max-iter", "31"]
    args += ["--workers", "2", "--no-progress"]
    store, reference = tmp_path / "killed.zarr", tmp_path / "reference.zarr"
    # the uninterrupted run to compare with, beside the rest (mostly waiting on its workers)
    whole_proc = _start([*args, "--store", str(reference)], tmp_path, env)
    proc = _start([*args, "--store", str(store)], tmp_path, env)
    killed_at = _kill_after_checkpoint(proc, store, kill_at, sig)
    if sig == signal.SIGTERM:  # unwound as for Ctrl-C: the lease is given back
        assert proc.returncode == 143 and "terminated (SIGTERM)" in proc.stderr.read()
        assert not (store / "daskfair-lock.json").exists()

    with pytest.raises(IncompleteRunError):
        open_run(store)
    code, out, _ = _run(["show", str(store)], tmp_path, env)
    assert code == 1 and "INCOMPLETE" in out
    assert f"last checkpoint at iteration {killed_at}" in out
    code, _, err = _run(["plot", str(store)], tmp_path, env)
    assert code == 2 and "did not finish" in err
    code, _, err = _run([*args, "--store", str(store)], tmp_path, env)
    # never silently started over
    assert code == 2 and ("already exists" in err if sig == signal.SIGTERM
                          else "locked by a run that is no longer running" in err)
    code, _, err = _run([*args, *other, "--store", str(store), "--resume"], tmp_path, env)
    assert code == 2 and "parameters differ" in err

    resume = [*args, "--store", str(store), "--resume"]
    if sig == signal.SIGKILL:  # the killed run's lease is left: broken on request only
        code, _, err = _run(resume, tmp_path, env)
        assert code == 2 and "is no longer running" in err and "--break-lock" in err
        resume.append("--break-lock")
    code, out, err = _run(resume, tmp_path, env)
    assert code == 0, err
    if sig == signal.SIGKILL:
        assert "warning: broke the lock" in err
    _, err = whole_proc.communicate(timeout=300)
    assert whole_proc.returncode == 0, err

    resumed, whole = _arrays(store), _arrays(reference)
    assert set(resumed) == set(whole) and "labels" in whole
    for name in whole:
        np.testing.assert_array_equal(resumed[name], whole[name], err_msg=name)
    a, b = open_run(store).attrs, open_run(reference).attrs
    key = "fronts" if job == "safairkm" else "report"
    strip = (lambda d: {k: {kk: vv for kk, vv in v.items() if kk != "seconds"}
                        for k, v in d.items()}) if job == "safairkm" else \
        (lambda d: {k: v for k, v in d.items() if k != "seconds"})
    assert strip(a[key]) == strip(b[key])
    if job == "fce":
        # tol = 0: it stops at --max-iter or when the objective stops changing at all
        assert a["objective"] == b["objective"]
        assert killed_at < a["n_iter"] == b["n_iter"] == len(b["objective"])
