"""The tasks of a SAfairKM front: what runs on the workers, one batch of the list each.

A batch is a :class:`~.problem.Members` (label vectors stored as deltas against a pool); a
task expands it by Algorithm 3, reports its objectives, or writes or reads a checkpoint.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ._block_functions import expand_batch, select_nondominated
from .problem import Members, Problem

__all__ = ["LOCAL_RANKS", "delta_limit", "expand_task", "gather_members", "labels_of",
           "objectives", "objectives_and_keys", "read_members", "write_members"]

#: Ranks of a batch's members between global filters are ``batch · LOCAL_RANKS + i``: unique
#: across batches (a child's randomness is keyed by its parent's rank) and above every global
#: rank.
LOCAL_RANKS = 2**32


def gather_members(pieces: Sequence[tuple[Members, np.ndarray]],
                   limit: int | None = None) -> Members:
    """The members ``idx`` of every ``(members, idx)`` piece, as one batch."""
    if len(pieces) == 1:
        return pieces[0][0].take(pieces[0][1], limit)
    return Members.concat([m.take(idx, limit) for m, idx in pieces])


def delta_limit(n_samples: int) -> int:
    """Longest delta a member keeps before it gets a label vector of its own (at N/128
    positions the deltas of a member's five output rows stay near a third of an N-vector)."""
    return max(16, n_samples // 128)


def expand_task(
    problem: Problem, pieces: list[tuple[Members, np.ndarray]], ranks: np.ndarray,
    update_pairs: np.ndarray, q: int, t: int, global_target: bool, max_swap_candidates: int,
    base_seed: int, sync_every: int = 1, batch: int = 0, strict: bool = False,
    limit: int | None = None,
) -> Members:
    """``sync_every`` iterations of Algorithm 3 on one batch: expand, filter the batch's own
    list (not after the last one: that is the global filter's), expand again.

    Children are deltas against their parents (:func:`expand_batch`); only the members that
    survive a filter are taken forward, and one whose delta outgrew ``limit`` (default
    :func:`delta_limit`) is then written out in full.
    """
    limit = delta_limit(problem.n_samples) if limit is None else limit
    members, P = gather_members(pieces, limit), len(update_pairs)
    for s in range(sync_every):
        out = Members(members.pool, *expand_batch(
            problem.X, problem.groups, problem.grp_idx, problem.grp_ptr, members.pool,
            members.base, members.dlo, members.dhi, members.dpos, members.dval, members.sums,
            members.counts, members.f1, members.f2, ranks, update_pairs, q, t + s,
            global_target, max_swap_candidates, np.uint64(base_seed), problem.total_sq,
        ))
        # tie-break keys in output order: parent (rank, 0), then its children (rank, pair + 1)
        out.keys = (ranks[:, None] * (P + 1) + np.arange(P + 1)).ravel()
        if s == sync_every - 1:
            return out
        members = out.take(select_nondominated(out.f1, out.f2, out.keys, strict), limit)
        ranks = batch * LOCAL_RANKS + np.arange(len(members), dtype=np.int64)
    raise AssertionError("sync_every must be >= 1")


def objectives_and_keys(members: Members) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(f1, f2, tie-break keys) of a batch just expanded."""
    return members.f1, members.f2, members.keys


def objectives(members: Members, idx: Any = slice(None)) -> tuple[np.ndarray, np.ndarray]:
    """(f1, f2) of members ``idx``."""
    return members.f1[idx], members.f2[idx]


def labels_of(members: Members, idx: np.ndarray) -> np.ndarray:
    """The label vectors of members ``idx`` in full."""
    return members.take(idx).labels


def write_members(pieces: list[tuple[Members, np.ndarray]], path: str, name: str) -> int:
    """Write the members of ``pieces`` (label vectors in full) to group ``name`` of a store."""
    import zarr

    m = gather_members(pieces)
    group = zarr.open_group(store=path, mode="a").require_group(name)
    for key in Members.FIELDS:
        group.create_array(key, data=getattr(m, key), overwrite=True)
    return len(m)


def read_members(path: str, name: str) -> Members:
    """The members written by :func:`write_members`."""
    import zarr

    group = zarr.open_group(store=path, mode="r")[name]
    return Members.full(*(group[key][...] for key in Members.FIELDS))
