"""Sensitive groups: several columns combined into one (fairlearn's names), small groups
merged, codes. Lazy on dask, except group counts and distinct values (one small reduction
that reads the sensitive column only)."""

from __future__ import annotations

import os
import sys
import warnings
from collections import Counter
from typing import Any

import dask
import dask.array as da
import numpy as np
import pandas as pd

from ._keyed import MISSING
from ._params import Integer, Options, Spec, check_params
from ._validation import as_array, check_known_chunks, check_n_entries, column_or_1d, is_dask

__all__ = ["GROUP_SEPARATOR", "GROUP_SIZE", "SMALL_GROUPS", "apply_merge",
           "check_group_size_params",
           "check_sensitive", "combine_columns", "combined_names", "encode_groups",
           "group_column", "group_sizes", "is_missing", "merge_small_groups", "plan_merge",
           "sensitive_column", "sorted_groups"]


def _encode_block(block: np.ndarray, groups: np.ndarray) -> np.ndarray:
    codes = np.searchsorted(groups, block)
    codes = np.clip(codes, 0, len(groups) - 1)
    if not np.array_equal(groups[codes], block):
        raise ValueError("sensitive_features has values not seen when the groups were listed.")
    return codes.astype(np.int64)


def _isna_block(block: np.ndarray) -> np.ndarray:
    return np.asarray(pd.isna(block)).reshape(block.shape)


def _distinct(s: Any, name: str, missing: str) -> np.ndarray:
    """The sorted distinct values of ``s`` (one small reduction for dask)."""
    try:
        return np.asarray(da.unique(s).compute()) if is_dask(s) else np.unique(s)
    except TypeError as exc:  # numpy sorts the values: None, or strings mixed with numbers
        if is_dask(s) and s.map_blocks(_isna_block, dtype=bool).any().compute():
            raise ValueError(missing) from None
        kinds = sorted({type(v).__name__ for v in s}) if not is_dask(s) else []
        raise TypeError(
            f"{name} mixes values that cannot be sorted into groups"
            + (f" (types {kinds})" if kinds else f" ({exc})")
            + f"; give every group as one type, e.g. `{name}.astype(str)`.") from None


GROUP_SEPARATOR = ","  # joins the columns' values into one group name (fairlearn's)
SMALL_GROUPS = ("raise", "merge")


def combined_names(block: np.ndarray) -> np.ndarray:
    """One group name per row of a 2-D array, as fairlearn names them (``"black,F"``)."""
    text = np.asarray(block).astype(str)
    if text.size == 0:
        return np.empty(len(text), dtype=object)
    text = np.char.replace(np.char.replace(text, "\\", "\\\\"), GROUP_SEPARATOR,
                           "\\" + GROUP_SEPARATOR)
    out = text[:, 0]
    for j in range(1, text.shape[1]):
        out = np.char.add(np.char.add(out, GROUP_SEPARATOR), text[:, j])
    return out.astype(object)


def _combine_block(block: np.ndarray, name: str) -> np.ndarray:
    if block.dtype.kind in "fOmM" and np.asarray(pd.isna(block)).any():
        raise ValueError(_missing_groups(name))
    return combined_names(block)


def _stack_columns(columns: list[Any], name: str) -> np.ndarray | da.Array:
    """A list of 1-D columns as one 2-D object array (each column keeps its own values)."""
    arrays = [column_or_1d(as_array(c, f"{name}[{i}]"), f"{name}[{i}]")
              for i, c in enumerate(columns)]
    for i, a in enumerate(arrays):
        if a.ndim != 1:
            raise ValueError(
                f"{name}[{i}] must be 1-D (one value per row), got shape {a.shape}; pass a "
                "list of 1-D columns, or a 2-D array or DataFrame with one column each.")
        if is_dask(a):
            check_known_chunks(a, f"{name}[{i}]")
    lengths = [a.shape[0] for a in arrays]
    if len(set(lengths)) > 1:
        raise ValueError(
            f"the columns of {name} have different lengths ({lengths}); every column needs "
            "one value per row.")
    dask_arrays = [a for a in arrays if is_dask(a)]
    if not dask_arrays:
        return np.stack([a.astype(object) for a in arrays], axis=1)
    chunks = dask_arrays[0].chunks
    arrays = [(a if is_dask(a) else da.from_array(a, chunks=chunks)).astype(object)
              for a in arrays]
    return da.stack([a.rechunk(chunks) for a in arrays], axis=1)


def _is_column_list(s: Any) -> bool:
    # a list of arrays or Series is columns; a list of lists is rows, as numpy reads it
    return isinstance(s, list | tuple) and len(s) > 0 and all(
        is_dask(c) or hasattr(c, "npartitions") or isinstance(c, np.ndarray | pd.Series)
        for c in s)


