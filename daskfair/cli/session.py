"""What every job shares: its client, its store and its data (:func:`run_job`)."""

from __future__ import annotations

import argparse
import contextlib
import socket
import sys
import textwrap
import warnings
from collections.abc import Callable
from typing import Any

from .params import stored_params

__all__ = ["TERMINATED", "check_store", "client_for", "load_data", "on_sigterm", "run_job"]

TERMINATED = "terminated (SIGTERM)"


def on_sigterm(signum: int, frame: Any) -> None:
    """SIGTERM as Ctrl-C: unwinding gives the store's lease back, so the job resumes
    anywhere without ``--break-lock`` (a batch system's time limit sends SIGTERM first)."""
    raise KeyboardInterrupt(TERMINATED)


def _check_tls(args: argparse.Namespace) -> tuple[Any, ...]:
    from ..runtime import scheduler_from_environment

    tls = (args.tls_ca_file, args.tls_cert, args.tls_key)
    if any(tls) and not (args.scheduler or scheduler_from_environment()):
        raise ValueError("--tls-ca-file/--tls-cert/--tls-key are for joining a TLS scheduler "
                         "(--scheduler or DASK_SCHEDULER_ADDRESS; a --jobqueue cluster makes "
                         "its own credentials).")
    return tls


def _check_batch_flags(args: argparse.Namespace) -> None:
    if args.scheduler and args.jobqueue:
        raise ValueError("give either --scheduler or --jobqueue, not both.")
    batch = {"--adapt": args.adapt, "--walltime": args.walltime,
             "--job-script-prologue": args.job_script_prologue,
             "--job-directives-skip": args.job_directives_skip, "--jobs": args.jobs}
    given = [flag for flag, value in batch.items() if value is not None]
    if given and not args.jobqueue:
        raise ValueError(f"{', '.join(given)} only apply with --jobqueue slurm|pbs.")


def cluster_kwargs(args: argparse.Namespace) -> dict[str, Any]:
    """``get_client``'s arguments from the --jobqueue and TLS flags, checked together."""
    from ..runtime import tls_security

    tls = _check_tls(args)
    _check_batch_flags(args)
    options = {"walltime": args.walltime,
               "adapt": tuple(args.adapt) if args.adapt else None,
               "job_script_prologue": args.job_script_prologue,
               "job_directives_skip": args.job_directives_skip}
    jobs = args.jobs if args.jobs is not None or args.adapt else 1
    return {"jobqueue": args.jobqueue, "jobs": jobs, "jobqueue_config": args.jobqueue_config,
            "jobqueue_wait": args.jobqueue_wait, "security": tls_security(*tls),
            "jobqueue_options": {k: v for k, v in options.items() if v is not None}}


def client_for(args: argparse.Namespace, in_process: bool = False) -> Any:
    """The job's client (a context manager); ``in_process`` jobs (SAfairKM, whose every task
    holds all rows) run in this process unless a cluster is asked for (--scheduler,
    --workers, --jobqueue or DASK_SCHEDULER_ADDRESS)."""
    from ..runtime import client_context, scheduler_from_environment, task_client

    cluster = cluster_kwargs(args)  # the flags are checked whichever way the job runs
    asked = args.scheduler or args.workers or args.jobqueue or scheduler_from_environment()
    if in_process and not asked:
        return contextlib.nullcontext(task_client())
    return client_context(args.scheduler, n_workers=args.workers, **cluster)


def _print_dashboard(client: Any) -> None:
    from ..runtime import dashboard_link

    link = dashboard_link(client)
    if not link:
        print("Dask dashboard: not available (pip install 'daskfair[dashboard]' for it)",
              flush=True)
        return
    print(f"Dask dashboard: {link}", flush=True)
    if link.startswith("http://127.0.0.1:") and "127.0.0.1" not in str(client.scheduler.address):
        port = link.split(":")[2].split("/")[0]
        print(f"  (on this machine only; from yours: ssh -N -L {port}:127.0.0.1:{port} "
              f"{socket.gethostname()}, then open {link})", flush=True)


def announce(client: Any) -> None:
    """Say where the job runs (and where its dashboard is)."""
    from ..runtime.inprocess import InProcessClient

    if isinstance(client, InProcessClient):
        print(f"running in this process on {client.n_threads} threads (every task holds all "
              "rows; --workers N or --scheduler ADDRESS to use a Dask cluster)", flush=True)
        return
    print(f"Dask cluster: {len(client.scheduler_info()['workers'])} workers "
          f"({client.scheduler.address})", flush=True)
    _print_dashboard(client)


