"""SLURM and PBS clusters through dask-jobqueue (the ``hpc`` extra).

The client starts a ``SLURMCluster``/``PBSCluster`` from dask's ``jobqueue`` configuration
(``~/.config/dask/jobqueue.yaml``, or a file given here such as ``cluster/jobqueue.yaml``),
submits ``jobs`` batch jobs, each running Dask workers that connect back to the scheduler
in this process. For batch scripts that run everything inside one allocation, see
``cluster/README.md``.
"""

from __future__ import annotations

import os
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
    cluster = getattr(dask_jobqueue, JOBQUEUE_SYSTEMS[system])(**kwargs)
    cluster.scale(jobs=jobs)
    return cluster
