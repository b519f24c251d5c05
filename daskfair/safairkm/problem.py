"""The data a SAfairKM run needs on every worker, validated once, and its starting labels."""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from .._groups import check_sensitive, merge_small_groups, sensitive_column
from .._nearest import nearest_center
from .._params import Integer
from .._random import as_seed_sequence, child_rng
from .._validation import check_array, check_n_clusters, is_dask
from ._block_functions import balance_of, cost_of, init_state, plan_take, take_members

__all__ = ["CLUSTERS", "Members", "Problem", "check_fits_workers", "cluster_means", "make_problem",
           "start_members"]

#: The clusters of every fair k-means estimator and front: two at least.
CLUSTERS = Integer(2, why="a balance trade-off needs two clusters")


@dataclass(frozen=True)
class Problem:
    """X, group codes and the static group index (``grp_idx[grp_ptr[j]:grp_ptr[j+1]]``)."""

    X: np.ndarray
    groups: np.ndarray
    grp_idx: np.ndarray
    grp_ptr: np.ndarray
    group_values: np.ndarray
    n_clusters: int
    total_sq: float
    offset: np.ndarray  # the column means subtracted from X (add back for centers)
    merged: dict[str, int] = field(default_factory=dict)  # groups merged into "other"

    @property
    def n_samples(self) -> int:
        return self.X.shape[0]

    @property
    def n_groups(self) -> int:
        return len(self.group_values)

    @property
    def label_dtype(self) -> np.dtype:
        # a front holds thousands of label vectors: one byte per row when K allows it
        return np.dtype(np.uint8 if self.n_clusters <= 256 else np.int32)


@dataclass
class Members:
    """A batch of label vectors: b is ``pool[base[b]]``, ``dpos[dlo[b]:dhi[b]]`` set to dval."""

    pool: np.ndarray  # (R, N) label vectors the members are stored against (never written)
    base: np.ndarray  # (B,) pool row of each member
    dlo: np.ndarray  # (B,) member b's changes are dpos/dval[dlo[b]:dhi[b]]
    dhi: np.ndarray  # (B,)
    dpos: np.ndarray  # int64 positions
    dval: np.ndarray  # labels at those positions
    sums: np.ndarray  # (B, K, d)
    counts: np.ndarray  # (B, K, J)
    f1: np.ndarray  # (B,)
    f2: np.ndarray  # (B,)
    # tie-break keys of a batch just expanded (not stored, not carried by take/concat)
    keys: np.ndarray | None = None

    #: what a store holds (the label vectors in full)
    FIELDS: ClassVar[tuple[str, ...]] = ("labels", "sums", "counts", "f1", "f2")

    @classmethod
    def full(cls, labels: np.ndarray, sums: np.ndarray, counts: np.ndarray, f1: np.ndarray,
             f2: np.ndarray) -> Members:
        """Members given by their whole label vectors (one pool row each, no deltas)."""
        B = len(f1)
        none = np.zeros(B, dtype=np.int64)
        return cls(labels, np.arange(B, dtype=np.int64), none, none,
                   np.empty(0, dtype=np.int64), np.empty(0, dtype=labels.dtype), sums,
                   counts, f1, f2)

    def __len__(self) -> int:
        return len(self.f1)

    @property
    def labels(self) -> np.ndarray:
        """The label vectors in full, (B, N)."""
        every = np.arange(len(self))
        out = np.empty((len(self), self.pool.shape[1]), self.pool.dtype)
        take_members(self.pool, self.base, self.dlo, self.dhi, self.dpos, self.dval, every,
                     np.ones(len(self), dtype=bool), np.full(len(self.pool), -1), out)
        return out

    def take(self, idx: Any, limit: int | None = None) -> Members:
        """Members ``idx``; with ``limit``, one with a longer delta gets a pool row of its own."""
        idx = np.asarray(idx, dtype=np.int64)
        own, row, n_used, n_own = plan_take(self.base, self.dlo, self.dhi, idx,
                                            _NEVER if limit is None else limit,
                                            len(self.pool))
        pool = self.pool if not own.any() else np.empty(
            (n_used + n_own, self.pool.shape[1]), self.pool.dtype)  # numpy: huge pages
        delta = take_members(self.pool, self.base, self.dlo, self.dhi, self.dpos, self.dval,
                             idx, own, row, pool[:0] if pool is self.pool else pool)
        return Members(pool, *delta, self.sums[idx], self.counts[idx], self.f1[idx],
                       self.f2[idx])

    @staticmethod
    def concat(parts: list[Members]) -> Members:
        """One batch of several (their pools are stacked unless they share one)."""
        shared = all(p.pool is parts[0].pool for p in parts)
        pool = parts[0].pool if shared else np.concatenate([p.pool for p in parts])
        parts = [p.take(np.arange(len(p))) for p in parts]  # deltas packed from 0
        rows = np.cumsum([0] + [0 if shared else len(p.pool) for p in parts])
        at = np.cumsum([0] + [len(p.dpos) for p in parts])

        def stack(field: str, shift: Any = None) -> np.ndarray:
            values = [getattr(p, field) for p in parts]
            if shift is not None:
                values = [v + s for v, s in zip(values, shift[:-1], strict=True)]
            return np.concatenate(values)

        return Members(pool, stack("base", rows), stack("dlo", at), stack("dhi", at),
                       *(stack(f) for f in ("dpos", "dval", "sums", "counts", "f1", "f2")))


_NEVER = np.iinfo(np.int64).max


