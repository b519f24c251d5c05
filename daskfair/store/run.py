"""Runs stored as zarr v3 groups (docs/design.md#stores).

One group per run: fitted arrays and results as arrays, parameters, metrics and package versions
as group attributes, and a completion marker written last. Only the client writes group
attributes; workers may write their own arrays or disjoint chunk-aligned regions of an array
the client created.

Layout of a run group::

    attrs["daskfair"] = {"format": 3, "kind": ..., "status": "running" | "complete",
                         "created": ..., "completed": ..., "versions": {...},
                         "manifest": {...}}         # with the marker: integrity.build_manifest
    attrs["params"]   = the run's parameters (JSON)
    attrs[...]        = anything the method records (metrics, tables)
    <arrays>          = results, checkpoints
    daskfair-lock.json  the writer's lease, while a run writes (lease.py)

The rules that keep a store whole: a run writes nothing before it holds the store's lease, so
two runs never write one store (:mod:`.lease`); a path that is not a daskfair run is never
deleted or emptied, and replacing a run removes only the run's own nodes (:mod:`.contents`);
the completion marker is written last, after every file is flushed to disk, with a manifest of
the result arrays that is checked whenever the run is opened (:mod:`.integrity`).
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import importlib.metadata
import math
import os
import re
import warnings
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, Literal

import dask.array as da
import numpy as np
import zarr

from .. import progress
from . import integrity
from .contents import classify, describe_entries, read_root, remove_run, symlinks_in
from .errors import CorruptStoreError, IncompleteRunError, StoreError
from .lease import LEASE_NAME, SCRATCH_PREFIX, Lease, lease_status, locked_error, read_lease

__all__ = [
    "STORE_FORMAT",
    "Run",
    "check_new_store",
    "create_run",
    "open_run",
    "resume_run",
    "to_json",
]

#: Version of the run layout and of its keys; bump when either changes incompatibly.
STORE_FORMAT = 3
#: Names of checkpoint groups start with this.
_CHECKPOINT_PREFIX = "checkpoint_"
_PACKAGES = ("daskfair", "numpy", "scipy", "pandas", "dask", "distributed", "zarr",
             "scikit-learn", "numba")
Verify = Literal["sizes", "contents"] | None


def to_json(value: Any) -> Any:
    """Convert numpy scalars/arrays, tuples and paths to JSON-compatible values (NaN → None).

    Parameters
    ----------
    value : object
        What to convert (containers are converted recursively).

    Returns
    -------
    object
        The JSON-able value.

    Examples
    --------
    >>> import numpy as np
    >>> from daskfair.store import to_json
    >>> to_json({"a": np.float64(0.5), "b": (1, np.nan)})
    {'a': 0.5, 'b': [1, None]}
    """
    if isinstance(value, Mapping):
        return {str(k): to_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [to_json(v) for v in value]
    if isinstance(value, np.ndarray):
        return to_json(value.tolist())
    if isinstance(value, np.generic):
        return to_json(value.item())
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, Path):
        return str(value)
    return value


def _versions() -> dict[str, str]:
    out = {}
    for name in _PACKAGES:
        try:
            out[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            out[name] = "not installed"
    return out


def _now() -> str:
    return _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")


class Run:
    """A daskfair run stored in a zarr group (from :func:`create_run`, :func:`resume_run` or
    :func:`open_run`).

    A run from :func:`create_run` or :func:`resume_run` holds the store's lease until
    :meth:`mark_complete` or :meth:`close` (also a context manager); one from
    :func:`open_run` only reads.

    Parameters
    ----------
    path : pathlib.Path
        The store's directory.
    group : zarr.Group
        Its root group.
    lease : object, optional
        The writer's lease, for a run that writes (None: read only).
    """

    def __init__(self, path: Path, group: zarr.Group, lease: Lease | None = None) -> None:
        self.path = path
        self.group = group
        self._lease = lease

    # -- metadata -------------------------------------------------------------------------
    @property
    def info(self) -> dict[str, Any]:
        """The ``daskfair`` attribute: format, kind, status, timestamps, versions."""
        return dict(self.group.attrs.get("daskfair", {}))

    @property
    def kind(self) -> str:
        return self.info.get("kind", "")

    @property
    def status(self) -> str:
        return self.info.get("status", "unknown")

    @property
    def is_complete(self) -> bool:
        return self.status == "complete"

    @property
    def params(self) -> dict[str, Any]:
        return dict(self.group.attrs.get("params", {}))

    @property
    def attrs(self) -> dict[str, Any]:
        """All group attributes as a plain dict (a snapshot)."""
        return dict(self.group.attrs)

    def _writable(self) -> None:
        if self._lease is None:
            raise StoreError(
                f"the run at {self.path} was opened for reading; only the run that holds the "
                "store's lease (create_run, resume_run) writes to it.")
        self._lease.check()

    def set_attrs(self, **values: Any) -> None:
        """Record JSON-able values as group attributes (client side only).

        Parameters
        ----------
        **values
            Names and JSON-able values (converted by :func:`to_json`).
        """
        reserved = {"daskfair", "params"} & values.keys()
        if reserved:
            raise ValueError(f"attribute names {sorted(reserved)} are reserved.")
        self._writable()
        self.group.attrs.update(to_json(values))

    # -- arrays ---------------------------------------------------------------------------
    def write_array(
        self, name: str, data: Any, *, chunks: tuple[int, ...] | None = None
    ) -> zarr.Array:
        """Store a numpy or dask array under ``name`` (replacing an existing one).

        A dask array is written block by block by the workers (``dask.array.store``), each
        block to its own chunk-aligned region, so it is never gathered on the client.

        Parameters
        ----------
        name : str
            The array's path within the run.
        data : array-like or dask array
            What to store.
        chunks : tuple of int, optional
            The zarr chunks (default: the dask array's blocks, or one chunk).

        Returns
        -------
        zarr.Array
            The stored array.
        """
        if isinstance(data, da.Array):
            if any(math.isnan(c) for c in data.shape):
                raise ValueError(
                    f"cannot store {name!r}: unknown chunk sizes; call compute_chunk_sizes()."
                )
            self._writable()
            chunks = chunks or tuple(max(c) for c in data.chunks)
            data = data.rechunk(chunks)
            arr = self.group.create_array(
                name, shape=data.shape, dtype=data.dtype, chunks=chunks, overwrite=True
            )
            # No graph optimisation: results are usually persisted arrays, and re-optimising
            # their graph resubmits keys under new specs (dask/dask#9888).
            progress.compute(da.store(data, arr, lock=False, compute=False),
                             optimize_graph=False)
            return arr
        data = np.asarray(data)
        if data.dtype.kind in "OUS":
            raise TypeError(f"store {name!r} as an attribute: arrays must be numeric.")
        self._writable()
        kwargs = {"chunks": chunks} if chunks else {}
        return self.group.create_array(name, data=data, overwrite=True, **kwargs)

    def read_array(self, name: str) -> np.ndarray:
        """Load an array of the run into memory.

        A finished run's contents are checked against its manifest first.

        Parameters
        ----------
        name : str
            The array's path within the run.

        Returns
        -------
        ndarray
            The array.
        """
        if name not in self.array_names():
            raise KeyError(f"run {self.path} has no array {name!r}; it has "
                           f"{self.array_names()}.")
        if self.is_complete:
            self._check(contents=True, names=[name])
        return self.group[name][...]

    def array_names(self) -> list[str]:
        """The arrays of the run, by path within it (checkpoints included).

        Returns
        -------
        list of str
            The arrays' paths.
        """
        return sorted(self.arrays())

    def arrays(self) -> dict[str, zarr.Array]:
        """Every array of the run, by path within it (checkpoints included).

        Returns
        -------
        dict of str to zarr.Array
            The arrays, not loaded.
        """
        with _quiet_listing():
            return {name: node for name, node in self.group.members(max_depth=None)
                    if isinstance(node, zarr.Array)}

    def verify(self, *, contents: bool = True) -> None:
        """Check a finished run's files against the manifest written with its completion
        marker: file counts and sizes, and with ``contents`` their digests.

        Parameters
        ----------
        contents : bool
            Also compare every file's digest (reads every file).

        Raises
        ------
        CorruptStoreError
            Something changed since the run finished; the message says what.
        """
        if self.is_complete:
            self._check(contents=contents)

    def _check(self, *, contents: bool, names: list[str] | None = None) -> None:
        info = self.info
        problems = integrity.verify(self.path, info.get("manifest"), self.attrs,
                                    contents=contents, names=names)
        if problems:
            raise CorruptStoreError(
                f"the run at {self.path} is corrupt: " + "; ".join(problems) + ". It was "
                "complete when written and its files changed since (an interrupted copy, a "
                "disk error, an edit). Restore it from a backup, or rerun the job "
                "(--overwrite).")

    # -- checkpoints ----------------------------------------------------------------------
    @property
    def checkpoint(self) -> dict[str, Any] | None:
        """The last committed checkpoint (``iteration``, ``group``, ...), or None."""
        return self.group.attrs.get("checkpoint") or None

    def commit_checkpoint(self, name: str, **info: Any) -> None:
        """Make the group ``name`` (``checkpoint_...``, already fully written) the run's
        checkpoint.

        The pointer attribute is switched first and the previous checkpoint's group deleted
        afterwards, so a crash at any point leaves one complete checkpoint to resume from.

        Parameters
        ----------
        name : str
            The checkpoint's group.
        **info
            JSON-able values recorded with the pointer (the iteration, say).
        """
        if name not in self.group:
            raise KeyError(f"checkpoint group {name!r} was not written to {self.path}.")
        self.set_attrs(checkpoint={**info, "group": name})
        self._drop_checkpoints(keep=name)

    def _drop_checkpoints(self, keep: str | None = None) -> None:
        # every checkpoint group but ``keep``: the previous one, and any a crash left
        # half-written before its pointer was switched
        with _quiet_listing():
            names = list(self.group.group_keys())
        for name in names:
            if name.startswith(_CHECKPOINT_PREFIX) and name != keep:
                del self.group[name]

    # -- completion -----------------------------------------------------------------------
    def mark_complete(self, **summary: Any) -> None:
        """Record ``summary`` attributes, then the completion marker, last of all writes,
        and give up the lease.

        Every file of the run is flushed to disk first; the marker carries the manifest of
        the result arrays (:mod:`daskfair.store.integrity`), so a store that says complete
        holds exactly what was written or is reported corrupt.

        Parameters
        ----------
        **summary
            JSON-able result values, recorded as attributes before the marker.
        """
        if summary:
            self.set_attrs(**summary)
        self._writable()
        integrity.sync_tree(self.path)
        info = self.info
        info.update(status="complete", completed=_now(), format=STORE_FORMAT,
                    manifest=integrity.build_manifest(self.path, self.attrs))
        self.group.attrs["daskfair"] = to_json(info)
        integrity.sync_tree_root(self.path)
        # A finished run is never resumed: its last checkpoint goes, after the marker, so a
        # crash in between leaves a complete run with a spare group rather than the reverse.
        self._drop_checkpoints()
        if self.checkpoint:
            del self.group.attrs["checkpoint"]
        self.close()

    def close(self) -> None:
        """Give up the store's lease (idempotent); a run that did not finish stays
        incomplete, to be resumed or replaced."""
        if self._lease is not None:
            self._lease.release()

    def __enter__(self) -> Run:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Run({str(self.path)!r}, kind={self.kind!r}, status={self.status!r})"


@contextlib.contextmanager
def _quiet_listing() -> Iterator[None]:
    # zarr warns about every file in a group's directory that is not a zarr node: the lease
    # and zarr's own scratch files of an interrupted write are expected there
    with warnings.catch_warnings():
        warnings.filterwarnings(
            "ignore", message=rf"Object at ({re.escape(LEASE_NAME)}|.*\.partial|"
                              rf"{re.escape(SCRATCH_PREFIX)}.*) is not recognized")
        yield


def _acquire(path: Path) -> Lease:
    try:
        return Lease.acquire(path)
    except PermissionError as exc:
        raise PermissionError(
            f"cannot write the run store {path}: {exc}. Choose a writable --store path."
        ) from exc


def _not_a_run(path: Path, what: str) -> FileExistsError:
    if what == "file":
        held = "is a file"
    elif what == "unreadable":
        held = "holds a zarr.json that cannot be read as JSON"
    else:
        held = f"holds {describe_entries(path)}"
    return FileExistsError(
        f"{path} exists and is not a daskfair run store (it {held}). daskfair never deletes or "
        "empties what it did not write, --overwrite included: choose another --store path.")


def create_run(
    path: str | os.PathLike[str],
    *,
    kind: str,
    params: Mapping[str, Any] | None = None,
    overwrite: bool | str = False,
) -> Run:
    """Create a new run group at ``path`` with status "running", holding its lease.

    Parameters
    ----------
    path : path-like
        Directory of the zarr store (conventionally ending in ``.zarr``): a new path, an empty
        directory, or (with ``overwrite``) a daskfair run.
    kind : str
        What produced it ("demo", "fkr", "safairkm", "fce", ...).
    params : mapping, optional
        The run's parameters, stored as JSON.
    overwrite : bool or str
        Replace the daskfair run at ``path``: its zarr nodes are removed, any other file
        stays. A kind name (``"demo"``) replaces only a run of that kind. A path that is
        not a daskfair run is refused whatever this says.

    Returns
    -------
    Run
        The new run, holding the store's lease.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> import numpy as np
    >>> from daskfair.store import create_run, open_run
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "run.zarr"
    >>> run = create_run(path, kind="demo", params={"rows": 3})
    >>> _ = run.write_array("labels", np.array([0, 1, 1]))
    >>> run.mark_complete(n_clusters=2)
    >>> open_run(path).read_array("labels")
    array([0, 1, 1])

    Raises
    ------
    FileExistsError
        ``path`` holds a run and ``overwrite`` is false, or holds something else.
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
                    "another --store path.")
            _mark_replacing(path)
            remove_run(path)
        elif what != "empty":
            raise _not_a_run(path, what)
        # the group and its marker in one write: a kill in between would leave a zarr group
        # that is not recognisably daskfair's, which no overwrite may then remove
        group = zarr.open_group(store=str(path), mode="a", attributes={
            "daskfair": {"format": STORE_FORMAT, "kind": kind, "status": "running",
                         "created": _now(), "versions": _versions()},
            "params": to_json(dict(params or {})),
        })
    except BaseException:
        lease.release()
        if made and not any(path.iterdir()):
            path.rmdir()
        raise
    return Run(path, group, lease)


