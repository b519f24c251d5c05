"""What the batch system says about a jobqueue cluster's jobs, for waiting and for errors.

The client waits for the first worker of the jobs it submitted. When none arrives — the jobs
fail at once (a wrong Python path, a missing module), wait in a queue, or their workers cannot
reach the scheduler — the error shows what a user would otherwise look up by hand: the job
script, the jobs' states in the queue and the end of their logs.
"""

from __future__ import annotations

import getpass
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

#: SLURM states of a job that will start no worker any more
ENDED = {"BOOT_FAIL", "CANCELLED", "COMPLETED", "DEADLINE", "FAILED", "NODE_FAIL",
         "OUT_OF_MEMORY", "PREEMPTED", "TIMEOUT"}

#: queue listing of one user's jobs, by batch system
_QUEUE_COMMANDS = {
    "slurm": ["squeue", "--noheader", "--states=all", "--format=%i %T %r"],
    "pbs": ["qstat"],
}


def job_ids(cluster: Any) -> list[str]:
    """Ids of the jobs ``cluster`` has submitted and not closed."""
    return [str(job.job_id) for job in list(cluster.workers.values())
            if getattr(job, "job_id", None)]


def queue_listing(system: str) -> tuple[bool, str]:
    """This user's jobs as the batch system lists them: ``(ok, text)``, ``ok`` False when the
    command is missing or failed (``text`` then says why)."""
    command = list(_QUEUE_COMMANDS[system])
    if shutil.which(command[0]) is None:
        return False, f"({command[0]} not found)"
    command += ["--user", getpass.getuser()] if system == "slurm" else ["-u", getpass.getuser()]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return False, f"({' '.join(command)} failed: {exc})"
    return done.returncode == 0, (done.stdout + done.stderr).strip()


def ended_jobs(system: str, ids: list[str]) -> dict[str, str]:
    """Those of ``ids`` that ended, with their state (SLURM only; empty elsewhere, and when
    the queue cannot be read).

    A job the queue no longer lists has ended too (SLURM forgets finished jobs after
    ``MinJobAge``).
    """
    if system != "slurm" or not ids:
        return {}
    ok, listing = queue_listing(system)
    if not ok:
        return {}
    states = {}
    for line in listing.splitlines():
        parts = line.split()
        if len(parts) >= 2:
            states[parts[0]] = parts[1]
    gone = "gone from the queue"
    return {i: states.get(i, gone) for i in ids if states.get(i, gone) in ENDED | {gone}}


def _log_tails(cluster: Any, ids: list[str], lines: int = 15) -> list[str]:
    folder = getattr(cluster._dummy_job, "log_directory", None)
    if not folder:
        return ["(no log-directory is configured: set jobqueue.<system>.log-directory to keep "
                "the jobs' output)"]
    files = sorted((p for p in Path(folder).glob("*") if p.is_file()),
                   key=lambda p: p.stat().st_mtime)
    mine = [p for p in files if any(i.split(".")[0] in p.name for i in ids)] or files[-2:]
    out = []
    for path in mine[-4:]:
        text = path.read_text(errors="replace").splitlines()[-lines:]
        out.append(f"--- {path} (last {len(text)} lines)")
        out.extend(f"  {line}" for line in text)
    return out or [f"(no log file in {folder} yet: the jobs have not started)"]


def describe(cluster: Any, system: str, ids: list[str] | None = None) -> str:
    """The job script, the queue and the end of the jobs' logs, as one text."""
    ids = job_ids(cluster) if ids is None else ids
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
    """Return once a worker of ``cluster`` joined; raise ``ConnectionError`` with what the
    batch system says when none did within ``timeout`` seconds, or as soon as a job ended
    without one (SLURM: its states tell) — a job that ends before its worker joined has
    failed, and the cluster would only resubmit it."""
    deadline = time.monotonic() + timeout
    submitted: set[str] = set()
    while True:
        if client.scheduler_info().get("workers"):
            return
        ids = job_ids(cluster)
        submitted.update(ids)
        ended = ended_jobs(system, sorted(submitted))
        if ended:
            states = ", ".join(f"{i} {s}" for i, s in sorted(ended.items()))
            raise ConnectionError(
                f"{system} job {states} ended before any worker joined."
                " The job script or the worker's environment is likely wrong (the Python "
                "path, a module to load, the venv to activate: see the log below; set "
                "job-script-prologue / --job-script-prologue).\n"
                + describe(cluster, system, sorted(submitted)))
        if time.monotonic() >= deadline:
            raise ConnectionError(
                f"no worker of the {system} job(s) joined within {timeout:g} s. If the jobs "
                "are still pending the queue is busy (raise --jobqueue-wait); if they run, "
                "their workers cannot reach the scheduler (the interface setting, a "
                "firewall).\n" + describe(cluster, system, sorted(submitted)))
        time.sleep(poll)
