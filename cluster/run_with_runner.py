"""Run one daskfair job inside a SLURM allocation with dask-jobqueue's ``SLURMRunner``.

``srun`` starts this script once per task (see ``slurm/daskfair-runner.sbatch``)::

    srun python cluster/run_with_runner.py safairkm --dataset adult --store front.zarr

``SLURMRunner`` (dask-jobqueue >= 0.9) reads ``SLURM_PROCID``, ``SLURM_NTASKS`` and
``SLURM_JOB_ID``. Rank 0 becomes the scheduler and writes the scheduler file, rank 1 runs the
client code below (the daskfair command line, with ``--scheduler <scheduler file>`` appended),
every other rank becomes a worker. The scheduler and worker ranks never get past
``SLURMRunner(...)``: they serve until the client leaves the ``with`` block, which shuts the
scheduler down, and then exit with code 0. At least 3 tasks are needed.

Environment (all optional):

``DASKFAIR_SCHEDULER_FILE``
    Scheduler file on a filesystem all nodes share; ``{job_id}`` is replaced by the SLURM job id
    (default ``daskfair-{job_id}-scheduler.json`` in the working directory).
``DASKFAIR_RANK_LOG_DIR``
    If set, the scheduler and worker ranks write their output to
    ``daskfair-<job id>-scheduler.log`` / ``daskfair-<job id>-worker-<rank>.log`` there, so the
    job's output holds the client's alone.
``DASKFAIR_INTERFACE``
    Network interface for the scheduler and workers (``ib0``, ``eth0``, ...).
``DASKFAIR_DASHBOARD_ADDRESS``
    Where the scheduler serves its dashboard (default ``:8787``; another port if taken).
``DASKFAIR_STARTUP_TIMEOUT``
    Seconds the client waits for all workers before it starts with those it has (default 300).

Threads per worker: ``SLURM_CPUS_PER_TASK`` (default 1, one single-threaded worker per task).
Memory limit per worker: ``SLURM_MEM_PER_CPU`` times the threads, else dask's ``"auto"``.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

CLIENT_RANK = 1  # SLURMRunner: rank 0 = scheduler, rank 1 = client, others = workers
INTERRUPTED = (130, 143)  # the command line's exit codes after Ctrl-C and SIGTERM


def _redirect_rank_output() -> None:
    """Send a scheduler or worker rank's stdout/stderr to its own log file."""
    log_dir = os.environ.get("DASKFAIR_RANK_LOG_DIR")
    rank = int(os.environ.get("SLURM_PROCID", CLIENT_RANK))
    if not log_dir or rank == CLIENT_RANK:
        return
    job_id = os.environ.get("SLURM_JOB_ID", "0")
    role = "scheduler" if rank == 0 else f"worker-{rank}"
    os.makedirs(log_dir, exist_ok=True)
    fd = os.open(
        os.path.join(log_dir, f"daskfair-{job_id}-{role}.log"),
        os.O_WRONLY | os.O_CREAT | os.O_APPEND,
        0o644,
    )
    sys.stdout.flush()
    sys.stderr.flush()
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    os.close(fd)


def _worker_options() -> dict:
    threads = int(os.environ.get("SLURM_CPUS_PER_TASK") or 1)
    mem_per_cpu = os.environ.get("SLURM_MEM_PER_CPU")  # MB in SLURM's sense: MiB
    memory = f"{int(mem_per_cpu) * threads}MiB" if mem_per_cpu else "auto"
    options: dict = {"nthreads": threads, "memory_limit": memory}
    if os.environ.get("TMPDIR"):
        options["local_directory"] = os.environ["TMPDIR"]
    if os.environ.get("DASKFAIR_INTERFACE"):
        options["interface"] = os.environ["DASKFAIR_INTERFACE"]
    return options


def _scheduler_options() -> dict:
    options: dict = {
        "dashboard_address": os.environ.get("DASKFAIR_DASHBOARD_ADDRESS", ":8787"),
    }
    if os.environ.get("DASKFAIR_INTERFACE"):
        options["interface"] = os.environ["DASKFAIR_INTERFACE"]
    return options


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in {"-h", "--help"}:
        print(__doc__)
        return 0 if argv else 2
    if any(a == "--scheduler" or a.startswith("--scheduler=") for a in argv):
        print("run_with_runner.py: do not pass --scheduler, the runner's scheduler file is used",
              file=sys.stderr)
        return 2

    _redirect_rank_output()

    from dask_jobqueue.slurm import SLURMRunner
    from distributed import Client

    import daskfair.cli

    scheduler_file = os.environ.get("DASKFAIR_SCHEDULER_FILE", "daskfair-{job_id}-scheduler.json")
    timeout = float(os.environ.get("DASKFAIR_STARTUP_TIMEOUT", 300))
    # Scheduler and worker ranks stay inside this constructor until the client is done.
    with SLURMRunner(
        scheduler_file=scheduler_file,
        scheduler_options=_scheduler_options(),
        worker_options=_worker_options(),
    ) as runner, Client(runner) as client:
        # Only the client rank gets here.
        try:
            client.wait_for_workers(runner.n_workers, timeout=timeout)
        except TimeoutError:
            have = len(client.nthreads())
            if have == 0:
                print(f"error: no Dask worker connected within {timeout:.0f} s", file=sys.stderr)
                return 1
            print(f"warning: {have} of {runner.n_workers} workers after {timeout:.0f} s; "
                  "going on", file=sys.stderr)
        print(f"{len(client.nthreads())} Dask workers, scheduler file {runner.scheduler_file}",
              flush=True)
        rc = daskfair.cli.main([*argv, "--scheduler", str(runner.scheduler_file)])
        sys.stdout.flush()
        if rc in INTERRUPTED:
            # scancel and the time limit signal every task, so the scheduler rank is gone:
            # leaving the with block would wait for it (distributed's 30 s connect timeout).
            # The job has already given its store back; srun's --kill-on-bad-exit stops any
            # rank the signal missed.
            sys.stderr.flush()
            os._exit(rc)
    return rc


if __name__ == "__main__":
    sys.exit(main())
