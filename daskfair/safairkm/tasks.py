"""The front's tasks, each on one batch of the list (a Members) on a worker: the expansion
of Algorithm 3 and the reads and writes of members. A worker that unpickles one imports
neither scikit-learn nor the estimators."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ._block_functions import expand_batch, select_nondominated
from .problem import Members, Problem, members_from_labels

__all__ = ["checked_members", "expand_task", "gather_members", "labels_of", "objectives",
           "read_members", "write_members"]

def gather_members(pieces: Sequence[tuple[Members, np.ndarray]],
                   limit: int | None = None) -> Members:
    if len(pieces) == 1:
        return pieces[0][0].take(pieces[0][1], limit)
    return Members.concat([m.take(idx, limit) for m, idx in pieces])


def expand_task(problem: Problem, pieces: list[tuple[Members, np.ndarray]], ranks: np.ndarray,
                update_pairs: np.ndarray, q: int, t: int, global_target: bool,
                max_swap_candidates: int, base_seed: int, sync_every: int = 1, batch: int = 0,
                strict: bool = False, limit: int | None = None) -> Members:
    """``sync_every`` iterations of Algorithm 3 on one batch, its own filter between them."""
    # a delta over max(16, N/128) gets a vector of its own (docs/design.md#safairkm-pareto-front)
    limit = max(16, problem.n_samples // 128) if limit is None else limit
    members, P = gather_members(pieces, limit), len(update_pairs)
    for s in range(sync_every):
        out = Members(members.pool, *expand_batch(
            problem.X, problem.groups, problem.grp_idx, problem.grp_ptr, members.pool,
            members.base, members.dlo, members.dhi, members.dpos, members.dval, members.sums,
            members.counts, members.f1, members.f2, ranks, update_pairs, q, t + s,
            global_target, max_swap_candidates, np.uint64(base_seed), problem.total_sq,
            np.argsort(members.base, kind="stable"),
        ))
        # tie-break keys in output order: parent (rank, 0), then its children (rank, pair + 1)
        out.keys = (ranks[:, None] * (P + 1) + np.arange(P + 1)).ravel()
        if s == sync_every - 1:
            return out
        members = out.take(select_nondominated(out.f1, out.f2, out.keys, strict), limit)
        # ranks until the global filter: unique across batches, above every global rank
        ranks = batch * 2**32 + np.arange(len(members), dtype=np.int64)
    raise AssertionError("sync_every must be >= 1")


def objectives(members: Members, idx: Any = slice(None),
               offset: np.ndarray | None = None) -> tuple[Any, ...]:
    """(f1, f2, keys) of the members ``idx``; with ``offset`` (the end of a run) also their
    cluster centers, as :class:`SAFairKMeans` computes them."""
    out = (members.f1[idx], members.f2[idx], members.keys)
    if offset is None:
        return out
    sums, counts = members.sums[idx], members.counts[idx]
    return (*out, sums / counts.sum(axis=2)[:, :, None] + offset)


def labels_of(members: Members, idx: np.ndarray) -> np.ndarray:
    return members.take(idx).labels


def write_members(pieces: list[tuple[Members, np.ndarray]], path: str, name: str) -> int:
    import zarr

    m = gather_members(pieces)
    group = zarr.open_group(store=path, mode="a").require_group(name)
    for key in Members.FIELDS:
        group.create_array(key, data=getattr(m, key), overwrite=True)
    return len(m)


def read_members(path: str, name: str, problem: Problem, n_members: int) -> Members:
    """The ``n_members`` members a checkpoint group holds, checked against ``problem``
    (:func:`checked_members`)."""
    from ..store import open_run  # zarr: only to resume from a store

    run = open_run(path, allow_incomplete=True, verify=None)
    with run.reading(f"the checkpoint {name}"):
        stored = [run.read_array(f"{name}/{key}") for key in Members.FIELDS]
        return checked_members(problem, *stored, n_members=n_members)


def checked_members(problem: Problem, labels: np.ndarray, sums: np.ndarray,
                    counts: np.ndarray, f1: np.ndarray, f2: np.ndarray, *,
                    n_members: int) -> Members:
    """Stored members, refused (ValueError) unless their labels are ``n_members`` label
    vectors of the problem's rows in clusters 0 .. K − 1 (the kernels index with them) and
    their states and objectives are those of their labels, recomputed: counts and balance
    exactly, sums and cost to a millionth (they were updated move by move)."""
    K, J, d, n = problem.n_clusters, problem.n_groups, problem.X.shape[1], problem.n_samples
    B = n_members
    if labels.shape != (B, n) or labels.dtype.kind not in "iu" or (labels.size and not (
            0 <= labels.min() and labels.max() < K)):
        raise ValueError(f"its labels are not {B} label vectors of {n:,} rows in clusters 0 to "
                         f"{K - 1}")
    if sums.shape != (B, K, d) or counts.shape != (B, K, J) or f1.shape != (B,) \
            or f2.shape != (B,):
        raise ValueError("its states' shapes are not the problem's")
    fresh = members_from_labels(problem, labels)
    scale = np.abs(fresh.sums).max(axis=(1, 2), initial=0.0)[:, None, None] + 1.0
    if not (np.array_equal(counts, fresh.counts) and np.array_equal(f2, fresh.f2)
            and (np.abs(sums - fresh.sums) <= 1e-6 * scale).all()
            and np.allclose(f1, fresh.f1, rtol=1e-6, atol=0.0)):
        raise ValueError("its states or objectives are not those of its labels")
    return Members.full(labels.astype(problem.label_dtype, copy=False), sums,
                        counts.astype(np.int64, copy=False), f1, f2)