def break_lock(args: argparse.Namespace) -> None:
    """``--break-lock``: remove a dead run's lock, saying so (a live one is refused)."""
    from ..store import break_lock as remove_lock

    if not args.break_lock:
        return
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        holder = remove_lock(args.store)
    for w in said:
        print(f"daskfair {args.command}: warning: {w.message}", file=sys.stderr)
    if holder is None:
        print(f"daskfair {args.command}: --break-lock: {args.store} has no lock to break",
              file=sys.stderr)


def check_store(args: argparse.Namespace, kind: str) -> None:
    """Refuse bad group-size flags and a store the job could not write before a cluster
    starts (``--break-lock`` first); the store check that holds is the lease, taken when the
    run starts."""
    from .._groups import check_group_size_params
    from ..store import check_new_store, resume_run

    check_group_size_params(args.min_group_size, args.small_groups)  # before a cluster starts
    break_lock(args)
    if getattr(args, "resume", False):
        resume_run(args.store, kind=kind, params=stored_params(args)).close()
    else:
        check_new_store(args.store, overwrite=args.overwrite)


def _wrapped(text: str) -> str:
    return textwrap.fill(text, width=96, subsequent_indent="  ")


def _describe(data: Any, args: argparse.Namespace, path: str | None) -> None:
    d = data.description
    if d.get("source") == "table":
        print(f"read {path}: {d['rows']:,} rows in {d['partitions']} partitions, "
              f"{data.X.shape[1]} feature columns", flush=True)
    if d.get("encoded"):
        levels = ", ".join(f"{c} ({n} levels)" for c, n in d["encoded"].items())
        print(_wrapped(f"one-hot encoded {levels} (--no-encode to refuse them instead)"))
    if d.get("constant"):
        print(f"note: constant feature column(s) {d['constant']} carry no information")


def load_data(args: argparse.Namespace, need_label: bool, *, path: str | None = None,
              features: list[str] | None = None,
              encode: bool | None = None) -> Any:
    """The job's data from --dataset or --input (or the table at ``path`` with the
    ``features`` columns), described on the terminal (small groups are the estimators' to
    merge: ``--min-group-size`` is their ``min_group_size``)."""
    from .inputs import load_input

    data = load_input(dataset=None if path else args.dataset, path=path or args.input,
                      label=args.label, sensitive=args.sensitive,
                      features=features or args.features,
                      sensitive_attribute=args.sensitive_attribute, data_dir=args.data_dir,
                      need_label=need_label, encode=args.encode if encode is None else encode,
                      max_levels=args.max_levels,
                      numeric_missing=args.numeric_missing, chunk_rows=args.chunk_rows,
                      task=getattr(args, "task", None))
    _describe(data, args, path or args.input)
    return data


def _interrupted(args: argparse.Namespace, exc: KeyboardInterrupt, started: bool) -> int:
    what = str(exc) or "interrupted"
    if not started:  # still loading the data: nothing was written
        print(f"\n{what} before the run started: {args.store} is as it was.", file=sys.stderr)
    else:
        print(f"\n{what}: the run in {args.store} is incomplete"
              + (". Continue it with the same command and --resume." if "resume" in vars(args)
                 else "; run the command again with --overwrite."), file=sys.stderr)
    return 143 if str(exc) == TERMINATED else 130


def run_job(args: argparse.Namespace, kind: str, job: Callable[..., str],
            in_process: bool = False, load: Callable[[], Any] | None = None) -> int:
    """Start the client, ``load()`` the data, create the run (only then: an input error
    leaves no store), run ``job(run, client, data)``, mark the run complete and print the
    text the job returns. Ctrl-C or SIGTERM leave the run incomplete and say how to go on."""
    from ..progress import show_progress
    from ..store import check_new_store, create_run, resume_run

    params = stored_params(args)
    resume = getattr(args, "resume", False)
    run = resume_run(args.store, kind=kind, params=params) if resume else None
    if run is None:  # refused before a cluster starts; created once it runs
        check_new_store(args.store, overwrite=args.overwrite)
    try:
        with (client_for(args, in_process) as client, show_progress(not args.no_progress),
              warnings.catch_warnings()):
            # in-memory inputs travel inside the graph on purpose (inputs.to_dask: a block
            # lost with a worker is sent again): the size warning has nothing to act on
            warnings.filterwarnings("ignore", message="Sending large graph")
            announce(client)
            data = load() if load is not None else None
            if run is None:  # checked again: another run may have finished there meanwhile
                run = create_run(args.store, kind=kind, params=params,
                                 overwrite=args.overwrite)
            text = job(run, client, data)
            run.mark_complete()
    except KeyboardInterrupt as exc:
        return _interrupted(args, exc, run is not None)
    finally:
        if run is not None:
            run.close()  # the lease: a run that stopped writes nothing more
    print("\n" + text)
    print(f"\nwritten to {run.path}")
    return 0
