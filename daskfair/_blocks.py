"""Map a pure function over aligned row blocks and tree-sum its partial statistics
(docs/design.md#data-flow); numpy inputs take the same canonical blocks and tree as dask
arrays, so both give the same bits."""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import dask
import dask.array as da
import numpy as np

from . import progress
from ._validation import is_dask

__all__ = ["align_rows", "block_size", "block_sum", "canonical_rows", "numpy_blocks",
           "row_blocks", "streamed_tree"]


def canonical_rows(n_rows: int, width: int) -> tuple[int, ...]:
    """Row chunks of :func:`block_size` rows that depend on the data's shape only."""
    size = block_size(width)
    return (size,) * (n_rows // size) + ((n_rows % size,) if n_rows % size else ())


def block_size(width: int, max_rows: int = 65_536) -> int:
    """Rows of a canonical block: about 64 MB of ``width`` float64 values per row, a power of 2."""
    size = dask.config.get("daskfair.block-rows", None)
    if size is None:
        size = 2 ** int(np.log2(max(1, (64 * 2**20) // (8 * max(1, width)))))
        size = min(max_rows, max(1_024, size))
    return int(size)


def _width(arrays: Sequence[Any], row_width: int | None) -> int:
    # values per row a block's computation holds: the inputs', or a wider hint (landmarks)
    widths = [int(np.prod(np.shape(a)[1:])) for a in arrays if a is not None]
    return max([*widths, row_width or 0])


def align_rows(*arrays: Any, row_width: int | None = None,
               rows: tuple[int, ...] | None = None) -> list[Any]:
    """If any is dask, the arrays rechunked to the canonical row chunks (or ``rows``)."""
    ref = next((a for a in arrays if is_dask(a)), None)
    if ref is None:
        return list(arrays)
    if rows is None:
        rows = canonical_rows(ref.shape[0], _width(arrays, row_width)) or (0,)
    return [None if a is None else _on_rows(a, rows) for a in arrays]


def _on_rows(a: Any, rows: tuple[int, ...]) -> da.Array:
    if not is_dask(a):
        a = da.from_array(np.asarray(a), chunks=(rows, *(-1 for _ in a.shape[1:])))
    target = (rows, *((s,) for s in a.shape[1:]))
    return a if a.chunks == target else a.rechunk(target)


def row_blocks(*arrays: Any, row_width: int | None = None, optimize: bool = True,
               rows: tuple[int, ...] | None = None) -> list[tuple[Any, ...]]:
    """Delayed row blocks of :func:`align_rows`, one tuple per block."""
    arrays = align_rows(*arrays, row_width=row_width, rows=rows)
    if optimize:
        # optimised together: a task the arrays share (a table partition they are all cut
        # from) stays one task, where each array's own optimisation would fuse a copy of it
        # into its blocks and read the partition once per array
        given = [i for i, a in enumerate(arrays) if a is not None]
        with dask.config.set({"optimization.fuse.active": False}):
            optimized = dask.optimize(*(arrays[i] for i in given))
        arrays = list(arrays)
        for i, a in zip(given, optimized, strict=True):
            arrays[i] = a
    per_array = [None if a is None else
                 a.to_delayed(optimize_graph=False).reshape(a.numblocks[0], -1)[:, 0]
                 for a in arrays]
    n_blocks = next(len(p) for p in per_array if p is not None)
    return [tuple(None if p is None else p[i] for p in per_array) for i in range(n_blocks)]


def _add(a: Any, b: Any) -> Any:
    if isinstance(a, tuple):
        return tuple(_add(x, y) for x, y in zip(a, b, strict=True))
    return a + b


def _tree(parts: Sequence[Any], combine: Callable[..., Any], fan_in: int = 2) -> Any:
    """The parts combined in a tree, ``fan_in`` at a time: ``combine(*parts)`` takes up to
    ``fan_in`` of them."""
    parts = list(parts)
    while len(parts) > 1:
        nxt = [dask.delayed(combine, pure=True)(*parts[i:i + fan_in])
               for i in range(0, len(parts) - 1, fan_in)]
        if len(parts) % fan_in == 1:
            nxt.append(parts[-1])
        parts = nxt
    return parts[0]


def streamed_tree(parts: Iterable[Any], combine: Callable[[Any, Any], Any]) -> Any:
    """The pairwise tree of :func:`_tree`, combined as the parts arrive (a binary counter)."""
    stack: list[tuple[int, Any]] = []
    for part in parts:
        level, value = 0, part
        while stack and stack[-1][0] == level:
            value = combine(stack.pop()[1], value)
            level += 1
        stack.append((level, value))
    if not stack:
        raise ValueError("no row blocks to sum")
    value = stack.pop()[1]
    while stack:
        value = combine(stack.pop()[1], value)
    return value


def block_sum(func: Callable[..., Any], *arrays: Any, compute: bool = True,
              combine: Callable[[Any, Any], Any] = _add, row_width: int | None = None,
              rows: tuple[int, ...] | None = None, **kwargs: Any) -> Any:
    """``func(*row blocks, **constants)`` tree-summed over the canonical row blocks."""
    if not any(is_dask(a) for a in arrays):
        return streamed_tree((func(*blk, **kwargs) for blk in numpy_blocks(arrays, row_width)),
                             combine)
    kwargs = {k: _shared(v) for k, v in kwargs.items()}
    parts = [dask.delayed(func, pure=True)(*blk, **kwargs)
             for blk in row_blocks(*arrays, row_width=row_width, rows=rows)]
    total = _tree(parts, combine)
    return progress.compute(total) if compute else total


def _nbytes(value: Any) -> int:
    if isinstance(value, np.ndarray):
        return value.nbytes
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return sum(_nbytes(getattr(value, f.name)) for f in dataclasses.fields(value))
    if isinstance(value, dict):
        return sum(_nbytes(v) for v in value.values())
    if isinstance(value, list | tuple):
        return sum(_nbytes(v) for v in value)
    return 0


def _shared(value: Any) -> Any:
    # a constant over 1 MB becomes one graph node every block depends on, not a copy per task
    if _nbytes(value) > 2**20:
        return dask.delayed(value, pure=True, traverse=False)
    return value


def numpy_blocks(arrays: Sequence[Any], row_width: int | None = None
                 ) -> list[tuple[Any, ...]]:
    """In-memory arrays cut into the canonical row blocks (one empty block for no rows)."""
    ref = next((a for a in arrays if a is not None), None)
    if ref is None:
        return [tuple(arrays)]
    bounds = np.cumsum((0, *canonical_rows(len(ref), _width(arrays, row_width))))
    if len(bounds) == 1:  # no rows: one empty block
        bounds = np.array([0, 0])
    return [tuple(None if a is None else a[lo:hi] for a in arrays)
            for lo, hi in itertools.pairwise(bounds)]
