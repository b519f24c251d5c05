"""Column scaling for numpy or dask arrays, and the SAfairKM authors' preprocessing."""

from __future__ import annotations

from typing import Any

import dask.array as da
import numpy as np

from .._random import as_seed_sequence

__all__ = ["minmax_scale", "preprocess_safairkm", "standard_scale"]


def standard_scale(X: Any) -> Any:
    """Z-score every column; a constant column becomes 0.

    Parameters
    ----------
    X : ndarray or dask array of shape (n_samples, n_features)

    Returns
    -------
    ndarray or dask array of shape (n_samples, n_features)
        Numpy for numpy; for dask a lazy array (its means and deviations computed here).
    """
    mean, std = X.mean(axis=0), X.std(axis=0)
    if isinstance(X, da.Array):
        mean, std = da.compute(mean, std)
    return (X - mean) / np.where(std > 0, std, 1.0)


def minmax_scale(X: Any, train: np.ndarray) -> Any:
    """Scale every column to [0, 1] on the training rows' range; a constant column becomes 0.

    Parameters
    ----------
    X : ndarray or dask array of shape (n_samples, n_features)
    train : ndarray of shape (n_train,)
        The training rows (indices or a boolean mask).

    Returns
    -------
    ndarray or dask array of shape (n_samples, n_features)
        Numpy for numpy; for dask a lazy array (its bounds computed here).
    """
    lo, hi = X[train].min(axis=0), X[train].max(axis=0)
    if isinstance(X, da.Array):
        lo, hi = da.compute(lo, hi)
    span = np.where(hi > lo, hi - lo, 1.0)
    return (X - lo) / span


def preprocess_safairkm(X: np.ndarray, sensitive_features: np.ndarray,
                        n_samples: int | None = 5000, random_state: Any = 1,
                        ) -> tuple[np.ndarray, np.ndarray]:
    """The SAfairKM authors' preprocessing: z-score columns, L2-normalise rows, subsample.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
    sensitive_features : array-like of shape (n_samples,)
        The group of every row.
    n_samples : int or None, default=5000
        Rows drawn without replacement, kept in their order (None: every row).
    random_state : int, RandomState, Generator, SeedSequence or None, default=1
        Seeds the subsample.

    Returns
    -------
    X : ndarray of shape (n_kept, n_features)
        The rows, float64, each of unit norm (a zero row stays zero).
    sensitive_features : ndarray of shape (n_kept,)
        Their groups.
    """
    Z = standard_scale(np.asarray(X, dtype=np.float64))
    Z /= np.maximum(np.linalg.norm(Z, axis=1, keepdims=True), 1e-300)
    if n_samples is None or n_samples >= len(Z):
        return Z, np.asarray(sensitive_features)
    rng = np.random.default_rng(as_seed_sequence(random_state))
    rows = np.sort(rng.choice(len(Z), n_samples, replace=False))
    return Z[rows], np.asarray(sensitive_features)[rows]
