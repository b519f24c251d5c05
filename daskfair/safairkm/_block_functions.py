"""Numba block functions of SAfairKM on one label vector (docs/design.md#safairkm-swap-step)."""

from __future__ import annotations

import numpy as np

from .._compiled import compiled

__all__ = ["balance_of", "cost_of", "expand_batch", "init_state", "plan_take", "run_member",
           "select_nondominated", "take_members"]

_GAMMA = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_TWO53 = 1.0 / 9007199254740992.0


@compiled(inline="always")
def _mix(z: np.uint64) -> np.uint64:
    z = (z ^ (z >> np.uint64(30))) * _M1
    z = (z ^ (z >> np.uint64(27))) * _M2
    return z ^ (z >> np.uint64(31))


@compiled
def stream_seed(base: np.uint64, t: np.int64, member: np.int64, pair: np.int64) -> np.uint64:
    """A 64-bit seed for (iteration, member rank, pair) under ``base`` (hash, not a counter)."""
    h = _mix(base + _GAMMA)
    h = _mix(h ^ (np.uint64(t) + _GAMMA))
    h = _mix(h ^ (np.uint64(member) * _M2 + _GAMMA))
    return _mix(h ^ (np.uint64(pair) * _M1 + _GAMMA))


@compiled(inline="always")
def _randint(state: np.ndarray, n: int) -> int:
    state[0] += _GAMMA
    return min(int(float(_mix(state[0]) >> np.uint64(11)) * _TWO53 * n), n - 1)


@compiled
def init_state(X: np.ndarray, groups: np.ndarray, labels: np.ndarray, n_clusters: int,
               n_groups: int) -> tuple[np.ndarray, np.ndarray]:
    """Per-cluster sums (K × d) and cluster × group counts (K × J) of one label vector."""
    n, d = X.shape
    sums = np.zeros((n_clusters, d))
    counts = np.zeros((n_clusters, n_groups), dtype=np.int64)
    for p in range(n):
        k = labels[p]
        for f in range(d):
            sums[k, f] += X[p, f]
        counts[k, groups[p]] += 1
    return sums, counts


@compiled
def cost_of(sums: np.ndarray, counts: np.ndarray, total_sq: float, n: int) -> float:
    """f1 from the state (the paper's eq. 2), exact up to rounding."""
    within = total_sq
    for k in range(sums.shape[0]):
        size = counts[k].sum()
        if size > 0:
            sq = 0.0
            for f in range(sums.shape[1]):
                sq += sums[k, f] * sums[k, f]
            within -= sq / size
    return max(within, 0.0) / n


@compiled(inline="always")
def _key(row: np.ndarray, out: np.ndarray) -> None:
    # a cluster's counts as sorted ratios to its largest group (out[0] its balance), sorted in
    # place without allocation: this runs for every cluster in every swap. Equal rationals
    # give equal doubles (division is correctly rounded).
    J = row.shape[0]
    hi = row[0]
    for i in range(1, J):  # loops, not row.max(): each numpy call is compiled on first use
        hi = max(hi, row[i])
    for i in range(J):
        v = row[i] / hi if hi > 0 else 1.0
        j = i
        while j > 0 and out[j - 1] > v:
            out[j] = out[j - 1]
            j -= 1
        out[j] = v


@compiled(inline="always")
def _less(a: np.ndarray, b: np.ndarray) -> bool:
    for i in range(a.shape[0]):
        if a[i] != b[i]:
            return a[i] < b[i]
    return False


@compiled
def balance_of(counts: np.ndarray) -> float:
    """f2 from the cluster × group counts (an empty cluster constrains nothing)."""
    best = 1.0
    for k in range(counts.shape[0]):
        lo = hi = counts[k, 0]
        for g in range(1, counts.shape[1]):
            lo, hi = min(lo, counts[k, g]), max(hi, counts[k, g])
        if hi > 0:
            best = min(best, lo / hi)
    return best


