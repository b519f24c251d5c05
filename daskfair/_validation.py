"""Input checks shared by every public function.

Each check accepts numpy arrays, pandas objects and dask arrays. Checks that need the data's
values (finiteness) are lazy on dask arrays: they are folded into the blocks so that they run in
the same pass as the computation and raise :class:`ValueError` from the worker, never leaving a
partial result behind.
"""

from __future__ import annotations

import math
import os
import sys
import warnings
from numbers import Integral
from typing import Any

import dask.array as da
import numpy as np
import pandas as pd
from sklearn.exceptions import DataConversionWarning

__all__ = [
    "apply_merge",
    "as_array",
    "check_array",
    "check_consistent_length",
    "check_feature_names",
    "check_group_size_params",
    "check_int",
    "check_labels",
    "check_n_clusters",
    "check_sample_weight",
    "check_sensitive",
    "column_or_1d",
    "combine_columns",
    "combined_names",
    "feature_names",
    "group_column",
    "is_dask",
    "merge_small_groups",
    "plan_merge",
]


def is_dask(x: Any) -> bool:
    """True for dask arrays (and dask collections exposing ``__dask_graph__``)."""
    return isinstance(x, da.Array)


def as_array(x: Any, name: str) -> np.ndarray | da.Array:
    """Turn pandas objects, lists and dask DataFrames into numpy or dask arrays (no copy)."""
    if is_dask(x) or isinstance(x, np.ndarray):
        return x
    if isinstance(x, pd.DataFrame | pd.Series):
        return x.to_numpy()
    if hasattr(x, "to_delayed") and hasattr(x, "npartitions"):  # dask DataFrame / Series
        return _frame_array(x)
    if x is None:
        raise TypeError(f"{name} is None; pass an array of shape (n_samples, ...).")
    if hasattr(x, "tocsr") or hasattr(x, "todense"):  # scipy.sparse matrices and arrays
        raise TypeError(
            f"{name} is a sparse matrix; sparse input is not supported. Convert it with "
            f"`{name}.toarray()` (or use dask arrays for data that do not fit in memory)."
        )
    return np.asarray(x)


def _to_numpy(frame: Any) -> np.ndarray:
    return frame.to_numpy()


def _frame_array(x: Any) -> da.Array:
    """A dask DataFrame or Series as a dask array with known chunk sizes.

    Its partitions' rows are counted in one pass (``read_parquet`` and ``read_csv`` leave
    them unknown), and the array is cut from the very partitions that were counted:
    ``to_dask_array(lengths=True)`` may count another partitioning than it converts.
    """
    from .tables.partitions import count_rows, partition_array, partitions

    parts = partitions(x)
    meta = x._meta.to_numpy()
    return partition_array(parts, count_rows(parts), _to_numpy, dtype=meta.dtype,
                           width=None if meta.ndim == 1 else meta.shape[1])


def column_or_1d(x: Any, name: str) -> Any:
    """Ravel a column vector (n, 1) to (n,) with a DataConversionWarning, as scikit-learn does."""
    if x.ndim == 2 and x.shape[1] == 1:
        warnings.warn(
            f"A column-vector {name} was passed when a 1d array was expected; it is raveled. "
            f"Pass {name} of shape (n_samples,) (e.g. `{name}.ravel()`) to silence this.",
            DataConversionWarning,
            stacklevel=4,
        )
        return x[:, 0]
    return x


def _check_known_chunks(x: da.Array, name: str) -> None:
    if any(math.isnan(c) for c in x.shape) or any(
        math.isnan(c) for chunks in x.chunks for c in chunks
    ):
        raise ValueError(
            f"{name} is a dask array with unknown chunk sizes (shape {x.shape}). "
            f"Call `{name}.compute_chunk_sizes()` first, or build it with "
            "`dask_dataframe.to_dask_array(lengths=True)`."
        )


def _not_numeric(name: str, dtype: Any) -> str:
    return (
        f"{name} must be numeric, got dtype {dtype} (every value's float() argument must be "
        "a string or a number). Encode text and categorical columns before passing them: "
        "`daskfair.TableEncoder` does it in one pass for pandas and dask DataFrames."
    )


