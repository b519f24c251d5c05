"""Where the work runs: Dask clients (:mod:`.clients`) and SLURM/PBS clusters (:mod:`.jobqueue`).

The other modules serve the methods: batch jobs, in-process tasks, recovery from lost workers,
iterative runs in a store, BLAS threads."""

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

__all__ = ["JOBQUEUE_SYSTEMS", "VersionMismatchError", "check_versions", "client_context",
           "close_client", "dashboard_link", "format_walltime", "get_client", "jobqueue_cluster",
           "load_jobqueue_config", "local_cluster_size", "parse_walltime",
           "scheduler_from_environment", "task_client", "tls_security", "worker_lifetime",
           "worker_memory_limits"]
