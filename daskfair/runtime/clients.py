"""The one place that decides the Dask client (docs/design.md#where-the-work-runs)."""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import dask
import distributed
from distributed.security import Security

from .batch_jobs import wait_for_jobs
from .inprocess import InProcessClient
from .jobqueue import jobqueue_cluster

__all__ = ["VersionMismatchError", "check_versions", "client_context", "close_client",
           "dashboard_link", "get_client", "local_cluster_size", "scheduler_from_environment",
           "task_client", "tls_security", "worker_memory_limits"]

logger = logging.getLogger(__name__)

_OWNED: dict[int, Any] = {}  # clusters started here, by the id of their client


def local_cluster_size(n_workers: int | None = None) -> dict[str, Any]:
    """Worker layout for a LocalCluster on this machine: one single-threaded process per core.

    Parameters
    ----------
    n_workers : int, default=None
        Worker processes; None: one per core this process may run on.

    Returns
    -------
    dict
        ``n_workers``, ``threads_per_worker`` and ``memory_limit`` for ``LocalCluster``.

    Raises
    ------
    ValueError
        If ``n_workers`` is below 1.
    """
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    cores = max(1, cores or 1)
    n_workers = cores if n_workers is None else n_workers
    if n_workers < 1:
        raise ValueError(f"n_workers must be >= 1, got {n_workers}.")
    return {"n_workers": n_workers, "threads_per_worker": max(1, cores // n_workers),
            "memory_limit": "auto"}


def worker_memory_limits(client: Any) -> list[int]:
    """The memory limits in bytes of ``client``'s workers that have one.

    Parameters
    ----------
    client : distributed.Client or InProcessClient

    Returns
    -------
    list of int
    """
    workers = client.scheduler_info().get("workers", {}).values()
    return [v for v in (w.get("memory_limit") or 0 for w in workers) if v > 0]


def _current_client() -> distributed.Client | None:
    try:
        client = distributed.get_client()
    except ValueError:
        return None
    return None if client.status in {"closed", "closing"} else client


_IN_PROCESS: list[Any] = []
if hasattr(os, "register_at_fork"):  # a forked child has none of its parent's pool threads
    os.register_at_fork(after_in_child=_IN_PROCESS.clear)


def scheduler_from_environment() -> str | None:
    """``DASK_SCHEDULER_ADDRESS``, else dask's ``scheduler-address`` config key.

    Returns
    -------
    str or None
    """
    return os.environ.get("DASK_SCHEDULER_ADDRESS") or dask.config.get("scheduler-address",
                                                                       None)


def task_client(client: Any = None) -> Any:
    """The client for methods whose every task holds all rows (SAfairKM, VfairKM, SA2GD).

    ``client``, else the running client, else that of ``DASK_SCHEDULER_ADDRESS``, else this
    process's one :class:`~daskfair.runtime.inprocess.InProcessClient` (a thread pool).

    Parameters
    ----------
    client : distributed.Client, default=None
        Returned as it is when given.

    Returns
    -------
    distributed.Client or InProcessClient
    """
    if client is not None:
        return client
    current = _current_client()
    if current is not None:
        return current
    if scheduler_from_environment():
        return get_client()
    if not _IN_PROCESS:
        _IN_PROCESS.append(InProcessClient())
    return _IN_PROCESS[0]


def _scheduler_address(client: distributed.Client) -> str | None:
    try:
        return client.scheduler.address
    except AttributeError:  # pragma: no cover - client without a scheduler connection
        return None


def get_client(address: str | None = None, *, n_workers: int | None = None,
               processes: bool = True, dashboard_address: str | None = "127.0.0.1:8787",
               timeout: str = "30s", jobqueue: str | None = None, jobs: int | None = 1,
               jobqueue_config: str | os.PathLike[str] | None = None,
               jobqueue_wait: float = 600.0, jobqueue_options: dict[str, Any] | None = None,
               security: Any = None, **cluster_kwargs: Any) -> distributed.Client:
    """Return the Dask client daskfair should use, starting a LocalCluster if there is none.

    In order: ``address``; the client running in this process; ``DASK_SCHEDULER_ADDRESS``;
    a new LocalCluster. With ``jobqueue``, a new dask-jobqueue cluster instead.

    Parameters
    ----------
    address : str, default=None
        Scheduler address (``tcp://host:8786``) or scheduler file (``*.json``).
    n_workers : int, default=None
        Workers of a LocalCluster started here; None: one per core.
    processes : bool, default=True
        Start the LocalCluster with worker processes, or (False) threads in this process.
    dashboard_address : str or None, default="127.0.0.1:8787"
        Where a LocalCluster started here serves its dashboard; None: no dashboard.
    timeout : str, default="30s"
        How long to try reaching ``address`` (a Dask time).
    jobqueue : {"slurm", "pbs"}, default=None
        Start a :func:`~daskfair.runtime.jobqueue.jobqueue_cluster` of this batch system.
    jobs : int or None, default=1
        Batch jobs to keep running with ``jobqueue`` (None with ``adapt``).
    jobqueue_config : path-like, default=None
        A dask-jobqueue YAML file merged over dask's configuration.
    jobqueue_wait : float, default=600.0
        Seconds to wait for the first worker of the jobs.
    jobqueue_options : dict, default=None
        More keyword arguments of :func:`~daskfair.runtime.jobqueue.jobqueue_cluster`.
    security : distributed.security.Security, default=None
        TLS credentials for ``address`` (:func:`tls_security`); None: dask's configuration.
    **cluster_kwargs
        Passed on to :class:`distributed.LocalCluster`.

    Returns
    -------
    distributed.Client
        Also the process's default client.

    Raises
    ------
    ValueError
        On bad arguments (the message says which).
    ConnectionError
        If the scheduler cannot be reached, no jobqueue worker joined in time, or the
        versions differ (:class:`VersionMismatchError`).

    See Also
    --------
    client_context : The same, closed afterwards.
    close_client : Close a client and the cluster started for it.
    task_client : The client of the methods whose every task holds all rows.
    """
    if jobqueue is not None:
        if address is not None:
            raise ValueError("give either address= or jobqueue=, not both.")
        return _jobqueue_client(jobqueue, jobs, jobqueue_config, jobqueue_wait,
                                jobqueue_options or {})
    current = _current_client()
    if address is not None:
        if current is not None and _scheduler_address(current) == address:
            return current
        return _connect(address, timeout, security)
    if current is not None:
        return current
    if env := scheduler_from_environment():
        return _connect(env, timeout, security)
    layout = local_cluster_size(n_workers)
    layout.update(cluster_kwargs)
    layout["dashboard_address"] = dashboard_address
    cluster = distributed.LocalCluster(processes=processes, **layout)
    client = distributed.Client(cluster)
    _OWNED[id(client)] = cluster
    logger.info("started a LocalCluster: %s", cluster)
    return client


def _jobqueue_client(system: str, jobs: int | None, config: Any, wait: float,
                     options: dict[str, Any]) -> distributed.Client:
    cluster = jobqueue_cluster(system, jobs, config=config, **options)
    client = distributed.Client(cluster)
    _OWNED[id(client)] = cluster
    logger.info("submitted the first of %s %s job(s)", jobs or "adaptive", system)
    try:
        wait_for_jobs(client, cluster, system, wait)
        check_versions(client)
    except BaseException:
        try:
            close_client(client)
        except Exception as exc:  # jobs that never started can fail the cluster's close
            logger.warning("closing the %s cluster: %s", system, exc)
        raise
    return client


def tls_security(tls_ca_file: str | None = None, tls_cert: str | None = None,
                 tls_key: str | None = None) -> Any:
    """Client credentials for joining a TLS scheduler (``get_client``'s ``security``).

    Parameters
    ----------
    tls_ca_file : str, default=None
        The certificate authority that signed the scheduler's certificate.
    tls_cert : str, default=None
        This client's certificate.
    tls_key : str, default=None
        This client's private key; None when it is inside ``tls_cert``.

    Returns
    -------
    distributed.security.Security or None
        None when no file is given (dask's configuration applies).

    Raises
    ------
    ValueError
        If some files are given but not both ``tls_ca_file`` and ``tls_cert``.
    FileNotFoundError
        If a given file does not exist.
    """
    if tls_ca_file is None and tls_cert is None and tls_key is None:
        return None
    if tls_ca_file is None or tls_cert is None:
        raise ValueError("joining a TLS scheduler needs tls_ca_file and tls_cert (and tls_key "
                         "unless the key is in the certificate file).")
    for name, path in (("tls_ca_file", tls_ca_file), ("tls_cert", tls_cert),
                       ("tls_key", tls_key)):
        if path is not None and not os.path.isfile(path):
            raise FileNotFoundError(f"{name} {path} does not exist.")
    return Security(tls_ca_file=tls_ca_file, tls_client_cert=tls_cert, tls_client_key=tls_key,
                    require_encryption=True)


class VersionMismatchError(ConnectionError):
    """The client, the scheduler and the workers run different versions of what must match."""


# the same on client, scheduler and workers: tasks are pickled functions of this daskfair
SAME_VERSIONS = ("dask", "distributed", "daskfair", "cloudpickle", "msgpack")


def check_versions(client: distributed.Client) -> None:
    """Check that the client, the scheduler and the workers run the same versions.

    Parameters
    ----------
    client : distributed.Client
        Connected to the cluster to check.

    Raises
    ------
    VersionMismatchError
        Naming each of Python (major.minor), dask, distributed, daskfair, cloudpickle and
        msgpack that differs, and where.
    """
    versions = client.get_versions(packages=["daskfair"])
    where = {"this client": versions["client"]["packages"],
             "the scheduler": versions["scheduler"]["packages"],
             **{f"worker {a}": v["packages"] for a, v in versions["workers"].items()}}
    problems = []
    for package in ("python", *SAME_VERSIONS):
        seen: dict[str, list[str]] = {}
        for place, packages in where.items():
            value = str(packages.get(package))
            if package == "python":
                value = ".".join(value.split(".")[:2])
            seen.setdefault(value, []).append(place)
        if len(seen) > 1:
            problems.append(f"{package}: " + "; ".join(
                f"{value} on {', '.join(places)}" for value, places in seen.items()))
    if problems:
        raise VersionMismatchError(
            "the client, the scheduler and the workers run different versions:\n  "
            + "\n  ".join(problems) + "\nInstall the same environment everywhere (for "
            "jobqueue clusters: the `python` setting, or a job_script_prologue line that "
            "activates it).")


def _connect(address: str, timeout: str, security: Any = None) -> distributed.Client:
    if address.startswith("tls://") and security is None and not dask.config.get(
            "distributed.comm.tls.ca-file", None):
        raise ConnectionError(
            f"the scheduler at {address!r} speaks TLS: give its tls_ca_file, tls_cert and "
            "tls_key (security=tls_security(...)) or dask's distributed.comm.tls "
            "configuration.")
    kw: dict[str, Any] = {"timeout": timeout}
    if security is not None:
        kw["security"] = security
    where = {"scheduler_file": address} if address.endswith(".json") else {"address": address}
    try:
        client = distributed.Client(**where, **kw)
    except (OSError, TimeoutError) as exc:
        raise ConnectionError(
            f"Could not reach a Dask scheduler at {address!r} ({exc}). Check that the scheduler "
            "is running and the address is right (and, for TLS, the credentials), or leave "
            "the address out to start a local cluster.") from exc
    logger.info("connected to the Dask scheduler at %s", address)
    try:
        check_versions(client)
    except BaseException:
        client.close()
        raise
    return client


def close_client(client: distributed.Client) -> None:
    """Close ``client`` and, if :func:`get_client` started it, its cluster.

    Parameters
    ----------
    client : distributed.Client
    """
    cluster = _OWNED.pop(id(client), None)
    client.close()
    if cluster is not None:
        cluster.close()


@contextmanager
def client_context(address: str | None = None, **kwargs: Any) -> Iterator[distributed.Client]:
    """``with client_context() as client:`` — :func:`get_client`, closed afterwards if new.

    Parameters
    ----------
    address : str, default=None
    **kwargs
        Passed to :func:`get_client`.
    """
    existing = _current_client()
    client = get_client(address, **kwargs)
    try:
        yield client
    finally:
        if client is not existing:
            close_client(client)


def dashboard_link(client: distributed.Client) -> str | None:
    """The dashboard URL of ``client``'s scheduler, or None when it serves none.

    Parameters
    ----------
    client : distributed.Client

    Returns
    -------
    str or None
    """
    try:
        info = client.scheduler_info()
    except Exception:  # pragma: no cover - scheduler gone
        return None
    port = info.get("services", {}).get("dashboard")
    if port is None:
        return None
    if _dashboard_on_loopback(_OWNED.get(id(client))):
        return f"http://127.0.0.1:{port}/status"
    return client.dashboard_link


def _dashboard_on_loopback(cluster: Any) -> bool:
    # a jobqueue dashboard is on loopback, not at the scheduler's address distributed uses
    if cluster is None or isinstance(cluster, distributed.LocalCluster):
        return False
    options = (getattr(cluster, "scheduler_spec", None) or {}).get("options", {})
    return str(options.get("dashboard_address", "")).startswith(("127.", "localhost"))
