"""The CV estimators' folds: rows hashed by position, or a splitter's validation folds."""

from __future__ import annotations

from dataclasses import dataclass
from numbers import Integral
from typing import Any

import dask.array as da
import numpy as np

from .._validation import is_dask
from .statistics import EXPLICIT_FOLDS, row_index

__all__ = ["FoldPlan", "fold_plan"]

MAX_FOLDS = 50


@dataclass(frozen=True)
class FoldPlan:
    """``n_folds`` and the hash seed, or ``seed=EXPLICIT_FOLDS`` and every row's fold ``ids``."""

    n_folds: int
    seed: int = 0
    ids: np.ndarray | None = None

    def rows(self, X: Any) -> Any:
        """The per-row column the passes read for the folds (None with one fold)."""
        if self.n_folds == 1:
            return None
        if self.ids is None:
            return row_index(X)
        return da.from_array(self.ids, chunks=(X.chunks[0],)) if is_dask(X) else self.ids


def fold_plan(cv: Any, n: int, seed: int, X: Any, y: Any) -> FoldPlan:
    """The folds of ``cv`` for n rows; a splitter or pairs must validate every row once and
    train on all others (a splitter gets X, a placeholder for dask, and y computed)."""
    if isinstance(cv, Integral):
        return FoldPlan(int(cv), seed)
    if hasattr(cv, "split"):
        Xs = np.zeros((n, 1)) if is_dask(X) else X
        ys = None if y is None else np.asarray(y.compute() if is_dask(y) else y)
        pairs = list(cv.split(Xs, ys))
    else:
        pairs = list(cv)
    if not 2 <= len(pairs) <= MAX_FOLDS:
        raise ValueError(f"cv gave {len(pairs)} folds; the CV estimators need 2 to {MAX_FOLDS}.")
    ids = np.full(n, -1, dtype=np.int64)
    for f, pair in enumerate(pairs):
        train, test = (_indices(part, n, f, name) for part, name in zip(
            pair, ("training", "validation"), strict=True))
        if (ids[test] >= 0).any():
            raise ValueError(
                f"cv's fold {f} shares validation rows with an earlier fold: the CV "
                "estimators need every row in exactly one validation fold (KFold-like "
                "splitters; not ShuffleSplit).")
        ids[test] = f
        if (train.size + test.size != n or np.unique(train).size != train.size
                or np.intersect1d(train, test).size):
            raise ValueError(
                f"cv's fold {f} does not train on every row outside its validation rows: the "
                "CV estimators sum a fold's training moments as the total minus the fold's "
                "own, so train must be the complement of test (KFold-like splitters).")
    if (ids < 0).any():
        raise ValueError(f"{int((ids < 0).sum())} rows are in no validation fold of cv: every "
                         "row must be validated once (KFold-like splitters).")
    return FoldPlan(len(pairs), EXPLICIT_FOLDS, ids)


def _indices(part: Any, n: int, fold: int, name: str) -> np.ndarray:
    """A fold's row numbers from integer indices or a boolean mask of n rows."""
    part = np.asarray(part)
    if part.dtype == bool:
        if part.shape != (n,):
            raise ValueError(f"cv's fold {fold} has a {name} mask of shape {part.shape}; "
                             f"expected ({n},).")
        return np.flatnonzero(part)
    if part.size and not np.issubdtype(part.dtype, np.integer):
        raise ValueError(f"cv's fold {fold} has {name} indices of type {part.dtype}; give "
                         "integer row numbers or a boolean mask.")
    part = part.astype(np.int64).ravel()
    if part.size and (part.min() < 0 or part.max() >= n):
        raise ValueError(f"cv's fold {fold} has {name} indices outside 0..{n - 1}.")
    return part
