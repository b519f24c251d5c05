"""Arrow-backed columns checked before anything reads their buffers: pandas, pyarrow and
daskfair's kernels trust an array's offsets and indices, and a malformed one (built with
``pyarrow.Array.from_buffers``, which checks buffer sizes only) makes them read out of bounds
(docs/design.md#what-compiled-code-trusts)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ._scratch import scratch

__all__ = ["check_arrow"]


def _arrays(values: Any) -> list[tuple[str, Any]]:
    """The Arrow arrays behind ``values`` (a Series, DataFrame, pandas array, Index or pyarrow
    array), each with the name of its column; [] when nothing is Arrow-backed."""
    if isinstance(values, pd.DataFrame):
        return [(str(c), a) for c in values.columns for _, a in _arrays(values[c])]
    if isinstance(values, pd.Series | pd.Index):
        values = values.array
    if isinstance(values, pd.api.extensions.ExtensionArray):
        data = getattr(values, "_pa_array", None)  # ArrowExtensionArray, ArrowStringArray
        if data is None:
            return []
        values = data
    module = type(values).__module__
    if not module.startswith("pyarrow"):
        return []
    chunks = values.chunks if hasattr(values, "chunks") else [values]
    return [("", c) for c in chunks]


def _problem(arr: Any) -> str | None:
    """What is wrong with one Arrow array's buffers, or None."""
    import pyarrow as pa

    try:
        arr.validate()  # O(1): buffer sizes, the last offset within the data
    except (pa.ArrowInvalid, pa.ArrowException) as exc:
        return str(exc)
    t = arr.type
    if pa.types.is_dictionary(t):
        indices = arr.indices.to_numpy(zero_copy_only=False)
        n = len(arr.dictionary)
        if len(indices) and arr.null_count == 0 and not 0 <= indices.min() <= indices.max() < n:
            return f"dictionary indices outside [0, {n})"
        return _problem(arr.dictionary) or _problem(arr.indices)
    if pa.types.is_string(t) or pa.types.is_binary(t) or pa.types.is_large_string(t) \
            or pa.types.is_large_binary(t):
        if not len(arr):
            return None
        width = np.int64 if pa.types.is_large_string(t) or pa.types.is_large_binary(t) \
            else np.int32
        _, offsets, data = arr.buffers()
        offsets = np.frombuffer(offsets, dtype=width)[arr.offset:arr.offset + len(arr) + 1]
        order = scratch("offsets in order", max(len(offsets) - 1, 0), np.bool_)
        if len(offsets) and (offsets[0] < 0 or offsets[-1] > (data.size if data else 0)
                             or not np.greater_equal(offsets[1:], offsets[:-1],
                                                     out=order).all()):
            return "its offsets decrease or leave its data buffer"
        return None
    if not (pa.types.is_primitive(t) or pa.types.is_null(t)):
        try:  # nested types: Arrow's full check (offsets of every level)
            arr.validate(full=True)
        except (pa.ArrowInvalid, pa.ArrowException) as exc:
            return str(exc)
    return None


def check_arrow(values: Any, name: str) -> None:
    """Refuse a malformed Arrow-backed column before pandas or a kernel reads it.

    A text or binary column's offsets must start at 0 or after, never decrease and end
    within its data; a dictionary's indices lie within the dictionary; every buffer is as
    long as the array's length needs (pyarrow's ``validate()``). Checked with one vectorised
    comparison of the offsets (its cost: docs/design.md#what-compiled-code-trusts); numbers and
    booleans cost nothing.

    Parameters
    ----------
    values : pandas Series, DataFrame, Index or array, pyarrow Array or ChunkedArray
        Anything else is not Arrow-backed and passes.
    name : str
        The input's name, for the message.

    Raises
    ------
    ValueError
        A malformed Arrow array (the message names the column).
    """
    for column, arr in _arrays(values):
        problem = _problem(arr)
        if problem is not None:
            where = f"{name}[{column!r}]" if column else name
            raise ValueError(f"{where} is a malformed Arrow array ({problem}); it was not "
                             "built by pyarrow's readers or pandas. Rebuild the column (for "
                             "example pyarrow.array(values.to_pylist())) and pass it again.")
