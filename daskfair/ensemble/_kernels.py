"""Per-block numba kernels of the FCE consensus (DESIGN §4).

Notation (the FCE seed, eq. 10): base clusterings Y(i) (one-hot, n × c_i), rotations R(i)
(c_i × c) stacked row-wise into ``R_all`` of shape (Σ c_i, c) with row offsets ``offsets``,
consensus labels y (Y one-hot n × c), rotation R (c × c), weights α.

The H-step needs B = Σ αᵢ² Y(i)R(i) + λ1 Y Rᵀ; its row j is
``B_j = Σ_i αᵢ² R_all[offsets[i] + Y(i)_j] + λ1 R[:, y_j]`` — a gather from small matrices, so
B (and H = B Q) is rebuilt per block from the labels and never stored.
"""

from __future__ import annotations

import numba
import numpy as np

__all__ = ["b_rows", "block_moments", "hr_block", "sweep_block", "sweep_hr"]


@numba.njit(nogil=True, cache=True)
def b_rows(
    base: np.ndarray,
    labels: np.ndarray,
    R_all: np.ndarray,
    offsets: np.ndarray,
    alpha2: np.ndarray,
    R: np.ndarray,
    lambda1: float,
) -> np.ndarray:
    """Rows of B = Σ αᵢ² Y(i)R(i) + λ1 Y Rᵀ for one block: shape (n_block, c)."""
    n, m = base.shape
    c = R.shape[0]
    B = np.zeros((n, c))
    for j in range(n):
        for i in range(m):
            row = offsets[i] + base[j, i]
            for k in range(c):
                B[j, k] += alpha2[i] * R_all[row, k]
        y = labels[j]
        for k in range(c):
            B[j, k] += lambda1 * R[k, y]
    return B


@numba.njit(nogil=True, cache=True)
def _scatter_moments(
    base: np.ndarray, labels: np.ndarray, B: np.ndarray, offsets: np.ndarray, n_rows: int
) -> tuple[np.ndarray, np.ndarray]:
    n, m = base.shape
    c = B.shape[1]
    YiB = np.zeros((n_rows, c))  # stacked Y(i)ᵀB, (Σ c_i, c)
    YB = np.zeros((c, c))  # YᵀB
    for j in range(n):
        for i in range(m):
            row = offsets[i] + base[j, i]
            for k in range(c):
                YiB[row, k] += B[j, k]
        y = labels[j]
        for k in range(c):
            YB[y, k] += B[j, k]
    return YiB, YB


def block_moments(
    base: np.ndarray,
    labels: np.ndarray,
    R_all: np.ndarray,
    offsets: np.ndarray,
    alpha2: np.ndarray,
    R: np.ndarray,
    lambda1: float,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Partial sums of BᵀB (c × c), the stacked Y(i)ᵀB (Σ c_i × c) and YᵀB (c × c)."""
    B = b_rows(base, labels, R_all, offsets, alpha2, R, lambda1)
    YiB, YB = _scatter_moments(base, labels, B, offsets, R_all.shape[0])
    return B.T @ B, YiB, YB


@numba.njit(nogil=True, cache=True)
def _sweep(
    HR: np.ndarray,
    groups: np.ndarray,
    labels: np.ndarray,
    counts: np.ndarray,
    lambda2: float,
) -> tuple[np.ndarray, float]:
    n, c = HR.shape
    new = np.empty(n, dtype=np.int64)
    trace = 0.0
    for j in range(n):
        g = groups[j]
        counts[g, labels[j]] -= 1
        best = 0
        best_cost = np.inf
        for k in range(c):
            # one-hot row minimising −2 (HR)_jk + λ2 (2 A_gk + 1), A without row j
            cost = -2.0 * HR[j, k] + lambda2 * (2.0 * counts[g, k] + 1.0)
            if cost < best_cost:
                best_cost = cost
                best = k
        counts[g, best] += 1
        new[j] = best
        trace += HR[j, best]
    return new, trace


def hr_block(
    base: np.ndarray,
    labels: np.ndarray,
    R_all: np.ndarray,
    offsets: np.ndarray,
    alpha2: np.ndarray,
    R_h: np.ndarray,
    Q: np.ndarray,
    R: np.ndarray,
    lambda1: float,
) -> np.ndarray:
    """HR = B Q R for one block (B from the H-step's parameters and the labels before the
    sweep): all of the Y-step's work that does not depend on the carried counts."""
    return b_rows(base, labels, R_all, offsets, alpha2, R_h, lambda1) @ (Q @ R)


def sweep_hr(
    HR: np.ndarray, groups: np.ndarray, labels: np.ndarray, counts: np.ndarray, lambda2: float,
) -> tuple[np.ndarray, np.ndarray, float]:
    """The sequential part of the Y-step for one block: each row's choice given the counts
    left by the rows before it (``counts`` is copied, then returned updated)."""
    counts = counts.copy()
    new, trace = _sweep(HR, groups, labels, counts, lambda2)
    return new, counts, trace


def sweep_block(
    base: np.ndarray,
    groups: np.ndarray,
    labels: np.ndarray,
    counts: np.ndarray,
    R_all: np.ndarray,
    offsets: np.ndarray,
    alpha2: np.ndarray,
    R_h: np.ndarray,
    Q: np.ndarray,
    R: np.ndarray,
    lambda1: float,
    lambda2: float,
) -> tuple[np.ndarray, np.ndarray, float]:
    """The exact sequential Y-step over one block.

    ``H = B Q`` with B built from the parameters of the H-step (``R_all``, ``alpha2``, ``R_h``
    and the labels before this sweep); ``R`` is the updated rotation. ``counts`` (groups ×
    clusters, A = GᵀY) enter as the state left by the previous block and are returned updated.

    Returns
    -------
    labels : ndarray of shape (n_block,)
    counts : ndarray of shape (n_groups, c)
    trace : float
        Σ_j (HR)_{j, y_j} over the block (for ‖Y − HR‖²).
    """
    HR = hr_block(base, labels, R_all, offsets, alpha2, R_h, Q, R, lambda1)
    return sweep_hr(HR, groups, labels, counts, lambda2)
