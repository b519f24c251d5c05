"""Where daskfair's work runs: the one place that decides the Dask client.

Order of precedence (docs/design.md §5.1):

1. an explicit ``address`` argument (``--scheduler`` on the command line);
2. the client already running in this process (``distributed.Client`` you created);
3. the ``DASK_SCHEDULER_ADDRESS`` environment variable (or dask's ``scheduler-address``
   configuration key);
4. otherwise a :class:`distributed.LocalCluster` of processes sized to this machine — except
   for the methods whose every task holds all rows (SAfairKM, VfairKM, SA2GD), which then run
   in this process on a thread pool (:func:`task_client`; same results, no cluster start).

Clusters started here are closed by :func:`close_client` or on leaving :func:`client_context`.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import dask
import distributed

__all__ = ["client_context", "close_client", "dashboard_link", "get_client",
           "local_cluster_size", "scheduler_from_environment", "task_client",
           "worker_memory_limits"]

logger = logging.getLogger(__name__)

# Clusters this module started, keyed by the id of the client that owns them.
_OWNED: dict[int, distributed.LocalCluster] = {}


def local_cluster_size(n_workers: int | None = None) -> dict[str, Any]:
    """Worker layout for a LocalCluster on this machine: one single-threaded process per core.

    Processes, not threads: the numba and numpy block functions release the GIL, but pandas and
    Python-level loops do not, and a process per core also isolates worker failures. Memory is
    split evenly between the workers.
    """
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    cores = max(1, cores or 1)
    if n_workers is None:
        n_workers = cores
    if n_workers < 1:
        raise ValueError(f"n_workers must be >= 1, got {n_workers}.")
    threads = max(1, cores // n_workers)
    return {"n_workers": n_workers, "threads_per_worker": threads, "memory_limit": "auto"}


def worker_memory_limits(client: Any) -> list[int]:
    """The memory limits of ``client``'s workers in bytes (workers without one left out)."""
    workers = client.scheduler_info().get("workers", {}).values()
    return [v for v in (w.get("memory_limit") or 0 for w in workers) if v > 0]


def _current_client() -> distributed.Client | None:
    try:
        client = distributed.get_client()
    except ValueError:
        return None
    return None if client.status in {"closed", "closing"} else client


_IN_PROCESS: list[Any] = []


def scheduler_from_environment() -> str | None:
    """``DASK_SCHEDULER_ADDRESS``, else dask's ``scheduler-address`` configuration key."""
    return os.environ.get("DASK_SCHEDULER_ADDRESS") or dask.config.get("scheduler-address",
                                                                       None)


def task_client(client: Any = None) -> Any:
    """The client for methods whose every task holds all rows (SAfairKM, VfairKM, SA2GD).

    ``client`` if given, else the running client (yours, ``--scheduler``'s), else this
    process's :class:`~daskfair._inprocess.InProcessClient` (a thread pool, created once):
    such data fits in one process, and the same tasks give the same results there without
    starting a cluster.
    """
    if client is not None:
        return client
    current = _current_client()
    if current is not None:
        return current
    if scheduler_from_environment():
        return get_client()
    if not _IN_PROCESS:
        from ._inprocess import InProcessClient

        _IN_PROCESS.append(InProcessClient())
    return _IN_PROCESS[0]


def _scheduler_address(client: distributed.Client) -> str | None:
    try:
        return client.scheduler.address
    except AttributeError:  # pragma: no cover - client without a scheduler connection
        return None


