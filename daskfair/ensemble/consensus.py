"""FCE consensus by alternating minimisation: row-block passes plus c × c solves.

The consensus minimises the FCE paper's eq. (10)::

    Σ αᵢ² ‖H − Y(i)R(i)‖² + λ1 ‖Y − HR‖² + λ1 λ2 ‖GᵀY‖²

with λ1 = ``consensus_weight`` and λ2 = ``fairness_weight``, over H (HᵀH = I), the rotations
R(i) and R, the one-hot Y and the weights α on the simplex. An iteration updates H, R(i), R,
Y and α in turn, each step never raising the objective; the c × c statistics come from
integer tables (:mod:`._block_functions`), and the one pass over the label matrix is the
Y-step's sequential sweep (docs/design.md#fce-alternating-updates,
docs/design.md#fce-fair-assignment).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import dask
import dask.array as da
import distributed
import numpy as np
import scipy.linalg
import scipy.optimize

from .._blocks import align_rows, block_sum, row_blocks
from .._validation import is_dask
from ..runtime.iterative import Recoveries
from ..runtime.recovery import LOST_WORK
from ._block_functions import hr_rows, sweep_block, sweep_hr, table_change, tables_block

__all__ = ["ALIGNMENTS", "ConsensusState", "align_base", "auto_fairness", "consensus_step",
           "init_state", "paper_state", "polar", "run_consensus"]

logger = logging.getLogger(__name__)

ALIGNMENTS = ("rotation", "hungarian")


def auto_fairness(n_samples: int, n_clusters: int, n_groups: int) -> float:
    """A size-free fairness weight λ2: ``sqrt(c / n) · c T / n``.

    It keeps the two terms of the Y-step's row cost of equal order for any n, c and T, so
    the fairness term's pull does not fade as n grows (docs/design.md#fce-objective).

    Parameters
    ----------
    n_samples : int
        n, the rows.
    n_clusters : int
        c, the consensus's clusters.
    n_groups : int
        T, the groups.

    Returns
    -------
    float
        The ``fairness_weight`` that ``fairness_weight="auto"`` stands for.

    See Also
    --------
    daskfair.FairClusteringEnsemble : Its ``fairness_weight="auto"``.

    Examples
    --------
    >>> from daskfair.ensemble import auto_fairness
    >>> round(auto_fairness(10_000, 4, 2), 6)
    1.6e-05
    """
    return float(np.sqrt(n_clusters / n_samples) * n_clusters * n_groups / n_samples)


def polar(M: np.ndarray, alignment: str = "rotation") -> np.ndarray:
    """The R with orthonormal rows or columns maximising tr(MᵀR), of M's shape (a, b).

    "rotation": the orthogonal polar factor U Vᵀ of the thin SVD M = U S Vᵀ (rectangular M
    too). "hungarian": the 0/1 matrix of a maximum-weight one-to-one matching of rows to
    columns.
    """
    if alignment == "hungarian":
        rows, cols = scipy.optimize.linear_sum_assignment(M, maximize=True)
        P = np.zeros_like(M)
        P[rows, cols] = 1.0
        return P
    return scipy.linalg.polar(M)[0]


def align_base(
    M: np.ndarray,
    sizes: np.ndarray,
    previous: np.ndarray,
    alignment: str = "rotation",
    *,
    max_iter: int = 200,
    rtol: float = 1e-13,
) -> np.ndarray:
    """R(i) (c_i × c) minimising ‖H − Y(i)R(i)‖² = c − 2 tr(R(i)ᵀM) + Σ_k n_k ‖R(i)_k‖².

    ``M`` is Y(i)ᵀH (c_i × c), ``sizes`` the cluster sizes n_k and ``previous`` the current
    R(i). Exact for c_i ≤ c (the polar factor of M) and for "hungarian" (a matching on
    2M − n 1ᵀ). For "rotation" with c_i > c: majorisation–minimisation steps
    R = polar(M + P R₀), P = max(n) I − diag(n), from R₀ = ``previous``, until a step lowers
    the objective by less than ``rtol`` (relatively) or ``max_iter`` times; never worse than
    ``previous`` (docs/design.md#fce-alternating-updates).
    """
    c_i, c = M.shape
    if c_i <= c:
        return polar(M, alignment)
    if alignment == "hungarian":
        return polar(2.0 * M - sizes[:, None], "hungarian")

    def value(R: np.ndarray) -> float:
        return float(-2.0 * (M * R).sum() + (sizes * (R**2).sum(axis=1)).sum())

    P = sizes.max() - sizes
    R, f = previous, value(previous)
    for _ in range(max_iter):
        R_new = polar(M + P[:, None] * R)
        f_new = value(R_new)
        if f_new > f:  # rounding only: the majoriser guarantees f_new <= f
            break
        R, stalled, f = R_new, f - f_new <= rtol * max(abs(f), 1.0), f_new
        if stalled:
            break
    return R


def _inv_sqrt(S: np.ndarray) -> np.ndarray:
    lam, V = np.linalg.eigh(0.5 * (S + S.T))
    keep = lam > 1e-12 * max(lam.max(), 1e-300)
    inv = np.zeros_like(lam)
    inv[keep] = 1.0 / np.sqrt(lam[keep])
    return (V * inv) @ V.T


@dataclass
class ConsensusState:
    """Everything the next iteration needs; small except ``labels`` (n rows, maybe dask)."""

    labels: Any  # (n,) int32, numpy or dask
    counts: np.ndarray  # (T, c): A = GᵀY
    R_all: np.ndarray  # (Σ c_i, c): stacked R(i)
    R: np.ndarray  # (c, c)
    alpha: np.ndarray  # (m,)
    offsets: np.ndarray  # (m,)
    base_counts: np.ndarray  # (Σ c_i,): cluster sizes of every base clustering
    coassociation: np.ndarray  # (Σ c_i, Σ c_i) C = ZᵀZ, int64
    table: np.ndarray  # (Σ c_i, c) K = ZᵀY, int64
    objective: list[float] = field(default_factory=list)
    n_iter: int = 0

    @property
    def bounds(self) -> np.ndarray:
        """``offsets`` followed by Σ c_i."""
        return np.append(self.offsets, len(self.R_all))


def _tables(base: Any, groups: Any, labels: Any, offsets: np.ndarray, n_rows: int, c: int,
            n_groups: int, with_coassociation: bool = True) -> tuple:
    """C = ZᵀZ (when asked), K = ZᵀY and A = GᵀY in one pass (exact integer sums)."""
    return block_sum(tables_block, base, groups, labels, rows=rows_of(base), offsets=offsets,
                     n_rows=n_rows, n_clusters=c, n_groups=n_groups,
                     with_coassociation=with_coassociation)


def _statistics(state: ConsensusState, consensus_weight: float) -> tuple:
    """BᵀB (c × c), the stacked Y(i)ᵀB = ZᵀB (Σ c_i × c) and YᵀB (c × c) from the tables."""
    lambda1 = consensus_weight  # the paper's λ1
    C = state.coassociation.astype(np.float64)
    K = state.table.astype(np.float64)
    sizes = K[: state.bounds[1]].sum(axis=0)  # n_y: every row is in one cluster of Y(1)
    W = _scaled_rotations(state)
    R = state.R
    KRt = K @ R.T
    BtB = W.T @ C @ W + lambda1 * (W.T @ KRt + KRt.T @ W) + lambda1**2 * (R * sizes) @ R.T
    return BtB, C @ W + lambda1 * KRt, K.T @ W + lambda1 * sizes[:, None] * R.T


def _scaled_rotations(state: ConsensusState) -> np.ndarray:
    # W: each R(i) scaled by αᵢ², so that Σ αᵢ² Y(i)R(i) = Z W
    clustering = np.repeat(np.arange(len(state.offsets)), np.diff(state.bounds))
    return state.alpha[clustering][:, None] ** 2 * state.R_all


def init_state(
    base: Any,
    groups: Any,
    ref: Any,
    n_clusters: int,
    base_sizes: np.ndarray,
    n_groups: int,
) -> ConsensusState:
    """The start from the labels ``ref`` (n, values in [0, c)): every R(i) its best matching
    to them (Hungarian on the contingency tables), R = I, α = 1/m, so B starts as an aligned
    vote. One pass over ``base`` (the checked (n, m) int32 labels, c_i = ``base_sizes``) and
    ``groups`` (codes 0 .. ``n_groups`` - 1).
    """
    m = len(base_sizes)
    c = n_clusters
    offsets = np.concatenate([[0], np.cumsum(base_sizes)[:-1]]).astype(np.int64)
    S = int(base_sizes.sum())
    # one pass: the co-association C and, with the reference as Y, the contingency tables
    # K = ZᵀY of every base clustering against it and the group counts
    C, K, counts = _tables(base, groups, ref, offsets, S, c, n_groups)
    R_all = np.zeros((S, c))
    for i in range(m):
        sl = slice(offsets[i], offsets[i] + base_sizes[i])
        R_all[sl] = polar(K[sl].astype(np.float64), "hungarian")
    return ConsensusState(
        labels=ref, counts=counts, R_all=R_all, R=np.eye(c), alpha=np.full(m, 1.0 / m),
        offsets=offsets, base_counts=np.diag(C).astype(np.float64), coassociation=C, table=K,
    )


def _paper_labels(base: np.ndarray, P: np.ndarray, bounds: np.ndarray) -> np.ndarray:
    # the nearest one-hot rows of H = B Q (R = I, no fairness term): argmax of B Q
    HR = hr_rows(base, np.zeros(len(base), dtype=np.int32), P, np.zeros((P.shape[1],) * 2),
                 bounds)
    return np.argmax(HR, axis=1).astype(np.int32)


def paper_state(
    base: Any,
    groups: Any,
    n_clusters: int,
    base_sizes: np.ndarray,
    n_groups: int,
) -> ConsensusState:
    """The FCE paper's start: R(i) = I (its first c columns when c_i ≠ c), R = I, α = 1/m,
    H = polar(Σ Y(i)) (the paper's SVD of Σ Y(i), up to a rotation that R absorbs).

    The state holds labels, not H, so Y starts as the one-hot rows nearest to HR (the paper's
    Y-step without its fairness term). Three passes over ``base``: the co-association C, the
    labels (kept in memory), their tables K and A. Arguments as for :func:`init_state`.
    """
    m = len(base_sizes)
    c = n_clusters
    offsets = np.concatenate([[0], np.cumsum(base_sizes)[:-1]]).astype(np.int64)
    R_all = np.vstack([np.eye(int(ci), c) for ci in base_sizes])
    S = len(R_all)
    bounds = np.append(offsets, S)
    alpha = np.full(m, 1.0 / m)
    # C alone (Y = 0 as a placeholder): B = Σ αᵢ² Y(i)R(i) = Z W has BᵀB = WᵀCW
    zeros = (da.zeros(base.shape[0], dtype=np.int32, chunks=(base.chunks[0],))
             if is_dask(base) else np.zeros(base.shape[0], dtype=np.int32))
    C = _tables(base, zeros, zeros, offsets, S, 1, 1)[0]
    W = alpha[0] ** 2 * R_all
    P = W @ _inv_sqrt(W.T @ C.astype(np.float64) @ W)
    if is_dask(base):
        labels = align_rows(base, rows=rows_of(base))[0].map_blocks(
            _paper_labels, P, bounds, dtype=np.int32, drop_axis=1, meta=np.empty(0, np.int32))
        labels = labels.persist()
    else:
        labels = _paper_labels(base, P, bounds)
    _, K, counts = _tables(base, groups, labels, offsets, S, c, n_groups, False)
    return ConsensusState(
        labels=labels, counts=counts, R_all=R_all, R=np.eye(c), alpha=alpha, offsets=offsets,
        base_counts=np.diag(C).astype(np.float64), coassociation=C, table=K,
    )


def rows_of(base: Any) -> tuple[int, ...] | None:
    """The row blocks of a consensus: those of ``base`` (dask), or None for numpy; its results
    are exact or sums of integer tables, so they do not depend on where the blocks are cut."""
    return base.chunks[0] if is_dask(base) else None


def _sweep(
    base: Any, groups: Any, state: ConsensusState, P: np.ndarray, Py: np.ndarray,
    fairness_weight: float,
) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray]:
    bounds, c = state.bounds, P.shape[1]
    if not any(is_dask(a) for a in (base, groups, state.labels)):
        return sweep_block(base, groups, state.labels, state.counts, P, Py, bounds,
                           fairness_weight)
    rows = rows_of(base)
    blocks = row_blocks(base, groups, state.labels, optimize=False, rows=rows)
    # each block's HR rows (the heavy part) do not depend on the counts: in parallel, as
    # tasks on the blocks themselves (docs/findings.md F3.4)
    hr = [dask.delayed(hr_rows, pure=True)(b, lab, P, Py, bounds) for b, _, lab in blocks]
    out = state.counts
    parts, changes = [], []
    for (b, g, lab), h, size in zip(blocks, hr, rows, strict=True):
        # a chain: each block starts from the counts the previous one left (exact sequential
        # semantics), ahead of the HR tasks in the workers' queues; one block per link
        # (docs/findings.md F3.4)
        with dask.annotate(priority=1):
            out = dask.delayed(_sweep_link, nout=2, pure=True)(h, g, lab, out,
                                                               fairness_weight)
        parts.append(da.from_delayed(out[0], shape=(size,), dtype=np.int32))
        # K's change from the rows whose label changed, next to the block's base rows
        changes.append(dask.delayed(table_change, pure=True)(b, lab, out[0], bounds, c))
    new_labels, counts = da.concatenate(parts), out[1]
    total = dask.delayed(_add_all, pure=True)(changes)
    # not optimised: fusing the base blocks into the HR tasks would read them twice
    new_labels, counts, total = dask.persist(new_labels, counts, total, optimize_graph=False)
    counts, (change, moves) = dask.compute(counts, total)
    return new_labels, counts, change, moves


def _sweep_link(HR: np.ndarray, groups: np.ndarray, labels: np.ndarray, previous: Any,
                fairness_weight: float) -> tuple[np.ndarray, np.ndarray]:
    # ``previous``: the counts at the start, or the previous link's (labels, counts) whole —
    # taking the tuple instead of its counts saves the chain a task (and a round trip
    # through the scheduler) per block
    counts = previous[1] if isinstance(previous, tuple) else previous
    return sweep_hr(HR, groups, labels, counts, fairness_weight)


def _add_all(parts: list[tuple[np.ndarray, ...]]) -> tuple[np.ndarray, ...]:
    return tuple(sum(p) for p in zip(*parts, strict=True))


def consensus_step(
    base: Any,
    groups: Any,
    state: ConsensusState,
    *,
    consensus_weight: float,
    fairness_weight: float,
    alignment: str = "rotation",
) -> ConsensusState:
    """One full iteration (H, R(i), R, Y, α), one pass over ``base``: the new state, its
    objective appended.

    ``consensus_weight`` is λ1, the weight of ‖Y − HR‖², and the weight of ‖GᵀY‖² is
    ``consensus_weight * fairness_weight`` (λ1 λ2). ``alignment``: R(i) and R orthonormal
    ("rotation") or permutations ("hungarian"). ``base`` and ``groups`` as for
    :func:`init_state`.
    """
    # the paper's λ1 and λ2
    lambda1, lambda2 = consensus_weight, fairness_weight
    c = state.R.shape[0]
    BtB, YiB, YB = _statistics(state, lambda1)
    Q = _inv_sqrt(BtB)
    M = YiB @ Q  # stacked Y(i)ᵀH
    R_all = np.zeros_like(state.R_all)
    sizes = np.diff(state.bounds)
    for off, size in zip(state.offsets, sizes, strict=True):
        sl = slice(off, off + size)
        R_all[sl] = align_base(M[sl], state.base_counts[sl], state.R_all[sl], alignment)
    R = polar((YB @ Q).T, alignment)  # HᵀY
    # H R = B Q R row by row: B's rows gather from W (the αᵢ²-scaled R(i)) and from λ1 R_hᵀ
    W = _scaled_rotations(state)
    QR = Q @ R
    P, Py = W @ QR, lambda1 * state.R.T @ QR
    labels, counts, change, moves = _sweep(base, groups, state, P, Py, lambda2)
    table = state.table + change
    # tr(YᵀHR) = Σ_j (HR)_{j,y_j} with (HR)_j = Σᵢ P[row of Y(i)_j] + Py[old y_j], summed
    # from the integer tables K = ZᵀY and the (old, new) label pairs: the same bits for any
    # row blocks
    trace = float((table * P).sum() + (moves * Py).sum())
    # ‖H − Y(i)R(i)‖² = ‖H‖² − 2 tr(R(i)ᵀ Y(i)ᵀH) + Σ_k n_ik ‖R(i)_k‖², with ‖H‖² = c
    fit = np.add.reduceat(M * R_all, state.offsets, axis=0).sum(axis=1)
    norms = np.add.reduceat(state.base_counts * (R_all**2).sum(axis=1), state.offsets)
    err = np.maximum(c - 2.0 * fit + norms, 1e-12)
    alpha = (1.0 / err) / (1.0 / err).sum()
    n = int(counts.sum())
    objective = float(
        (alpha**2 * err).sum()
        + lambda1 * (n - 2.0 * trace + c)  # ‖Y − HR‖² = n − 2 tr(YᵀHR) + ‖H‖²
        + lambda1 * lambda2 * float((counts.astype(np.float64) ** 2).sum())
    )
    return replace(state, labels=labels, counts=counts, R_all=R_all, R=R, alpha=alpha,
                   objective=[*state.objective, objective], n_iter=state.n_iter + 1,
                   table=table)


def run_consensus(
    base: Any,
    groups: Any,
    state: ConsensusState,
    *,
    consensus_weight: float,
    fairness_weight: float,
    alignment: str,
    max_iter: int,
    tol: float,
    callback: Callable[[ConsensusState], None] | None = None,
) -> tuple[ConsensusState, bool]:
    """Iterate :func:`consensus_step` until the relative change of the objective is at most
    ``tol`` or ``state.n_iter`` reaches ``max_iter``; returns the last state and whether it
    converged.

    Convergence is judged from the objective history, so a state restored from a checkpoint
    taken after the last iteration takes no other step. ``callback(state)`` runs after every
    iteration (checkpoints, progress). A cluster that loses work restarts the consensus from
    a recovery copy of its state (docs/design.md#fce-recovery).
    """
    # a copy of the labels is gathered to the client once the iterations since the last copy
    # took 10 times as long as that copy did, and never after the last iteration
    safe, copy_seconds, since_copy = state, 0.0, 0.0
    recoveries = Recoveries("FCE consensus")
    while state.n_iter < max_iter and not _converged(state.objective, tol):
        try:
            start = time.perf_counter()
            new = consensus_step(base, groups, state, consensus_weight=consensus_weight,
                                 fairness_weight=fairness_weight, alignment=alignment)
            since_copy += time.perf_counter() - start
            new_safe = None
            last = new.n_iter >= max_iter or _converged(new.objective, tol)
            if since_copy >= 10 * copy_seconds and not last:
                start = time.perf_counter()
                new_safe = _on_client(new)
                copy_seconds, since_copy = time.perf_counter() - start, 0.0
        except LOST_WORK as exc:
            # restart from the last copy (the same result: every step is deterministic)
            recoveries.lost(exc, distributed.get_client())
            state, since_copy = _on_cluster(safe, base), 0.0
            continue
        state = new
        if new_safe is not None:
            safe = new_safe
        logger.info("FCE iteration %d: objective %.10g", state.n_iter, state.objective[-1])
        if callback is not None:
            callback(state)
    return state, _converged(state.objective, tol)


def _on_client(state: ConsensusState) -> ConsensusState:
    # a recovery point: the state with its labels gathered into memory
    if is_dask(state.labels):
        return replace(state, labels=np.asarray(state.labels.compute()))
    return state


def _on_cluster(safe: ConsensusState, base: Any) -> ConsensusState:
    if not is_dask(base):
        return safe
    return replace(safe, labels=da.from_array(safe.labels, chunks=(base.chunks[0],)))


def _converged(objective: list[float], tol: float) -> bool:
    if len(objective) < 2:
        return False
    prev, cur = objective[-2], objective[-1]
    return abs(prev - cur) <= tol * max(abs(prev), 1e-300)
