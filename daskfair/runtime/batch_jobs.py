"""What the batch system says about a jobqueue cluster's jobs: waiting for the first worker,
errors that show the job script, the queue and the end of the logs, replacing ended jobs."""

from __future__ import annotations

import asyncio
import getpass
import logging
import re
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

import dask
from dask.utils import parse_timedelta
from distributed.core import Status

logger = logging.getLogger(__name__)

# SLURM states of a job that will start no worker any more (not PREEMPTED: it may requeue)
ENDED = {"BOOT_FAIL", "CANCELLED", "COMPLETED", "DEADLINE", "FAILED", "NODE_FAIL",
         "OUT_OF_MEMORY", "TIMEOUT"}
GONE = "gone from the queue"

_QUEUE_COMMANDS = {"slurm": ["squeue", "--noheader", "--states=all", "--format=%i %T %r"],
                   "pbs": ["qstat"]}


def job_ids(cluster: Any) -> list[str]:
    """Ids of the jobs ``cluster`` has submitted and not closed."""
    return [str(job.job_id) for job in list(cluster.workers.values())
            if getattr(job, "job_id", None)]


def queue_listing(system: str) -> tuple[bool, str]:
    """``(ok, text)``: this user's jobs as the batch system lists them, or why not."""
    command = list(_QUEUE_COMMANDS[system])
    if shutil.which(command[0]) is None:
        return False, f"({command[0]} not found)"
    command += ["--user", getpass.getuser()] if system == "slurm" else ["-u", getpass.getuser()]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return False, f"({' '.join(command)} failed: {exc})"
    return done.returncode == 0, (done.stdout + done.stderr).strip()


def ended_jobs(system: str, ids: list[str], seen: set[str]) -> dict[str, str]:
    """Those of ``ids`` that ended, with their state (SLURM only; ``seen``: ids listed so far)."""
    if system != "slurm" or not ids:
        return {}
    ok, listing = queue_listing(system)
    if not ok:
        return {}
    states = {p[0]: p[1] for p in map(str.split, listing.splitlines()) if len(p) >= 2}
    seen.update(i for i in ids if i in states)
    ended = {i: states[i] for i in ids if states.get(i) in ENDED}
    ended.update({i: GONE for i in ids if i in seen and i not in states})
    return ended


def _log_tails(cluster: Any, ids: list[str], lines: int = 15) -> list[str]:
    folder = getattr(cluster._dummy_job, "log_directory", None)
    if not folder:
        return ["(no log-directory is configured: set jobqueue.<system>.log-directory to keep "
                "the jobs' output)"]
    files = sorted((p for p in Path(folder).glob("*") if p.is_file()),
                   key=lambda p: p.stat().st_mtime)
    tokens = [re.compile(rf"(^|\D){re.escape(i.split('.')[0])}(\D|$)") for i in ids]
    mine = [p for p in files if any(t.search(p.name) for t in tokens)]
    out = []
    for path in mine[-4:]:
        text = path.read_text(errors="replace").splitlines()[-lines:]
        out.append(f"--- {path} (last {len(text)} lines)")
        out.extend(f"  {line}" for line in text)
    return out or [f"(no log file of these jobs in {folder}: they have not started)"]


def describe(cluster: Any, system: str, ids: list[str]) -> str:
    """The job script, the queue and the end of the jobs' logs, as one text."""
    parts = ["job script:", *(f"  {line}" for line in cluster.job_script().splitlines())]
    _, listing = queue_listing(system)
    command = _QUEUE_COMMANDS[system][0]
    parts.append(f"queue ({command}): jobs {', '.join(ids) or 'none'}")
    parts.extend(f"  {line}" for line in listing.splitlines() or ["(empty)"])
    parts.append("worker logs:")
    parts.extend(_log_tails(cluster, ids))
    return "\n".join(parts)


