"""A run's array checked before zarr reads a byte of its data: numeric, laid out as daskfair
writes arrays, every chunk a plain file of the store, and no chunk decoding to more than its
declared size (docs/design.md#reading-a-store)."""

from __future__ import annotations

import json
import math
from itertools import product
from pathlib import Path
from typing import Any

import numpy as np

from .._files import read_bounded, read_head
from .errors import CorruptStoreError

__all__ = ["ARRAY_META_LIMIT", "ArrayLayout", "ReadBudget", "check_layout", "chunk_keys",
           "parse_layout", "read_node", "zstd_content_size"]

#: The most bytes an array's ``zarr.json`` may hold (daskfair's are under 1 KB).
ARRAY_META_LIMIT = 64 * 1024
#: Dimensions an array may have.
MAX_NDIM = 8
#: Stored dtypes (zarr's names): numbers and booleans only.
DTYPES = frozenset({"bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                    "uint64", "float32", "float64"})
_KEYS = {"shape", "data_type", "chunk_grid", "chunk_key_encoding", "fill_value", "codecs",
         "attributes", "zarr_format", "node_type", "storage_transformers"}
_ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"


class ReadBudget:
    """The bytes a run opened for reading may decode: ``floor + expansion × its stored bytes``.

    Every array checked for reading takes its declared size from the budget, so a small store
    cannot make a reader allocate much more than it holds (a chunk of zeros compressed 10⁴
    times over, declared as a large array).

    Parameters
    ----------
    stored : int
        The store's bytes on disk.
    floor, expansion : int
        Bytes any run may decode, and how many times its stored bytes beyond that.
    """

    FLOOR = 256 * 2**20
    EXPANSION = 256

    def __init__(self, stored: int, floor: int = FLOOR, expansion: int = EXPANSION) -> None:
        self.total = floor + expansion * stored
        self.left = self.total

    def take(self, nbytes: int, where: str) -> None:
        """Take ``nbytes`` for ``where`` (an array's name), or refuse."""
        if nbytes > self.left:
            raise CorruptStoreError(
                f"{where} declares {nbytes:,} bytes, more than this store may decode "
                f"({self.left:,} of {self.total:,} left: 256 MiB plus 256 times the store's "
                "size on disk). Its metadata were altered to declare an array far larger "
                "than its files; it is refused unread.")
        self.left -= nbytes


class ArrayLayout:
    """What a checked ``zarr.json`` declares: shape, dtype, chunk shape, compression."""

    def __init__(self, shape: tuple[int, ...], dtype: np.dtype, chunks: tuple[int, ...],
                 compressed: bool) -> None:
        self.shape, self.dtype, self.chunks, self.compressed = shape, dtype, chunks, compressed

    @property
    def nbytes(self) -> int:
        return math.prod(self.shape) * self.dtype.itemsize

    @property
    def chunk_nbytes(self) -> int:
        return math.prod(self.chunks) * self.dtype.itemsize

    @property
    def n_chunks(self) -> int:
        return math.prod(math.ceil(s / c) for s, c in zip(self.shape, self.chunks, strict=True))


def _ints(value: Any, low: int) -> bool:
    return (isinstance(value, list) and len(value) <= MAX_NDIM
            and all(type(v) is int and v >= low for v in value))


def _codecs(codecs: Any) -> bool | None:
    """Whether the codecs compress (zstd), or None when they are not bytes [+ zstd]."""
    if not isinstance(codecs, list) or not 1 <= len(codecs) <= 2:
        return None
    first = codecs[0]
    if not isinstance(first, dict) or first.get("name") != "bytes" \
            or first.get("configuration", {"endian": "little"}) not in (
                {"endian": "little"}, {"endian": "big"}, {}):
        return None
    if len(codecs) == 1:
        return False
    zstd = codecs[1]
    if not isinstance(zstd, dict) or zstd.get("name") != "zstd" or set(zstd) - {
            "name", "configuration"}:
        return None
    conf = zstd.get("configuration", {})
    if not isinstance(conf, dict) or set(conf) - {"level", "checksum"}:
        return None
    return True


def parse_layout(meta: Any, name: str) -> ArrayLayout:
    """The layout of a ``zarr.json``, or CorruptStoreError naming what daskfair never writes."""
    def bad(what: str) -> CorruptStoreError:
        return CorruptStoreError(f"array {name!r} is not an array as daskfair writes them "
                                 f"({what}); the store was altered or written by something "
                                 "else, and it is refused unread.")

    if not isinstance(meta, dict) or set(meta) - _KEYS - {"dimension_names"}:
        raise bad("unexpected metadata keys" if isinstance(meta, dict) else "no metadata")
    if meta.get("zarr_format") != 3 or meta.get("node_type") != "array":
        raise bad("not a zarr format 3 array")
    if meta.get("data_type") not in DTYPES:
        raise bad(f"data type {str(meta.get('data_type'))[:40]!r}: only numbers and booleans")
    shape, grid = meta.get("shape"), meta.get("chunk_grid")
    chunks = (grid.get("configuration", {}).get("chunk_shape")
              if isinstance(grid, dict) and grid.get("name") == "regular" else None)
    if not _ints(shape, 0) or not _ints(chunks, 1) or len(shape) != len(chunks):
        raise bad("its shape or chunk grid")
    if meta.get("chunk_key_encoding") != {"name": "default",
                                          "configuration": {"separator": "/"}}:
        raise bad("its chunk key encoding")
    if meta.get("storage_transformers", []) != [] or meta.get("attributes", {}) != {}:
        raise bad("storage transformers or attributes")
    compressed = _codecs(meta.get("codecs"))
    if compressed is None:
        raise bad("codecs other than bytes and zstd")
    return ArrayLayout(tuple(shape), np.dtype(meta["data_type"]), tuple(chunks), compressed)


def read_node(root: Path, rel: str) -> dict[str, Any]:
    """The metadata ``rel`` (a node's ``zarr.json`` below the root) of the store at ``root``:
    an array's, or a group's without attributes (daskfair keeps attributes on the root only).

    Raises
    ------
    CorruptStoreError
        Unreadable, too large, or a group with attributes or keys daskfair never writes.
    """
    try:
        meta = json.loads(read_bounded(root / rel, ARRAY_META_LIMIT))
    except (ValueError, RecursionError) as exc:  # UnsafePathError is a ValueError
        raise CorruptStoreError(f"the metadata {rel!r} of {root} cannot be read "
                                f"({type(exc).__name__}: {exc}); it is refused.") from None
    if isinstance(meta, dict) and meta.get("node_type") == "array":
        return meta
    if meta != {"attributes": {}, "zarr_format": 3, "node_type": "group"} and meta != {
            "attributes": {}, "zarr_format": 3, "consolidated_metadata": None,
            "node_type": "group"}:
        raise CorruptStoreError(f"the metadata {rel!r} of {root} are not a group or an array "
                                "as daskfair writes them; the store is refused.")
    return meta


def chunk_keys(name: str, layout: ArrayLayout) -> list[str]:
    """The path of every chunk file of the array ``name`` (zarr v3's default keys)."""
    if not layout.shape:
        return [f"{name}/c"]
    ranges = [range(math.ceil(s / c)) for s, c in zip(layout.shape, layout.chunks, strict=True)]
    return [f"{name}/c/" + "/".join(map(str, idx)) for idx in product(*ranges)]


def zstd_content_size(head: bytes) -> int | None:
    """The content size a zstd frame header declares (RFC 8878, 3.1.1.1), or None when the
    bytes are not a frame header that declares one."""
    if len(head) < 6 or head[:4] != _ZSTD_MAGIC:
        return None
    desc = head[4]
    fcs_flag, single, did_flag = desc >> 6, (desc >> 5) & 1, desc & 3
    if desc & 0x08:  # the reserved bit
        return None
    pos = 5 + (0 if single else 1) + (0, 1, 2, 4)[did_flag]
    width = (1 if single else 0, 2, 4, 8)[fcs_flag]
    if width == 0 or len(head) < pos + width:
        return None
    value = int.from_bytes(head[pos:pos + width], "little")
    return value + 256 if width == 2 else value


def check_layout(root: Path, name: str, files: dict[str, int], budget: ReadBudget | None,
                 *, compressed: bool | None = None) -> ArrayLayout:
    """Check the array ``name`` of the store at ``root`` before it is read.

    Parameters
    ----------
    root : pathlib.Path
        The store.
    name : str
        The array's path in it.
    files : dict of str to int
        The store's plain files and their sizes (:func:`daskfair._files.walk_plain`).
    budget : ReadBudget or None
        Takes the array's declared size (None: nothing is decoded now).
    compressed : bool, default=None
        Whether the array must be compressed (zstd) or not; None: either.

    Returns
    -------
    ArrayLayout

    Raises
    ------
    CorruptStoreError
        The metadata are not daskfair's, a chunk file is missing, extra or of the wrong size,
        a chunk declares another size than its array's chunks, or the budget is exhausted.
    """
    meta_key = f"{name}/zarr.json"
    if meta_key not in files:
        raise CorruptStoreError(f"the store {root} has no array {name!r}.")
    layout = parse_layout(read_node(root, meta_key), name)
    if compressed is not None and layout.compressed != compressed:
        raise CorruptStoreError(f"array {name!r} of {root} is {'not ' if compressed else ''}"
                                "compressed, which daskfair never writes there.")
    present = {k for k in files if k.startswith(f"{name}/c")
               and (k == f"{name}/c" or k.startswith(f"{name}/c/"))}
    if layout.n_chunks != len(present):
        raise CorruptStoreError(
            f"array {name!r} of {root} declares {layout.n_chunks:,} chunks and has "
            f"{len(present):,} chunk files (daskfair writes every chunk): a file is missing "
            "or extra, or its shape was altered.")
    keys = chunk_keys(name, layout)
    extra = sorted(present - set(keys))
    if extra:
        raise CorruptStoreError(f"array {name!r} of {root} holds files that are no chunk of "
                                f"it ({', '.join(extra[:3])}).")
    if budget is not None:
        budget.take(layout.nbytes, f"array {name!r} of {root}")
    want = layout.chunk_nbytes
    for key in keys:
        if not layout.compressed:
            ok = files[key] == want
        else:
            ok = zstd_content_size(read_head(root / key, 18)) == want
        if not ok:
            raise CorruptStoreError(
                f"chunk {key!r} of {root} does not hold {want:,} bytes as its array declares "
                "(it is truncated, altered, or would decompress to another size); it is "
                "refused unread.")
    return layout
