"""Base labelings and groups of an FCE fit: checked, and held in memory for its passes
(docs/design.md#fce-fair-clustering-ensemble)."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

import dask
import dask.array as da
import numpy as np

from .._blocks import align_rows, block_size
from .._validation import as_array, check_known_chunks, is_dask
from ..runtime.clients import worker_memory_limits
from ._block_functions import count_ids, id_range
from .consensus import rows_of

__all__ = ["MAX_BLOCK_ROWS", "MAX_TOTAL_CLUSTERS", "check_base_labels", "hold_base_labels",
           "hold_groups"]

#: Most rows in a row block of the consensus where the input's own blocks are not kept.
MAX_BLOCK_ROWS = 2**18
#: Most clusters of all base labelings together: FCE's co-association table is as wide and as
#: long (2 GiB of int64 per block at this size).
MAX_TOTAL_CLUSTERS = 16_384


def check_base_labels(base_labels: Any) -> tuple[Any, np.ndarray]:
    """Base labelings ((n, m) array or sequence of 1-D labelings), checked and renumbered:
    each labeling's distinct values, in increasing order, become 0 .. c_i − 1 (int32; dask
    stays lazy), and c_i is their number. TypeError/ValueError if they are not labels."""
    base = _label_matrix(base_labels)
    values = _distinct(base)
    return _renumbered(base, values), _sizes(values)


def hold_base_labels(base_labels: Any, n_clusters: int | None = None) -> tuple[Any, np.ndarray]:
    """check_base_labels in one read of a dask input, its int32 codes re-blocked for rows of m
    labels and ``n_clusters`` HR values, persisted when they fit in memory."""
    base = _label_matrix(base_labels)
    if not is_dask(base):
        return check_base_labels(base)
    # a block holds m labels and, in the sweep, c HR values per row
    size = block_size(max(base.shape[1], n_clusters or 1), max_rows=MAX_BLOCK_ROWS)
    base = align_rows(base, rows=_row_chunks(base.chunks[0], size))[0]
    distinct = _block_values(base)
    if _fits_in_memory(base.nbytes + base.size * 4):
        base, distinct = dask.persist(base, distinct)  # one read for both
    values = _merged(distinct.compute())
    held = _renumbered(base, values)
    if _fits_in_memory(held.nbytes):
        held = held.persist()
    return held, _sizes(values)


def hold_groups(groups: Any, base: Any) -> Any:
    """Dask group codes as int32 in the row blocks of ``base``, persisted when they fit;
    computed when ``base`` is in memory (then so are they)."""
    if not is_dask(groups):
        return groups
    if not is_dask(base):
        return np.asarray(groups.compute(), dtype=np.int32)
    groups = align_rows(groups, rows=rows_of(base))[0].astype(np.int32)
    return groups.persist() if _fits_in_memory(groups.nbytes) else groups


def _label_matrix(base_labels: Any) -> Any:
    # the labelings as one (n, m) array of numbers, its shape and type checked
    if isinstance(base_labels, Sequence) and not isinstance(base_labels, str):
        cols = [as_array(b, "base_labels") for b in base_labels]
        lengths = {c.shape[0] for c in cols}
        if len(lengths) > 1:
            raise ValueError(f"base labelings have different lengths {sorted(lengths)}; every "
                             "labeling must label the same rows in the same order.")
        base_labels = (da.stack if any(is_dask(c) for c in cols) else np.column_stack)(cols)
    base = as_array(base_labels, "base_labels")
    if base.ndim != 2:
        raise ValueError(
            f"base_labels must be 2-D (n_samples, n_labelings), got shape {base.shape}.")
    if is_dask(base):
        check_known_chunks(base, "base_labels")
        base = base.rechunk({1: -1})  # every labeling of a row in one block
    if base.shape[0] == 0 or base.shape[1] == 0:
        raise ValueError(f"base_labels is empty (shape {base.shape}).")
    if base.dtype.kind == "c":  # as daskfair's check of X
        raise ValueError("base_labels is complex: Complex data not supported.")
    if base.dtype.kind not in "iuf":
        raise TypeError(f"base_labels must be integers, got dtype {base.dtype}.")
    return base


def _column_values(block: np.ndarray) -> list[np.ndarray]:
    """Every column's distinct values, sorted; floats checked to be finite whole numbers."""
    if block.dtype.kind == "f":
        if not np.isfinite(block).all():
            raise ValueError("base_labels contains NaN or inf; every row needs a cluster in "
                             "every labeling: drop or relabel those rows.")
        # whole numbers (floor, unlike % 1, does not warn on NaN or inf)
        if not (np.floor(block) == block).all():
            raise ValueError("base_labels must be integer cluster ids, got fractions.")
        return [np.unique(col) for col in block.T]
    n = block.shape[0]
    small = _as_int32(block) if n else None
    if small is not None:
        lo, hi = (np.empty(block.shape[1], dtype=np.int32) for _ in range(2))
        id_range(small, lo, hi)
        offsets = np.concatenate(([0], np.cumsum(hi.astype(np.int64) + 1)))
        if (lo >= 0).all() and offsets[-1] <= 4 * n:  # ids up to about the rows: no sort
            counts = np.zeros(offsets[-1], dtype=np.int64)
            count_ids(small, offsets, counts)  # in range: 0 <= lo, hi < the column's room
            return [np.flatnonzero(counts[a:b]).astype(block.dtype)
                    for a, b in itertools.pairwise(offsets)]
    return [np.unique(col) for col in block.T]