def _mark_replacing(path: Path) -> None:
    """Say that the run is being replaced before any of it is removed (with the checkpoint
    pointer gone), so an interruption leaves an incomplete run, never a complete one with
    parts missing."""
    group = zarr.open_group(store=str(path), mode="r+")
    info = dict(group.attrs.get("daskfair", {}))
    info["status"] = "replacing"
    attrs = {k: v for k, v in group.attrs.items() if k != "checkpoint"}
    group.attrs.put({**attrs, "daskfair": info})


RESUMABLE_KINDS = ("safairkm", "fce")


def _found(path: Path) -> dict[str, Any]:
    """The ``daskfair`` attribute of the run at ``path`` (kind, status), or {}: from the
    root metadata that :func:`classify` reads."""
    try:
        info = (read_root(path) or {}).get("attributes", {}).get("daskfair")
    except (OSError, ValueError):
        return {}
    return info if isinstance(info, dict) else {}


def _may_replace(path: Path, overwrite: bool | str) -> bool:
    if isinstance(overwrite, str):
        return _found(path).get("kind") == overwrite
    return bool(overwrite)


def _exists_message(path: Path, overwrite: bool | str = False) -> str:
    info = _found(path)
    kind, status = info.get("kind", "unknown"), info.get("status", "unknown")
    if isinstance(overwrite, str):
        return (f"{path} holds a {kind} run, and only a {overwrite} run there is replaced. "
                "Choose another --store path.")
    resume = (" or continue it with the same command and --resume,"
              if kind in RESUMABLE_KINDS and status == "running" else "")
    state = "complete" if status == "complete" else "incomplete"
    return (f"{path} already exists: it holds a {kind} run ({state}). Choose another --store "
            f"path,{resume} or pass overwrite=True (--overwrite) to replace it.")


