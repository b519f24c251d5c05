"""A dask DataFrame's partitions as row blocks of dask arrays with known sizes.

Every array comes from the *same* delayed partitions whose rows were counted, so the rows
line up by construction (``to_dask_array(lengths=True)`` may count another partitioning than
it converts: docs/design.md#platform-notes); a partition longer than ``chunk_rows`` is cut
into several blocks.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from typing import Any

import dask
import dask.array as da
import numpy as np
from dask.highlevelgraph import HighLevelGraph

__all__ = ["count_rows", "partition_array", "partitions"]


def partitions(frame: Any) -> list[Any]:
    """The delayed partitions of a dask DataFrame or Series (graph optimised once, here).

    Parameters
    ----------
    frame : dask DataFrame or Series
        The table.

    Returns
    -------
    list of dask.delayed.Delayed
        One per partition, in order.
    """
    return list(frame.to_delayed(optimize_graph=True))


def count_rows(parts: Sequence[Any]) -> list[int]:
    """Rows of every partition (one pass that reads them).

    Parameters
    ----------
    parts : sequence of dask.delayed.Delayed
        The partitions (:func:`partitions`).

    Returns
    -------
    list of int
        The rows of each.
    """
    return [int(n) for n in dask.compute(*[dask.delayed(len)(p) for p in parts])]


def _apply(part: Any, lo: int, hi: int, fn: Callable[[Any], np.ndarray]) -> np.ndarray:
    return fn(part.iloc[lo:hi])


def partition_array(
    parts: Sequence[Any],
    lengths: Sequence[int],
    fn: Callable[[Any], np.ndarray],
    *,
    dtype: Any,
    width: int | None = None,
    chunk_rows: int | None = None,
) -> da.Array:
    """``fn`` of every partition (of every ``chunk_rows`` rows of it) as one dask array.

    Parameters
    ----------
    parts : sequence of dask.delayed.Delayed
        The partitions (:func:`partitions`).
    lengths : sequence of int
        Rows of each partition (from the pass that read them).
    fn : callable
        pandas rows → numpy array of ``len(rows)`` rows (a 1-D array when ``width`` is None).
    dtype : numpy dtype
        The result's.
    width : int, optional
        Columns of a 2-D result.
    chunk_rows : int, optional
        Largest block; default one block per partition. Empty partitions give no block.

    Returns
    -------
    dask.array.Array
        The rows, with known chunks.
    """
    if len(parts) != len(lengths):
        raise ValueError(f"{len(parts)} partitions but {len(lengths)} lengths.")
    # one layer of real tasks under a fresh name: no alias layers (dask/dask#9888) and no
    # token that might not tell two closures apart (docs/design.md#platform-notes)
    name = f"{getattr(fn, '__name__', 'block')}-{uuid.uuid4().hex}"
    dsk, sizes = {}, []
    rest = () if width is None else (0,)
    for part, n in zip(parts, lengths, strict=True):
        step = max(1, int(chunk_rows or n or 1))
        for lo in range(0, int(n), step):
            hi = min(int(n), lo + step)
            dsk[(name, len(sizes), *rest)] = (_apply, part.key, lo, hi, fn)
            sizes.append(hi - lo)
    if not sizes:
        return da.zeros((0,) if width is None else (0, width), dtype=dtype, chunks=-1)
    graph = HighLevelGraph.from_collections(name, dsk, dependencies=list(parts))
    chunks = (tuple(sizes),) if width is None else (tuple(sizes), (width,))
    return da.Array(graph, name, chunks, dtype=dtype)