@compiled(inline="always")
def _move(X: np.ndarray, p: int, g: int, src: int, dst: int, labels: np.ndarray,
          sums: np.ndarray, counts: np.ndarray, sizes: np.ndarray, centers: np.ndarray,
          log: np.ndarray) -> None:
    # log[0] counts the moves, then (position, previous label) pairs while there is room
    m = log[0]
    if 2 * m + 2 < log.shape[0]:
        log[2 * m + 1], log[2 * m + 2] = p, src
    log[0] = m + 1
    # the paper's c_k ← c_k + (x_p − c_k)/N_k (Algorithm 2, line 8) and its reverse for src
    labels[p] = dst
    sizes[src] -= 1
    sizes[dst] += 1
    counts[src, g] -= 1
    counts[dst, g] += 1
    for f in range(X.shape[1]):
        x = X[p, f]
        sums[src, f] -= x
        sums[dst, f] += x
        centers[src, f] = sums[src, f] / sizes[src] if sizes[src] > 0 else 0.0
        centers[dst, f] = sums[dst, f] / sizes[dst]


@compiled(inline="always")
def _sqdist(X: np.ndarray, p: int, centers: np.ndarray, k: int) -> float:
    s = 0.0
    for f in range(X.shape[1]):
        diff = X[p, f] - centers[k, f]
        s += diff * diff
    return s


@compiled
def _kmeans_updates(X: np.ndarray, groups: np.ndarray, labels: np.ndarray, sums: np.ndarray,
                    counts: np.ndarray, sizes: np.ndarray, centers: np.ndarray, n_a: int,
                    state: np.ndarray, log: np.ndarray) -> None:
    # Algorithm 2, lines 5-8; a cluster's last point never leaves
    K = centers.shape[0]
    for _ in range(n_a):
        p = _randint(state, X.shape[0])
        best, best_d = 0, np.inf
        for k in range(K):
            dist = _sqdist(X, p, centers, k)
            if dist < best_d:
                best, best_d = k, dist
        src = labels[p]
        if best != src and sizes[src] > 1:
            _move(X, p, groups[p], src, best, labels, sums, counts, sizes, centers, log)


@compiled
def _pick(X: np.ndarray, labels: np.ndarray, grp_idx: np.ndarray, start: int, stop: int,
          cluster: int, in_cluster: int, centers: np.ndarray, towards: int, n_candidates: int,
          state: np.ndarray) -> int:
    # of n_candidates points of C_cluster ∩ V_group, read circularly from a random offset in
    # the group's fixed random order, the closest to center ``towards``
    size = stop - start
    best, best_d = -1, np.inf
    offset = _randint(state, size)
    found = 0
    for i in range(size):
        j = offset + i
        if j >= size:
            j -= size
        p = grp_idx[start + j]
        if labels[p] == cluster:
            dist = _sqdist(X, p, centers, towards)
            if dist < best_d:
                best, best_d = p, dist
            found += 1
            if found == n_candidates or found == in_cluster:
                break
    return best