def check_new_store(path: str | os.PathLike[str], *, overwrite: bool | str = False) -> Path:
    """Check that a new run store can be made at ``path`` (before any work starts).

    Parameters
    ----------
    path : path-like
        Where the run would be stored.
    overwrite : bool or str
        As in :func:`create_run`.

    Returns
    -------
    pathlib.Path
        The path, resolved.

    Raises
    ------
    FileExistsError
        ``path`` holds a run and ``overwrite`` is false, or holds something that is not a
        daskfair run (never replaced).
    StoreLockedError
        A run holds the store's lease, or a dead one left it.
    ValueError
        A part of the path is a file.
    PermissionError
        The parent directory is not writable.
    """
    path = Path(path)
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
            "directory. Choose another --store path.")
    if what == "missing" and parent.exists() and not os.access(parent, os.W_OK):
        raise PermissionError(
            f"cannot create the run store {path}: no write permission in {parent}. "
            "Choose a --store path in a writable directory."
        )
    return path


def open_run(
    path: str | os.PathLike[str], *, allow_incomplete: bool = False,
    verify: Verify = "sizes",
) -> Run:
    """Open a stored run for reading; refuse one that did not finish unless
    ``allow_incomplete``, and one whose files changed since it finished.

    Parameters
    ----------
    path : path-like
    allow_incomplete : bool
        Open a run that has no completion marker (to inspect or resume it).
    verify : {"sizes", "contents", None}
        How a finished run is checked against its manifest: file counts and sizes (one
        ``stat`` per file), also their digests (reads every file), or not at all.
        :meth:`Run.read_array` checks the contents of what it reads in any case.

    Returns
    -------
    Run
        The run, read only.

    Raises
    ------
    StoreError
        Missing path, unreadable or corrupt metadata, not a daskfair run, another format.
    IncompleteRunError
        The run has no completion marker (it crashed or is still running).
    CorruptStoreError
        The run finished, but its files no longer match its manifest.
    """
    path = Path(path)
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
            "corrupt or was written by something else; rerun the job to recreate it."
        ) from exc
    info = attrs.get("daskfair")
    if not isinstance(info, dict) or "format" not in info:
        raise StoreError(f"{path} is a zarr group but not a daskfair run (no 'daskfair' marker).")
    if info["format"] != STORE_FORMAT or isinstance(info["format"], bool):
        raise StoreError(
            f"{path} was written in daskfair store format {info['format']!r} (by daskfair "
            f"{info.get('versions', {}).get('daskfair')}); this version reads format "
            f"{STORE_FORMAT} only. Rerun the job with this version, or read the run with the "
            "version that wrote it."
        )
    run = Run(path, group)
    if not run.is_complete and not allow_incomplete:
        lease = lease_status(path)
        raise IncompleteRunError(
            f"the run at {path} did not finish (status {run.status!r}, started "
            f"{info.get('created')}"
            + (f"; its lock is {lease}" if lease else "") + "). Its contents are partial: "
            "resume it (--resume) where the method supports it, or delete it and run again."
        )
    if verify is not None:
        run.verify(contents=verify == "contents")
    return run


