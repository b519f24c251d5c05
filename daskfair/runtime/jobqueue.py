"""SLURM and PBS clusters through dask-jobqueue (the ``hpc`` extra): TLS, a loopback
dashboard, workers that retire before the walltime (docs/design.md#where-the-work-runs)."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
import tempfile
import weakref
from pathlib import Path
from typing import Any

import dask
from dask.utils import parse_timedelta
from distributed.diagnostics.plugin import SchedulerPlugin

from .batch_jobs import keep_jobs

__all__ = ["JOBQUEUE_SYSTEMS", "MIN_WALLTIME", "format_walltime", "jobqueue_cluster",
           "load_jobqueue_config", "parse_walltime", "worker_lifetime"]

JOBQUEUE_SYSTEMS = {"slurm": "SLURMCluster", "pbs": "PBSCluster"}
MIN_WALLTIME = 30  # seconds: the shortest walltime whose workers can retire before it


def load_jobqueue_config(path: str | os.PathLike[str]) -> None:
    """Merge a dask-jobqueue YAML file (top-level key ``jobqueue``) into dask's configuration.

    Parameters
    ----------
    path : path-like
        Such as ``cluster/jobqueue.yaml``; keys it leaves out keep their values.

    Raises
    ------
    FileNotFoundError
        If there is no file at ``path``.
    ValueError
        If the file has no top-level ``jobqueue`` key.
    """
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


def parse_walltime(text: str | int, system: str = "slurm") -> int:
    """Seconds of a batch-system time limit.

    Parameters
    ----------
    text : str or int
        ``MM``, ``MM:SS``, ``HH:MM:SS``, ``D-HH``, ``D-HH:MM`` or ``D-HH:MM:SS``.
    system : {"slurm", "pbs"}, default="slurm"
        A bare number is minutes for SLURM, seconds for PBS.

    Returns
    -------
    int
        Seconds, at least 1.

    Raises
    ------
    ValueError
        If ``text`` is no such time limit, or is zero.
    """
    unit = 1 if system == "pbs" else 60
    if isinstance(text, int) and not isinstance(text, bool):
        return _positive(text * unit, text)
    m = re.fullmatch(r"\s*(?:(\d+)-)?(\d+)(?::(\d+))?(?::(\d+))?\s*", str(text))
    if m is None:
        raise ValueError(f"walltime {text!r} is not a time limit such as 01:30:00, 90 "
                         "(minutes) or 2-00:00:00 (days-hours:minutes:seconds).")
    days, a, b, c = m.groups()
    if days is not None:  # D-HH[:MM[:SS]]
        seconds = ((int(days) * 24 + int(a)) * 60 + int(b or 0)) * 60 + int(c or 0)
    elif c is not None:  # HH:MM:SS
        seconds = (int(a) * 60 + int(b)) * 60 + int(c)
    elif b is not None:  # MM:SS
        seconds = int(a) * 60 + int(b)
    else:  # a bare number
        seconds = int(a) * unit
    return _positive(seconds, text)


def _positive(seconds: int, text: Any) -> int:
    if seconds <= 0:
        raise ValueError(f"walltime {text!r} must be longer than zero.")
    return seconds


def format_walltime(seconds: int) -> str:
    """``seconds`` as ``HH:MM:SS``, the form SLURM and PBS both read.

    Parameters
    ----------
    seconds : int

    Returns
    -------
    str
    """
    hours, rest = divmod(int(seconds), 3600)
    return f"{hours:02d}:{rest // 60:02d}:{rest % 60:02d}"


def worker_lifetime(walltime: int) -> tuple[int, int]:
    """Dask's worker ``--lifetime`` and ``--lifetime-stagger`` for a job of ``walltime``.

    Parameters
    ----------
    walltime : int
        Seconds, at least 30.

    Returns
    -------
    (int, int)
        Seconds: the walltime less a sixth of it (15 s to 5 min), and a third of that margin.

    Raises
    ------
    ValueError
        If ``walltime`` is shorter than 30 s.
    """
    if walltime < MIN_WALLTIME:
        raise ValueError(f"walltime {walltime} s is too short: a worker needs time to start "
                         f"and to retire before it; give at least {MIN_WALLTIME} s.")
    margin = min(300, max(15, walltime // 6))
    stagger = max(1, margin // 3)
    return walltime - margin, stagger


def jobqueue_cluster(system: str, jobs: int | None = 1, *,
                     config: str | os.PathLike[str] | None = None,
                     walltime: str | int | None = None, adapt: tuple[int, int] | None = None,
                     job_script_prologue: list[str] | None = None,
                     job_directives_skip: list[str] | None = None, **kwargs: Any) -> Any:
    """Start a dask-jobqueue cluster of ``system`` and keep ``jobs`` batch jobs running.

    Parameters
    ----------
    system : {"slurm", "pbs"}
        The batch system.
    jobs : int or None, default=1
        Batch jobs to keep running (an ended one is replaced); None with ``adapt``.
    config : path-like, default=None
        A jobqueue YAML file merged over dask's configuration first.
    walltime : str or int, default=None
        Each job's time limit (:func:`parse_walltime`); None: the configuration's.
    adapt : (int, int), default=None
        ``(minimum, maximum)`` jobs for adaptive scaling, ``1 <= minimum <= maximum``.
    job_script_prologue : list of str, default=None
        Shell lines run in each job before its workers start, after the configuration's.
    job_directives_skip : list of str, default=None
        Drop the generated ``#SBATCH``/``#PBS`` lines containing one of these strings.
    **kwargs
        Passed to the cluster class (they win over the configuration).

    Returns
    -------
    dask_jobqueue.SLURMCluster or dask_jobqueue.PBSCluster
        Its ``close()`` cancels the jobs and removes the temporary credentials.

    Raises
    ------
    ValueError
        On bad arguments (the message says which).
    FileNotFoundError
        If ``config`` does not exist.
    ConnectionError
        If the batch system refused the first job (the message and the job script say why).
    """
    lo, hi = _job_bounds(system, jobs, adapt)
    try:
        import dask_jobqueue
    except ImportError as exc:
        raise ImportError("a jobqueue cluster needs dask-jobqueue: pip install "
                          "'daskfair[hpc]'.") from exc
    # after the import: the file must override dask-jobqueue's own defaults
    if config is not None:
        load_jobqueue_config(config)
    kwargs.update(_job_options(system, walltime, job_script_prologue, job_directives_skip,
                               kwargs))
    cluster_class = getattr(dask_jobqueue, JOBQUEUE_SYSTEMS[system])
    cluster, credentials = _start_cluster(cluster_class, system, kwargs)
    try:
        _keep_jobs_running(cluster, system, lo, hi)
    except BaseException:
        if credentials is not None:
            credentials.remove()
        raise
    return cluster


def _job_bounds(system: str, jobs: int | None, adapt: tuple[int, int] | None
                ) -> tuple[int, int]:
    """The fewest and most jobs to keep, from ``jobs`` or ``adapt`` (checked)."""
    if system not in JOBQUEUE_SYSTEMS:
        raise ValueError(f"system= must be one of {sorted(JOBQUEUE_SYSTEMS)}, got {system!r}.")
    if adapt is None:
        if jobs is None or jobs < 1:
            raise ValueError(f"jobs={jobs} must be >= 1.")
        return jobs, jobs
    if jobs is not None:
        raise ValueError("give either jobs= or adapt=, not both.")
    lo, hi = adapt
    # with a minimum of 0 the adaptive loop would cancel the first job before its worker
    if not 1 <= lo <= hi:
        raise ValueError(f"adapt= needs (MIN, MAX) with 1 <= MIN <= MAX, got ({lo}, {hi}).")
    return lo, hi


class _Credentials(SchedulerPlugin):
    """The workers' TLS credentials in a private folder, removed when the scheduler closes."""

    name = "daskfair-credentials"

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._finalizer: weakref.finalize | None = None

    def attach(self, cluster: Any) -> None:
        # dask-jobqueue holds the credential files open (they delete themselves when closed)
        handles = [getattr(cluster, f"_job_{key}", None) for key in ("ca_file", "cert", "key")]
        self._finalizer = weakref.finalize(cluster, _remove_credentials, handles, self.folder)
        cluster.scheduler.add_plugin(self)

    def remove(self) -> None:
        """Remove the credentials now (once; later calls do nothing)."""
        if self._finalizer is None:
            shutil.rmtree(self.folder, ignore_errors=True)
        else:
            self._finalizer()

    async def close(self) -> None:
        self.remove()