@compiled
def _swap_update(X: np.ndarray, groups: np.ndarray, grp_idx: np.ndarray, grp_ptr: np.ndarray,
                 labels: np.ndarray, sums: np.ndarray, counts: np.ndarray, sizes: np.ndarray,
                 centers: np.ndarray, global_target: bool, n_candidates: int,
                 state: np.ndarray, log: np.ndarray) -> bool:
    """One swap (Algorithm 2, lines 10-14); False when no swap can raise the balance."""
    K, J = counts.shape
    # C_l, the least by sorted count ratios; V1 its scarcest, V2 its most frequent group (eq. 3)
    key = np.empty((K, J))
    for k in range(K):
        _key(counts[k], key[k])
    low = np.int64(0)  # not a literal 0: numba would compile _pick for it (and for -1)
    for k in range(1, K):
        if _less(key[k], key[low]):
            low = k
    v1 = v2 = 0  # the first scarcest and the first most frequent, as argmin/argmax
    for g in range(1, J):
        if counts[low, g] < counts[low, v1]:
            v1 = g
        if counts[low, g] > counts[low, v2]:
            v2 = g
    if counts[low, v2] - counts[low, v1] < 2:
        return False  # a swap would overshoot: C_l is as balanced as its size allows
    # target C_h: has a V1 point, and its key after giving it stays above C_l's key now, so
    # f2 never falls and no later swap undoes this one (docs/design.md#safairkm-swap-step)
    high, score_best = np.int64(-1), np.inf
    after = np.empty(J, dtype=np.int64)
    after_key = np.empty(J)
    for k in range(K):
        if k == low or counts[k, v1] == 0:
            continue
        for g in range(J):
            after[g] = counts[k, g]
        after[v1] -= 1
        after[v2] += 1
        _key(after, after_key)
        if not _less(key[low], after_key):
            continue
        if global_target:  # eq. (4): the cluster richest in V1 relative to V2
            score = -counts[k, v1] / counts[k, v2] if counts[k, v2] > 0 else -np.inf
        else:  # eq. (5): the center nearest to c_l
            score = 0.0
            for f in range(X.shape[1]):
                diff = centers[k, f] - centers[low, f]
                score += diff * diff
        if score < score_best:
            high, score_best = k, score
    if high < 0:
        return False
    p = _pick(X, labels, grp_idx, grp_ptr[v2], grp_ptr[v2 + 1], low, counts[low, v2],
              centers, high, n_candidates, state)
    q = _pick(X, labels, grp_idx, grp_ptr[v1], grp_ptr[v1 + 1], high, counts[high, v1],
              centers, low, n_candidates, state)
    _move(X, p, v2, low, high, labels, sums, counts, sizes, centers, log)
    _move(X, q, v1, high, low, labels, sums, counts, sizes, centers, log)
    return True


@compiled
def run_member(X: np.ndarray, groups: np.ndarray, grp_idx: np.ndarray, grp_ptr: np.ndarray,
               labels: np.ndarray, sums: np.ndarray, counts: np.ndarray, n_a: int, n_b: int,
               n_iter: int, t0: int, global_target: bool, max_swap_candidates: int,
               seed: np.uint64, total_sq: float, history: np.ndarray, log: np.ndarray) -> None:
    """``n_iter`` iterations of Algorithm 2 in place; (f1, f2) into ``history`` unless 0 rows."""
    K, d = sums.shape
    sizes = np.zeros(K, dtype=np.int64)
    for k in range(K):
        for g in range(counts.shape[1]):
            sizes[k] += counts[k, g]
    centers = np.zeros_like(sums)
    for k in range(K):
        if sizes[k] > 0:
            for f in range(d):
                centers[k, f] = sums[k, f] / sizes[k]
    state = np.empty(1, dtype=np.uint64)
    state[0] = seed
    n = X.shape[0]
    for i in range(n_iter):
        _kmeans_updates(X, groups, labels, sums, counts, sizes, centers, n_a, state, log)
        m = min(max_swap_candidates, 1 + int(np.sqrt(t0 + i)))  # the paper's growing batch
        for _ in range(n_b):
            if not _swap_update(X, groups, grp_idx, grp_ptr, labels, sums, counts, sizes,
                                centers, global_target, m, state, log):
                break
        if history.shape[0] > 0:
            history[i, 0] = cost_of(sums, counts, total_sq, n)
            history[i, 1] = balance_of(counts)


@compiled
def _delta_room(dlo: np.ndarray, dhi: np.ndarray, update_pairs: np.ndarray,
                q: int) -> tuple[int, int]:
    """(most moves of one child, room for the deltas of all output rows) of a batch."""
    B = dlo.shape[0]
    P = update_pairs.shape[0]
    most = 0
    for w in range(P):
        most = max(most, q * (update_pairs[w, 0] + 2 * update_pairs[w, 1]))
    room = B * P * most
    for b in range(B):
        room += (P + 1) * (dhi[b] - dlo[b])
    return most, room


@compiled
def _copy_state(sums: np.ndarray, counts: np.ndarray, b: int, out_sums: np.ndarray,
                out_counts: np.ndarray, c: int) -> None:
    """Member b's state into output row c (loops: numba's slice copies are slower)."""
    for k in range(sums.shape[1]):
        for f in range(sums.shape[2]):
            out_sums[c, k, f] = sums[b, k, f]
        for g in range(counts.shape[2]):
            out_counts[c, k, g] = counts[b, k, g]


