"""Dask arrays that count how often each of their blocks is computed (for pass-count tests)."""

import dask.array as da
import numpy as np


def counted(values, counts, key=None, rows=64):
    """``values`` as a dask array of ``rows``-row blocks; every computation of block b adds 1
    to ``counts[key, b]`` (``counts[b]`` without a key)."""

    def load(block_info=None):
        lo, hi = block_info[None]["array-location"][0]
        counts[lo // rows if key is None else (key, lo // rows)] += 1
        return values[lo:hi]

    chunks = ((rows,) * (len(values) // rows), *((w,) for w in values.shape[1:]))
    return da.map_blocks(load, chunks=chunks, dtype=values.dtype,
                         meta=np.empty((0,) * values.ndim, values.dtype))
