"""Creating, opening and resuming runs."""

from __future__ import annotations

import datetime as _dt
import importlib.metadata
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

import zarr

from .._files import UnsafePathError, check_output_path
from .contents import ROOT_META_LIMIT, classify, describe_entries, read_root, remove_run
from .errors import IncompleteRunError, StoreError
from .integrity import plain_files
from .lease import Lease, lease_status, locked_error, read_lease
from .run import STORE_FORMAT, Run, compact_json, to_json, utc_now

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
            _replace(path)
        elif what != "empty":
            raise _not_a_run(path, what)
        # group and marker in one write: a kill never leaves a group that is not daskfair's
        marker = {"format": STORE_FORMAT, "kind": kind, "status": "running",
                  "created": utc_now(), "versions": _versions()}
        with compact_json():
            group = zarr.open_group(store=str(path), mode="a", attributes={
                "daskfair": marker, "params": to_json(dict(params or {}))})
    except BaseException:
        lease.release()
        if made and not any(path.iterdir()):
            path.rmdir()
        raise
    return Run(path, group, lease)


def _replace(path: Path) -> None:
    """Remove the run at ``path``: checked to hold nothing daskfair did not write, then marked
    "replacing" (its checkpoint pointer gone) before any of it is removed, so an interruption
    leaves an incomplete run, never a complete one with parts missing."""
    info = _found(path)
    remove_run(path, info, dry_run=True)  # refuses before anything changes
    group = zarr.open_group(store=str(path), mode="r+")
    attrs = {k: v for k, v in group.attrs.items() if k != "checkpoint"}
    with compact_json():
        group.attrs.put({**attrs, "daskfair": {**info, "status": "replacing"}})
    remove_run(path, info)


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
    try:
        check_output_path(path, "a run store")
    except UnsafePathError as exc:
        raise FileExistsError(str(exc)) from None
    what = classify(path)
    if what in ("file", "foreign", "unreadable"):
        raise _not_a_run(path, what)
    if what != "missing":
        found = read_lease(path)
        if found is not None:
            raise locked_error(path, *found)
    if what == "run" and not _may_replace(path, overwrite):
        raise FileExistsError(_exists_message(path, overwrite))
    if what == "run":  # anything daskfair did not write there refuses it before any work
        remove_run(path, _found(path), dry_run=True)
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
        # every entry a plain file or folder, the root's metadata bounded, before zarr reads
        size = plain_files(path).get("zarr.json", 0) if path.is_dir() else 0
        if size > ROOT_META_LIMIT:
            raise StoreError(f"{path}/zarr.json holds {size:,} bytes, more than a run's "
                             f"attributes may ({ROOT_META_LIMIT:,}); it is refused unread.")
        group = zarr.open_group(store=str(path), mode="r")
        attrs = dict(group.attrs)
    except PermissionError as exc:
        raise StoreError(
            f"cannot read the run store {path}: permission denied ({exc}). Open it as a user "
            "who may read it, or copy it somewhere readable.") from exc
    except StoreError:
        raise
    except Exception as exc:  # zarr raises JSON, KeyError, FileNotFoundError, ... here
        raise StoreError(
            f"{path} is not a readable zarr group ({type(exc).__name__}: {exc}). The store is "
            "corrupt or was written by something else; rerun the job to recreate it.") from exc
    info = attrs.get("daskfair")
    if not isinstance(info, dict) or "format" not in info:
        raise StoreError(f"{path} is a zarr group but not a daskfair run (no 'daskfair' marker).")
    if info["format"] != STORE_FORMAT or isinstance(info["format"], bool):
        versions = info.get("versions")
        by = versions.get("daskfair") if isinstance(versions, dict) else None
        raise StoreError(
            f"{path} was written in daskfair store format {repr(info['format'])[:20]} (by "
            f"daskfair {str(by)[:20]}); this version reads format {STORE_FORMAT} only. Rerun "
            "the job with this version, or read the run with the version that wrote it.")
    check_marker(info, path)
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


_KIND = re.compile(r"[a-z][a-z0-9_-]{0,31}")
_STATUSES = ("running", "complete", "replacing")
_MARKER_KEYS = {"format", "kind", "status", "created", "completed", "versions", "manifest",
                "nodes"}


def _timestamp(value: Any) -> bool:
    if not isinstance(value, str) or len(value) > 40:
        return False
    try:
        _dt.datetime.fromisoformat(value)
    except ValueError:
        return False
    return True


def _marker_problem(info: dict[str, Any]) -> str | None:
    """What is wrong with a run's ``daskfair`` marker, or None."""
    if set(info) - _MARKER_KEYS:
        return f"unknown keys {sorted(map(str, set(info) - _MARKER_KEYS))[:5]}"
    if not isinstance(info.get("kind"), str) or not _KIND.fullmatch(info["kind"]):
        return "its kind is not a short lowercase name"
    if info.get("status") not in _STATUSES:
        return f"its status is not one of {_STATUSES}"
    if not _timestamp(info.get("created")) or (
            "completed" in info and not _timestamp(info["completed"])):
        return "its times are not ISO 8601 timestamps"
    versions = info.get("versions")
    if not isinstance(versions, dict) or len(versions) > 32 or not all(
            isinstance(k, str) and isinstance(v, str) and len(k) <= 64 and len(v) <= 64
            and k.isprintable() and v.isprintable() for k, v in versions.items()):
        return "its package versions are not short names and versions"
    nodes = info.get("nodes", [])
    if not isinstance(nodes, list) or len(nodes) > 10_000 or not all(
            isinstance(n, str) and 0 < len(n) <= 255 and "/" not in n for n in nodes):
        return "its list of written nodes is malformed"
    return None


def check_marker(info: dict[str, Any], path: Path) -> None:
    """StoreError unless ``info`` is a ``daskfair`` marker as daskfair writes it."""
    problem = _marker_problem(info)
    if problem is not None:
        raise StoreError(f"{path} has a malformed daskfair marker ({problem}): it was not "
                         "written by this version of daskfair, or was edited. It is refused.")


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
