"""Base labelings and groups of an FCE fit: checked, and held in memory for its passes
(docs/design.md#fce-fair-clustering-ensemble)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import dask
import dask.array as da
import numpy as np

from .._blocks import align_rows, block_size
from .._validation import as_array, check_known_chunks, is_dask
from ..runtime.clients import worker_memory_limits
from .consensus import rows_of

__all__ = ["MAX_BLOCK_ROWS", "check_base_labels", "hold_base_labels", "hold_groups"]

#: Most rows in a row block of the consensus where the input's own blocks are not kept.
MAX_BLOCK_ROWS = 2**18


def check_base_labels(base_labels: Any) -> tuple[Any, np.ndarray]:
    """Base labelings ((n, m) array or sequence of 1-D labelings), checked: as int32 (dask
    stays lazy) and c_i = the largest label + 1 of each; TypeError/ValueError if not labels."""
    base = _label_matrix(base_labels)
    checks = _label_checks(base)
    if is_dask(base):
        checks = _block_extremes(*dask.compute(*checks))
    sizes = _label_counts(base, checks)
    if is_dask(base):
        return base.astype(np.int32), sizes
    return np.ascontiguousarray(base, dtype=np.int32), sizes  # one layout for the kernels


def hold_base_labels(base_labels: Any, n_clusters: int | None = None) -> tuple[Any, np.ndarray]:
    """check_base_labels in one read of a dask input, its int32 copy re-blocked for rows of m
    labels and ``n_clusters`` HR values, persisted when it fits in memory."""
    base = _label_matrix(base_labels)
    if not is_dask(base):
        return check_base_labels(base)
    # a block holds m labels and, in the sweep, c HR values per row
    size = block_size(max(base.shape[1], n_clusters or 1), max_rows=MAX_BLOCK_ROWS)
    base = align_rows(base, rows=_row_chunks(base.chunks[0], size))[0]
    checks = _label_checks(base)
    held = base.astype(np.int32)
    if _fits_in_memory(held.nbytes):
        held, *checks = dask.persist(held, *checks)  # one read for both
    return held, _label_counts(base, _block_extremes(*dask.compute(*checks)))


def hold_groups(groups: Any, base: Any) -> Any:
    """Dask group codes as int32 in the row blocks of ``base``, persisted when they fit."""
    if not is_dask(groups):
        return groups
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
    if base.shape[0] == 0 or base.shape[1] == 0:
        raise ValueError(f"base_labels is empty (shape {base.shape}).")
    if base.dtype.kind == "c":  # as daskfair's check of X
        raise ValueError("base_labels is complex: Complex data not supported.")
    if base.dtype.kind not in "iuf":
        raise TypeError(f"base_labels must be integers, got dtype {base.dtype}.")
    return base


def _label_checks(base: Any) -> list[Any]:
    """Every column's smallest and largest label (dask: lazy, (1, 2, m) per block), then for
    floats whether all are finite and whole."""
    if is_dask(base):
        checks = [base.map_blocks(_column_range, new_axis=1, dtype=base.dtype,
                                  chunks=((1,) * base.numblocks[0], (2,), base.chunks[1]))]
        if base.dtype.kind == "f":
            checks += [da.isfinite(base).all(), (da.floor(base) == base).all()]
        return checks
    checks = [base.min(axis=0), base.max(axis=0)]
    if base.dtype.kind == "f":
        # whole numbers where finite (floor, unlike % 1, does not warn on NaN or inf)
        checks += [np.isfinite(base).all(), (np.floor(base) == base).all()]
    return checks


def _block_extremes(ranges: np.ndarray, *rest: Any) -> list[Any]:
    # the computed checks of a dask input, the blocks' extremes reduced to the columns'
    return [ranges[:, 0].min(axis=0), ranges[:, 1].max(axis=0), *rest]


def _label_counts(base: Any, checks: list[Any]) -> np.ndarray:
    """c_i of every labeling from the computed checks; raises on non-index labels."""
    if base.dtype.kind == "f":
        if not checks[2]:
            raise ValueError("base_labels contains NaN or inf; every row needs a cluster in "
                             "every labeling: drop or relabel those rows.")
        if not checks[3]:
            raise ValueError("base_labels must be integer cluster indices, got fractions.")
    lo, hi = (np.asarray(v) for v in checks[:2])
    if (lo < 0).any():
        bad = int(np.flatnonzero(lo < 0)[0])
        raise ValueError(f"base_labels column {bad} has negative labels (min {int(lo[bad])}); "
                         "labels must be cluster indices 0, 1, 2, ...")
    if (hi >= base.shape[0]).any():
        bad = int(np.flatnonzero(hi >= base.shape[0])[0])
        raise ValueError(
            f"base_labels column {bad} has the label {int(hi[bad])}, larger than the number of "
            f"rows ({base.shape[0]}): it cannot be a cluster index. Re-encode each labeling "
            "as 0, 1, 2, ... (numpy.unique(labels, return_inverse=True)).")
    # labels < n_samples < 2³¹ (an int32 row count) fit in int32
    return hi.astype(np.int64) + 1


def _column_range(block: np.ndarray) -> np.ndarray:
    # (1, 2, m): every column's smallest and largest value (an empty block: its type's extremes)
    if len(block) == 0:
        info = (np.iinfo if block.dtype.kind in "iu" else np.finfo)(block.dtype)
        return np.array([[info.max] * block.shape[1], [info.min] * block.shape[1]],
                        dtype=block.dtype)[None]
    return np.stack([block.min(axis=0), block.max(axis=0)])[None]


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