def get_client(
    address: str | None = None,
    *,
    n_workers: int | None = None,
    processes: bool = True,
    dashboard_address: str | None = "127.0.0.1:8787",
    timeout: str = "30s",
    jobqueue: str | None = None,
    jobs: int = 1,
    jobqueue_config: str | os.PathLike[str] | None = None,
    jobqueue_wait: float = 600.0,
    **cluster_kwargs: Any,
) -> distributed.Client:
    """Return the Dask client daskfair should use, starting a LocalCluster if there is none.

    Parameters
    ----------
    address : str, optional
        Scheduler address (``tcp://host:8786``) or a scheduler file path (``*.json``). Wins
        over everything else.
    n_workers : int, optional
        Workers of a LocalCluster started here (default: one per core). Ignored when joining
        an existing scheduler.
    processes : bool
        Start the LocalCluster with worker processes (default) or threads in this process.
    dashboard_address : str or None
        Where a LocalCluster started here serves its dashboard (needs ``bokeh``): this
        machine's loopback by default, since the dashboard has no authentication and shows
        logs, task names and call stacks (Dask turns ``":8787"`` into every interface);
        ``None`` disables it. If the port is taken, a free one is chosen.
    jobqueue : {"slurm", "pbs"}, optional
        Start a dask-jobqueue cluster instead (:func:`daskfair.hpc.jobqueue_cluster`) with
        ``jobs`` batch jobs, configured by dask's ``jobqueue`` configuration or the file
        ``jobqueue_config``; wait up to ``jobqueue_wait`` seconds for the first worker.
    **cluster_kwargs
        Passed on to :class:`distributed.LocalCluster`.

    Returns
    -------
    distributed.Client
        It is also the process's default client, so ``dask.compute`` runs on it.
    """
    if jobqueue is not None:
        if address is not None:
            raise ValueError("give either --scheduler or --jobqueue, not both.")
        return _jobqueue_client(jobqueue, jobs, jobqueue_config, jobqueue_wait)
    current = _current_client()
    if address is not None:
        if current is not None and _scheduler_address(current) == address:
            return current
        return _connect(address, timeout)
    if current is not None:
        return current
    env = scheduler_from_environment()
    if env:
        return _connect(env, timeout)
    layout = local_cluster_size(n_workers)
    layout.update(cluster_kwargs)
    if dashboard_address is None:
        layout["dashboard_address"] = None
    else:
        layout["dashboard_address"] = dashboard_address
    cluster = distributed.LocalCluster(processes=processes, **layout)
    client = distributed.Client(cluster)
    _OWNED[id(client)] = cluster
    logger.info("started a LocalCluster: %s", cluster)
    return client


def _jobqueue_client(system: str, jobs: int, config: Any, wait: float) -> distributed.Client:
    from .hpc import jobqueue_cluster

    cluster = jobqueue_cluster(system, jobs, config=config)
    client = distributed.Client(cluster)
    _OWNED[id(client)] = cluster
    logger.info("submitted %d %s job(s)", jobs, system)
    try:
        client.wait_for_workers(1, timeout=wait)
    except TimeoutError:
        try:
            close_client(client)
        except Exception as exc:  # jobs that never started can fail the cluster's close
            logger.warning("closing the %s cluster: %s", system, exc)
        raise ConnectionError(
            f"no worker of the {jobs} {system} job(s) joined within {wait:g} s. Check the "
            "queue (squeue / qstat) and the jobs' logs; raise --jobqueue-wait if the queue is "
            "slow.") from None
    return client


def _connect(address: str, timeout: str) -> distributed.Client:
    try:
        if address.endswith(".json"):
            client = distributed.Client(scheduler_file=address, timeout=timeout)
        else:
            client = distributed.Client(address, timeout=timeout)
    except (OSError, TimeoutError) as exc:
        raise ConnectionError(
            f"Could not reach a Dask scheduler at {address!r} ({exc}). Check that the scheduler "
            "is running and the address is right, or leave the address out to start a local "
            "cluster."
        ) from exc
    logger.info("connected to the Dask scheduler at %s", address)
    return client


def close_client(client: distributed.Client) -> None:
    """Close ``client`` and, if :func:`get_client` started it, its LocalCluster."""
    cluster = _OWNED.pop(id(client), None)
    client.close()
    if cluster is not None:
        cluster.close()


@contextmanager
def client_context(address: str | None = None, **kwargs: Any) -> Iterator[distributed.Client]:
    """``with client_context() as client:`` — :func:`get_client`, closed afterwards if new.

    A client that already existed (yours, or the process's default) is left open.
    """
    existing = _current_client()
    client = get_client(address, **kwargs)
    try:
        yield client
    finally:
        if client is not existing:
            close_client(client)


def dashboard_link(client: distributed.Client) -> str | None:
    """The dashboard URL of ``client``'s scheduler, or None when it serves none (no bokeh)."""
    try:
        info = client.scheduler_info()
    except Exception:  # pragma: no cover - scheduler gone
        return None
    if "dashboard" not in info.get("services", {}):
        return None
    return client.dashboard_link