def _remove_credentials(handles: list[Any], folder: Path) -> None:
    for handle in handles:
        if handle is not None:
            handle.close()
    shutil.rmtree(folder, ignore_errors=True)


def _start_cluster(cluster_class: type, system: str, kwargs: dict[str, Any]
                   ) -> tuple[Any, _Credentials | None]:
    """The cluster, with its own TLS credentials unless given, its dashboard on loopback."""
    credentials = None
    if "security" not in kwargs and not _own_tls():
        credentials = _Credentials(_private_folder(system, kwargs))
        kwargs["security"] = True
        kwargs["shared_temp_directory"] = str(credentials.folder)
    options = dict(dask.config.get(f"jobqueue.{system}.scheduler-options", {}) or {})
    options.update(kwargs.pop("scheduler_options", {}) or {})
    options.setdefault("dashboard_address", "127.0.0.1:8787")
    try:
        cluster = cluster_class(scheduler_options=options, **kwargs)
    except BaseException:
        if credentials is not None:
            credentials.remove()
        raise
    if credentials is not None:
        credentials.attach(cluster)
    return cluster, credentials


def _keep_jobs_running(cluster: Any, system: str, lo: int, hi: int) -> None:
    """Submit ``lo`` jobs and keep between ``lo`` and ``hi`` running."""
    # adaptive also between equal bounds: a fixed scale() never replaces a job that ended
    cluster.scale(jobs=lo)
    _submitted(cluster, system)
    cluster.adapt(minimum_jobs=lo, maximum_jobs=hi)
    cluster.loop.add_callback(keep_jobs, cluster, system)


