"""A stored run: :class:`Run`, its arrays, attributes, checkpoints and completion marker.

One zarr v3 group per run (docs/design.md#stores): results as arrays; parameters, metrics
and package versions as group attributes, written by the client only; a completion marker
written last. :mod:`.access` creates, opens and resumes runs.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import math
import re
import warnings
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import dask.array as da
import numpy as np
import zarr

from .. import progress
from . import integrity
from .errors import CorruptStoreError, StoreError
from .lease import LEASE_NAME, SCRATCH_PREFIX, Lease

__all__ = ["STORE_FORMAT", "Run", "to_json"]

#: Version of the run layout and of its keys; bump when either changes incompatibly.
STORE_FORMAT = 3
#: Names of checkpoint groups start with this.
_CHECKPOINT_PREFIX = "checkpoint_"


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


def utc_now() -> str:
    """The time now, UTC, ISO 8601 to the second."""
    return _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")


class Run:
    """A daskfair run stored in a zarr group (from :func:`create_run`, :func:`resume_run` or
    :func:`open_run`).

    A run from :func:`create_run` or :func:`resume_run` holds the store's lease until
    :meth:`mark_complete` or :meth:`close` (also a context manager); one from
    :func:`open_run` only reads. A method that writes raises :class:`StoreError` on a run
    opened for reading and :class:`StoreLockedError` once the run lost its lease.

    Parameters
    ----------
    path : pathlib.Path
        The store's directory.
    group : zarr.Group
        Its root group.
    lease : Lease, default=None
        The writer's lease, for a run that writes (None: read only).

    Attributes
    ----------
    path : pathlib.Path
        The store's directory.
    group : zarr.Group
        Its root group.
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
        """What produced the run ("fkr", "safairkm", "fce", ...)."""
        return self.info.get("kind", "")

    @property
    def status(self) -> str:
        """"running", "complete", "replacing", or "unknown"."""
        return self.info.get("status", "unknown")

    @property
    def is_complete(self) -> bool:
        """Whether the completion marker was written."""
        return self.status == "complete"

    @property
    def params(self) -> dict[str, Any]:
        """The run's parameters, as stored."""
        return dict(self.group.attrs.get("params", {}))

    @property
    def attrs(self) -> dict[str, Any]:
        """All group attributes as a plain dict (a snapshot)."""
        return dict(self.group.attrs)

    def _writable(self) -> None:
        """StoreError unless the run holds its store's lease (StoreLockedError if it lost it)."""
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

        Raises
        ------
        ValueError
            A reserved name (``daskfair``, ``params``).
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
        chunks : tuple of int, default=None
            The zarr chunks (None: the dask array's largest blocks, or zarr's choice for
            numpy).

        Returns
        -------
        zarr.Array
            The stored array.

        Raises
        ------
        ValueError
            A dask array of unknown chunk sizes.
        TypeError
            Text or objects (store them as an attribute).

        See Also
        --------
        read_array : Load it back.
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

        Raises
        ------
        KeyError
            No array of that name.
        CorruptStoreError
            A finished run's array changed since it was written.

        See Also
        --------
        write_array : Store an array.
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
        """Check a finished run's files against the manifest written with its marker.

        File counts and sizes, and with ``contents`` their digests; a run that did not
        finish is not checked.

        Parameters
        ----------
        contents : bool, default=True
            Also compare every file's digest (reads every file).

        Raises
        ------
        CorruptStoreError
            Something changed since the run finished; the message says what.
        """
        if self.is_complete:
            self._check(contents=contents)

    def _check(self, *, contents: bool, names: list[str] | None = None) -> None:
        """CorruptStoreError when the files (of ``names``) differ from the manifest."""
        info = self.info
        problems = integrity.verify(self.path, info.get("manifest"), self.attrs,
                                    contents=contents, names=names)
        if problems:
            raise CorruptStoreError(
                f"the run at {self.path} is corrupt: " + "; ".join(problems) + ". It was "
                "complete when written and its files changed since (an interrupted copy, a "
                "disk error, an edit). Restore it from a backup, or rerun the job "
                "with overwrite=True.")

    # -- checkpoints ----------------------------------------------------------------------
    @property
    def checkpoint(self) -> dict[str, Any] | None:
        """The last committed checkpoint (``iteration``, ``group``, ...), or None."""
        return self.group.attrs.get("checkpoint") or None

    def commit_checkpoint(self, name: str, **info: Any) -> None:
        """Make the group ``name`` (``checkpoint_...``, fully written) the run's checkpoint.

        The pointer attribute is switched first and the previous checkpoint's group deleted
        afterwards, so a crash at any point leaves one complete checkpoint to resume from.

        Parameters
        ----------
        name : str
            The checkpoint's group.
        **info
            JSON-able values recorded with the pointer (the iteration, say).

        Raises
        ------
        KeyError
            No group ``name`` in the run.
        """
        if name not in self.group:
            raise KeyError(f"checkpoint group {name!r} was not written to {self.path}.")
        self.set_attrs(checkpoint={**info, "group": name})
        self._drop_checkpoints(keep=name)

    def _drop_checkpoints(self, keep: str | None = None) -> None:
        """Delete every checkpoint group but ``keep`` (the previous one, and any a crash left
        half-written before its pointer was switched)."""
        with _quiet_listing():
            names = list(self.group.group_keys())
        for name in names:
            if name.startswith(_CHECKPOINT_PREFIX) and name != keep:
                del self.group[name]

    # -- completion -----------------------------------------------------------------------
    def mark_complete(self, **summary: Any) -> None:
        """Record ``summary``, then the completion marker, and give up the lease.

        The marker is the last of all writes, after every file of the run is flushed to
        disk; it carries the manifest of the result arrays (:mod:`daskfair.store.integrity`),
        so a store that says complete holds exactly what was written or is reported corrupt.

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
        info.update(status="complete", completed=utc_now(), format=STORE_FORMAT,
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
        """Give up the store's lease (idempotent).

        A run that did not finish stays incomplete, to be resumed or replaced.
        """
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
    """Silence zarr's warnings about the lease and scratch files in a group's directory."""
    with warnings.catch_warnings():
        warnings.filterwarnings(
            "ignore", message=rf"Object at ({re.escape(LEASE_NAME)}|.*\.partial|"
                              rf"{re.escape(SCRATCH_PREFIX)}.*) is not recognized")
        yield
