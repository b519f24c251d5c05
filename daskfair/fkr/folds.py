"""The CV estimators' folds: rows hashed to folds by position (an integer ``cv``), or the
validation folds of a scikit-learn splitter or of (train, test) index pairs."""

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
    """How the passes split rows into folds: ``n_folds`` and either the hash seed or, with
    ``seed=EXPLICIT_FOLDS``, every row's fold (``ids``, from a splitter)."""

    n_folds: int
    seed: int = 0      # the passes' fold_seed
    ids: np.ndarray | None = None

    def rows(self, X: Any) -> Any:
        """The per-row column the passes read for the folds (None with one fold)."""
        if self.n_folds == 1:
            return None
        if self.ids is None:
            return row_index(X)
        return da.from_array(self.ids, chunks=(X.chunks[0],)) if is_dask(X) else self.ids


def check_cv(cv: Any) -> None:
    """Refuse what cannot be a ``cv`` before any work."""
    if isinstance(cv, Integral) and not isinstance(cv, bool):
        if not 2 <= cv <= MAX_FOLDS:
            raise ValueError(f"cv must be an integer in [2, {MAX_FOLDS}], a scikit-learn "
                             f"splitter or (train, test) index pairs; got {cv!r}.")
        return
    if isinstance(cv, bool | str | float) or not (hasattr(cv, "split")
                                                  or hasattr(cv, "__iter__")):
        raise ValueError(f"cv must be an integer in [2, {MAX_FOLDS}], a scikit-learn splitter "
                         f"or (train, test) index pairs; got {cv!r}.")


def fold_plan(cv: Any, n: int, seed: int, X: Any, y: Any) -> FoldPlan:
    """The folds of ``cv`` for n rows.

    An integer hashes rows to folds by position with ``seed`` (nothing is read). A splitter
    (anything with ``split``, e.g. ``KFold``, ``StratifiedKFold``) is called with X and y as
    scikit-learn does — for dask input with a placeholder X and y computed (n values read to
    the client) — and an iterable is taken as its (train, test) pairs. Every row must be in
    exactly one validation fold and every fold trains on all other rows: the moments of a
    fold's training rows are the total minus its own.
    """
    check_cv(cv)
    if isinstance(cv, Integral):
        return FoldPlan(int(cv), seed)
    if hasattr(cv, "split"):
        Xs = np.zeros((n, 1)) if is_dask(X) else X
        ys = None if y is None else np.asarray(y.compute() if is_dask(y) else y)
        pairs = list(cv.split(Xs, ys))
    else:
        pairs = list(cv)
    if not 2 <= len(pairs) <= MAX_FOLDS:
        raise ValueError(f"cv gave {len(pairs)} folds; the CV estimators need 2 to "
                         f"{MAX_FOLDS}.")
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
