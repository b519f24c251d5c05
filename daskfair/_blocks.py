"""Map a pure function over aligned row blocks and tree-sum its partial statistics.

The one data flow of docs/design.md#data-flow: row blocks in, small dense state out. The
function sees numpy blocks only; numpy inputs are cut into the same canonical row blocks as
dask arrays and summed in the same tree, so both give the same bits.
"""

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
    """Row chunks that depend on the data's shape only, never on how it arrived chunked.

    Sums over these blocks give the same bits for any input chunking
    (docs/design.md#determinism). Blocks of :func:`block_size` rows; the last one shorter.
    """
    size = block_size(width)
    return (size,) * (n_rows // size) + ((n_rows % size,) if n_rows % size else ())


def block_size(width: int, max_rows: int = 65_536) -> int:
    """Rows of a canonical block for ``width`` values per row (:func:`canonical_rows`): the
    power of two that holds about 64 MB of float64 values, between 1,024 and ``max_rows``
    rows, or the ``daskfair.block-rows`` config key."""
    size = dask.config.get("daskfair.block-rows", None)
    if size is None:
        size = 2 ** int(np.log2(max(1, (64 * 2**20) // (8 * max(1, width)))))
        size = min(max_rows, max(1_024, size))
    return int(size)


def _width(arrays: Sequence[Any], row_width: int | None) -> int:
    # values per row that a block's computation holds: the inputs', or the caller's hint
    # for a function whose intermediates are wider (a kernel block has one per landmark)
    widths = [int(np.prod(np.shape(a)[1:])) for a in arrays if a is not None]
    return max([*widths, row_width or 0])


def align_rows(*arrays: Any, row_width: int | None = None,
               rows: tuple[int, ...] | None = None) -> list[Any]:
    """Rechunk every dask array (and wrap numpy arrays) to the canonical row chunks.

    Columns are kept in one chunk, so each row block holds whole rows. ``None`` passes
    through. The row chunks are :func:`canonical_rows` of the data (with ``row_width``, the
    values per row a block's computation holds, if wider than the inputs), whatever the
    inputs' chunks were; or ``rows``, for a computation whose results do not depend on
    where the blocks are cut.
    """
    ref = next((a for a in arrays if is_dask(a)), None)
    if ref is None:
        return list(arrays)
    if rows is None:
        rows = canonical_rows(ref.shape[0], _width(arrays, row_width)) or (0,)
    out = []
    for a in arrays:
        if a is None:
            out.append(None)
            continue
        if not is_dask(a):
            a = da.from_array(np.asarray(a), chunks=(rows, *(-1 for _ in a.shape[1:])))
        target = (rows, *((s,) for s in a.shape[1:]))
        if a.chunks != target:
            a = a.rechunk(target)
        out.append(a)
    return out


def row_blocks(*arrays: Any, row_width: int | None = None, optimize: bool = True,
               rows: tuple[int, ...] | None = None) -> list[tuple[Any, ...]]:
    """Delayed row blocks of aligned dask arrays, as one tuple per block (None passes through).

    ``optimize=False`` keeps the arrays' own block keys (no fused copies), for graphs that
    also use the arrays themselves; ``rows`` as in :func:`align_rows`.
    """
    arrays = align_rows(*arrays, row_width=row_width, rows=rows)
    per_array = []
    for a in arrays:
        if a is None:
            per_array.append(None)
        else:
            blocks = a.to_delayed(optimize_graph=optimize)
            per_array.append(blocks.reshape(a.numblocks[0], -1)[:, 0])
    n_blocks = next(len(p) for p in per_array if p is not None)
    return [tuple(None if p is None else p[i] for p in per_array) for i in range(n_blocks)]


def _add(a: Any, b: Any) -> Any:
    if isinstance(a, tuple):
        return tuple(_add(x, y) for x, y in zip(a, b, strict=True))
    return a + b


def _tree(parts: Sequence[Any], combine: Callable[[Any, Any], Any]) -> Any:
    parts = list(parts)
    while len(parts) > 1:
        nxt = [dask.delayed(combine, pure=True)(parts[i], parts[i + 1])
               for i in range(0, len(parts) - 1, 2)]
        if len(parts) % 2:
            nxt.append(parts[-1])
        parts = nxt
    return parts[0]


def streamed_tree(parts: Iterable[Any], combine: Callable[[Any, Any], Any]) -> Any:
    """The pairwise tree of :func:`_tree`, combined as the parts arrive.

    A binary counter pairs the same parts as the level-by-level tree: equal-sized subtrees
    merge as soon as both exist, and those left at the end (one per set bit of the count,
    largest first) fold from the right. Only O(log #blocks) partial results are held.
    """
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


def block_sum(
    func: Callable[..., Any],
    *arrays: Any,
    compute: bool = True,
    combine: Callable[[Any, Any], Any] = _add,
    row_width: int | None = None,
    rows: tuple[int, ...] | None = None,
    **kwargs: Any,
) -> Any:
    """Sum ``func(*row_block_of_each_array, **kwargs)`` over all row blocks.

    Parameters
    ----------
    func : callable
        Pure function of numpy blocks returning an array or a tuple of arrays (partial
        statistics that add up across blocks).
    *arrays : ndarray or dask array
        Arrays with the same number of rows; dask arrays are aligned to a common row chunking
        (columns in one chunk). ``None`` entries are passed to ``func`` as ``None``.
    compute : bool, default=True
        Return numpy results, or (False) a ``dask.delayed`` object.
    combine : callable, default=elementwise sum
        How two partial results merge (elementwise sum of arrays and tuples of arrays).
    row_width : int, default=None
        Values per row that ``func`` holds at once, when wider than the inputs (sets the
        canonical block size, :func:`canonical_rows`).
    rows : tuple of int, default=None
        Row chunks of dask inputs instead of the canonical ones (:func:`align_rows`; only
        for statistics whose sums are exact, such as integer counts).
    **kwargs
        Small constant arguments (landmarks, centers) passed to every call.

    Returns
    -------
    object
        The combined statistics, with the structure ``func`` returns (numpy, or a
        ``dask.delayed`` object with ``compute=False``).
    """
    if not any(is_dask(a) for a in arrays):
        # the canonical blocks and tree of dask input, so both give the same bits
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
