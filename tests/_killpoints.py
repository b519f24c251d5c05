"""Kill a ``daskfair`` job at its N-th store write, then judge what the store says.

The job runs as ``python -m daskfair.cli`` in a process group of its own. A ``sitecustomize``
module, put on ``PYTHONPATH`` for that job only, wraps zarr's one function that writes a file
of a local store (``zarr.storage._local._put``, behind every array chunk and metadata write, in
the client and in every worker process) so that the write numbered ``N`` (counted over all the
job's processes, in a shared counter file) leaves half its bytes in zarr's scratch file — what
a kill in the middle of a write leaves — and sends SIGKILL to the whole process group.
``count_writes`` runs the job with no kill to learn how many writes it makes.

:func:`judge` then classifies the store as a user would meet it: *complete* (``open_run`` with
the contents checked accepts it), *incomplete* (a run without its completion marker, or only
its lease: nothing written yet) or *corrupt* (``CorruptStoreError``), and a complete store is
compared with an uninterrupted run's, array by array, with its results attributes. Used by
``tests/test_store_kill_points.py`` (a few kill points) and ``benchmarks/store_kill_points.py``
(hundreds).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np

_HOOK = '''\
import os
import signal

_AT = int(os.environ["DASKFAIR_KILL_AT_WRITE"])
_COUNTER = os.environ["DASKFAIR_KILL_COUNTER"]

import zarr.storage._local as _local

_put = _local._put


def _counted_put(path, value, exclusive=False):
    fd = os.open(_COUNTER, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, b".")
        n = os.fstat(fd).st_size
    finally:
        os.close(fd)
    if _AT and n >= _AT:
        data = bytes(value.as_buffer_like())
        path.parent.mkdir(parents=True, exist_ok=True)
        path.with_suffix(".killed.partial").write_bytes(data[: len(data) // 2])
        os.killpg(0, signal.SIGKILL)
    return _put(path, value, exclusive)


_local._put = _counted_put
'''

#: The three jobs, small: each writes its whole store in a few seconds.
JOBS: dict[str, list[str]] = {
    "fkr": ["fkr", "--dataset", "ffe_crime", "--split", "3", "--n-landmarks", "150",
            "--kernel", "polynomial", "--degree", "4", "--coef0", "0.1", "--workers", "1"],
    "safairkm": ["safairkm", "--dataset", "safairkm_adult", "--rows", "600", "--n-clusters", "4",
                 "--n-init", "4", "--max-iter", "20", "--checkpoint-every", "5",
                 "--vfairkm-fairness-weights", "0"],
    "fce": ["fce", "--pool", "jaffe", "--n-runs", "8", "--n-clusters", "10", "--tol", "0",
            "--max-iter", "6", "--chunk-rows", "64", "--workers", "1"],
}
RESUMABLE = {"safairkm", "fce"}


def job_env(data_dir: Path, hook_dir: Path, at: int | None, counter: Path) -> dict[str, str]:
    env = {**os.environ, "DASKFAIR_DATA": str(data_dir)}
    env.pop("DASK_SCHEDULER_ADDRESS", None)
    if at is not None:
        hook_dir.mkdir(parents=True, exist_ok=True)
        (hook_dir / "sitecustomize.py").write_text(_HOOK)
        counter.unlink(missing_ok=True)
        env["PYTHONPATH"] = os.pathsep.join(
            [str(hook_dir), *filter(None, [env.get("PYTHONPATH")])])
        env["DASKFAIR_KILL_AT_WRITE"] = str(at)
        env["DASKFAIR_KILL_COUNTER"] = str(counter)
    return env


def run_job(args: list[str], env: dict[str, str], cwd: Path,
            timeout: float = 300) -> subprocess.CompletedProcess:
    """Run ``daskfair ARGS`` in a new process group (what the hook kills)."""
    return subprocess.run([sys.executable, "-m", "daskfair.cli", *args, "--no-progress"],
                          cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout,
                          start_new_session=True)


def count_writes(job: str, store: Path, work: Path, data_dir: Path) -> int:
    """How many file writes the job makes into its store (one uninterrupted run)."""
    counter = work / "writes.count"
    env = job_env(data_dir, work / "hook", 0, counter)
    proc = run_job([*JOBS[job], "--store", str(store)], env, work)
    if proc.returncode != 0:
        raise RuntimeError(f"{job} failed: {proc.stderr[-2000:]}")
    return counter.stat().st_size


def _plain(value: Any) -> Any:
    """Attributes without the timings, which differ between runs."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()
                if "seconds" not in k and k not in ("history", "started")}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def contents(store: Path) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """Every result array and the results attributes of a complete run (checked)."""
    from daskfair.store import open_run

    run = open_run(store, verify="contents")
    arrays = {name: run.read_array(name) for name in run.array_names()}
    attrs = {k: v for k, v in run.attrs.items() if k not in ("daskfair", "checkpoint")}
    return arrays, _plain(attrs)


def judge(store: Path, reference: tuple[dict[str, np.ndarray], dict[str, Any]]) -> str:
    """"complete", "wrong" (complete but unlike the reference), "incomplete", "corrupt" or
    "empty" (the kill came before the run's first write)."""
    from daskfair.store import CorruptStoreError, IncompleteRunError, StoreError

    try:
        arrays, attrs = contents(store)
    except CorruptStoreError:
        return "corrupt"
    except IncompleteRunError:
        return "incomplete"
    except StoreError:
        if not (store / "zarr.json").exists():
            return "empty"
        raise
    want_arrays, want_attrs = reference
    same = (set(arrays) == set(want_arrays) and attrs == want_attrs
            and all(np.array_equal(arrays[k], want_arrays[k]) for k in arrays))
    return "complete" if same else "wrong"


def finish(job: str, store: Path, work: Path, data_dir: Path, kill_at: int | None) -> str:
    """Take the interrupted store on as a user would: resume it (``--resume``) when it holds
    a run to resume, else start it again (``--overwrite``); both with ``--break-lock``, since
    the killed run's lease is left behind. With ``kill_at``, that run is killed too."""
    from daskfair.store import StoreError, open_run

    try:
        resumable = job in RESUMABLE and not open_run(
            store, allow_incomplete=True, verify=None).is_complete
    except StoreError:
        resumable = False
    how = ["--resume"] if resumable else ["--overwrite"]
    env = job_env(data_dir, work / "hook", kill_at, work / "writes.count")
    proc = run_job([*JOBS[job], "--store", str(store), *how, "--break-lock"], env, work)
    if kill_at is None and proc.returncode != 0:
        raise RuntimeError(f"{job} {how[0]} failed: {proc.stderr[-2000:]}")
    return how[0]