def resume_run(path: str | os.PathLike[str], *, kind: str, params: Mapping[str, Any]) -> Run:
    """Open an interrupted run of ``kind`` to continue it with the same ``params``, holding
    its lease.

    Parameters
    ----------
    path : path-like
        The run store.
    kind : str
        What produced it (must match).
    params : mapping
        The run's parameters (must match the stored ones).

    Returns
    -------
    Run
        The run, holding the store's lease, its last checkpoint readable.

    Raises
    ------
    StoreError
        No readable run at ``path``.
    StoreLockedError
        Another run holds the store's lease, or a dead one left it (:func:`break_lock`).
    ValueError
        The run is of another kind, already finished, or was started with other parameters.
    """
    path = Path(path)
    if not path.exists():
        raise StoreError(f"nothing to resume at {path}: it does not exist. Run without "
                         "--resume (resume=False) to start it.")
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
            "nothing to resume. Start it again with --overwrite (overwrite=True).")
    wanted, stored = to_json(dict(params)), run.params
    if wanted != stored:
        diff = sorted(k for k in set(stored) | set(wanted) if stored.get(k) != wanted.get(k))
        raise ValueError(
            f"cannot resume {path}: parameters differ from the stored run ({diff}). Resume "
            "with the same parameters and data, or start a new store.")
