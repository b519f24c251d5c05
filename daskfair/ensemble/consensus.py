"""FCE consensus by alternating minimisation: row-block passes plus c × c solves.

An iteration updates H, R(i), R, Y and α of the paper's eq. (10) in turn, each step never
raising the objective (docs/design.md#fce-alternating-updates).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from itertools import pairwise
from typing import Any

import dask
import dask.array as da
import distributed
import numpy as np
import scipy.linalg
import scipy.optimize

from .._blocks import align_rows, block_sum, row_blocks
from .._random import as_seed_sequence, child_rng
from .._validation import is_dask
from ..runtime.iterative import Recoveries
from ..runtime.recovery import LOST_WORK
from ._block_functions import hr_rows, sweep_block, sweep_hr, table_change, tables_block

__all__ = ["ALIGNMENTS", "ConsensusState", "align_base", "auto_fairness", "check_state",
           "consensus_step", "init_state", "paper_state", "polar", "run_consensus",
           "start_state"]

logger = logging.getLogger(__name__)

ALIGNMENTS = ("rotation", "hungarian")


def auto_fairness(n_samples: int, n_clusters: int, n_groups: int) -> float:
    """A size-free fairness weight λ2: ``sqrt(c / n) · c T / n`` (docs/design.md#fce-objective).

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
    """
    return float(np.sqrt(n_clusters / n_samples) * n_clusters * n_groups / n_samples)


def polar(M: np.ndarray, alignment: str = "rotation") -> np.ndarray:
    """The R of M's shape with orthonormal rows or columns maximising tr(MᵀR): the polar
    factor ("rotation") or a maximum-weight matching as a 0/1 matrix ("hungarian")."""
    if alignment == "hungarian":
        rows, cols = scipy.optimize.linear_sum_assignment(M, maximize=True)
        P = np.zeros_like(M)
        P[rows, cols] = 1.0
        return P
    return scipy.linalg.polar(M)[0]


def align_base(M: np.ndarray, sizes: np.ndarray, previous: np.ndarray,
               alignment: str = "rotation", *, max_iter: int = 200, rtol: float = 1e-13
               ) -> np.ndarray:
    """R(i) (c_i × c) minimising ‖H − Y(i)R(i)‖², from M = Y(i)ᵀH, the cluster sizes and the
    ``previous`` R(i); for c_i > c, majorisation–minimisation steps until one gains < ``rtol``."""
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
        R_new = polar(M + P[:, None] * R)  # the majoriser's minimiser, P = max(n) I − diag(n)
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


def _statistics(state: ConsensusState, lambda1: float) -> tuple:
    """BᵀB (c × c), the stacked Y(i)ᵀB = ZᵀB (Σ c_i × c) and YᵀB (c × c) from the tables."""
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


def _offsets(base_sizes: np.ndarray) -> np.ndarray:
    return np.concatenate([[0], np.cumsum(base_sizes)[:-1]]).astype(np.int64)


def init_state(base: Any, groups: Any, ref: Any, n_clusters: int, base_sizes: np.ndarray,
               n_groups: int) -> ConsensusState:
    """The start from the labels ``ref`` (n,): every R(i) its Hungarian matching to them,
    R = I, α = 1/m; one pass over ``base`` (n, m) and ``groups`` (codes < ``n_groups``)."""
    m, c, offsets = len(base_sizes), n_clusters, _offsets(base_sizes)
    S = int(base_sizes.sum())
    C, K, counts = _tables(base, groups, ref, offsets, S, c, n_groups)
    R_all = np.zeros((S, c))
    for a, b in pairwise(np.append(offsets, S)):
        R_all[a:b] = polar(K[a:b].astype(np.float64), "hungarian")
    return ConsensusState(labels=ref, counts=counts, R_all=R_all, R=np.eye(c),
                          alpha=np.full(m, 1.0 / m), offsets=offsets,
                          base_counts=np.diag(C).astype(np.float64), coassociation=C, table=K)


def _paper_labels(base: np.ndarray, P: np.ndarray, bounds: np.ndarray) -> np.ndarray:
    # the nearest one-hot rows of H = B Q (R = I, no fairness term): argmax of B Q
    HR = hr_rows(np.ascontiguousarray(base), np.zeros(len(base), dtype=np.int32), P,
                 np.zeros((P.shape[1],) * 2), bounds)
    return np.argmax(HR, axis=1).astype(np.int32)


def paper_state(base: Any, groups: Any, n_clusters: int, base_sizes: np.ndarray,
                n_groups: int) -> ConsensusState:
    """The paper's start: R(i) = I (c_i × c), R = I, α = 1/m, H = polar(Σ Y(i)) and Y the
    one-hot rows nearest to HR; three passes over ``base``. Arguments as for init_state."""
    m, c, offsets = len(base_sizes), n_clusters, _offsets(base_sizes)
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
            _paper_labels, P, bounds, dtype=np.int32, drop_axis=1, meta=np.empty(0, np.int32)
        ).persist()
    else:
        labels = _paper_labels(base, P, bounds)
    _, K, counts = _tables(base, groups, labels, offsets, S, c, n_groups, False)
    return ConsensusState(labels=labels, counts=counts, R_all=R_all, R=np.eye(c), alpha=alpha,
                          offsets=offsets, base_counts=np.diag(C).astype(np.float64),
                          coassociation=C, table=K)


def start_state(base: Any, groups: Any, n_clusters: int, base_sizes: np.ndarray, n_groups: int,
                init: str, random_state: Any) -> ConsensusState:
    """The start of ``init``: paper_state, or init_state from a base clustering with c clusters
    (drawn by ``random_state``), else the one with the closest number, its labels mod c."""
    if init == "paper":
        return paper_state(base, groups, n_clusters, base_sizes, n_groups)
    exact = np.flatnonzero(base_sizes == n_clusters)
    if exact.size:
        ref = base[:, int(child_rng(as_seed_sequence(random_state), 1).choice(exact))]
    else:
        ref = base[:, int(np.argmin(np.abs(base_sizes - n_clusters)))] % n_clusters
    if is_dask(ref):
        ref = ref.persist()  # one read of the base labels; later uses read the copy
    return init_state(base, groups, ref, n_clusters, base_sizes, n_groups)


def check_state(state: ConsensusState, base: Any, groups: Any, base_sizes: np.ndarray,
                n_clusters: int, n_groups: int) -> None:
    """ValueError unless a stored state fits these inputs: its labels are clusters 0 .. c − 1
    of every row, every array has the shape the inputs give, and its integer tables equal
    those recomputed from the labels (one pass over ``base``; the kernels index with the
    labels and trust the tables' counts)."""
    c, S, m = n_clusters, int(base_sizes.sum()), len(base_sizes)
    labels = state.labels
    lo, hi = (dask.compute(labels.min(), labels.max()) if is_dask(labels)
              else (labels.min(), labels.max()) if len(labels) else (0, 0))
    if labels.shape != (base.shape[0],) or labels.dtype.kind not in "iu" or not (
            0 <= lo <= hi < c):
        raise ValueError(f"its labels are not {base.shape[0]:,} cluster numbers 0 to {c - 1}")
    shapes = {"counts": (n_groups, c), "R_all": (S, c), "R": (c, c), "alpha": (m,),
              "offsets": (m,), "base_counts": (S,), "coassociation": (S, S), "table": (S, c)}
    for name, shape in shapes.items():
        value = getattr(state, name)
        if value.shape != shape or not np.isfinite(value).all():
            raise ValueError(f"its {name} is not a finite array of shape {shape}")
    if not np.array_equal(state.offsets, _offsets(base_sizes)):
        raise ValueError("its labelings' clusters are not those of base_labels")
    C, K, A = _tables(base, groups, labels, state.offsets, S, c, n_groups)
    if not (np.array_equal(C, state.coassociation) and np.array_equal(K, state.table)
            and np.array_equal(A, state.counts)):
        raise ValueError("its tables are not those of its labels and base_labels")


def rows_of(base: Any) -> tuple[int, ...] | None:
    """The row blocks of a consensus: those of ``base`` (dask), or None for numpy."""
    return base.chunks[0] if is_dask(base) else None


def _sweep(base: Any, groups: Any, state: ConsensusState, P: np.ndarray, Py: np.ndarray,
           fairness_weight: float) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray]:
    bounds, c = state.bounds, P.shape[1]
    if not any(is_dask(a) for a in (base, groups, state.labels)):
        return sweep_block(base, groups, state.labels, state.counts, P, Py, bounds,
                           fairness_weight)
    rows = rows_of(base)
    blocks = row_blocks(base, groups, state.labels, optimize=False, rows=rows)
    # the HR rows do not depend on the counts: in parallel, on the blocks (findings F3.4)
    hr = [dask.delayed(hr_rows, pure=True)(b, lab, P, Py, bounds) for b, _, lab in blocks]
    out = state.counts
    parts, changes = [], []
    for (b, g, lab), h, size in zip(blocks, hr, rows, strict=True):
        # a chain carrying the counts from block to block, ahead of the HR tasks (F3.4)
        with dask.annotate(priority=1):
            out = dask.delayed(_sweep_link, nout=2, pure=True)(h, g, lab, out,
                                                               fairness_weight)
        parts.append(da.from_delayed(out[0], shape=(size,), dtype=np.int32))
        changes.append(dask.delayed(table_change, pure=True)(b, lab, out[0], bounds, c))
    new_labels, counts = da.concatenate(parts), out[1]
    total = dask.delayed(_add_all, pure=True)(changes)
    # not optimised: fusing the base blocks into the HR tasks would read them twice
    new_labels, counts, total = dask.persist(new_labels, counts, total, optimize_graph=False)
    counts, (change, moves) = dask.compute(counts, total)
    return new_labels, counts, change, moves


def _sweep_link(HR: np.ndarray, groups: np.ndarray, labels: np.ndarray, previous: Any,
                fairness_weight: float) -> tuple[np.ndarray, np.ndarray]:
    # ``previous``: the first counts or the previous link's whole (labels, counts), a task less
    counts = previous[1] if isinstance(previous, tuple) else previous
    return sweep_hr(HR, groups, labels, counts, fairness_weight)


def _add_all(parts: list[tuple[np.ndarray, ...]]) -> tuple[np.ndarray, ...]:
    return tuple(sum(p) for p in zip(*parts, strict=True))


def consensus_step(base: Any, groups: Any, state: ConsensusState, *, consensus_weight: float,
                   fairness_weight: float, alignment: str = "rotation") -> ConsensusState:
    """One iteration (H, R(i), R, Y, α; one pass over ``base``): the new state, its objective
    appended. Arguments as for init_state and FairClusteringEnsemble."""
    lambda1, lambda2 = consensus_weight, fairness_weight
    c = state.R.shape[0]
    BtB, YiB, YB = _statistics(state, lambda1)
    Q = _inv_sqrt(BtB)
    M = YiB @ Q  # stacked Y(i)ᵀH
    R_all = np.zeros_like(state.R_all)
    for a, b in pairwise(state.bounds):
        R_all[a:b] = align_base(M[a:b], state.base_counts[a:b], state.R_all[a:b], alignment)
    R = polar((YB @ Q).T, alignment)  # HᵀY
    # H R = B Q R row by row: B's rows gather from W (the αᵢ²-scaled R(i)) and from λ1 R_hᵀ
    W = _scaled_rotations(state)
    QR = Q @ R
    P, Py = W @ QR, lambda1 * state.R.T @ QR
    labels, counts, change, moves = _sweep(base, groups, state, P, Py, lambda2)
    table = state.table + change
    # tr(YᵀHR) = Σ_j (HR)_{j,y_j}, summed from the integer tables K and the label moves
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


def run_consensus(base: Any, groups: Any, state: ConsensusState, *, consensus_weight: float,
                  fairness_weight: float, alignment: str, max_iter: int, tol: float,
                  callback: Callable[[ConsensusState], None] | None = None
                  ) -> tuple[ConsensusState, bool]:
    """Iterate consensus_step until converged (by ``tol``) or ``max_iter`` iterations, with
    ``callback(state)`` after each; the last state and whether it converged."""
    # a recovery copy once the iterations since the last took 10 times as long as it did
    # (docs/design.md#fce-recovery), never after the last iteration
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
    return (replace(state, labels=np.asarray(state.labels.compute()))
            if is_dask(state.labels) else state)


def _on_cluster(safe: ConsensusState, base: Any) -> ConsensusState:
    return (replace(safe, labels=da.from_array(safe.labels, chunks=(base.chunks[0],)))
            if is_dask(base) else safe)


def _converged(objective: list[float], tol: float) -> bool:
    return len(objective) >= 2 and (
        abs(objective[-2] - objective[-1]) <= tol * max(abs(objective[-2]), 1e-300))
