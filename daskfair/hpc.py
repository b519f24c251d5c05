"""SLURM and PBS clusters through dask-jobqueue (the ``hpc`` extra).

The client starts a ``SLURMCluster``/``PBSCluster`` from dask's ``jobqueue`` configuration
(``~/.config/dask/jobqueue.yaml``, or a file given here such as ``cluster/jobqueue.yaml``),
submits ``jobs`` batch jobs, each running Dask workers that connect back to the scheduler
in this process. For batch scripts that run everything inside one allocation, see
``cluster/README.md``.

A Dask scheduler runs whatever code a connecting client sends, and a login node's network is
shared with every user of the cluster: the scheduler therefore speaks TLS by default, with
temporary credentials made for this cluster alone (dask-jobqueue's ``security=True``; the
``cryptography`` package of the ``hpc`` extra). The workers' copies of the credentials are
written to a private folder (mode 0700) beside the jobs' shared working directory and removed
when the cluster closes. Credentials of your own (``security=`` or dask's
``distributed.comm.tls`` configuration) are used as they are. The scheduler's dashboard
listens on the login node's loopback: reach it through an ssh tunnel.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import weakref
from pathlib import Path
from typing import Any

import dask

__all__ = ["JOBQUEUE_SYSTEMS", "jobqueue_cluster", "load_jobqueue_config"]

#: ``--jobqueue`` values and the dask-jobqueue cluster class of each.
JOBQUEUE_SYSTEMS = {"slurm": "SLURMCluster", "pbs": "PBSCluster"}


def load_jobqueue_config(path: str | os.PathLike[str]) -> None:
    """Merge a dask-jobqueue YAML file (top-level key ``jobqueue``) into dask's config."""
    import yaml

    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"jobqueue configuration {p} does not exist.")
    with p.open() as f:
        cfg = yaml.safe_load(f) or {}
    if not isinstance(cfg, dict) or "jobqueue" not in cfg:
        raise ValueError(f"{p} has no top-level 'jobqueue' key; see cluster/jobqueue.yaml for "
                         "the layout.")
    dask.config.update(dask.config.config, cfg, priority="new")


def jobqueue_cluster(
    system: str, jobs: int, *, config: str | os.PathLike[str] | None = None, **kwargs: Any
) -> Any:
    """Start a dask-jobqueue cluster of ``system`` and ask for ``jobs`` batch jobs.

    Parameters
    ----------
    system : {"slurm", "pbs"}
    jobs : int
        Batch jobs to submit (each runs the configured worker processes).
    config : path-like, optional
        A jobqueue YAML file merged over dask's configuration first.
    **kwargs
        Passed to the cluster class (they win over the configuration).
    """
    if system not in JOBQUEUE_SYSTEMS:
        raise ValueError(f"--jobqueue must be one of {sorted(JOBQUEUE_SYSTEMS)}, got "
                         f"{system!r}.")
    if jobs < 1:
        raise ValueError(f"--jobs must be >= 1, got {jobs}.")
    try:
        import dask_jobqueue
    except ImportError as exc:
        raise ImportError("--jobqueue needs dask-jobqueue: pip install 'daskfair[hpc]'.") \
            from exc
    # after the import: dask-jobqueue loads its own defaults, which the file must override
    if config is not None:
        load_jobqueue_config(config)
    private = None
    if "security" not in kwargs and not _own_tls():
        private = _private_folder(system, kwargs)
        kwargs["security"] = True
        kwargs["shared_temp_directory"] = str(private)
    options = dict(dask.config.get(f"jobqueue.{system}.scheduler-options", {}) or {})
    options.update(kwargs.pop("scheduler_options", {}) or {})
    options.setdefault("dashboard_address", "127.0.0.1:8787")
    try:
        cluster = getattr(dask_jobqueue, JOBQUEUE_SYSTEMS[system])(
            scheduler_options=options, **kwargs)
    except BaseException:
        if private is not None:
            shutil.rmtree(private, ignore_errors=True)
        raise
    if private is not None:
        # the credential files go with the cluster, whichever way it ends: at close, or when
        # it is collected (a finalizer runs once)
        handles = [getattr(cluster, f"_job_{key}", None) for key in ("ca_file", "cert", "key")]
        forget = weakref.finalize(cluster, _remove_credentials, handles, private)
        close = cluster.close

        def close_and_forget(*args: Any, **kw: Any) -> Any:
            try:
                return close(*args, **kw)
            finally:
                forget()

        cluster.close = close_and_forget
        cluster.credentials_folder = private
    cluster.scale(jobs=jobs)
    return cluster


def _remove_credentials(handles: list[Any], folder: Path) -> None:
    # dask-jobqueue holds the credential files open (they delete themselves when closed);
    # then the folder goes
    for handle in handles:
        if handle is not None:
            handle.close()
    shutil.rmtree(folder, ignore_errors=True)


def _own_tls() -> bool:
    """Whether dask's configuration already names TLS credentials of the user's."""
    tls = dask.config.get("distributed.comm.tls", {}) or {}
    return bool(tls.get("ca-file") or (tls.get("scheduler") or {}).get("cert"))


def _private_folder(system: str, kwargs: dict[str, Any]) -> Path:
    """A folder only this user can read, where the jobs can see it: inside the configured
    shared temporary directory, else the working directory (dask-jobqueue's default)."""
    base = kwargs.pop("shared_temp_directory", None) or dask.config.get(
        f"jobqueue.{system}.shared-temp-directory", None) or os.getcwd()
    base = Path(os.path.expandvars(os.path.expanduser(str(base))))
    base.mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix=".daskfair-tls-", dir=base))  # mode 0700
