"""Where the work runs: Dask clients (:mod:`.clients`) and SLURM/PBS clusters (:mod:`.jobqueue`).

The other modules serve the methods: batch jobs, in-process tasks, recovery from lost workers,
iterative runs in a store, BLAS threads."""

from .._lazy import lazy_names

_PUBLIC = {
    "JOBQUEUE_SYSTEMS": "jobqueue",
    "VersionMismatchError": "clients",
    "check_versions": "clients",
    "client_context": "clients",
    "close_client": "clients",
    "dashboard_link": "clients",
    "format_walltime": "jobqueue",
    "get_client": "clients",
    "jobqueue_cluster": "jobqueue",
    "load_jobqueue_config": "jobqueue",
    "local_cluster_size": "clients",
    "parse_walltime": "jobqueue",
    "scheduler_from_environment": "clients",
    "task_client": "clients",
    "tls_security": "clients",
    "worker_lifetime": "jobqueue",
    "worker_memory_limits": "clients",
}
__all__ = sorted(_PUBLIC)
__getattr__, __dir__ = lazy_names(__name__, _PUBLIC)
