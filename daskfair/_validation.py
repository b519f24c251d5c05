"""Input checks shared by every public function, for numpy, pandas and dask input.

Checks of the values (finiteness, ranges) are lazy on dask arrays: they run inside the blocks,
in the pass that computes, and raise from the worker."""

from __future__ import annotations

import functools
import math
import warnings
from typing import Any

import dask.array as da
import numpy as np
import pandas as pd

from ._arrow import check_arrow
from ._frames import count_rows, partition_array, partitions
from ._params import Integer, check_params

__all__ = ["as_array", "check_array", "check_consistent_length", "check_feature_names",
           "check_known_chunks", "check_labels", "check_n_clusters",
           "check_n_entries", "check_sample_weight", "column_or_1d", "feature_names", "is_dask"]


def is_dask(x: Any) -> bool:
    """True for dask arrays."""
    return isinstance(x, da.Array)


def as_array(x: Any, name: str) -> np.ndarray | da.Array:
    """Pandas objects, lists and dask DataFrames as numpy or dask arrays (no copy)."""
    if is_dask(x) or isinstance(x, np.ndarray):
        return x
    if isinstance(x, pd.DataFrame | pd.Series):
        check_arrow(x, name)
        return x.to_numpy()
    if hasattr(x, "to_delayed") and hasattr(x, "npartitions"):  # dask DataFrame / Series
        return _frame_array(x, name)
    if x is None:
        raise TypeError(f"{name} is None; pass an array of shape (n_samples, ...).")
    if hasattr(x, "tocsr") or hasattr(x, "todense"):  # scipy.sparse matrices and arrays
        raise TypeError(
            f"{name} is a sparse matrix; sparse input is not supported. Convert it with "
            f"`{name}.toarray()` (or use dask arrays for data that do not fit in memory).")
    return np.asarray(x)


def _to_numpy(frame: Any, name: str) -> np.ndarray:
    check_arrow(frame, name)
    return frame.to_numpy()


def _frame_array(x: Any, name: str) -> da.Array:
    """A dask DataFrame or Series as a dask array with known chunks (:mod:`._frames`)."""
    parts = partitions(x)
    meta = x._meta.to_numpy()
    return partition_array(parts, count_rows(parts), functools.partial(_to_numpy, name=name),
                           dtype=meta.dtype, width=None if meta.ndim == 1 else meta.shape[1])


def column_or_1d(x: Any, name: str) -> Any:
    """Ravel a column vector (n, 1) to (n,) with a DataConversionWarning, as scikit-learn does."""
    if x.ndim == 2 and x.shape[1] == 1:
        # scikit-learn's import is 0.5 s: a worker that unpickles a task importing this
        # module should not pay it
        from sklearn.exceptions import DataConversionWarning

        warnings.warn(
            f"A column-vector {name} was passed when a 1d array was expected; it is raveled. "
            f"Pass {name} of shape (n_samples,) (e.g. `{name}.ravel()`) to silence this.",
            DataConversionWarning, stacklevel=4)
        return x[:, 0]
    return x


def check_known_chunks(x: da.Array, name: str) -> None:
    if any(math.isnan(c) for c in x.shape) or any(
            math.isnan(c) for chunks in x.chunks for c in chunks):
        raise ValueError(
            f"{name} is a dask array with unknown chunk sizes (shape {x.shape}). "
            f"Call `{name}.compute_chunk_sizes()` first, or build it with "
            "`dask_dataframe.to_dask_array(lengths=True)`.")


def _not_numeric(name: str, dtype: Any) -> str:
    return (f"{name} must be numeric, got dtype {dtype} (every value's float() argument must "
            "be a string or a number). Encode text and categorical columns before passing "
            "them: `daskfair.TableEncoder` does it in one pass for pandas and dask DataFrames.")


def _numeric_block(block: np.ndarray, name: str, finite: bool) -> np.ndarray:
    try:
        return block.astype(np.float64)
    except (TypeError, ValueError):
        if finite and pd.isna(block).any():  # None or pd.NA (nullable pandas columns)
            raise ValueError(f"{name} contains missing values (None or pd.NA). Drop or impute "
                             "those rows first.") from None
        raise TypeError(_not_numeric(name, block.dtype)) from None


def _finite_block(block: np.ndarray, name: str) -> np.ndarray:
    if not np.isfinite(block).all():
        bad = np.flatnonzero(~np.isfinite(block).reshape(len(block), -1).all(axis=1))
        raise ValueError(
            f"{name} contains NaN or infinite values ({bad.size} rows in one block, first at "
            f"block row {bad[0]}). Drop or impute those rows first.")
    return block


