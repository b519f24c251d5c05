"""The per-row loop of the scoring pass in numba: count every candidate's score in its bin
(one pass over the score matrix with no temporaries, where numpy would make six)."""

from __future__ import annotations

import numba
import numpy as np

__all__ = ["bin_scores"]


@numba.njit(nogil=True, cache=True)
def bin_scores(scores: np.ndarray, cells: np.ndarray, weights: np.ndarray, lo: np.ndarray,
               width: np.ndarray, hist: np.ndarray) -> None:
    """hist[k, cells[i], bin(scores[i, k])] += weights[i] for every row i and candidate k.

    Bin b of candidate k holds [lo[k] + b·width[k], lo[k] + (b + 1)·width[k]); scores below
    or above the range (and NaN) fall into the first or last bin.
    """
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
