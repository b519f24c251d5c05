"""The SAfairKM authors' preprocessing."""

from __future__ import annotations

from typing import Any

import numpy as np

from .._random import as_seed_sequence
from ..scaling import ColumnScaler

__all__ = ["preprocess_safairkm"]


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
    Z = ColumnScaler("standard", unit_rows=True).fit_transform(np.asarray(X, dtype=np.float64))
    if n_samples is None or n_samples >= len(Z):
        return Z, np.asarray(sensitive_features)
    rng = np.random.default_rng(as_seed_sequence(random_state))
    rows = np.sort(rng.choice(len(Z), n_samples, replace=False))
    return Z[rows], np.asarray(sensitive_features)[rows]
