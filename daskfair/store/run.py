"""A stored run (:class:`Run`): its arrays, attributes, checkpoints and completion marker."""

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
from .._files import UnsafePathError, plain_folder, walk_plain
from . import integrity
from .arrays import ArrayLayout, ReadBudget, check_layout, parse_layout, read_node
from .contents import ROOT_META_LIMIT
from .errors import CorruptStoreError, StoreError
from .lease import LEASE_NAME, SCRATCH_PREFIX, Lease

__all__ = ["STORE_FORMAT", "Run", "compact_json", "to_json"]

#: Version of the run layout and of its keys; bump when either changes incompatibly.
STORE_FORMAT = 5


def to_json(value: Any) -> Any:
    """Convert numpy scalars and arrays, tuples and paths to JSON values (NaN → None).

    Parameters
    ----------
    value : object
        What to convert (containers recursively).

    Returns
    -------
    object
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
    """A daskfair run stored in a zarr group.

    A run from :func:`create_run` or :func:`resume_run` holds the store's lease until
    :meth:`mark_complete` or :meth:`close` (also a context manager); one from :func:`open_run`
    only reads: its writing methods raise :class:`StoreError`, and a run that lost its lease
    :class:`StoreLockedError`.

    Parameters
    ----------
    path, group : pathlib.Path, zarr.Group
        The store's directory and its root group.
    lease : Lease, default=None
        The writer's lease (None: read only).
    """

    def __init__(self, path: Path, group: zarr.Group, lease: Lease | None = None) -> None:
        self.path = path
        self.group = group
        self._lease = lease
        self._budget: ReadBudget | None = None
        self._verified = False

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
        """Record JSON-able values as group attributes (on the client).

        Parameters
        ----------
        **values
            Names and values (converted by :func:`to_json`); ``daskfair`` and ``params`` are
            reserved (ValueError).

        Raises
        ------
        StoreError
            The attributes grew past what a reader takes (:data:`ROOT_META_LIMIT`): the run
            could not be read back, and stays unfinished.
        """
        reserved = {"daskfair", "params"} & values.keys()
        if reserved:
            raise ValueError(f"attribute names {sorted(reserved)} are reserved.")
        self._writable()
        with compact_json():
            self.group.attrs.update(to_json(values))
        size = (self.path / "zarr.json").stat().st_size
        if size > ROOT_META_LIMIT:
            raise StoreError(
                f"the run's attributes hold {size:,} bytes, more than the {ROOT_META_LIMIT:,} a "
                f"reader takes ({', '.join(values)}): the run could not be read back and is "
                "left unfinished. For a CV model, search fewer candidates.")

    def _record_node(self, name: str) -> None:
        """Record the top-level node of ``name`` in the marker before it is written: replacing
        an unfinished run removes only what it recorded (checkpoints are known by name)."""
        top = name.split("/", 1)[0]
        info = self.info
        nodes = info.get("nodes", [])
        if top not in nodes and not top.startswith(integrity.CHECKPOINT_PREFIX):
            with compact_json():
                self.group.attrs["daskfair"] = {**info, "nodes": [*nodes, top]}

    def write_array(self, name: str, data: Any, *, chunks: tuple[int, ...] | None = None,
                    compressed: bool = True) -> zarr.Array:
        """Store a numpy or dask array under ``name`` (replacing one), a dask one by the workers.

        Every chunk is written, also one that holds only zeros: a reader finds each chunk the
        shape declares as a file (docs/design.md#reading-a-store).

        Parameters
        ----------
        name : str
            The array's path within the run.
        data : array-like or dask array
            Numbers to store (TypeError for text or objects; a dask array needs known chunks).
        chunks : tuple of int, default=None
            The zarr chunks (None: the dask array's largest blocks, or zarr's choice).
        compressed : bool, default=True
            Compress the chunks (zstd). False stores them as they are, a numpy array in one
            chunk unless ``chunks`` says otherwise: its files then hold exactly the array's
            bytes (a saved model's arrays).

        Returns
        -------
        zarr.Array
        """
        options: dict[str, Any] = {"overwrite": True, "config": {"write_empty_chunks": True}}
        if not compressed:
            options["compressors"] = None
        if isinstance(data, da.Array):
            if any(math.isnan(c) for c in data.shape):
                raise ValueError(
                    f"cannot store {name!r}: unknown chunk sizes; call compute_chunk_sizes().")
            self._writable()
            self._record_node(name)
            chunks = chunks or tuple(max(c) for c in data.chunks)
            data = data.rechunk(chunks)
            arr = self.group.create_array(name, shape=data.shape, dtype=data.dtype,
                                          chunks=chunks, **options)
            # not optimised: re-optimising persisted arrays resubmits their keys (dask/dask#9888)
            progress.compute(da.store(data, arr, lock=False, compute=False),
                             optimize_graph=False)
            return arr
        data = np.asarray(data)
        if data.dtype.kind in "OUS":
            raise TypeError(f"store {name!r} as an attribute: arrays must be numeric.")
        self._writable()
        self._record_node(name)
        if chunks or not compressed:
            options["chunks"] = chunks or tuple(max(1, n) for n in data.shape)
        return self.group.create_array(name, data=data, **options)

    def files(self) -> dict[str, int]:
        """Every file of the store by its path in it, and its size.

        Returns
        -------
        dict of str to int

        Raises
        ------
        CorruptStoreError
            The store holds a link, a device, a FIFO or a socket (never followed).
        """
        return integrity.plain_files(self.path)

    def layouts(self) -> dict[str, ArrayLayout]:
        """Every array of the run (checkpoints included) by path: shape, dtype, chunks, read
        from metadata checked to be daskfair's (no data is read).

        Returns
        -------
        dict of str to ArrayLayout

        Raises
        ------
        CorruptStoreError
            A node's metadata are not as daskfair writes them.
        """
        out = {}
        for rel in sorted(self.files()):
            if not rel.endswith("/zarr.json"):
                continue
            name = rel[:-len("/zarr.json")]
            meta = read_node(self.path, rel)
            if meta.get("node_type") == "array":
                out[name] = parse_layout(meta, name)
        return out

    def array_names(self) -> list[str]:
        """The paths of the run's arrays (checkpoints included).

        Returns
        -------
        list of str
        """
        return sorted(self.layouts())

    def array(self, name: str, *, compressed: bool | None = None) -> zarr.Array:
        """The array ``name``, checked before anything of its data is read: a finished run's
        files against its manifest, its metadata and every chunk file (its size, or the size
        its compressed frame declares), and its size against what this run may decode.

        Parameters
        ----------
        name : str
            The array's path within the run.
        compressed : bool, default=None
            Whether daskfair wrote it compressed (refused otherwise); None: either.

        Returns
        -------
        zarr.Array
            Not loaded.

        Raises
        ------
        KeyError
            No array of that name.
        CorruptStoreError
            The array changed since the run finished, or is not as daskfair writes arrays.
        """
        try:
            folder = plain_folder(self.path, name)
            files = {f"{name}/{rel}": n for rel, n in walk_plain(folder).items()}
        except FileNotFoundError:
            files = {}
        except UnsafePathError as exc:
            raise CorruptStoreError(f"the run at {self.path} is refused unread: {exc}"
                                    ) from None
        if f"{name}/zarr.json" not in files:
            raise KeyError(f"run {self.path} has no array {name!r}; it has "
                           f"{self.array_names()}.")
        if self.is_complete and not self._verified:
            self._check(contents=True, prefix=name, files=files)
        if self._budget is None:
            self._budget = ReadBudget(sum(self.files().values()))
        check_layout(self.path, name, files, self._budget, compressed=compressed)
        return self.group[name]

    def read_array(self, name: str, *, compressed: bool | None = None) -> np.ndarray:
        """Load an array of the run, checked first as :meth:`array` checks it.

        Parameters
        ----------
        name : str
            The array's path within the run.
        compressed : bool, default=None
            As in :meth:`array`.

        Returns
        -------
        ndarray

        Raises
        ------
        KeyError, CorruptStoreError
            As for :meth:`array`.
        """
        return self.array(name, compressed=compressed)[...]

    def verify(self, *, contents: bool = True) -> None:
        """Check a finished run's files against its manifest (an unfinished run is not checked).

        Parameters
        ----------
        contents : bool, default=True
            Compare every file's digest too (reads every file), not only the sizes.

        Raises
        ------
        CorruptStoreError
            Something changed since the run finished; the message says what.
        """
        if self.is_complete:
            self._check(contents=contents)
            self._verified = contents  # every file's digest: the arrays' need no second one

    def _check(self, *, contents: bool, prefix: str | None = None,
               files: dict[str, int] | None = None) -> None:
        """CorruptStoreError when the files (of ``prefix``) differ from the manifest."""
        problems = integrity.verify(self.path, self.info.get("manifest"), self.attrs,
                                    self.files() if files is None else files,
                                    contents=contents, prefix=prefix)
        if problems:
            raise CorruptStoreError(
                f"the run at {self.path} is corrupt: " + "; ".join(problems) + ". It was "
                "complete when written and its files changed since (an interrupted copy, a "
                "disk error, an edit). Restore it from a backup, or rerun the job "
                "with overwrite=True.")

    @property
    def digest(self) -> str | None:
        """The digest of a finished run (BLAKE2b-256 of its manifest, which holds every file's
        and the attributes' digests), or None for an unfinished one. Equal digests mean equal
        contents; compare it with the one the run's sender publishes to check its origin."""
        manifest = self.info.get("manifest")
        return integrity.manifest_digest(manifest) if self.is_complete and isinstance(
            manifest, dict) else None

    @contextlib.contextmanager
    def reading(self, what: str) -> Iterator[None]:
        """Turn an error that malformed stored values cause while ``what`` is read from the
        run (a missing key, a wrong type or length) into a :class:`CorruptStoreError` that
        names the run and ``what``.

        Parameters
        ----------
        what : str
            What is being read, in words ("the front", "the audit").
        """
        try:
            yield
        except StoreError:
            raise
        except (KeyError, IndexError, TypeError, ValueError, AttributeError) as exc:
            raise CorruptStoreError(
                f"{what} in {self.path} is malformed ({type(exc).__name__}: "
                f"{str(exc)[:200]}): the run was not written by this version of daskfair, or "
                "was altered. Rerun the job that wrote it.") from None

    @property
    def checkpoint(self) -> dict[str, Any] | None:
        """The last committed checkpoint (``iteration``, ``group``, ...), or None.

        Raises
        ------
        CorruptStoreError
            The pointer is not one daskfair writes (a group name and an iteration).
        """
        ckpt = self.group.attrs.get("checkpoint") or None
        if ckpt is not None and not (
                isinstance(ckpt, dict) and isinstance(ckpt.get("group"), str)
                and re.fullmatch(rf"{integrity.CHECKPOINT_PREFIX}\d{{1,12}}", ckpt["group"])
                and type(ckpt.get("iteration")) is int and ckpt["iteration"] >= 0):
            raise CorruptStoreError(f"the checkpoint pointer of {self.path} is malformed: "
                                    "the run was altered. Start it again with overwrite=True.")
        return ckpt

    def commit_checkpoint(self, name: str, **info: Any) -> None:
        """Make the fully written group ``name`` (``checkpoint_...``) the run's checkpoint.

        The previous checkpoint is deleted after the pointer is switched.

        Parameters
        ----------
        name : str
            The checkpoint's group (KeyError when it was not written).
        **info
            JSON-able values recorded with the pointer (the iteration, say).
        """
        if name not in self.group:
            raise KeyError(f"checkpoint group {name!r} was not written to {self.path}.")
        self.set_attrs(checkpoint={**info, "group": name})
        self._drop_checkpoints(keep=name)

    def _drop_checkpoints(self, keep: str | None = None) -> None:
        """Delete every checkpoint group but ``keep`` (the previous one, and half-written ones)."""
        with _quiet_listing():
            names = list(self.group.group_keys())
        for name in names:
            if name.startswith(integrity.CHECKPOINT_PREFIX) and name != keep:
                del self.group[name]

    def mark_complete(self, **summary: Any) -> None:
        """Record ``summary``, then the completion marker with the manifest, and give up the lease.

        Parameters
        ----------
        **summary
            JSON-able result values, recorded as attributes before the marker.
        """
        if summary:
            self.set_attrs(**summary)
        self._writable()
        integrity.sync_tree(self.path)
        info = {k: v for k, v in self.info.items() if k != "manifest"}
        info.update(status="complete", completed=utc_now(), format=STORE_FORMAT)
        info["manifest"] = integrity.build_manifest(self.path, {**self.attrs, "daskfair": info})
        with compact_json():
            self.group.attrs["daskfair"] = to_json(info)
        integrity.sync_tree_root(self.path)
        # after the marker: a crash in between leaves a complete run with a spare checkpoint
        self._drop_checkpoints()
        if self.checkpoint:
            with compact_json():
                del self.group.attrs["checkpoint"]
        self.close()

    def close(self) -> None:
        """Give up the store's lease (idempotent); an unfinished run stays incomplete."""
        if self._lease is not None:
            self._lease.release()

    def __enter__(self) -> Run:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Run({str(self.path)!r}, kind={self.kind!r}, status={self.status!r})"


@contextlib.contextmanager
def compact_json() -> Iterator[None]:
    """Metadata written without indentation: a saved model's tree, indented, is six times
    its size (16 MB for an FKR-CV pipeline of 2.4 MB), and every reader parses all of it."""
    with zarr.config.set({"json_indent": None}):
        yield


@contextlib.contextmanager
def _quiet_listing() -> Iterator[None]:
    """Silence zarr's warnings about the lease and scratch files in a group's directory."""
    with warnings.catch_warnings():
        warnings.filterwarnings(
            "ignore", message=rf"Object at ({re.escape(LEASE_NAME)}|.*\.partial|"
                              rf"{re.escape(SCRATCH_PREFIX)}.*) is not recognized")
        yield