def _as_int32(block: np.ndarray) -> np.ndarray | None:
    """The block as C-ordered int32 (the one type the id kernels are compiled for), or None
    when its ids do not fit (then they are sorted)."""
    if block.dtype.itemsize > 4 or block.dtype == np.uint32:
        lo, hi = block.min(), block.max()
        if not (-(2**31) <= lo and hi < 2**31):
            return None
    return np.ascontiguousarray(block, dtype=np.int32)


def _block_values(base: da.Array) -> da.Array:
    """The distinct values of every column of every row block (lazy, one object per block)."""
    def one(block: np.ndarray) -> np.ndarray:
        out = np.empty((1, 1), dtype=object)
        out[0, 0] = _column_values(block)
        return out

    return base.map_blocks(one, dtype=object, chunks=((1,) * base.numblocks[0], (1,)))


def _merged(blocks: np.ndarray) -> list[np.ndarray]:
    """Every column's distinct values from those of its row blocks."""
    per_block = [b for b in blocks.ravel() if b is not None]
    return [np.unique(np.concatenate([b[j] for b in per_block]))
            for j in range(len(per_block[0]))]


def _distinct(base: Any) -> list[np.ndarray]:
    return _merged(_block_values(base).compute()) if is_dask(base) else _column_values(base)


def _sizes(values: list[np.ndarray]) -> np.ndarray:
    """c_i of every labeling, refused when FCE's tables over all of them would not fit."""
    sizes = np.array([len(v) for v in values], dtype=np.int64)
    if sizes.sum() > MAX_TOTAL_CLUSTERS:
        worst = int(np.argmax(sizes))
        raise ValueError(
            f"the base labelings have {int(sizes.sum()):,} clusters in all (labeling {worst} "
            f"alone {int(sizes[worst]):,}); FCE's co-association table has as many rows and "
            f"columns, and more than {MAX_TOTAL_CLUSTERS:,} would not fit in memory. Base "
            "clusterings have few clusters each: are these features rather than labels?")
    return sizes


def _changed(j: int) -> ValueError:
    return ValueError(f"base_labels changed between two reads of them: labeling {j} holds a "
                      "value it did not hold when it was first read. Keep the input "
                      "unchanged while the fit runs.")


def _codes(block: np.ndarray, values: list[np.ndarray], reread: bool = True) -> np.ndarray:
    """A block's labels as their positions among their column's distinct values (int32).
    A block read again (``reread``: a dask input that is not held is read for every pass)
    is checked to hold only those values: the kernels index by these codes."""
    sizes = np.array([len(v) for v in values])
    # integer columns already numbered 0 .. c - 1 are their own codes: checked in range by
    # one vectorised min and max of the block (a present id is one of those first read)
    same = np.array([block.dtype.kind in "iu" and v[0] == 0 and v[-1] == len(v) - 1
                     for v in values], dtype=bool)
    if reread and len(block) and same.any():
        bad = same & ((block.min(axis=0) < 0) | (block.max(axis=0) >= sizes))
        if bad.any():
            raise _changed(int(np.argmax(bad)))
    if same.all():
        return block.astype(np.int32)
    out = np.empty(block.shape, dtype=np.int32)
    for j, v in enumerate(values):
        col = block[:, j]
        if same[j]:
            out[:, j] = col
            continue
        pos = np.searchsorted(v, col)
        if not (v[np.minimum(pos, len(v) - 1)] == col).all():
            raise _changed(j)
        out[:, j] = pos
    return out


def _renumbered(base: Any, values: list[np.ndarray]) -> Any:
    """The labels renumbered 0 .. c_i − 1, as int32 in one layout for the kernels."""
    if is_dask(base):
        return base.map_blocks(_codes, values, dtype=np.int32)
    return np.ascontiguousarray(_codes(base, values, reread=False))  # values read from it


def _row_chunks(chunks: tuple[int, ...], size: int) -> tuple[int, ...]:
    """The input's row blocks if each (the last may be shorter) holds ¼ to 4 times ``size``
    rows, else blocks of ``size`` rows."""
    n = sum(chunks)
    if all(c <= 4 * size for c in chunks) and all(c >= size / 4 for c in chunks[:-1]):
        return chunks
    return (size,) * (n // size) + ((n % size,) if n % size else ()) or (0,)


def _fits_in_memory(nbytes: int) -> bool:
    """Whether ``nbytes`` take at most ¼ of the cluster's (or this machine's free) memory."""
    import distributed
    import psutil
    try:
        total = sum(worker_memory_limits(distributed.get_client()))
    except ValueError:  # no client
        total = 0
    return nbytes <= (total if total > 0 else psutil.virtual_memory().available) / 4