def _numeric_block(block: np.ndarray, name: str, finite: bool) -> np.ndarray:
    try:
        return block.astype(np.float64)
    except (TypeError, ValueError):
        if finite and pd.isna(block).any():  # None or pd.NA (nullable pandas columns)
            raise ValueError(
                f"{name} contains missing values (None or pd.NA). Drop or impute those rows "
                "before fitting."
            ) from None
        raise TypeError(_not_numeric(name, block.dtype)) from None


def _finite_block(block: np.ndarray, name: str) -> np.ndarray:
    if not np.isfinite(block).all():
        bad = np.flatnonzero(~np.isfinite(block).reshape(len(block), -1).all(axis=1))
        raise ValueError(
            f"{name} contains NaN or infinite values ({bad.size} rows in one block, first at "
            f"block row {bad[0]}). Drop or impute those rows before fitting."
        )
    return block


def check_array(
    x: Any,
    name: str = "X",
    *,
    ndim: int = 2,
    dtype: Any = np.float64,
    min_samples: int = 1,
    finite: bool = True,
) -> np.ndarray | da.Array:
    """Validate a numeric array of samples.

    Parameters
    ----------
    x : array-like, pandas or dask object
        The input.
    name : str
        Name used in error messages.
    ndim : {1, 2}
        Required number of dimensions.
    dtype : dtype or None
        Dtype to convert to (float64 by default, so that results do not depend on the input
        precision). ``None`` keeps the input dtype (it must still be numeric).
    min_samples : int
        Minimum number of rows.
    finite : bool
        Reject NaN and infinite values (lazily for dask arrays).

    Returns
    -------
    ndarray or dask.array.Array
        numpy stays numpy, dask stays dask (rows chunked, one chunk across columns).
    """
    x = as_array(x, name)
    if x.dtype == object:  # numbers in an object array (e.g. mixed pandas frames) are fine
        if is_dask(x):
            x = x.map_blocks(_numeric_block, name, finite, dtype=np.float64)
        else:
            x = _numeric_block(x, name, finite)
    if np.issubdtype(x.dtype, np.complexfloating):
        raise ValueError(f"{name} is complex: Complex data not supported.")
    if not (np.issubdtype(x.dtype, np.number) or np.issubdtype(x.dtype, np.bool_)):
        raise TypeError(_not_numeric(name, x.dtype))
    if ndim == 1:
        x = column_or_1d(x, name)
    if x.ndim != ndim:
        hint = (
            " Reshape your data with `x.reshape(-1, 1)` for a single feature."
            if ndim == 2 and x.ndim == 1
            else ""
        )
        raise ValueError(f"{name} must be {ndim}-D, got shape {x.shape}.{hint}")
    if is_dask(x):
        _check_known_chunks(x, name)
    if x.shape[0] < min_samples:
        raise ValueError(
            f"{name} has {x.shape[0]} rows (n_samples={x.shape[0]}); at least {min_samples} "
            "are needed."
        )
    if ndim == 2 and x.shape[1] == 0:
        raise ValueError(
            f"{name} has no columns: 0 feature(s) (shape={x.shape}) while a minimum of 1 is "
            "required."
        )
    if dtype is not None and x.dtype != dtype:
        x = x.astype(dtype)
    if is_dask(x):
        if ndim == 2 and x.numblocks[1] != 1:
            x = x.rechunk({1: -1})
        if finite:
            x = x.map_blocks(_finite_block, name, dtype=x.dtype)
    elif finite:
        _finite_block(x, name)
    return x


def check_consistent_length(*named: tuple[str, Any]) -> int:
    """Check that all ``(name, array)`` pairs have the same number of rows; return it."""
    for name, arr in named:
        if is_dask(arr):
            _check_known_chunks(arr, name)
    lengths = {name: arr.shape[0] for name, arr in named if arr is not None}
    if len(set(lengths.values())) > 1:
        desc = ", ".join(f"{k} has {v}" for k, v in lengths.items())
        raise ValueError(f"Inconsistent numbers of rows: {desc}. They must be equal.")
    return next(iter(lengths.values()))


def _encode_block(block: np.ndarray, groups: np.ndarray) -> np.ndarray:
    codes = np.searchsorted(groups, block)
    codes = np.clip(codes, 0, len(groups) - 1)
    if not np.array_equal(groups[codes], block):
        raise ValueError("sensitive_features has values not seen when the groups were listed.")
    return codes.astype(np.int64)


