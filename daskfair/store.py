"""Runs stored as zarr v3 groups (DESIGN §5).

One group per run: fitted arrays and results as arrays, parameters, metrics and package versions
as group attributes, and a completion marker written last. Only the client writes group
attributes (zarr has no locks); workers may write their own arrays or disjoint chunk-aligned
regions of an array the client created.

Layout of a run group::

    attrs["daskfair"] = {"format": 1, "kind": ..., "status": "running" | "complete",
                         "created": ..., "completed": ..., "versions": {...}}
    attrs["params"]   = the run's parameters (JSON)
    attrs[...]        = anything the method records (metrics, tables)
    <arrays>          = results, checkpoints
"""

from __future__ import annotations

import datetime as _dt
import importlib.metadata
import math
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import dask.array as da
import numpy as np
import zarr

from . import progress

__all__ = [
    "STORE_FORMAT",
    "IncompleteRunError",
    "Run",
    "StoreError",
    "check_new_store",
    "create_run",
    "open_run",
    "resume_run",
    "to_json",
]

#: Version of the run layout; bump when it changes incompatibly.
STORE_FORMAT = 1
#: Names of checkpoint groups start with this.
_CHECKPOINT_PREFIX = "checkpoint_"
_PACKAGES = ("daskfair", "numpy", "scipy", "pandas", "dask", "distributed", "zarr",
             "scikit-learn", "numba")


class StoreError(ValueError):
    """The path is not a readable daskfair run (missing, corrupt, another format)."""


class IncompleteRunError(StoreError):
    """The run exists but did not finish: it must not be used as a result."""