@compiled
def _write_delta(scratch: np.ndarray, dpos: np.ndarray, lo: int, hi: int, log: np.ndarray,
                 pos: np.ndarray, val: np.ndarray, filled: int) -> int:
    """Writes a child's delta (its parent's, then its moves) from ``filled`` on; the new end."""
    for i in range(lo, hi):
        pos[filled] = dpos[i]
        val[filled] = scratch[dpos[i]]
        filled += 1
    for m in range(log[0]):
        pos[filled] = log[2 * m + 1]
        val[filled] = scratch[log[2 * m + 1]]
        filled += 1
    for m in range(log[0] - 1, -1, -1):  # the child's moves undone in scratch, last first
        scratch[log[2 * m + 1]] = log[2 * m + 2]
    return filled


@compiled
def expand_batch(X: np.ndarray, groups: np.ndarray, grp_idx: np.ndarray, grp_ptr: np.ndarray,
                 pool: np.ndarray, base: np.ndarray, dlo: np.ndarray, dhi: np.ndarray,
                 dpos: np.ndarray, dval: np.ndarray, sums: np.ndarray, counts: np.ndarray,
                 f1: np.ndarray, f2: np.ndarray, ranks: np.ndarray, update_pairs: np.ndarray,
                 q: int, t: int, global_target: bool, max_swap_candidates: int,
                 base_seed: np.uint64, total_sq: float, order: np.ndarray
                 ) -> tuple[np.ndarray, ...]:
    """One iteration of Algorithm 3 on a batch: row b·(P+1) is member b, row b·(P+1) + 1 + w
    its child by pair w; returns (base, dlo, dhi, dpos, dval, sums, counts, f1, f2) of them.
    ``order`` is ``np.argsort(base, kind="stable")`` (numpy's: numba compiles a sort slowly)."""
    n = pool.shape[1]
    P = update_pairs.shape[0]
    R = base.shape[0] * (P + 1)
    most, room = _delta_room(dlo, dhi, update_pairs, q)
    pos = np.empty(room, dtype=dpos.dtype)
    val = np.empty(room, dtype=dval.dtype)
    first, last = np.empty(R, dtype=np.int64), np.empty(R, dtype=np.int64)
    out_base = np.empty(R, dtype=np.int64)
    out_sums = np.empty((R, sums.shape[1], sums.shape[2]))
    out_counts = np.empty((R, counts.shape[1], counts.shape[2]), dtype=np.int64)
    out_f1, out_f2 = np.empty(R), np.empty(R)
    no_history = np.empty((0, 2))
    log = np.zeros(1 + 2 * most, dtype=np.int64)
    scratch = np.empty(n, dtype=pool.dtype)
    current, filled = -1, np.int64(0)  # not a literal 0: _write_delta would compile twice
    # members sharing a pool row run one after the other: one copy into scratch for all
    for b in order:
        row = base[b]
        if row != current:
            for i in range(n):
                scratch[i] = pool[row, i]
            current = row
        for i in range(dlo[b], dhi[b]):
            scratch[dpos[i]] = dval[i]
        for w in range(P + 1):
            c = b * (P + 1) + w
            out_base[c] = row
            _copy_state(sums, counts, b, out_sums, out_counts, c)
            log[0] = 0
            if w == 0:
                out_f1[c], out_f2[c] = f1[b], f2[b]
            else:
                run_member(X, groups, grp_idx, grp_ptr, scratch, out_sums[c], out_counts[c],
                           update_pairs[w - 1, 0], update_pairs[w - 1, 1], q, t * q,
                           global_target, max_swap_candidates,
                           stream_seed(base_seed, t, ranks[b], w - 1), total_sq, no_history,
                           log)
                if log[0] > most:
                    raise ValueError("a child moved more points than its log holds")
                out_f1[c] = cost_of(out_sums[c], out_counts[c], total_sq, n)
                out_f2[c] = balance_of(out_counts[c])
            first[c] = filled
            filled = _write_delta(scratch, dpos, dlo[b], dhi[b], log, pos, val, filled)
            last[c] = filled
        for i in range(dlo[b], dhi[b]):  # back to the pool row for the next member
            scratch[dpos[i]] = pool[row, dpos[i]]
    return out_base, first, last, pos, val, out_sums, out_counts, out_f1, out_f2