def _check_n_entries(n_entries: Any, n_samples: Any, name: str, other: str) -> None:
    if isinstance(n_samples, float) and math.isnan(n_samples):
        raise ValueError(
            f"{name} has {n_entries} entries but {other} has an unknown number of rows: it is a "
            "dask array with unknown chunk sizes. Call `.compute_chunk_sizes()` on it first, "
            "or build it with `dask_dataframe.to_dask_array(lengths=True)`."
        )
    if n_entries != n_samples:
        raise ValueError(
            f"{name} has {n_entries} entries but {other} has {n_samples} rows; they must match."
        )


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
            + f"; give every group as one type, e.g. `{name}.astype(str)`."
        ) from None


#: What joins the columns' values into one group name (fairlearn's convention).
GROUP_SEPARATOR = ","
#: What ``small_groups`` may be.
SMALL_GROUPS = ("raise", "merge")


def combined_names(block: np.ndarray) -> np.ndarray:
    """One group name per row of a 2-D array: its values as ``str`` (numpy's
    ``astype(str)``), a backslash or comma in them escaped by a backslash, joined by ","
    (fairlearn's convention). Missing values are not checked here."""
    text = np.asarray(block).astype(str)
    if text.size == 0:
        return np.empty(len(text), dtype=object)
    # numpy's string functions (np.char: numpy 1.26 has no np.strings) are ~3x faster than
    # joining row by row in Python
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
            _check_known_chunks(a, f"{name}[{i}]")
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
    """Several sensitive columns as one column of combined group names (lazy for dask).

    Every row's values are turned into text with ``str`` (numpy's ``astype(str)`` of the
    columns brought to one array: a 2-D array or a DataFrame as numpy converts it, a list of
    1-D arrays or Series each with its own values), a backslash or comma inside a value is
    escaped with a backslash, and the texts are joined by ``","``: fairlearn's convention, so
    ``("black", "F")`` is the group ``"black,F"`` and a fairlearn user sees the same names.
    A missing value in any column is an error. A 1-D input, or a 2-D one with a single
    column, is returned as the 1-D column it is.
    """
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
        _check_known_chunks(s, name)
        return s.rechunk({1: -1}).map_blocks(_combine_block, name, drop_axis=1,
                                             dtype=object)
    return _combine_block(s, name)


def sensitive_column(s: Any, n_samples: int | None = None, *,
                     name: str = "sensitive_features") -> np.ndarray | da.Array:
    """``s`` as a 1-D array of ``n_samples`` groups; checks the shape only (reads nothing).

    Several columns (a 2-D array, a DataFrame, a list of 1-D columns) are combined into one
    by :func:`combine_columns` (lazily for dask input).
    """
    s = combine_columns(s, name)
    if s.ndim != 1:
        raise ValueError(
            f"{name} must be 1-D with one group per row, or 2-D with one column per "
            f"sensitive attribute, got shape {s.shape}.")
    if is_dask(s):
        _check_known_chunks(s, name)
    if n_samples is not None:
        _check_n_entries(s.shape[0], n_samples, name, "X")
    return s


def check_group_size_params(min_group_size: Any, small_groups: Any) -> int:
    """``min_group_size`` (an integer >= 1) and ``small_groups`` (one of :data:`SMALL_GROUPS`).
    """
    if isinstance(min_group_size, bool) or not isinstance(min_group_size, Integral) \
            or min_group_size < 1:
        raise ValueError(
            f"min_group_size must be an integer >= 1 (the fewest rows a group may have; 1 "
            f"accepts every group), got {min_group_size!r}.")
    if small_groups not in SMALL_GROUPS:
        raise ValueError(
            f"small_groups must be one of {SMALL_GROUPS} (what to do with groups of fewer "
            f"than min_group_size rows), got {small_groups!r}.")
    return int(min_group_size)


def _value_counts(block: np.ndarray) -> dict[Any, int]:
    counts = pd.Series(np.asarray(block, dtype=object)).value_counts(dropna=False, sort=False)
    return dict(zip(counts.index.tolist(), counts.to_numpy().tolist(), strict=True))


def _add_counts(parts: list[dict[Any, int]]) -> dict[Any, int]:
    total: dict[Any, int] = {}
    for part in parts:
        for key, count in part.items():
            total[key] = total.get(key, 0) + count
    return total


