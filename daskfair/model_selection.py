"""Splitting rows into training and test rows that any partitioning of them agrees on."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

import dask.array as da
import numpy as np
from dask.base import is_dask_collection

from ._frames import count_rows, partitions
from ._params import Integer, Real, checked
from ._random import fold_of
from ._validation import is_dask

__all__ = ["train_test_split"]

#: Resolution of ``test_size``: a row is a test row when its hash, modulo this, is below
#: ``round(test_size * _BINS)``.
_BINS = 1 << 20
#: Added to ``random_state`` so that the split's hash is not the CV folds' of the same seed.
_SALT = 0x5EED


def _is_test(rows: np.ndarray, test_size: float, seed: int) -> np.ndarray:
    return fold_of(rows, _BINS, seed + _SALT) < round(test_size * _BINS)


def _is_frame(x: Any) -> bool:
    return hasattr(x, "iloc")


def _is_dask_frame(x: Any) -> bool:
    return is_dask_collection(x) and hasattr(x, "map_partitions")


def _n_rows(x: Any) -> int | None:
    """Rows of ``x``; None for a dask DataFrame, whose partitions must be counted."""
    if _is_dask_frame(x):
        return None
    shape = getattr(x, "shape", None)
    if shape is None:
        x = np.asarray(x)
        shape = x.shape
    if not shape:
        raise ValueError("every array to split needs rows; got a scalar.")
    n = shape[0]
    if isinstance(n, float) and np.isnan(n):
        raise ValueError("a dask array to split has unknown chunk sizes; call "
                         "compute_chunk_sizes() on it first.")
    return int(n)


def _block_rows(block: Any, lo: int, test: bool, test_size: float, seed: int) -> Any:
    keep = _is_test(np.arange(lo, lo + len(block), dtype=np.int64), test_size, seed) == test
    return block.iloc[keep] if hasattr(block, "iloc") else block[keep]


def _array_part(block: np.ndarray, test: bool, test_size: float, seed: int,
                block_info: Any = None) -> np.ndarray:
    return _block_rows(block, block_info[0]["array-location"][0][0], test, test_size, seed)


def _split_dask_array(x: da.Array, test: bool, test_size: float, seed: int) -> da.Array:
    edges = np.cumsum((0, *x.chunks[0]))
    counts = tuple(int((_is_test(np.arange(lo, hi), test_size, seed) == test).sum())
                   for lo, hi in itertools.pairwise(edges))
    return x.map_blocks(_array_part, test, test_size, seed, dtype=x.dtype,
                        chunks=(counts, *x.chunks[1:]))


def _frame_part(part: Any, offsets: tuple[int, ...], test: bool, test_size: float, seed: int,
                partition_info: Any = None) -> Any:
    return _block_rows(part, offsets[partition_info["number"]], test, test_size, seed)


def _split_one(x: Any, lengths: Sequence[int] | None, test: bool, test_size: float,
               seed: int) -> Any:
    if _is_dask_frame(x):
        offsets = tuple(int(v) for v in np.cumsum((0, *lengths[:-1])))
        return x.map_partitions(_frame_part, offsets, test, test_size, seed,
                                meta=x._meta, align_dataframes=False)
    if is_dask(x):
        return _split_dask_array(x, test, test_size, seed)
    if not _is_frame(x) and not isinstance(x, np.ndarray):
        x = np.asarray(x)
    return _block_rows(x, 0, test, test_size, seed)


def split_rows(arrays: Sequence[Any], lengths: Sequence[int] | None, test_size: float,
               random_state: int) -> list[Any]:
    """:func:`train_test_split` of ``arrays`` whose dask DataFrames have partitions of
    ``lengths`` rows (counted when None)."""
    sizes = {n for n in map(_n_rows, arrays) if n is not None}
    frames = [x for x in arrays if _is_dask_frame(x)]
    if frames and lengths is None:
        counted = {tuple(count_rows(partitions(f))) for f in frames}
        if len(counted) > 1:
            raise ValueError("the dask DataFrames to split are partitioned differently; "
                             "give them the same partitions (one frame's columns).")
        lengths = next(iter(counted))
    if frames:
        if any(f.npartitions != len(lengths) for f in frames):
            raise ValueError("the dask DataFrames to split are partitioned differently.")
        sizes.add(int(sum(lengths)))
    if len(sizes) > 1:
        raise ValueError(f"the arrays to split have different numbers of rows: "
                         f"{sorted(sizes)}.")
    return [_split_one(x, lengths, test, test_size, random_state)
            for x in arrays for test in (False, True)]


@checked(test_size=[Real(0, 1, low_open=True, high_open=True)], random_state=[Integer(0)])
def train_test_split(*arrays: Any, test_size: float = 0.25,
                     random_state: int = 0) -> list[Any]:
    """Split rows into training and test rows by a seeded hash of each row's number.

    A row is a test row when a hash of its position (0, 1, … in the order of the rows) and
    the seed falls below ``test_size``: the same rows whether the arrays are numpy, pandas or
    dask, and however a dask input is chunked or partitioned. Rows keep their order. The test
    share is ``test_size`` in expectation (the rows are not counted first, so a dask input is
    split without a pass over it).

    Parameters
    ----------
    *arrays : sequences of the same number of rows
        numpy arrays, lists, pandas DataFrames or Series, dask arrays or DataFrames. The rows
        of a dask DataFrame are counted in one pass over its partitions (all the frames given
        must share their partitions, as one frame's columns do).
    test_size : float, default=0.25
        The expected share of test rows, in (0, 1).
    random_state : int, default=0
        The seed of the hash (≥ 0).

    Returns
    -------
    list
        For each array, its training rows then its test rows, as scikit-learn's
        ``train_test_split`` orders them; each of the input's kind.

    Examples
    --------
    >>> import numpy as np
    >>> X_train, X_test = train_test_split(np.arange(10), test_size=0.3, random_state=1)
    >>> len(X_train) + len(X_test)
    10
    """
    if not arrays:
        raise ValueError("give at least one array to split.")
    return split_rows(arrays, None, test_size, random_state)