@compiled
def plan_take(base: np.ndarray, dlo: np.ndarray, dhi: np.ndarray, idx: np.ndarray,
              limit: int, n_rows: int) -> tuple[np.ndarray, np.ndarray, int, int]:
    """Which of members ``idx`` get a pool row of their own, and each old row's new row (or -1)."""
    own = np.empty(idx.shape[0], dtype=np.bool_)
    row = np.full(n_rows, -1, dtype=np.int64)
    n_used = n_own = 0
    for i in range(idx.shape[0]):
        b = idx[i]
        own[i] = dhi[b] - dlo[b] > limit
        if own[i]:
            n_own += 1
        elif row[base[b]] < 0:
            row[base[b]] = n_used
            n_used += 1
    return own, row, n_used, n_own


@compiled
def take_members(pool: np.ndarray, base: np.ndarray, dlo: np.ndarray, dhi: np.ndarray,
                 dpos: np.ndarray, dval: np.ndarray, idx: np.ndarray, own: np.ndarray,
                 row: np.ndarray, out_pool: np.ndarray) -> tuple[np.ndarray, ...]:
    """Members ``idx`` as (base, dlo, dhi, dpos, dval); an empty ``out_pool`` shares the pool,
    else it gets the used rows at ``row``, then the ``own`` members in full."""
    B = idx.shape[0]
    n = pool.shape[1]
    share = out_pool.shape[0] == 0
    size = n_own = 0
    for i in range(B):
        if own[i]:
            n_own += 1
        else:
            size += dhi[idx[i]] - dlo[idx[i]]
    out_base = np.empty(B, dtype=np.int64)
    out_lo = np.empty(B, dtype=np.int64)
    out_hi = np.empty(B, dtype=np.int64)
    out_pos = np.empty(size, dtype=dpos.dtype)
    out_val = np.empty(size, dtype=dval.dtype)
    if not share:
        for r in range(row.shape[0]):
            if row[r] >= 0:
                for i in range(n):
                    out_pool[row[r], i] = pool[r, i]
    filled = 0
    fresh = out_pool.shape[0] - n_own
    for i in range(B):
        b = idx[i]
        out_lo[i] = filled
        if own[i]:
            for j in range(n):
                out_pool[fresh, j] = pool[base[b], j]
            for j in range(dlo[b], dhi[b]):
                out_pool[fresh, dpos[j]] = dval[j]
            out_base[i] = fresh
            fresh += 1
        else:
            out_base[i] = base[b] if share else row[base[b]]
            for j in range(dlo[b], dhi[b]):
                out_pos[filled] = dpos[j]
                out_val[filled] = dval[j]
                filled += 1
        out_hi[i] = filled
    return out_base, out_lo, out_hi, out_pos, out_val


def select_nondominated(f1: np.ndarray, f2: np.ndarray, key: np.ndarray,
                        strict: bool = False) -> np.ndarray:
    """Indices of the non-dominated points (min f1, max f2) by increasing f1, of equal points
    the smallest ``key``; ``strict``: the paper's Algorithm 3, line 8 (keeps ties)."""
    # by (f1 ↑, f2 ↓, key ↑): weak keeps an f2 above every f2 before it, strict one at least
    # the best f2 of a smaller f1
    order = np.lexsort((key, -f2, f1))
    g = f2[order]
    if not strict or len(g) == 0:
        before = np.maximum.accumulate(np.concatenate([[-np.inf], g[:-1]]))
        return order[g > before].astype(np.int64)
    c = f1[order]
    new_run = np.concatenate([[True], c[1:] != c[:-1]])  # runs of equal f1
    starts, run = np.flatnonzero(new_run), np.cumsum(new_run) - 1
    best_before = np.maximum.accumulate(
        np.concatenate([[-np.inf], np.maximum.reduceat(g, starts)[:-1]]))
    return order[g >= best_before[run]].astype(np.int64)