def group_sizes(s: Any, name: str = "sensitive_features") -> dict[Any, int]:
    """Rows of every group of a 1-D column (dask: one small reduction, a read of ``s``)."""
    if is_dask(s):
        import dask

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
    """The ``stacklevel`` of the first frame outside daskfair, from the function that calls
    this one: the estimators reach the warning through call chains of different depths."""
    package = os.path.dirname(os.path.abspath(__file__))
    frame, level = sys._getframe(1), 1
    while frame is not None and frame.f_code.co_filename.startswith(package):
        frame, level = frame.f_back, level + 1
    return level


def plan_merge(sizes: dict[Any, int], min_group_size: int, small_groups: str, *,
               name: str = "sensitive_features", flags: bool = False
               ) -> tuple[dict[Any, int], str]:
    """The groups of fewer than ``min_group_size`` rows and the name they merge into.

    ``sizes`` are every group's rows. Nothing to merge: ``({}, "")``. With
    ``small_groups="raise"`` a small group is an error naming each of them; with
    ``"merge"`` a :class:`UserWarning` names them, and the result is an error when the
    merged group is still too small or fewer than two groups would remain. ``flags``: the
    errors' advice names the command line's options instead of the parameters.
    """
    min_group_size = check_group_size_params(min_group_size, small_groups)
    merge, lower = (("--small-groups merge", "lower --min-group-size") if flags
                    else ("small_groups='merge'", "lower min_group_size"))
    small = {k: c for k, c in sorted(sizes.items(), key=lambda kc: (str(kc[0]), kc[1]))
             if c < min_group_size}
    if not small:
        return {}, ""
    if small_groups == "raise":
        raise ValueError(
            f"{name} has {len(small)} group(s) with fewer than min_group_size="
            f"{min_group_size} rows: {_listed(small)}. Merge them into one group with "
            f"{merge}, {lower}, or drop those rows.")
    kept = {str(k) for k in sizes if k not in small}
    other, i = "other", 0
    while other in kept:
        i += 1
        other = f"other_{i}"
    total = sum(small.values())
    if total < min_group_size:
        raise ValueError(
            f"{name}: the merged group {other!r} of {_listed(small)} has {total} rows, still "
            f"fewer than min_group_size={min_group_size}. {lower.capitalize()} or drop "
            "those rows.")
    if len(kept) + 1 < 2:
        raise ValueError(
            f"{name}: merging {_listed(small)} into {other!r} leaves a single group; "
            f"fairness needs at least two. {lower.capitalize()}.")
    warnings.warn(
        f"{name}: {len(small)} group(s) with fewer than min_group_size={min_group_size} "
        f"rows merged into the group {other!r} ({total} rows): {_listed(small)}.",
        UserWarning, stacklevel=_caller_level())
    return small, other


def apply_merge(s: Any, small: list[Any], other: str) -> np.ndarray | da.Array:
    """``s`` with the groups ``small`` renamed ``other`` and every name a string (lazy for
    dask)."""
    if is_dask(s):
        return s.map_blocks(_merge_block, list(small), other, dtype=object)
    return _merge_block(s, list(small), other)


def merge_small_groups(s: Any, min_group_size: int = 1, small_groups: str = "raise", *,
                       name: str = "sensitive_features"
                       ) -> tuple[np.ndarray | da.Array, dict[str, int]]:
    """Apply ``min_group_size`` to a 1-D group column: raise, or merge the small groups.

    With ``min_group_size=1`` nothing is read and ``s`` is returned as it is. Otherwise the
    rows of every group are counted (for dask one small reduction, a read of ``s`` only).
    Groups of fewer rows are an error (``small_groups="raise"``) or become one group
    ``"other"`` (``"merge"``; ``"other_1"``, ``"other_2"``, … if that name is taken), with a
    :class:`UserWarning` naming them; every group name is then a string (``str`` of the
    value). A merged group still below ``min_group_size``, or fewer than two groups left,
    is an error (:func:`plan_merge`).

    Returns
    -------
    column : ndarray or dask array of shape (n_samples,)
        The groups, the small ones merged (lazy for dask).
    merged : dict of str to int
        Every merged group's name and rows (empty when nothing was merged).
    """
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
    from ._keyed import MISSING

    return value is MISSING or value is None or (isinstance(value, float | np.floating)
                                                 and value != value) or value is pd.NaT


