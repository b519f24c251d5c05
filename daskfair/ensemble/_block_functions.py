"""Numba block functions of the FCE consensus: the integer tables C = ZᵀZ, K = ZᵀY and
A = GᵀY, and the Y-step's sweep (docs/design.md#fce-alternating-updates)."""

from __future__ import annotations

import numpy as np

from .._compiled import compiled

__all__ = ["CODE_LIMIT", "code_groups", "count_ids", "hr_rows", "id_range", "sweep_block",
           "sweep_hr", "table_change", "tables_block"]


@compiled
def id_range(block: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> None:
    """Each labeling's smallest and largest id into ``lo`` and ``hi`` (one pass over the
    rows; numpy's ``min(axis=0)`` and ``max(axis=0)`` take one each). ``block`` has rows."""
    for j in range(block.shape[1]):
        lo[j] = hi[j] = block[0, j]
    for i in range(1, block.shape[0]):
        for j in range(block.shape[1]):
            v = block[i, j]
            if v < lo[j]:
                lo[j] = v
            elif v > hi[j]:
                hi[j] = v


@compiled
def count_ids(block: np.ndarray, offsets: np.ndarray, counts: np.ndarray) -> None:
    """``counts[offsets[j] + block[i, j]] += 1`` for every row i and labeling j, in one pass
    over the rows. The caller proves ``0 <= block[:, j] < offsets[j + 1] - offsets[j]``."""
    for i in range(block.shape[0]):
        for j in range(block.shape[1]):
            counts[offsets[j] + block[i, j]] += 1


#: Most values of a code: the mixed-radix code of consecutive base clusterings' labels.
CODE_LIMIT = 256


def code_groups(sizes: np.ndarray, limit: int = CODE_LIMIT) -> np.ndarray:
    """The first columns of the greedy runs of columns whose cluster counts ``sizes`` multiply
    to at most ``limit`` (one code per run), followed by m."""
    starts, span = [0], 1
    for i, size in enumerate(sizes):
        if span * size > limit and i > starts[-1]:
            starts.append(i)
            span = 1
        span *= int(size)
    return np.array([*starts, len(sizes)], dtype=np.int64)


def _code_layout(offsets: np.ndarray, n_rows: int, starts: np.ndarray) -> tuple:
    # a code is Σ_i label_i · stride_i over its run's columns; code_rows lists from code_pos[g]
    # on, for each code of run g, the rows of Z (offset_i + label_i) of its columns
    sizes = np.diff(np.append(offsets, n_rows))
    strides = np.ones(len(sizes), dtype=np.int64)
    spans, parts = [], []
    for g in range(len(starts) - 1):
        cols = np.arange(starts[g], starts[g + 1])
        for i in cols[::-1][1:]:
            strides[i] = strides[i + 1] * sizes[i + 1]
        span = int(strides[cols[0]] * sizes[cols[0]])
        p = np.arange(span, dtype=np.int64)[:, None]
        parts.append((offsets[cols] + p // strides[cols] % sizes[cols]).ravel())
        spans.append(span)
    code_pos = np.concatenate([[0], np.cumsum([len(x) for x in parts])]).astype(np.int64)
    return strides, np.array(spans, dtype=np.int64), np.concatenate(parts), code_pos


@compiled
def _codes(base: np.ndarray, starts: np.ndarray, strides: np.ndarray, E: np.ndarray) -> np.ndarray:
    n = base.shape[0]
    # tiles of rows: each run's codes summed column by column, the tile's labels in cache
    tile = np.empty(min(n, 2048), dtype=np.int64)
    for j0 in range(0, n, 2048):
        j1 = min(n, j0 + 2048)
        for g in range(len(starts) - 1):
            tile[:] = 0
            for i in range(starts[g], starts[g + 1]):
                for j in range(j0, j1):
                    tile[j - j0] += base[j, i] * strides[i]
            for j in range(j0, j1):
                E[g, j] = tile[j - j0]
    return E


@compiled
def _tables(E: np.ndarray, groups: np.ndarray, labels: np.ndarray, starts: np.ndarray,
            spans: np.ndarray, code_rows: np.ndarray, code_pos: np.ndarray, n_rows: int, c: int,
            n_groups: int, with_coassociation: bool) -> tuple[np.ndarray, ...]:
    G, n = E.shape
    C = np.zeros((n_rows if with_coassociation else 0, n_rows), dtype=np.int64)
    K = np.zeros((n_rows, c), dtype=np.int64)
    A = np.zeros((n_groups, c), dtype=np.int64)
    for j in range(n):
        A[groups[j], labels[j]] += 1
    # counted over codes, then spread to the rows of Z a code stands for (or row by row where
    # a table would have more cells than the block has rows: the same integers)
    for g in range(G):
        w, pos = starts[g + 1] - starts[g], code_pos[g]
        _count_label_pairs(K, E[g], labels, code_rows, pos, w, spans[g])
        if not with_coassociation:
            continue
        # C's upper triangle: pairs of columns within this run, then with later runs
        _count_run_pairs(C, E[g], code_rows, pos, w, spans[g])
        for h in range(g + 1, G):
            _count_cross_pairs(C, E[g], E[h], code_rows, pos, w, spans[g], code_pos[h],
                               starts[h + 1] - starts[h], spans[h])
    return C, K, A


@compiled
def _count_label_pairs(K: np.ndarray, e: np.ndarray, labels: np.ndarray,
                       code_rows: np.ndarray, pos: int, w: int, span: int) -> None:
    # K = ZᵀY over one run of columns: (code, consensus label) pairs
    n, c = e.shape[0], K.shape[1]
    if span * c <= n:
        T = np.zeros((span, c), dtype=np.int64)
        for j in range(n):
            T[e[j], labels[j]] += 1
        for p in range(span):
            for k in range(c):
                if T[p, k]:
                    for t in range(w):
                        K[code_rows[pos + p * w + t], k] += T[p, k]
    else:
        for j in range(n):
            for t in range(w):
                K[code_rows[pos + e[j] * w + t], labels[j]] += 1


@compiled
def _count_run_pairs(C: np.ndarray, e: np.ndarray, code_rows: np.ndarray, pos: int, w: int,
                     span: int) -> None:
    # C = ZᵀZ, upper triangle, for the pairs of columns within one run: counts of its codes
    n = e.shape[0]
    if span <= n:
        cnt = np.zeros(span, dtype=np.int64)
        for j in range(n):
            cnt[e[j]] += 1
        for p in range(span):
            if cnt[p]:
                for t in range(w):
                    for t2 in range(t, w):
                        C[code_rows[pos + p * w + t], code_rows[pos + p * w + t2]] += cnt[p]
    else:
        for j in range(n):
            for t in range(w):
                for t2 in range(t, w):
                    C[code_rows[pos + e[j] * w + t], code_rows[pos + e[j] * w + t2]] += 1


@compiled
def _count_cross_pairs(C: np.ndarray, e: np.ndarray, e2: np.ndarray, code_rows: np.ndarray,
                       pos: int, w: int, span: int, pos2: int, w2: int, span2: int) -> None:
    # C = ZᵀZ for a column of one run with a column of a later run: (code, code) pairs
    n = e.shape[0]
    if span * span2 <= n:
        # int32 cells (a block has fewer than 2³¹ rows): the table stays in cache
        T2 = np.zeros((span, span2), dtype=np.int32)
        for j in range(n):
            T2[e[j], e2[j]] += 1
        for p in range(span):
            for q in range(span2):
                v = T2[p, q]
                if v:
                    for t in range(w):
                        a = code_rows[pos + p * w + t]
                        for t2 in range(w2):
                            C[a, code_rows[pos2 + q * w2 + t2]] += v
    else:
        for j in range(n):
            for t in range(w):
                a = code_rows[pos + e[j] * w + t]
                for t2 in range(w2):
                    C[a, code_rows[pos2 + e2[j] * w2 + t2]] += 1


def tables_block(base: np.ndarray, groups: np.ndarray, labels: np.ndarray, *, offsets: np.ndarray,
                 n_rows: int, n_clusters: int, n_groups: int, with_coassociation: bool = True,
                 code_limit: int = CODE_LIMIT) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """C = ZᵀZ (or a 0 × S placeholder without ``with_coassociation``), K = ZᵀY and A = GᵀY
    of one row block, the same integers for any ``code_limit``."""
    if len(base) >= 2**31:
        raise ValueError("a row block of 2³¹ rows or more: lower daskfair.block-rows.")
    # contiguous arrays: one compiled signature, whatever views arrive
    base, labels = np.ascontiguousarray(base), np.ascontiguousarray(labels)
    starts = code_groups(np.diff(np.append(offsets, n_rows)), code_limit)
    strides, spans, code_rows, code_pos = _code_layout(np.asarray(offsets), n_rows, starts)
    # the codes in the narrowest unsigned type: the (code, code) counts read them often
    E = np.empty((len(spans), len(base)), dtype=np.min_scalar_type(max(spans.max() - 1, 0)))
    C, K, A = _tables(_codes(base, starts, strides, E), groups, labels, starts, spans, code_rows,
                      code_pos, n_rows, n_clusters, n_groups, with_coassociation)
    if with_coassociation:
        C = C + C.T - np.diag(np.diag(C))
    return C, K, A


@compiled
def hr_rows(base: np.ndarray, labels: np.ndarray, P: np.ndarray, Py: np.ndarray,
            offsets: np.ndarray) -> np.ndarray:
    """Rows of HR = B Q R of one block, (n_block, c): ``Σ_i P[offsets[i] + base[j, i]] + Py[y_j]``
    with P = W Q R (S × c) and Py = λ1 R_hᵀ Q R (c × c), R_h the R before the step."""
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


@compiled
def sweep_hr(HR: np.ndarray, groups: np.ndarray, labels: np.ndarray, counts: np.ndarray,
             fairness_weight: float) -> tuple[np.ndarray, np.ndarray]:
    """The Y-step's sequential choice of one block: (new labels, a copy of ``counts``, A = GᵀY,
    updated row by row)."""
    lambda2 = fairness_weight  # the paper's λ2
    counts = counts.copy()
    n, c = HR.shape
    new = np.empty(n, dtype=np.int32)
    for j in range(n):
        g = groups[j]
        counts[g, labels[j]] -= 1
        best, best_cost = 0, np.inf
        for k in range(c):
            # one-hot row minimising −2 (HR)_jk + λ2 (2 A_gk + 1), A without row j
            cost = -2.0 * HR[j, k] + lambda2 * (2.0 * counts[g, k] + 1.0)
            if cost < best_cost:
                best, best_cost = k, cost
        counts[g, best] += 1
        new[j] = best
    return new, counts


@compiled
def table_change(base: np.ndarray, old: np.ndarray, new: np.ndarray, offsets: np.ndarray,
                 n_clusters: int) -> tuple[np.ndarray, np.ndarray]:
    """K's change, (S, c), and the (old, new) label pairs, (c, c), of one block's new labels;
    ``offsets`` ends with S."""
    dK = np.zeros((offsets[-1], n_clusters), dtype=np.int64)
    moves = np.zeros((n_clusters, n_clusters), dtype=np.int64)
    for j in range(old.shape[0]):
        moves[old[j], new[j]] += 1
        if old[j] != new[j]:
            for i in range(base.shape[1]):
                a = offsets[i] + base[j, i]
                dK[a, old[j]] -= 1
                dK[a, new[j]] += 1
    return dK, moves


def sweep_block(base: np.ndarray, groups: np.ndarray, labels: np.ndarray, counts: np.ndarray,
                P: np.ndarray, Py: np.ndarray, offsets: np.ndarray, fairness_weight: float
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The Y-step over one block: new labels, updated counts, K's change, label moves."""
    # one compiled signature, whatever views arrive (no copy of contiguous arrays)
    base, labels = np.ascontiguousarray(base), np.ascontiguousarray(labels)
    HR = hr_rows(base, labels, P, Py, offsets)
    new, counts = sweep_hr(HR, groups, labels, counts, fairness_weight)
    return (new, counts, *table_change(base, labels, new, offsets, P.shape[1]))