def combine_columns(s: Any, name: str = "sensitive_features") -> np.ndarray | da.Array:
    """Several sensitive columns as one column of :func:`combined_names` (lazy for dask)."""
    if _is_column_list(s):
        s = _stack_columns(list(s), name)
        if s.shape[1] == 1:
            return s[:, 0]
    else:
        s = as_array(s, name)
    if s.ndim == 2 and s.shape[1] == 1:
        return s[:, 0]
    if s.ndim != 2 or s.shape[1] == 0:
        return s
    if is_dask(s):
        check_known_chunks(s, name)
        return s.rechunk({1: -1}).map_blocks(_combine_block, name, drop_axis=1,
                                             dtype=object)
    return _combine_block(s, name)


def sensitive_column(s: Any, n_samples: int | None = None, *,
                     name: str = "sensitive_features") -> np.ndarray | da.Array:
    """``s`` as a 1-D column of ``n_samples`` groups (:func:`combine_columns`; reads nothing)."""
    s = combine_columns(s, name)
    if s.ndim != 1:
        raise ValueError(
            f"{name} must be 1-D with one group per row, or 2-D with one column per "
            f"sensitive attribute, got shape {s.shape}.")
    if is_dask(s):
        check_known_chunks(s, name)
    if n_samples is not None:
        check_n_entries(s.shape[0], n_samples, name, "X")
    return s


#: The group-size parameters of every estimator and front that takes groups.
GROUP_SIZE: dict[str, list[Spec]] = {"min_group_size": [Integer(1)],
                                     "small_groups": [Options(SMALL_GROUPS)]}


def check_group_size_params(min_group_size: Any, small_groups: Any) -> int:
    """``min_group_size`` and ``small_groups`` checked against :data:`GROUP_SIZE`; the size."""
    check_params({"min_group_size": min_group_size, "small_groups": small_groups}, GROUP_SIZE)
    return int(min_group_size)


def _value_counts(block: np.ndarray) -> dict[Any, int]:
    counts = pd.Series(np.asarray(block, dtype=object)).value_counts(dropna=False, sort=False)
    return dict(zip(counts.index.tolist(), counts.to_numpy().tolist(), strict=True))


def _add_counts(parts: list[dict[Any, int]]) -> dict[Any, int]:
    total: Counter[Any] = Counter()
    for part in parts:
        total.update(part)
    return total


def group_sizes(s: Any, name: str = "sensitive_features") -> dict[Any, int]:
    """Rows of every group of a 1-D column (dask: one small reduction, a read of ``s``)."""
    if is_dask(s):
        blocks = [dask.delayed(_value_counts)(b) for b in s.to_delayed().ravel()]
        counts = dask.delayed(_add_counts)(blocks).compute()
    else:
        counts = _value_counts(s)
    if any(is_missing(v) for v in counts):
        raise ValueError(_missing_groups(name))
    return {v.item() if isinstance(v, np.generic) else v: int(c) for v, c in counts.items()}


def _listed(sizes: dict[Any, int]) -> str:
    return ", ".join(f"{k!r} ({c} row{'s' if c != 1 else ''})" for k, c in sizes.items())


def _merge_block(block: np.ndarray, small: list[Any], other: str) -> np.ndarray:
    out = np.asarray(block).astype(str).astype(object)
    out[pd.Series(np.asarray(block, dtype=object)).isin(small).to_numpy()] = other
    return out


def _caller_level() -> int:
    """The ``stacklevel``, from the caller, of the first frame outside daskfair."""
    package = os.path.dirname(os.path.abspath(__file__))
    frame, level = sys._getframe(1), 1
    while frame is not None and frame.f_code.co_filename.startswith(package):
        frame, level = frame.f_back, level + 1
    return level