def sorted_groups(values: Any, dtype: Any = None, *, min_groups: int = 2,
                  name: str = "sensitive_features") -> np.ndarray:
    """The sorted groups from the distinct values of a sensitive column, with its checks.

    ``values`` are raw values (missing ones as NaN, None or :data:`daskfair._keyed.MISSING`);
    ``dtype`` is the column's, so the groups compare as its values do.
    """
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
            f"{min_groups} are needed to measure or enforce fairness."
        )
    return groups


def encode_groups(s: Any, groups: np.ndarray) -> np.ndarray | da.Array:
    """Codes 0..J-1 of ``s`` against the sorted ``groups`` (lazy for dask)."""
    if is_dask(s):
        return s.map_blocks(_encode_block, groups, dtype=np.int64)
    return _encode_block(s, groups)


def check_sensitive(
    s: Any,
    n_samples: int | None = None,
    *,
    min_groups: int = 2,
    name: str = "sensitive_features",
) -> tuple[np.ndarray | da.Array, np.ndarray]:
    """Encode sensitive groups as integer codes ``0..J-1``.

    Strings, booleans, integers and floats are accepted; groups are the sorted distinct values.
    For a dask array only the distinct values are computed (a small reduction, one read of
    ``s``); the codes stay lazy. Passes that read ``s`` anyway list its groups themselves
    (:mod:`daskfair._keyed`) instead.

    Parameters
    ----------
    s : array-like of shape (n_samples,) or (n_samples, c)
        Group membership of every row; several columns are combined into one
        (:func:`combine_columns`).
    n_samples : int, optional
        Required length.
    min_groups : int
        Minimum number of distinct groups present (fairness needs at least two).
    name : str
        Name used in error messages.

    Returns
    -------
    codes : ndarray or dask array of shape (n_samples,), int64
    groups : ndarray of shape (n_groups,)
        The original group values; ``groups[codes]`` recovers the input.
    """
    s = sensitive_column(s, n_samples, name=name)
    missing = _missing_groups(name)
    if not is_dask(s) and s.dtype.kind in "fO" and pd.isna(s).any():
        raise ValueError(missing)
    # dask input: missing values show up among the distinct values (sorted_groups says so)
    groups = sorted_groups(_distinct(s, name, missing), s.dtype, min_groups=min_groups,
                           name=name)
    return encode_groups(s, groups), groups


def check_n_labels(n_labels: Any) -> None:
    """A number of clusters (labels) must be an integer ≥ 1."""
    if isinstance(n_labels, bool) or not isinstance(n_labels, Integral):
        raise TypeError(f"n_clusters must be an integer, got {n_labels!r}.")
    if n_labels < 1:
        raise ValueError(f"n_clusters must be >= 1, got {n_labels}.")


def label_column(labels: Any, n_samples: int | None = None, *,
                 name: str = "labels") -> np.ndarray | da.Array:
    """``labels`` as a 1-D column of ``n_samples`` integer (or float) labels; checks the shape
    and dtype only (reads nothing)."""
    labels = as_array(labels, name)
    if labels.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got shape {labels.shape}.")
    if is_dask(labels):
        _check_known_chunks(labels, name)
    if n_samples is not None:
        if isinstance(n_samples, float) and math.isnan(n_samples):
            _check_n_entries(labels.shape[0], n_samples, name, "the data")
        if labels.shape[0] != n_samples:
            raise ValueError(
                f"{name} has {labels.shape[0]} entries but {n_samples} were expected."
            )
    if labels.dtype.kind not in "iubf":
        raise TypeError(f"{name} must be integers, got dtype {labels.dtype}.")
    return labels


def check_labels(
    labels: Any,
    n_samples: int | None = None,
    *,
    n_labels: int | None = None,
    name: str = "labels",
) -> np.ndarray | da.Array:
    """Validate integer labels ``0..n_labels-1`` (one per row); the range check is lazy on dask."""
    if n_labels is not None:
        check_n_labels(n_labels)
    labels = label_column(labels, n_samples, name=name)
    if labels.dtype.kind == "f":
        if is_dask(labels):
            labels = labels.map_blocks(_integral_block, name, dtype=labels.dtype)
        else:
            _integral_block(labels, name)
    labels = labels.astype(np.int64)
    if n_labels is not None:
        if is_dask(labels):
            labels = labels.map_blocks(_range_block, n_labels, name, dtype=np.int64)
        else:
            _range_block(labels, n_labels, name)
    return labels