def check_fits_workers(X: Any, client: Any, what: str) -> None:
    """Refuse, before loading, rows over half a worker's memory (every task holds all rows)."""
    shape = np.shape(X)
    if len(shape) != 2 or any(not np.isfinite(v) for v in shape):
        return  # check_array reports these
    need = shape[0] * (shape[1] + 3) * 8
    from ..runtime.clients import worker_memory_limits  # distributed: only with a client

    limits = worker_memory_limits(client)
    if limits and need > 0.5 * min(limits):
        raise ValueError(
            f"{what} keeps all {shape[0]:,} rows on every worker (points move one at a time), "
            f"which needs about {need / 2**30:.2f} GiB per worker, but the smallest worker "
            f"has a memory limit of {min(limits) / 2**30:.2f} GiB. Subsample the rows "
            "(the paper used 5,000) or give the workers more memory.")


def make_problem(X: Any, sensitive_features: Any, n_clusters: Any, *,
                 min_group_size: int = 1, small_groups: str = "raise") -> Problem:
    """The checked data of a SAfairKM or VfairKM run, in memory (X centred)."""
    X = check_array(X, "X", min_samples=2)
    if is_dask(X):
        X = X.compute()
    X = np.ascontiguousarray(X, dtype=np.float64)
    # centred, as f1's identity loses digits far from 0 (docs/design.md#safairkm-incremental-state)
    offset = X.mean(axis=0)
    X = X - offset  # a new array: never change the caller's
    n = X.shape[0]
    k = check_n_clusters(n_clusters, n)
    s = sensitive_column(sensitive_features, n)
    # the codes are held in memory anyway: one read of a dask column, then numpy checks
    s, merged = merge_small_groups(s.compute() if is_dask(s) else s, min_group_size,
                                   small_groups)
    codes, values = check_sensitive(s, n)
    codes = np.asarray(codes, dtype=np.int64)
    sizes = np.bincount(codes, minlength=len(values))
    small = values[sizes < k]
    if small.size:
        warnings.warn(
            f"group(s) {small.tolist()} have fewer rows than n_clusters={k}: some cluster "
            "must miss them, so every clustering has balance 0 and the front collapses to "
            "the k-means end. Merge small groups or lower n_clusters.",
            UserWarning, stacklevel=3,
        )
    # each group's rows in a fixed random order, for the swap step (independent of random_state)
    shuffle = np.random.default_rng(np.random.SeedSequence(20_211_122)).permutation(n)
    idx = shuffle[np.argsort(codes[shuffle], kind="stable")]
    ptr = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    return Problem(X, codes, idx.astype(np.int64), ptr, values, k,
                   float(np.einsum("ij,ij->", X, X)), offset, merged)


def cluster_means(X: np.ndarray, labels: np.ndarray, previous: np.ndarray) -> np.ndarray:
    """Means of the hard clusters; an empty cluster keeps its ``previous`` center."""
    k = len(previous)
    sizes = np.bincount(labels, minlength=k)
    sums = np.stack([np.bincount(labels, weights=X[:, f], minlength=k)
                     for f in range(X.shape[1])], axis=1)
    centers = previous.copy()
    full = sizes > 0
    centers[full] = sums[full] / sizes[full, None]
    return centers


def _lloyd(X: np.ndarray, centers: np.ndarray, max_iter: int = 100) -> np.ndarray:
    labels = nearest_center(X, centers)
    for _ in range(max_iter):
        centers = cluster_means(X, labels, centers)
        new = nearest_center(X, centers)
        if np.array_equal(new, labels):
            break
        labels = new
    return labels


def _fill_empty(labels: np.ndarray, k: int, rng: np.random.Generator) -> np.ndarray:
    # an empty cluster gets a random row of the largest cluster
    for c in range(k):
        if not (labels == c).any():
            big = np.argmax(np.bincount(labels, minlength=k))
            rows = np.flatnonzero(labels == big)
            labels[rows[rng.integers(len(rows))]] = c
    return labels


def start_labels(problem: Problem, start: int, n_init: int, seed: Any) -> np.ndarray:
    """Start number ``start`` (seed child ``start``): random mod K, then (2nd half) k-means."""
    rng = child_rng(as_seed_sequence(seed), 1, start)
    k, n = problem.n_clusters, problem.n_samples
    if start < (n_init + 1) // 2:
        labels = rng.permutation(n) % k
    else:
        from sklearn.cluster import kmeans_plusplus  # 0.2 s of imports: only when used

        centers, _ = kmeans_plusplus(problem.X, k, random_state=int(rng.integers(2**31)))
        labels = _lloyd(problem.X, centers)
    return _fill_empty(labels.astype(np.int64), k, rng).astype(problem.label_dtype)


def members_from_labels(problem: Problem, labels: np.ndarray) -> Members:
    """States and objectives of label vectors (rows of ``labels``), from scratch."""
    labels = np.atleast_2d(labels)
    B, n = labels.shape
    K, J, d = problem.n_clusters, problem.n_groups, problem.X.shape[1]
    sums = np.empty((B, K, d))
    counts = np.empty((B, K, J), dtype=np.int64)
    f1, f2 = np.empty(B), np.empty(B)
    for b in range(B):
        sums[b], counts[b] = init_state(problem.X, problem.groups, labels[b], K, J)
        f1[b] = cost_of(sums[b], counts[b], problem.total_sq, n)
        f2[b] = balance_of(counts[b])
    return Members.full(labels.astype(problem.label_dtype, copy=False), sums, counts, f1,
                        f2)


def start_members(problem: Problem, starts: list[int], n_init: int, seed: Any) -> Members:
    """The starting members numbered ``starts`` (a task: built on the worker that keeps them)."""
    labels = np.stack([start_labels(problem, s, n_init, seed) for s in starts])
    return members_from_labels(problem, labels)
