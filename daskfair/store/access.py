"""Creating, opening and resuming runs."""

from __future__ import annotations

import importlib.metadata
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

import zarr

from .contents import classify, describe_entries, read_root, remove_run, symlinks_in
from .errors import IncompleteRunError, StoreError
from .lease import Lease, lease_status, locked_error, read_lease
from .run import STORE_FORMAT, Run, to_json, utc_now

__all__ = ["RESUMABLE_KINDS", "check_new_store", "create_run", "open_run", "resume_run"]

_PACKAGES = ("daskfair", "numpy", "scipy", "pandas", "dask", "distributed", "zarr",
             "scikit-learn", "numba")
#: The kinds of run that ``resume=True`` continues.
RESUMABLE_KINDS = ("safairkm", "fce")


def _versions() -> dict[str, str]:
    """The installed version of every package a run records."""
    out = {}
    for name in _PACKAGES:
        try:
            out[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            out[name] = "not installed"
    return out


def _acquire(path: Path) -> Lease:
    """The store's lease; PermissionError that says to choose a writable path."""
    try:
        return Lease.acquire(path)
    except PermissionError as exc:
        raise PermissionError(f"cannot write the run store {path}: {exc}. Choose a writable "
                              "path for store=.") from exc


def _not_a_run(path: Path, what: str) -> FileExistsError:
    """The error for a path that holds something other than a daskfair run."""
    held = ("is a file" if what == "file" else "holds a zarr.json that cannot be read as JSON"
            if what == "unreadable" else f"holds {describe_entries(path)}")
    return FileExistsError(
        f"{path} exists and is not a daskfair run store (it {held}). daskfair never deletes or "
        "empties what it did not write, overwrite=True included: choose another path for store=.")


def create_run(path: str | os.PathLike[str], *, kind: str,
               params: Mapping[str, Any] | None = None, overwrite: bool | str = False) -> Run:
    """Create a new run group at ``path`` with status "running", holding its lease.

    Parameters
    ----------
    path : path-like
        The zarr store's directory: a new path, an empty directory, or (with ``overwrite``) a run.
    kind : str
        What produced it ("demo", "fkr", "safairkm", "fce", ...).
    params : mapping, default=None
        The run's parameters, stored as JSON (None: none).
    overwrite : bool or str, default=False
        Replace the daskfair run at ``path`` (its zarr nodes only); a kind name replaces only a
        run of that kind. A path that is not a daskfair run is refused whatever this says.

    Returns
    -------
    Run

    Raises
    ------
    FileExistsError
        ``path`` holds a run ``overwrite`` does not allow replacing, or something else.
    StoreLockedError
        Another run holds the store's lease, or a dead run left it (:func:`break_lock`).
    """
    path = check_new_store(path, overwrite=overwrite)
    made = not path.exists()
    lease = _acquire(path)
    try:
        what = classify(path)  # again, under the lease: nobody else changes it from here
        if what == "run":
            if not _may_replace(path, overwrite):
                raise FileExistsError(_exists_message(path, overwrite))
            links = symlinks_in(path)
            if links:  # removing through a link would delete what it points to
                raise FileExistsError(
                    f"{path} holds a daskfair run and symbolic links daskfair never makes "
                    f"({', '.join(links)}); it is not replaced. Remove the links, or choose "
                    "another path for store=.")
            _mark_replacing(path)
            remove_run(path)
        elif what != "empty":
            raise _not_a_run(path, what)
        # group and marker in one write: a kill never leaves a group that is not daskfair's
        group = zarr.open_group(store=str(path), mode="a", attributes={
            "daskfair": {"format": STORE_FORMAT, "kind": kind, "status": "running",
                         "created": utc_now(), "versions": _versions()},
            "params": to_json(dict(params or {})),
        })
    except BaseException:
        lease.release()
        if made and not any(path.iterdir()):
            path.rmdir()
        raise
    return Run(path, group, lease)


def _mark_replacing(path: Path) -> None:
    """Mark the run "replacing" (its checkpoint pointer gone) before any of it is removed, so an
    interruption leaves an incomplete run, never a complete one with parts missing."""
    group = zarr.open_group(store=str(path), mode="r+")
    info = dict(group.attrs.get("daskfair", {}))
    info["status"] = "replacing"
    attrs = {k: v for k, v in group.attrs.items() if k != "checkpoint"}
    group.attrs.put({**attrs, "daskfair": info})


def _found(path: Path) -> dict[str, Any]:
    """The ``daskfair`` attribute (kind, status) of the run at ``path``, or {}."""
    try:
        info = (read_root(path) or {}).get("attributes", {}).get("daskfair")
    except (OSError, ValueError):
        return {}
    return info if isinstance(info, dict) else {}


def _may_replace(path: Path, overwrite: bool | str) -> bool:
    """Whether ``overwrite`` allows replacing the run at ``path``."""
    if isinstance(overwrite, str):
        return _found(path).get("kind") == overwrite
    return bool(overwrite)


def _exists_message(path: Path, overwrite: bool | str = False) -> str:
    """Why the run at ``path`` is not replaced, and what to do instead."""
    info = _found(path)
    kind, status = info.get("kind", "unknown"), info.get("status", "unknown")
    if isinstance(overwrite, str):
        return (f"{path} holds a {kind} run, and only a {overwrite} run there is replaced. "
                "Choose another path for store=.")
    resume = (" or continue it with resume=True,"
              if kind in RESUMABLE_KINDS and status == "running" else "")
    state = "complete" if status == "complete" else "incomplete"
    return (f"{path} already exists: it holds a {kind} run ({state}). Choose another path for "
            f"store=,{resume} or pass overwrite=True to replace it.")


def check_new_store(path: str | os.PathLike[str], *, overwrite: bool | str = False) -> Path:
    """Check that a new run store can be made at ``path`` (before any work starts).

    Parameters
    ----------
    path : path-like
        Where the run would be stored.
    overwrite : bool or str, default=False
        As in :func:`create_run`.

    Returns
    -------
    pathlib.Path

    Raises
    ------
    FileExistsError, StoreLockedError
        As for :func:`create_run`.
    """
    path = Path(path).absolute()  # what a worker sees, whatever its working directory
    what = classify(path)
    if what in ("file", "foreign", "unreadable"):
        raise _not_a_run(path, what)
    if what != "missing":
        found = read_lease(path)
        if found is not None:
            raise locked_error(path, *found)
    if what == "run" and not _may_replace(path, overwrite):
        raise FileExistsError(_exists_message(path, overwrite))
    parent = path.parent if str(path.parent) else Path(".")
    if any(p.exists() and not p.is_dir() for p in (parent, *parent.parents)):
        raise ValueError(
            f"cannot create the run store {path}: a part of its path is a file, not a "
            "directory. Choose another path for store=.")
    if what == "missing" and parent.exists() and not os.access(parent, os.W_OK):
        raise PermissionError(
            f"cannot create the run store {path}: no write permission in {parent}. "
            "Choose a path for store= in a writable directory.")
    return path


def open_run(path: str | os.PathLike[str], *, allow_incomplete: bool = False,
             verify: Literal["sizes", "contents"] | None = "sizes") -> Run:
    """Open a stored run for reading.

    Parameters
    ----------
    path : path-like
    allow_incomplete : bool, default=False
        Open a run that has no completion marker (to inspect it).
    verify : {"sizes", "contents", None}, default="sizes"
        Check a finished run's file counts and sizes, also their digests, or nothing
        (:meth:`Run.read_array` checks what it reads in any case).

    Returns
    -------
    Run

    Raises
    ------
    StoreError
        No readable daskfair run of this format at ``path``.
    IncompleteRunError
        The run has no completion marker (it crashed or is still running).
    CorruptStoreError
        The run finished, but its files no longer match its manifest.

    Examples
    --------
    >>> import pathlib, tempfile, numpy as np
    >>> run = create_run(pathlib.Path(tempfile.mkdtemp()) / "run.zarr", kind="demo")
    >>> _ = run.write_array("labels", np.array([0, 1, 1]))
    >>> run.mark_complete()
    >>> open_run(run.path).read_array("labels")
    array([0, 1, 1])
    """
    path = Path(path).absolute()  # what a worker sees, whatever its working directory
    if not path.exists():
        raise StoreError(f"no run store at {path}: the path does not exist.")
    try:
        group = zarr.open_group(store=str(path), mode="r")
        attrs = dict(group.attrs)
    except PermissionError as exc:
        raise StoreError(
            f"cannot read the run store {path}: permission denied ({exc}). Open it as a user "
            "who may read it, or copy it somewhere readable.") from exc
    except Exception as exc:  # zarr raises JSON, KeyError, FileNotFoundError, ... here
        raise StoreError(
            f"{path} is not a readable zarr group ({type(exc).__name__}: {exc}). The store is "
            "corrupt or was written by something else; rerun the job to recreate it.") from exc
    info = attrs.get("daskfair")
    if not isinstance(info, dict) or "format" not in info:
        raise StoreError(f"{path} is a zarr group but not a daskfair run (no 'daskfair' marker).")
    if info["format"] != STORE_FORMAT or isinstance(info["format"], bool):
        raise StoreError(
            f"{path} was written in daskfair store format {info['format']!r} (by daskfair "
            f"{info.get('versions', {}).get('daskfair')}); this version reads format "
            f"{STORE_FORMAT} only. Rerun the job with this version, or read the run with the "
            "version that wrote it.")
    run = Run(path, group)
    if not run.is_complete and not allow_incomplete:
        lease = lease_status(path)
        raise IncompleteRunError(
            f"the run at {path} did not finish (status {run.status!r}, started "
            f"{info.get('created')}"
            + (f"; its lock is {lease}" if lease else "") + "). Its contents are partial: "
            "resume it (resume=True) where the method supports it, or delete it and run again.")
    if verify is not None:
        run.verify(contents=verify == "contents")
    return run


def resume_run(path: str | os.PathLike[str], *, kind: str, params: Mapping[str, Any]) -> Run:
    """Open an interrupted run to continue it with the same parameters, holding its lease.

    Parameters
    ----------
    path : path-like
    kind : str
        What produced it (must match).
    params : mapping
        The run's parameters (must match the stored ones).

    Returns
    -------
    Run

    Raises
    ------
    StoreError, StoreLockedError
        As for :func:`open_run` and :func:`create_run`.
    """
    path = Path(path).absolute()  # what a worker sees, whatever its working directory
    if not path.exists():
        raise StoreError(f"nothing to resume at {path}: it does not exist. Run with "
                         "resume=False to start it.")
    _check_resumable(open_run(path, allow_incomplete=True, verify=None), kind, params)
    lease = _acquire(path)
    try:  # read again under the lease: the run may have finished or changed meanwhile
        run = Run(path, zarr.open_group(store=str(path), mode="r+"), lease)
        _check_resumable(run, kind, params)
    except BaseException:
        lease.release()
        raise
    return run


def _check_resumable(run: Run, kind: str, params: Mapping[str, Any]) -> None:
    """ValueError unless ``run`` is an unfinished ``kind`` run of these ``params``."""
    path = run.path
    if run.kind != kind:
        raise ValueError(f"{path} holds a {run.kind!r} run, not a {kind!r} run.")
    if run.is_complete:
        raise ValueError(
            f"{path} holds a finished run; there is nothing to resume. Read it with "
            "daskfair.open_run (or `daskfair show`), or start a new store.")
    if run.status == "replacing":
        raise ValueError(
            f"{path} was being replaced by a new run when that was interrupted; there is "
            "nothing to resume. Start it again with overwrite=True.")
    wanted, stored = to_json(dict(params)), run.params
    if wanted != stored:
        diff = sorted(k for k in set(stored) | set(wanted) if stored.get(k) != wanted.get(k))
        raise ValueError(
            f"cannot resume {path}: parameters differ from the stored run ({diff}). Resume "
            "with the same parameters and data, or start a new store.")
