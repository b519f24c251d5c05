"""A dask DataFrame's partitions as dask arrays with known chunks, cut from the very
partitions whose rows were counted (docs/design.md#platform-notes)."""

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
    """The delayed partitions of a dask DataFrame or Series, in order (graph optimised once)."""
    return list(frame.to_delayed(optimize_graph=True))


def count_rows(parts: Sequence[Any]) -> list[int]:
    """Rows of every partition (one pass that reads them)."""
    return [int(n) for n in dask.compute(*[dask.delayed(len)(p) for p in parts])]


def _apply(part: Any, lo: int, hi: int, fn: Callable[[Any], np.ndarray]) -> np.ndarray:
    return fn(part.iloc[lo:hi])


def partition_array(parts: Sequence[Any], lengths: Sequence[int],
                    fn: Callable[[Any], np.ndarray], *, dtype: Any, width: int | None = None,
                    chunk_rows: int | None = None) -> da.Array:
    """``fn`` of every partition (of every ``chunk_rows`` rows) as one dask array."""
    if len(parts) != len(lengths):
        raise ValueError(f"{len(parts)} partitions but {len(lengths)} lengths.")
    # one layer of real tasks under a fresh name: no alias layers (dask/dask#9888) and no
    # token that might not tell two closures apart (docs/design.md#platform-notes)
    name = f"{getattr(fn, '__name__', 'block')}-{uuid.uuid4().hex}"
    # Each block depends on its partition and on ``fn`` (one key for all): with two
    # dependencies it is never fused with its partition's read, so its key names the same
    # task in every graph. Fused in one pass's graph and not in the next, the scheduler kept
    # the first definition while it still held the key, and read the partition again.
    function = f"{name}-function"
    dsk, sizes = {function: fn}, []
    rest = () if width is None else (0,)
    for part, n in zip(parts, lengths, strict=True):
        step = max(1, int(chunk_rows or n or 1))
        for lo in range(0, int(n), step):
            hi = min(int(n), lo + step)
            dsk[(name, len(sizes), *rest)] = (_apply, part.key, lo, hi, function)
            sizes.append(hi - lo)
    if not sizes:
        return da.zeros((0,) if width is None else (0, width), dtype=dtype, chunks=-1)
    graph = HighLevelGraph.from_collections(name, dsk, dependencies=list(parts))
    chunks = (tuple(sizes),) if width is None else (tuple(sizes), (width,))
    return da.Array(graph, name, chunks, dtype=dtype)