def _submitted(cluster: Any, system: str) -> None:
    """Wait for the first submission; if it was refused, close the cluster and raise why."""
    correct = getattr(cluster, "_correct_state", None)
    if correct is None:  # pragma: no cover - a distributed without it: the wait reports
        return
    try:
        cluster.sync(correct, callback_timeout=600)
        refused = [job for job in list(cluster.workers.values())
                   if not getattr(job, "job_id", None)]
        why = _refusal(cluster, system) if refused else None
    except Exception as exc:
        why = str(exc)
    if why is None:
        return
    script = cluster.job_script()
    # a cluster whose job never started can fail its own close
    with contextlib.suppress(Exception):
        cluster.close()
    raise ConnectionError(
        f"submitting a {system} job failed: {why}\nCheck the jobqueue settings (queue, "
        "account, memory, walltime) against the site's limits. The job script was:\n"
        + script)


def _refusal(cluster: Any, system: str) -> str:
    """What the batch system says about the job script (SLURM: ``sbatch --test-only``)."""
    if system != "slurm":
        return "qsub refused the job (its message is in the log above)."
    with tempfile.NamedTemporaryFile("w", suffix=".sh", delete=False) as f:
        f.write(cluster.job_script())
    try:
        done = subprocess.run(["sbatch", "--test-only", f.name], capture_output=True,
                              text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"sbatch refused the job, and sbatch --test-only could not run ({exc})."
    finally:
        os.unlink(f.name)
    return (done.stderr or done.stdout).strip() or "sbatch refused the job."


def _check_own_lifetime(args: list[Any], walltime: int) -> None:
    """A worker ``--lifetime`` of the user's must end before the walltime."""
    words = [str(a) for a in args]
    for i, word in enumerate(words):
        value = (word.split("=", 1)[1] if word.startswith("--lifetime=")
                 else words[i + 1] if word == "--lifetime" and i + 1 < len(words) else None)
        if value is not None and parse_timedelta(value) > walltime - 15:
            raise ValueError(
                f"worker-extra-args give --lifetime {value}, but the walltime is "
                f"{format_walltime(walltime)}: the workers would be killed before they retire. "
                "Remove --lifetime (daskfair then sets one below the walltime) or shorten it.")


def _job_options(system: str, walltime: str | int | None, prologue: list[str] | None,
                 skip: list[str] | None, kwargs: dict[str, Any]) -> dict[str, Any]:
    """Cluster arguments for the walltime, workers' lifetime and job script, added to config's."""
    section = f"jobqueue.{system}"
    out: dict[str, Any] = {}
    if walltime is not None:
        out["walltime"] = format_walltime(parse_walltime(walltime, system))
    limit = out.get("walltime", kwargs.get("walltime", dask.config.get(f"{section}.walltime",
                                                                       None)))
    args = list(kwargs.get("worker_extra_args",
                           dask.config.get(f"{section}.worker-extra-args", None) or []))
    if limit and "--lifetime" not in [str(a).split("=")[0] for a in args]:
        lifetime, stagger = worker_lifetime(parse_walltime(limit, system))
        args += ["--lifetime", f"{lifetime}s", "--lifetime-stagger", f"{stagger}s"]
        out["worker_extra_args"] = args
    elif limit:
        _check_own_lifetime(args, parse_walltime(limit, system))
    for key, extra in (("job_script_prologue", prologue), ("job_directives_skip", skip)):
        if extra:  # after the configuration's own lines
            out[key] = [*(kwargs.get(key) or dask.config.get(
                f"{section}.{key.replace('_', '-')}", None) or []), *extra]
    return out


def _own_tls() -> bool:
    """Whether dask's configuration already names TLS credentials of the user's."""
    tls = dask.config.get("distributed.comm.tls", {}) or {}
    return bool(tls.get("ca-file") or (tls.get("scheduler") or {}).get("cert"))


def _private_folder(system: str, kwargs: dict[str, Any]) -> Path:
    """A folder of mode 0700 in the shared temporary directory (default: the working one)."""
    base = kwargs.pop("shared_temp_directory", None) or dask.config.get(
        f"jobqueue.{system}.shared-temp-directory", None) or os.getcwd()
    base = Path(os.path.expandvars(os.path.expanduser(str(base))))
    base.mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix=".daskfair-tls-", dir=base))  # mode 0700
