"""Map a pure function over aligned row blocks and tree-sum its partial statistics.

This is the one data flow of DESIGN §1: row blocks in, small dense state out. The function
sees numpy blocks only, so it is testable without dask; with numpy inputs it is called once on
the whole array.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import dask
import dask.array as da
import numpy as np

from . import progress
from ._validation import is_dask

__all__ = ["align_rows", "block_sum", "row_blocks"]


def align_rows(*arrays: Any) -> list[Any]:
    """Rechunk every dask array (and wrap numpy arrays) to the row chunks of the first dask one.

    Columns are kept in one chunk, so each row block holds whole rows. ``None`` passes through.
    """
    ref = next((a for a in arrays if is_dask(a)), None)
    if ref is None:
        return list(arrays)
    rows = ref.chunks[0]
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


def row_blocks(*arrays: Any) -> list[tuple[Any, ...]]:
    """Delayed row blocks of aligned dask arrays, as one tuple per block (None passes through)."""
    arrays = align_rows(*arrays)
    per_array = []
    for a in arrays:
        if a is None:
            per_array.append(None)
        else:
            per_array.append(a.to_delayed().reshape(a.numblocks[0], -1)[:, 0])
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


def block_sum(
    func: Callable[..., Any],
    *arrays: Any,
    compute: bool = True,
    combine: Callable[[Any, Any], Any] = _add,
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
    compute : bool
        Return numpy results (default) or a ``dask.delayed`` object.
    combine : callable
        How two partial results merge (elementwise sum of arrays/tuples by default).
    **kwargs
        Small constant arguments (landmarks, centers) passed to every call.

    Returns
    -------
    The combined statistics, with the structure ``func`` returns.
    """
    if not any(is_dask(a) for a in arrays):
        return func(*arrays, **kwargs)
    parts = [dask.delayed(func, pure=True)(*blk, **kwargs) for blk in row_blocks(*arrays)]
    total = _tree(parts, combine)
    return progress.compute(total) if compute else total
