"""SLURM and PBS clusters through dask-jobqueue (the ``hpc`` extra).

:func:`jobqueue_cluster` starts a ``SLURMCluster``/``PBSCluster`` from dask's ``jobqueue``
configuration (``~/.config/dask/jobqueue.yaml``, or a file such as ``cluster/jobqueue.yaml``)
and keeps its batch jobs running; their workers connect back to the scheduler in this process.
The scheduler speaks TLS with credentials made for this cluster alone, its dashboard listens
on loopback, and the workers retire before the walltime (docs/guide/cluster.md).
"""

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
from distributed.diagnostics.plugin import SchedulerPlugin

from .batch_jobs import keep_jobs

__all__ = ["JOBQUEUE_SYSTEMS", "MIN_WALLTIME", "format_walltime", "jobqueue_cluster",
           "load_jobqueue_config", "parse_walltime", "worker_lifetime"]

#: The batch systems and the dask-jobqueue cluster class of each.
JOBQUEUE_SYSTEMS = {"slurm": "SLURMCluster", "pbs": "PBSCluster"}

#: The shortest walltime (seconds) whose workers still live long enough to retire before it.
MIN_WALLTIME = 30


def load_jobqueue_config(path: str | os.PathLike[str]) -> None:
    """Merge a dask-jobqueue YAML file (top-level key ``jobqueue``) into dask's configuration.

    Parameters
    ----------
    path : path-like
        Such as ``cluster/jobqueue.yaml``; keys it leaves out keep their values.

    Raises
    ------
    FileNotFoundError
        No file at ``path``.
    ValueError
        The file has no top-level ``jobqueue`` key.
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

    Accepts SLURM's forms — ``MM``, ``MM:SS``, ``HH:MM:SS``, ``D-HH``, ``D-HH:MM``,
    ``D-HH:MM:SS`` — which include PBS's ``HH:MM:SS``. A bare number is minutes for SLURM
    and seconds for PBS, as each batch system reads it.

    Parameters
    ----------
    text : str or int
        The time limit.
    system : {"slurm", "pbs"}, default="slurm"
        Whose reading of a bare number applies.

    Returns
    -------
    int
        Seconds, at least 1.

    Raises
    ------
    ValueError
        ``text`` is not one of the forms above, or is zero.

    See Also
    --------
    format_walltime : The inverse, as ``HH:MM:SS``.

    Examples
    --------
    >>> from daskfair.runtime.jobqueue import parse_walltime
    >>> parse_walltime("01:30:00"), parse_walltime("2-00"), parse_walltime(90)
    (5400, 172800, 5400)
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
    """``HH:MM:SS``, the form SLURM and PBS both read.

    Parameters
    ----------
    seconds : int
        The time limit in seconds.

    Returns
    -------
    str

    See Also
    --------
    parse_walltime : The inverse.
    """
    hours, rest = divmod(int(seconds), 3600)
    return f"{hours:02d}:{rest // 60:02d}:{rest % 60:02d}"


def worker_lifetime(walltime: int) -> tuple[int, int]:
    """``(lifetime, stagger)`` in seconds for the workers of a job of ``walltime`` seconds.

    Each worker retires at ``lifetime`` ± a random part of ``stagger``, leaving time to start
    and to hand its results over: the margin below the walltime is a sixth of it, between 15 s
    and 5 minutes, and the stagger a third of the margin.

    Parameters
    ----------
    walltime : int
        Seconds, at least :data:`MIN_WALLTIME`.

    Returns
    -------
    (int, int)
        Dask's worker ``--lifetime`` and ``--lifetime-stagger`` in seconds.

    Raises
    ------
    ValueError
        ``walltime`` is shorter than :data:`MIN_WALLTIME`.

    Examples
    --------
    >>> from daskfair.runtime.jobqueue import worker_lifetime
    >>> worker_lifetime(3600)
    (3300, 100)
    """
    if walltime < MIN_WALLTIME:
        raise ValueError(f"walltime {walltime} s is too short: a worker needs time to start "
                         f"and to retire before it; give at least {MIN_WALLTIME} s.")
    margin = min(300, max(15, walltime // 6))
    stagger = max(1, margin // 3)
    return walltime - margin, stagger


def jobqueue_cluster(
    system: str,
    jobs: int | None = 1,
    *,
    config: str | os.PathLike[str] | None = None,
    walltime: str | int | None = None,
    adapt: tuple[int, int] | None = None,
    job_script_prologue: list[str] | None = None,
    job_directives_skip: list[str] | None = None,
    **kwargs: Any,
) -> Any:
    """Start a dask-jobqueue cluster of ``system`` and keep ``jobs`` batch jobs running.

    The scheduler runs here and speaks TLS, with credentials made for it unless ``security``
    or dask's configuration give some (the workers' copies in a folder of mode 0700 in the
    jobs' shared temporary directory, by default the working directory); its dashboard
    listens on loopback (docs/design.md#where-the-work-runs).

    Parameters
    ----------
    system : {"slurm", "pbs"}
        The batch system.
    jobs : int or None, default=1
        Batch jobs to keep running (each runs the configured worker processes); a job that
        ends — at its walltime, cancelled, its node lost — is replaced by a new one. None
        with ``adapt``.
    config : path-like, default=None
        A jobqueue YAML file merged over dask's configuration first
        (:func:`load_jobqueue_config`).
    walltime : str or int, default=None
        Each job's time limit (:func:`parse_walltime`); None: the configuration's. The
        workers retire a margin before it (:func:`worker_lifetime`) unless the
        configuration's ``worker-extra-args`` already give a ``--lifetime``.
    adapt : (int, int), default=None
        ``(minimum, maximum)``: scale between this many jobs with the work (dask's adaptive
        scaling) instead of a fixed ``jobs``; ``1 <= minimum <= maximum``.
    job_script_prologue : list of str, default=None
        Shell lines run in each job before its workers start (``module load ...``, the
        activation of an environment), after the configuration's own.
    job_directives_skip : list of str, default=None
        Drop the generated ``#SBATCH``/``#PBS`` lines that contain one of these strings,
        besides the configuration's.
    **kwargs
        Passed to the cluster class (they win over the configuration).

    Returns
    -------
    dask_jobqueue.SLURMCluster or dask_jobqueue.PBSCluster
        Its ``close()`` cancels the jobs and removes the temporary credentials.

    Raises
    ------
    ValueError
        An unknown ``system``; ``jobs`` below 1; both ``jobs`` and ``adapt``; bounds of
        ``adapt`` out of order; a ``walltime`` that is no time limit or too short for the
        workers to retire before it.
    ImportError
        dask-jobqueue is not installed.
    FileNotFoundError
        ``config`` does not exist.
    ConnectionError
        The batch system refused the first job (the message and the job script say why).

    See Also
    --------
    daskfair.runtime.get_client : Starts this cluster with ``jobqueue=`` and waits for its
        first worker.
    """
    lo, hi = _job_bounds(system, jobs, adapt)
    try:
        import dask_jobqueue
    except ImportError as exc:
        raise ImportError("a jobqueue cluster needs dask-jobqueue: pip install "
                          "'daskfair[hpc]'.") from exc
    # after the import: dask-jobqueue loads its own defaults, which the file must override
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
    # a minimum of 0 would let the adaptive loop cancel the first job (no work yet) before
    # its worker arrives
    if not 1 <= lo <= hi:
        raise ValueError(f"adapt= needs (MIN, MAX) with 1 <= MIN <= MAX, got ({lo}, {hi}).")
    return lo, hi


class _Credentials(SchedulerPlugin):
    """The workers' copies of a cluster's TLS credentials, in a private folder that goes
    with the scheduler they admit to: removed when it closes, else when the cluster is
    collected or the interpreter exits."""

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
    """The cluster, with credentials of its own unless the user gave some, and its dashboard
    on loopback unless the scheduler options say otherwise."""
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
    # adaptive scaling, also between equal bounds: a fixed scale() never replaces a job that
    # ended, the adaptive loop resubmits it (dask-jobqueue's answer to walltimes)
    cluster.scale(jobs=lo)
    _submitted(cluster, system)
    cluster.adapt(minimum_jobs=lo, maximum_jobs=hi)
    cluster.loop.add_callback(keep_jobs, cluster, system)


def _submitted(cluster: Any, system: str) -> None:
    """Wait for the first submission; on failure close the cluster and raise one error with
    the batch system's message and the job script.

    ``scale`` only schedules the submission (distributed's ``SpecCluster._correct_state``);
    once a round of it has run, a job without an id was refused.
    """
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
    """What the batch system says about the job script: SLURM checks it without submitting
    (``sbatch --test-only``); PBS has no such check."""
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
    """A worker ``--lifetime`` of the user's must end before the walltime, or the workers
    are killed instead of retiring."""
    from dask.utils import parse_timedelta

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
    """Cluster arguments for the walltime, the workers' lifetime and the job script's extra
    lines, merged with the configuration's values (which these add to)."""
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
    if prologue:
        out["job_script_prologue"] = [
            *(kwargs.get("job_script_prologue")
              or dask.config.get(f"{section}.job-script-prologue", None) or []), *prologue]
    if skip:
        out["job_directives_skip"] = [
            *(kwargs.get("job_directives_skip")
              or dask.config.get(f"{section}.job-directives-skip", None) or []), *skip]
    return out


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
