"""The scoring pass's per-row loop in numba: every candidate's score counted in its bin."""

from __future__ import annotations

import numpy as np

from .._compiled import compiled

__all__ = ["bin_scores"]


@compiled
def bin_scores(scores: np.ndarray, cells: np.ndarray, weights: np.ndarray, lo: np.ndarray,
               width: np.ndarray, hist: np.ndarray) -> None:
    """hist[k, cells[i], b] += weights[i], b the bin of scores[i, k] (end bins take the rest)."""
    n, K = scores.shape
    B = hist.shape[2]
    for i in range(n):
        c = cells[i]
        w = weights[i]
        for k in range(K):
            x = (scores[i, k] - lo[k]) / width[k]
            if x >= B - 1:
                b = B - 1
            elif x >= 0.0:
                b = int(x)
            else:
                b = 0
            hist[k, c, b] += w
