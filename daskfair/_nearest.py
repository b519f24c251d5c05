"""Nearest-center assignment (SAfairKM and FCE): a numpy block function."""

from __future__ import annotations

import numpy as np

__all__ = ["nearest_center"]


def nearest_center(X: np.ndarray, centers: np.ndarray) -> np.ndarray:
    """Index of the nearest row of ``centers`` for every row of ``X`` (squared Euclidean)."""
    # shifted by the centers' mean first: far from the origin the expansion below would
    # cancel (scikit-learn's pairwise_distances_argmin does not shift: docs/findings.md)
    shift = centers.mean(axis=0)
    X, centers = X - shift, centers - shift
    # argmin_k ‖x − c_k‖² = argmin_k (‖c_k‖² − 2 x·c_k)
    return np.argmin((centers**2).sum(axis=1) - 2.0 * X @ centers.T, axis=1)