def plan_merge(sizes: dict[Any, int], min_group_size: int, small_groups: str, *,
               name: str = "sensitive_features") -> tuple[dict[Any, int], str]:
    """``(small groups: rows, name they merge into)``, ``({}, "")`` if none; raises or warns."""
    min_group_size = check_group_size_params(min_group_size, small_groups)
    small = {k: c for k, c in sorted(sizes.items(), key=lambda kc: (str(kc[0]), kc[1]))
             if c < min_group_size}
    if not small:
        return {}, ""
    if small_groups == "raise":
        raise ValueError(
            f"{name} has {len(small)} group(s) with fewer than min_group_size="
            f"{min_group_size} rows: {_listed(small)}. Merge them into one group with "
            "small_groups='merge', lower min_group_size, or drop those rows.")
    kept = {str(k) for k in sizes if k not in small}
    other, i = "other", 0
    while other in kept:
        i += 1
        other = f"other_{i}"
    total = sum(small.values())
    if total < min_group_size:
        raise ValueError(
            f"{name}: the merged group {other!r} of {_listed(small)} has {total} rows, still "
            f"fewer than min_group_size={min_group_size}. Lower min_group_size or drop "
            "those rows.")
    if len(kept) + 1 < 2:
        raise ValueError(
            f"{name}: merging {_listed(small)} into {other!r} leaves a single group; "
            "fairness needs at least two. Lower min_group_size.")
    warnings.warn(
        f"{name}: {len(small)} group(s) with fewer than min_group_size={min_group_size} "
        f"rows merged into the group {other!r} ({total} rows): {_listed(small)}.",
        UserWarning, stacklevel=_caller_level())
    return small, other


def apply_merge(s: Any, small: list[Any], other: str) -> np.ndarray | da.Array:
    """``s`` with the groups ``small`` renamed ``other``, every name a string (lazy)."""
    if is_dask(s):
        return s.map_blocks(_merge_block, list(small), other, dtype=object)
    return _merge_block(s, list(small), other)


def merge_small_groups(s: Any, min_group_size: int = 1, small_groups: str = "raise", *,
                       name: str = "sensitive_features"
                       ) -> tuple[np.ndarray | da.Array, dict[str, int]]:
    """``(column, {merged group: rows})`` after :func:`plan_merge` (1 reads nothing)."""
    if check_group_size_params(min_group_size, small_groups) == 1:
        return s, {}
    small, other = plan_merge(group_sizes(s, name), min_group_size, small_groups, name=name)
    if not small:
        return s, {}
    return apply_merge(s, list(small), other), {str(k): c for k, c in small.items()}


def group_column(s: Any, n_samples: int | None = None, min_group_size: int = 1,
                 small_groups: str = "raise", *, name: str = "sensitive_features"
                 ) -> tuple[np.ndarray | da.Array, dict[str, int]]:
    """:func:`sensitive_column` then :func:`merge_small_groups`: what estimators call."""
    s = sensitive_column(s, n_samples, name=name)
    return merge_small_groups(s, min_group_size, small_groups, name=name)


def _missing_groups(name: str) -> str:
    return f"{name} contains NaN or other missing values; every row needs a group."


def is_missing(value: Any) -> bool:
    """A raw key value that stands for a missing one (NaN, None, NaT, MISSING)."""
    return value is MISSING or value is None or (isinstance(value, float | np.floating)
                                                 and value != value) or value is pd.NaT


def sorted_groups(values: Any, dtype: Any = None, *, min_groups: int = 2,
                  name: str = "sensitive_features") -> np.ndarray:
    """The sorted groups of a column's distinct raw ``values`` (as ``dtype``), checked."""
    values = list(values)
    if any(is_missing(v) for v in values):
        raise ValueError(_missing_groups(name))
    try:
        groups = np.unique(np.asarray(values, dtype=dtype if dtype is not None else object))
    except TypeError:
        kinds = sorted({type(v).__name__ for v in values})
        raise TypeError(
            f"{name} mixes values that cannot be sorted into groups (types {kinds}); give "
            f"every group as one type, e.g. `{name}.astype(str)`.") from None
    if groups.size < min_groups:
        raise ValueError(
            f"{name} has {groups.size} distinct group(s) ({groups.tolist()}); at least "
            f"{min_groups} are needed to measure or enforce fairness.")
    return groups


def encode_groups(s: Any, groups: np.ndarray) -> np.ndarray | da.Array:
    """Codes 0..J-1 of ``s`` against the sorted ``groups`` (lazy for dask)."""
    if is_dask(s):
        return s.map_blocks(_encode_block, groups, dtype=np.int64)
    return _encode_block(s, groups)


def check_sensitive(s: Any, n_samples: int | None = None, *, min_groups: int = 2,
                    name: str = "sensitive_features") -> tuple[np.ndarray | da.Array, np.ndarray]:
    """``(codes, groups)``: int64 codes 0..J-1 (lazy for dask) and the sorted groups."""
    s = sensitive_column(s, n_samples, name=name)
    missing = _missing_groups(name)
    if not is_dask(s) and s.dtype.kind in "fO" and pd.isna(s).any():
        raise ValueError(missing)
    groups = sorted_groups(_distinct(s, name, missing), s.dtype, min_groups=min_groups,
                           name=name)
    return encode_groups(s, groups), groups