def check_array(x: Any, name: str = "X", *, ndim: int = 2, dtype: Any = np.float64,
                min_samples: int = 1, finite: bool = True) -> np.ndarray | da.Array:
    """``x`` checked as a numeric ``ndim``-D array, as ``dtype`` (None: kept); dask stays dask."""
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
        hint = (" Reshape your data with `x.reshape(-1, 1)` for a single feature."
                if ndim == 2 and x.ndim == 1 else "")
        raise ValueError(f"{name} must be {ndim}-D, got shape {x.shape}.{hint}")
    if is_dask(x):
        check_known_chunks(x, name)
    if x.shape[0] < min_samples:
        raise ValueError(f"{name} has {x.shape[0]} rows (n_samples={x.shape[0]}); at least "
                         f"{min_samples} are needed.")
    if ndim == 2 and x.shape[1] == 0:
        raise ValueError(f"{name} has no columns: 0 feature(s) (shape={x.shape}) while a "
                         "minimum of 1 is required.")
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
            check_known_chunks(arr, name)
    lengths = {name: arr.shape[0] for name, arr in named if arr is not None}
    if len(set(lengths.values())) > 1:
        desc = ", ".join(f"{k} has {v}" for k, v in lengths.items())
        raise ValueError(f"Inconsistent numbers of rows: {desc}. They must be equal.")
    return next(iter(lengths.values()))


def check_n_entries(n_entries: Any, n_samples: Any, name: str, other: str) -> None:
    if isinstance(n_samples, float) and math.isnan(n_samples):
        raise ValueError(
            f"{name} has {n_entries} entries but {other} has an unknown number of rows: it is a "
            "dask array with unknown chunk sizes. Call `.compute_chunk_sizes()` on it first, "
            "or build it with `dask_dataframe.to_dask_array(lengths=True)`.")
    if n_entries != n_samples:
        raise ValueError(
            f"{name} has {n_entries} entries but {other} has {n_samples} rows; they must match.")


def check_n_labels(n_labels: Any, name: str = "n_clusters") -> None:
    """A number of clusters (labels) must be an integer ≥ 1."""
    check_params({name: n_labels}, {name: [Integer(1)]})


def label_column(labels: Any, n_samples: int | None = None, *,
                 name: str = "labels") -> np.ndarray | da.Array:
    """``labels`` as a 1-D column of ``n_samples`` numeric labels (checks shape and dtype only)."""
    labels = as_array(labels, name)
    if labels.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got shape {labels.shape}.")
    if is_dask(labels):
        check_known_chunks(labels, name)
    if n_samples is not None:
        if isinstance(n_samples, float) and math.isnan(n_samples):
            check_n_entries(labels.shape[0], n_samples, name, "the data")
        if labels.shape[0] != n_samples:
            raise ValueError(f"{name} has {labels.shape[0]} entries but {n_samples} were "
                             "expected.")
    if labels.dtype.kind not in "iubf":
        raise TypeError(f"{name} must be integers, got dtype {labels.dtype}.")
    return labels


def check_labels(labels: Any, n_samples: int | None = None, *, n_labels: int | None = None,
                 name: str = "labels") -> np.ndarray | da.Array:
    """Integer labels ``0..n_labels-1``, one per row, as int64 (range check lazy on dask)."""
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
        raise ValueError(f"{name} contains NaN or infinite values; every row needs a cluster "
                         "index 0, 1, 2, ... Drop or relabel those rows.")
    if not np.all(np.mod(block, 1) == 0):
        raise ValueError(f"{name} must be integer cluster indices, got non-integer floats.")
    return block


def _range_block(block: np.ndarray, n_labels: int, name: str) -> np.ndarray:
    if block.size and (block.min() < 0 or block.max() >= n_labels):
        raise ValueError(f"{name} must lie in [0, {n_labels - 1}], found values in "
                         f"[{block.min()}, {block.max()}].")
    return block


def check_n_clusters(n_clusters: Any, n_samples: int, name: str = "n_clusters") -> int:
    """A positive integer not larger than the number of samples."""
    check_n_labels(n_clusters, name)
    if n_clusters > n_samples:
        raise ValueError(f"{name}={n_clusters} is larger than the number of samples "
                         f"({n_samples}); use fewer clusters or more data.")
    return int(n_clusters)


def _nonnegative_block(block: np.ndarray, name: str) -> np.ndarray:
    if block.size and block.min() < 0:
        raise ValueError(f"{name} has negative values (min {block.min():g}); sample weights "
                         "must be >= 0.")
    return block


def check_sample_weight(sample_weight: Any, n_samples: int) -> np.ndarray | da.Array | None:
    """Non-negative finite weights, one per row, not all zero (lazy on dask); None passes."""
    if sample_weight is None:
        return None
    w = check_array(sample_weight, "sample_weight", ndim=1)
    check_n_entries(w.shape[0], n_samples, "sample_weight", "X")
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
    """``X``'s column names against ``estimator.feature_names_in_``, as scikit-learn checks."""
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