def wait_for_jobs(client: Any, cluster: Any, system: str, timeout: float,
                  poll: float = 1.0) -> None:
    """Return once a worker joined; raise ConnectionError on ``timeout`` or an ended job."""
    deadline = time.monotonic() + timeout
    submitted: set[str] = set()
    listed: set[str] = set()
    while True:
        if client.scheduler_info().get("workers"):
            return
        submitted.update(job_ids(cluster))
        ended = ended_jobs(system, sorted(submitted), listed)
        if ended:
            states = ", ".join(f"{i} {s}" for i, s in sorted(ended.items()))
            raise ConnectionError(
                f"{system} job {states} ended before any worker joined."
                " The job script or the worker's environment is likely wrong (the Python "
                "path, a module to load, the venv to activate: see the log below; set the "
                "configuration's job-script-prologue or job_script_prologue).\n"
                + describe(cluster, system, sorted(submitted)))
        if time.monotonic() >= deadline:
            raise ConnectionError(
                f"no worker of the {system} job(s) joined within {timeout:g} s. If the jobs "
                "are still pending the queue is busy (raise jobqueue_wait); if they run, "
                "their workers cannot reach the scheduler (the interface setting, a "
                "firewall).\n" + describe(cluster, system, sorted(submitted)))
        time.sleep(poll)


async def keep_jobs(cluster: Any, system: str, interval: float = 2.0) -> None:
    """Drop the jobs that ended from ``cluster``, so that its adaptive loop replaces them."""
    grace = parse_timedelta(dask.config.get("distributed.deploy.lost-worker-timeout"))
    joined: set[str] = set()
    absent: dict[str, float] = {}
    listed: set[str] = set()
    last_queue = 0.0
    closing: set[asyncio.Future[None]] = set()
    loop = asyncio.get_running_loop()
    while cluster.status not in (Status.closing, Status.closed):
        await asyncio.sleep(interval)
        try:
            names = {str(w.get("name")) for w in cluster.scheduler_info.get(
                "workers", {}).values()}
            now = time.monotonic()
            drop = []
            for name, job in list(cluster.workers.items()):
                # a job's workers are `name`, or `name-0`, `name-1`, ... for several processes
                mine = re.compile(rf"{re.escape(str(name))}(-\d+)?")
                if any(mine.fullmatch(worker) for worker in names):
                    joined.add(name)
                    absent.pop(name, None)
                elif getattr(job, "job_id", None) is None:
                    drop.append((name, "its submission failed"))
                elif name in joined and now - absent.setdefault(name, now) > grace:
                    drop.append((name, "its workers left"))
            waiting = {str(job.job_id): name for name, job in cluster.workers.items()
                       if job.job_id and name not in joined}
            if waiting and now - last_queue > 5 * interval:
                last_queue = now
                ended = await loop.run_in_executor(None, ended_jobs, system, sorted(waiting),
                                                   listed)
                drop += [(waiting[i], f"it ended ({state}) before its workers joined")
                         for i, state in ended.items()]
            for name, why in drop:
                # the new job takes the same name: it starts as one not yet joined
                joined.discard(name)
                absent.pop(name, None)
                job = cluster.workers.pop(name, None)
                if job is not None:
                    logger.info("job %s of the %s cluster is replaced: %s", name, system, why)
                    closing.add(task := asyncio.ensure_future(_close_quietly(job)))
                    task.add_done_callback(closing.discard)
        except Exception as exc:  # the watch must outlive a bad poll
            logger.debug("keeping the jobs: %s", exc)
        # no job object may stay referenced here between polls: the cluster tracks the jobs
        # it created in a weak set, and checks at close that every one still there is closed
        job = None


async def _close_quietly(job: Any) -> None:
    # cancelling an ended job can fail; Job.close leaves the status the cluster's close checks
    try:
        await job.close()
    except Exception as exc:
        logger.debug("closing job %s: %s", getattr(job, "job_id", None), exc)
    finally:
        job.status = Status.closed
