"""Per-block numba kernels of the FCE consensus (DESIGN §4).

Notation (the FCE seed, eq. 10): base clusterings Y(i) (one-hot, n × c_i), stacked side by
side into Z = [Y(1) … Y(m)] (n × S, S = Σ c_i); rotations R(i) (c_i × c) stacked row-wise
into ``R_all`` (S × c) with row offsets ``offsets``; consensus labels y (Y one-hot n × c),
rotation R (c × c), weights α; groups G (one-hot n × T).

The H-step needs B = Σ αᵢ² Y(i)R(i) + λ1 Y Rᵀ = Z W + λ1 Y Rᵀ with W = the R(i) scaled by αᵢ²;
its statistics are quadratic in the one-hot matrices, so they follow from three integer
tables (:func:`tables_block`):

    C = ZᵀZ (S × S, the co-association of the base clusterings: fixed for a fit),
    K = ZᵀY (S × c) and A = GᵀY (T × c),

with BᵀB = WᵀCW + λ1 (WᵀK Rᵀ + R KᵀW) + λ1² R diag(n_y) Rᵀ, ZᵀB = CW + λ1 K Rᵀ and
YᵀB = KᵀW + λ1 diag(n_y) Rᵀ (n_y the cluster sizes). The Y-step's sweep updates K and A
as labels change, so after the set-up an iteration reads the label matrix once (HR rows).
"""

from __future__ import annotations

import numba
import numpy as np

__all__ = ["hr_rows", "sweep_block", "sweep_hr", "table_change", "tables_block"]


@numba.njit(nogil=True, cache=True)
def _tables(
    base: np.ndarray, groups: np.ndarray, labels: np.ndarray, offsets: np.ndarray,
    n_rows: int, c: int, n_groups: int, with_coassociation: bool,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    n, m = base.shape
    # int32 counts (a block has fewer than 2³¹ rows): the S × S table stays in cache
    C = np.zeros((n_rows if with_coassociation else 0, n_rows), dtype=np.int32)
    K = np.zeros((n_rows, c), dtype=np.int64)
    A = np.zeros((n_groups, c), dtype=np.int64)
    rows = np.empty(m, dtype=np.int64)
    for j in range(n):
        y = labels[j]
        A[groups[j], y] += 1
        for i in range(m):
            rows[i] = offsets[i] + base[j, i]
        for i in range(m):
            K[rows[i], y] += 1
            if with_coassociation:
                # pairs (i, i2 ≥ i) only: C is symmetric (completed by the caller)
                for i2 in range(i, m):
                    C[rows[i], rows[i2]] += 1
    return C, K, A


def tables_block(
    base: np.ndarray, groups: np.ndarray, labels: np.ndarray, *, offsets: np.ndarray,
    n_rows: int, n_clusters: int, n_groups: int, with_coassociation: bool = True,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The integer tables of one row block: C = ZᵀZ (or a 0 × S placeholder without
    ``with_coassociation``), K = ZᵀY and A = GᵀY. Counts add up exactly over blocks."""
    if len(base) >= 2**31:
        raise ValueError("a row block of 2³¹ rows or more: lower daskfair.block-rows.")
    C, K, A = _tables(base, groups, labels, offsets, n_rows, n_clusters, n_groups,
                      with_coassociation)
    C = C.astype(np.int64)
    if with_coassociation:
        C = C + C.T - np.diag(np.diag(C))
    return C, K, A


@numba.njit(nogil=True, cache=True)
def hr_rows(base: np.ndarray, labels: np.ndarray, P: np.ndarray, Py: np.ndarray,
            offsets: np.ndarray) -> np.ndarray:
    """Rows of HR = B Q R for one block: ``Σ_i P[offsets[i] + base[j, i]] + Py[y_j]`` with
    P = W Q R (S × c) and Py = λ1 R_hᵀ Q R (c × c) from the H-step's parameters (B as built
    from the labels before the sweep): the Y-step's work that does not depend on the counts
    carried from row to row."""
    n, m = base.shape
    c = P.shape[1]
    HR = np.empty((n, c))
    for j in range(n):
        y = labels[j]
        for k in range(c):
            HR[j, k] = Py[y, k]
        for i in range(m):
            row = offsets[i] + base[j, i]
            for k in range(c):
                HR[j, k] += P[row, k]
    return HR


@numba.njit(nogil=True, cache=True)
def _sweep(
    HR: np.ndarray,
    groups: np.ndarray,
    labels: np.ndarray,
    counts: np.ndarray,
    lambda2: float,
) -> np.ndarray:
    n, c = HR.shape
    new = np.empty(n, dtype=np.int32)
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
    return new


@numba.njit(nogil=True, cache=True)
def _moved(base: np.ndarray, old: np.ndarray, new: np.ndarray, offsets: np.ndarray,
           n_rows: int, c: int) -> tuple[np.ndarray, np.ndarray]:
    dK = np.zeros((n_rows, c), dtype=np.int64)
    moves = np.zeros((c, c), dtype=np.int64)
    for j in range(old.shape[0]):
        moves[old[j], new[j]] += 1
        if old[j] != new[j]:
            for i in range(base.shape[1]):
                a = offsets[i] + base[j, i]
                dK[a, old[j]] -= 1
                dK[a, new[j]] += 1
    return dK, moves


def table_change(base: np.ndarray, old: np.ndarray, new: np.ndarray, offsets: np.ndarray,
                 n_clusters: int) -> tuple[np.ndarray, np.ndarray]:
    """Over one block whose labels go from ``old`` to ``new``: the change of K = ZᵀY (from
    the base rows whose label changed) and the c × c table of (old, new) label pairs.
    ``offsets`` ends with S."""
    return _moved(base, old, new, offsets, offsets[-1], n_clusters)


def sweep_hr(
    HR: np.ndarray, groups: np.ndarray, labels: np.ndarray, counts: np.ndarray,
    lambda2: float,
) -> tuple[np.ndarray, np.ndarray]:
    """The sequential part of the Y-step for one block: each row's choice given the counts
    left by the rows before it (``counts``, A = GᵀY, is copied, then returned updated).
    Where blocks are cut does not change the result."""
    counts = counts.copy()
    return _sweep(HR, groups, labels, counts, lambda2), counts


def sweep_block(
    base: np.ndarray,
    groups: np.ndarray,
    labels: np.ndarray,
    counts: np.ndarray,
    P: np.ndarray,
    Py: np.ndarray,
    offsets: np.ndarray,
    lambda2: float,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The exact sequential Y-step over one block (:func:`hr_rows`, :func:`sweep_hr`, then
    :func:`table_change`).

    ``offsets`` has m + 1 entries (the last is S). ``counts`` (groups × clusters, A = GᵀY)
    enter as the state left by the previous block and are returned updated.

    Returns
    -------
    labels : ndarray of shape (n_block,)
    counts : ndarray of shape (n_groups, c)
    dK : ndarray of shape (S, c)
        The change of ZᵀY.
    moves : ndarray of shape (c, c)
        Rows per (old label, new label).
    """
    HR = hr_rows(base, labels, P, Py, offsets)
    new, counts = sweep_hr(HR, groups, labels, counts, lambda2)
    return (new, counts, *table_change(base, labels, new, offsets, P.shape[1]))
