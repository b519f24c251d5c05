"""Arrays a thread reuses from one block to the next (docs/design.md#audits-in-one-pass,
"Memory a block reuses").

A Dask worker returns freed memory to the system at once (its nanny sets
``MALLOC_TRIM_THRESHOLD_``), so every fresh array above a few hundred kilobytes is new pages,
each one faulted in on its first write: in a worker that costs an audit's block function
more than its arithmetic does. The per-row arrays that live only while a block is read come
from here instead.
"""

from __future__ import annotations

import math
import threading
from typing import Any

import numpy as np

__all__ = ["MAX_BYTES", "scratch"]

#: The largest array kept for reuse; a larger one is allocated afresh each time.
MAX_BYTES = 2**25
_local = threading.local()


def scratch(name: str, shape: int | tuple[int, ...], dtype: Any) -> np.ndarray:
    """An array of ``shape`` and ``dtype``, not initialised, in memory this thread reuses.

    It is the caller's until the same thread asks for ``name`` again: it must not outlive
    the block function that asked for it (nothing returned may be, or view, a scratch
    array).
    """
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    dtype = np.dtype(dtype)
    size = math.prod(shape) * dtype.itemsize
    if size > MAX_BYTES:
        return np.empty(shape, dtype=dtype)
    buffers = _local.__dict__.setdefault("buffers", {})
    buffer = buffers.get(name)
    if buffer is None or len(buffer) < size:
        buffer = buffers[name] = np.empty(max(size, 1), dtype=np.uint8)
    return buffer[:size].view(dtype).reshape(shape)
