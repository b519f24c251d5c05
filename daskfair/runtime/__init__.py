"""Where the work runs: Dask clients and SLURM/PBS clusters.

The names exported here are the public API. :func:`get_client`, :func:`client_context`,
:func:`close_client` and :func:`task_client` choose and start clients (:mod:`.clients`);
:func:`jobqueue_cluster` runs workers in batch jobs (:mod:`.jobqueue`, the ``hpc`` extra).
The other modules serve the methods: :mod:`.batch_jobs` watches the batch jobs,
:mod:`.inprocess` runs tasks on this process's threads, :mod:`.recovery` and
:mod:`.iterative` let an iterative method outlive a lost worker and checkpoint into a store,
:mod:`.threads` pins the client's BLAS threads.
"""

from .clients import (
    VersionMismatchError,
    check_versions,
    client_context,
    close_client,
    dashboard_link,
    get_client,
    local_cluster_size,
    scheduler_from_environment,
    task_client,
    tls_security,
    worker_memory_limits,
)
from .jobqueue import (
    JOBQUEUE_SYSTEMS,
    format_walltime,
    jobqueue_cluster,
    load_jobqueue_config,
    parse_walltime,
    worker_lifetime,
)

__all__ = [
    "JOBQUEUE_SYSTEMS",
    "VersionMismatchError",
    "check_versions",
    "client_context",
    "close_client",
    "dashboard_link",
    "format_walltime",
    "get_client",
    "jobqueue_cluster",
    "load_jobqueue_config",
    "local_cluster_size",
    "parse_walltime",
    "scheduler_from_environment",
    "task_client",
    "tls_security",
    "worker_lifetime",
    "worker_memory_limits",
]