def _integral_block(block: np.ndarray, name: str) -> np.ndarray:
    if not np.isfinite(block).all():
        raise ValueError(
            f"{name} contains NaN or infinite values; every row needs a cluster index 0, 1, "
            "2, ... Drop or relabel those rows."
        )
    if not np.all(np.mod(block, 1) == 0):
        raise ValueError(f"{name} must be integer cluster indices, got non-integer floats.")
    return block


def _range_block(block: np.ndarray, n_labels: int, name: str) -> np.ndarray:
    if block.size and (block.min() < 0 or block.max() >= n_labels):
        raise ValueError(
            f"{name} must lie in [0, {n_labels - 1}], found values in "
            f"[{block.min()}, {block.max()}]."
        )
    return block


def check_int(value: Any, name: str, low: int = 1) -> int:
    """An integer parameter (not a bool) that is at least ``low``."""
    if isinstance(value, bool) or not isinstance(value, Integral) or value < low:
        raise ValueError(f"{name} must be an integer >= {low}, got {value!r}.")
    return int(value)


def check_n_clusters(n_clusters: Any, n_samples: int, name: str = "n_clusters") -> int:
    """A positive integer not larger than the number of samples."""
    if isinstance(n_clusters, bool) or not isinstance(n_clusters, Integral):
        raise TypeError(f"{name} must be an integer, got {n_clusters!r}.")
    if n_clusters < 1:
        raise ValueError(f"{name} must be >= 1, got {n_clusters}.")
    if n_clusters > n_samples:
        raise ValueError(
            f"{name}={n_clusters} is larger than the number of samples ({n_samples}); "
            "use fewer clusters or more data."
        )
    return int(n_clusters)


def _nonnegative_block(block: np.ndarray, name: str) -> np.ndarray:
    if block.size and block.min() < 0:
        raise ValueError(f"{name} has negative values (min {block.min():g}); sample weights "
                         "must be >= 0.")
    return block


def check_sample_weight(sample_weight: Any, n_samples: int) -> np.ndarray | da.Array | None:
    """Validate non-negative, finite per-row weights (``None`` passes through).

    The sign check is lazy for dask arrays; numpy weights must not all be zero.
    """
    if sample_weight is None:
        return None
    w = check_array(sample_weight, "sample_weight", ndim=1)
    _check_n_entries(w.shape[0], n_samples, "sample_weight", "X")
    if is_dask(w):
        return w.map_blocks(_nonnegative_block, "sample_weight", dtype=w.dtype)
    _nonnegative_block(w, "sample_weight")
    if not w.sum() > 0:
        raise ValueError("sample_weight sums to zero: at least one row needs a positive weight.")
    return w


def feature_names(X: Any) -> np.ndarray | None:
    """Column names of a pandas or dask DataFrame when they are all strings, else None."""
    columns = getattr(X, "columns", None)
    if columns is None:
        return None
    names = np.asarray(list(columns), dtype=object)
    if names.size and all(isinstance(c, str) for c in names):
        return names
    return None


def check_feature_names(estimator: Any, X: Any) -> None:
    """Compare ``X``'s column names with ``estimator.feature_names_in_`` (scikit-learn's rule).

    Different names are an error; names on one side only are a warning.
    """
    fitted = getattr(estimator, "feature_names_in_", None)
    names = feature_names(X)
    kind = type(estimator).__name__
    if fitted is None and names is not None:
        warnings.warn(f"X has feature names, but {kind} was fitted without feature names",
                      UserWarning, stacklevel=3)
    elif fitted is not None and names is None:
        warnings.warn(f"X does not have valid feature names, but {kind} was fitted with "
                      "feature names", UserWarning, stacklevel=3)
    elif fitted is not None and (len(fitted) != len(names) or (fitted != names).any()):
        raise ValueError(
            "The feature names should match those that were passed during fit. Fitted with: "
            f"{list(fitted)[:10]}; got: {list(names)[:10]}.")