def to_json(value: Any) -> Any:
    """Convert numpy scalars/arrays, tuples and paths to JSON-compatible values (NaN → None)."""
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
    """A daskfair run stored in a zarr group (from :func:`create_run` or :func:`open_run`).

    Attributes
    ----------
    path : pathlib.Path
    group : zarr.Group
    """

    def __init__(self, path: Path, group: zarr.Group) -> None:
        self.path = path
        self.group = group

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

    def set_attrs(self, **values: Any) -> None:
        """Record JSON-able values as group attributes (client side only)."""
        reserved = {"daskfair", "params"} & values.keys()
        if reserved:
            raise ValueError(f"attribute names {sorted(reserved)} are reserved.")
        self.group.attrs.update(to_json(values))

    # -- arrays ---------------------------------------------------------------------------
    def write_array(
        self, name: str, data: Any, *, chunks: tuple[int, ...] | None = None
    ) -> zarr.Array:
        """Store a numpy or dask array under ``name`` (replacing an existing one).

        A dask array is written block by block by the workers (``dask.array.store``), each
        block to its own chunk-aligned region, so it is never gathered on the client.
        """
        if isinstance(data, da.Array):
            if any(math.isnan(c) for c in data.shape):
                raise ValueError(
                    f"cannot store {name!r}: unknown chunk sizes; call compute_chunk_sizes()."
                )
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
        kwargs = {"chunks": chunks} if chunks else {}
        return self.group.create_array(name, data=data, overwrite=True, **kwargs)

    def read_array(self, name: str) -> np.ndarray:
        """Load an array of the run into memory."""
        try:
            return self.group[name][...]
        except KeyError:
            raise KeyError(
                f"run {self.path} has no array {name!r}; it has {sorted(self.group.array_keys())}."
            ) from None

    def array_names(self) -> list[str]:
        return sorted(self.group.array_keys())

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
        """
        if name not in self.group:
            raise KeyError(f"checkpoint group {name!r} was not written to {self.path}.")
        self.set_attrs(checkpoint={**info, "group": name})
        self._drop_checkpoints(keep=name)

    def _drop_checkpoints(self, keep: str | None = None) -> None:
        # every checkpoint group but ``keep``: the previous one, and any a crash left
        # half-written before its pointer was switched
        for name in list(self.group.group_keys()):
            if name.startswith(_CHECKPOINT_PREFIX) and name != keep:
                del self.group[name]

    # -- completion -----------------------------------------------------------------------
    def mark_complete(self, **summary: Any) -> None:
        """Record ``summary`` attributes, then the completion marker, last of all writes."""
        if summary:
            self.set_attrs(**summary)
        info = self.info
        info.update(status="complete", completed=_now())
        self.group.attrs["daskfair"] = to_json(info)
        # A finished run is never resumed: its last checkpoint goes, after the marker, so a
        # crash in between leaves a complete run with a spare group rather than the reverse.
        self._drop_checkpoints()
        if self.checkpoint:
            del self.group.attrs["checkpoint"]

    def __repr__(self) -> str:
        return f"Run({str(self.path)!r}, kind={self.kind!r}, status={self.status!r})"


def create_run(
    path: str | os.PathLike[str],
    *,
    kind: str,
    params: Mapping[str, Any] | None = None,
    overwrite: bool = False,
) -> Run:
    """Create a new run group at ``path`` with status "running".

    Parameters
    ----------
    path : path-like
        Directory of the zarr store (conventionally ending in ``.zarr``).
    kind : str
        What produced it ("demo", "fkr", "safairkm", "fce", ...).
    params : mapping, optional
        The run's parameters, stored as JSON.
    overwrite : bool
        Replace an existing store at ``path``; otherwise an existing one is an error.
    """
    path = check_new_store(path, overwrite=overwrite)
    try:
        group = zarr.open_group(store=str(path), mode="w")
    except PermissionError as exc:
        raise PermissionError(
            f"cannot write the run store {path}: {exc}. Choose a writable --store path."
        ) from exc
    group.attrs.update(
        {
            "daskfair": {
                "format": STORE_FORMAT,
                "kind": kind,
                "status": "running",
                "created": _now(),
                "versions": _versions(),
            },
            "params": to_json(dict(params or {})),
        }
    )
    return Run(path, group)


def check_new_store(path: str | os.PathLike[str], *, overwrite: bool = False) -> Path:
    """Check that a new run store can be made at ``path`` (before any work starts).

    Raises
    ------
    FileExistsError
        ``path`` exists and ``overwrite`` is false.
    ValueError
        A part of the path is a file.
    PermissionError
        The parent directory is not writable.
    """
    path = Path(path)
    if path.exists() and not overwrite:
        raise FileExistsError(
            f"{path} already exists. Choose another --store path, delete it, or pass "
            "overwrite=True (--overwrite) to replace it."
        )
    parent = path.parent if str(path.parent) else Path(".")
    if any(p.exists() and not p.is_dir() for p in (parent, *parent.parents)):
        raise ValueError(
            f"cannot create the run store {path}: a part of its path is a file, not a "
            "directory. Choose another --store path.")
    if parent.exists() and not os.access(parent, os.W_OK):
        raise PermissionError(
            f"cannot create the run store {path}: no write permission in {parent}. "
            "Choose a --store path in a writable directory."
        )
    return path


def open_run(
    path: str | os.PathLike[str], *, allow_incomplete: bool = False, mode: str = "r"
) -> Run:
    """Open a stored run; refuse one that did not finish unless ``allow_incomplete``.

    Raises
    ------
    StoreError
        Missing path, unreadable or corrupt metadata, not a daskfair run, another format.
    IncompleteRunError
        The run has no completion marker (it crashed or is still running).
    """
    path = Path(path)
    if not path.exists():
        raise StoreError(f"no run store at {path}: the path does not exist.")
    try:
        group = zarr.open_group(store=str(path), mode=mode)
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
    if info["format"] != STORE_FORMAT:
        raise StoreError(
            f"{path} was written in daskfair store format {info['format']!r}, this version reads "
            f"format {STORE_FORMAT} (written by daskfair "
            f"{info.get('versions', {}).get('daskfair')}). Rerun the job with this version, or "
            "read it with the version that wrote it."
        )
    run = Run(path, group)
    if not run.is_complete and not allow_incomplete:
        raise IncompleteRunError(
            f"the run at {path} did not finish (status {run.status!r}, started "
            f"{info.get('created')}). Its contents are partial: resume it (--resume) where "
            "the method supports it, or delete it and run again."
        )
    return run


def resume_run(path: str | os.PathLike[str], *, kind: str, params: Mapping[str, Any]) -> Run:
    """Open an interrupted run of ``kind`` to continue it with the same ``params``.

    Raises
    ------
    StoreError
        No readable run at ``path``.
    ValueError
        The run is of another kind, already finished, or was started with other parameters.
    """
    if not Path(path).exists():
        raise StoreError(f"nothing to resume at {path}: it does not exist. Run without "
                         "--resume (resume=False) to start it.")
    run = open_run(path, allow_incomplete=True, mode="a")
    if run.kind != kind:
        raise ValueError(f"{path} holds a {run.kind!r} run, not a {kind!r} run.")
    if run.is_complete:
        raise ValueError(
            f"{path} holds a finished run; there is nothing to resume. Read it with "
            "daskfair.open_run (or `daskfair show`), or start a new store.")
    wanted, stored = to_json(dict(params)), run.params
    if wanted != stored:
        diff = sorted(k for k in set(stored) | set(wanted) if stored.get(k) != wanted.get(k))
        raise ValueError(
            f"cannot resume {path}: parameters differ from the stored run ({diff}). Resume "
            "with the same parameters and data, or start a new store.")
    return run
