"""FCE consensus by alternating minimisation: row-block passes plus c × c solves (DESIGN §4).

Objective (the FCE seed's eq. 10, with daskfair's ``fairness`` = the paper's λ2)::

    Σ αᵢ² ‖H − Y(i)R(i)‖² + λ1 ‖Y − HR‖² + λ1 λ2 ‖GᵀY‖²,   HᵀH = I, R(i), R orthogonal,
    Y one-hot, α on the simplex.

One iteration; each step minimises the objective over its block given the others (exactly,
except R(i) of a base clustering with more clusters than c, where the step is a
majorisation–minimisation that starts at the previous R(i)), so the objective never
increases:

1. H = polar(B), B = Σ αᵢ² Y(i)R(i) + λ1 Y Rᵀ: one pass accumulates BᵀB, Y(i)ᵀB and YᵀB;
   H = B Q with Q = (BᵀB)^{-1/2} is never stored.
2. R(i) from M = Y(i)ᵀH = Y(i)ᵀB Q (:func:`align_base`); R = polar(HᵀY) (or Hungarian
   permutations).
3. Y: an exact sequential sweep over the rows, each row the one-hot minimising
   −2 (HR)_jk + λ2 (2 A_gk + 1) with A = GᵀY without the row; A is carried block to block.
4. αᵢ ∝ 1 / ‖H − Y(i)R(i)‖², from the c × c statistics already at hand.
"""

from __future__ import annotations

import logging
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
from .._recovery import LOST_WORK, count_recovery, wait_for_workers
from .._validation import is_dask
from ._kernels import b_rows, block_moments, hr_block, sweep_block, sweep_hr

__all__ = ["ALIGNMENTS", "ConsensusState", "align_base", "auto_fairness", "consensus_step",
           "init_state", "paper_state", "polar", "run_consensus"]

logger = logging.getLogger(__name__)

ALIGNMENTS = ("rotation", "hungarian")


def auto_fairness(n_samples: int, n_clusters: int, n_groups: int) -> float:
    """A size-free λ2: ``sqrt(c / n) · c T / n``.

    In the Y-step a row compares −2 (HR)_jk with λ2 (2 A_gk + 1). With H orthonormal and
    balanced clusters, entries of HR are of order sqrt(c / n) and the group × cluster counts
    A_gk of order n / (c T); this λ2 makes the two terms of equal order for any n, c and T
    (the fairness term's pull does not fade as n grows). On the FCE seed's pools it gives
    λ1·λ2 between 2.7e-7 (MNIST-USPS) and 7.6e-7 (D&S), the range in which the seed's rows
    are reproduced (1e-7 to 4e-7, data README).
    """
    return float(np.sqrt(n_clusters / n_samples) * n_clusters * n_groups / n_samples)


def polar(M: np.ndarray, alignment: str = "rotation") -> np.ndarray:
    """argmax over R with orthonormal rows/columns (or a partial permutation) of tr(Mᵀ R).

    "rotation": the orthogonal polar factor U Vᵀ of the thin SVD M = U S Vᵀ
    (:func:`scipy.linalg.polar`; not ``orthogonal_procrustes``, which only solves the square
    case and R(i) is c_i × c).
    "hungarian": the 0/1 matrix of a maximum-weight one-to-one matching of rows to columns.
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
    """R(i) minimising ‖H − Y(i)R(i)‖² = c − 2 tr(R(i)ᵀM) + Σ_k n_k ‖R(i)_k‖², M = Y(i)ᵀH.

    ``sizes`` are the cluster sizes n_k of the base clustering (c_i of them) and ``previous``
    its current R(i).

    For c_i ≤ c, R(i) has orthonormal rows, so Σ_k n_k ‖R(i)_k‖² = n whatever R(i) and the
    polar factor of M is the exact minimiser (as in the seed). For c_i > c, R(i) has
    orthonormal columns and the last term depends on it, so the polar factor is not a
    minimiser (the seed's step, which can raise the objective). Then:

    * "hungarian": a matching pays n_k − 2 M_kj per matched pair, so the best one is the
      Hungarian matching on the weights 2M − n 1ᵀ (exact).
    * "rotation": with D = diag(n), P = n_max I − D ≽ 0 and RᵀR = I,
      tr(RᵀDR) = n_max c − tr(RᵀPR) ≤ n_max c + tr(R₀ᵀPR₀) − 2 tr(RᵀPR₀) (tr(RᵀPR) is convex),
      with equality at R₀; minimising this majoriser gives R = polar(M + P R₀), which never
      increases the objective. It is repeated from R₀ = ``previous`` until the objective
      stalls (relative change below ``rtol``) or ``max_iter`` times: never worse than
      ``previous``, and the iterates approach a stationary point (slowly, linearly: from a
      random start a few hundred to a few thousand steps; each consensus iteration continues
      from the last R(i)).
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

    labels: Any  # (n,) int64, numpy or dask
    counts: np.ndarray  # (T, c): A = GᵀY
    R_all: np.ndarray  # (Σ c_i, c): stacked R(i)
    R: np.ndarray  # (c, c)
    alpha: np.ndarray  # (m,)
    offsets: np.ndarray  # (m,)
    base_counts: np.ndarray  # (Σ c_i,): cluster sizes of every base clustering
    objective: list[float] = field(default_factory=list)
    n_iter: int = 0


def _stats(base: Any, labels: Any, state: ConsensusState, lambda1: float) -> tuple:
    return block_sum(
        block_moments, base, labels, R_all=state.R_all, offsets=state.offsets,
        alpha2=state.alpha**2, R=state.R, lambda1=lambda1,
    )


def _group_counts(groups: np.ndarray, labels: np.ndarray, n_groups: int, c: int) -> np.ndarray:
    return np.bincount(groups * c + labels, minlength=n_groups * c).reshape(n_groups, c)


def init_state(
    base: Any,
    groups: Any,
    ref: Any,
    n_clusters: int,
    base_sizes: np.ndarray,
    n_groups: int,
) -> ConsensusState:
    """Start from the labels ``ref`` (values in [0, c)), every R(i) its best matching to them.

    ``ref`` is the first Y; the R(i) are the (partial) permutations that best match each base
    clustering to it (Hungarian on the contingency tables), R = I, α uniform — so B starts as
    an aligned vote of the base clusterings.
    """
    m = len(base_sizes)
    c = n_clusters
    offsets = np.concatenate([[0], np.cumsum(base_sizes)[:-1]]).astype(np.int64)
    placeholder = ConsensusState(
        labels=ref, counts=np.zeros((n_groups, c)), R_all=np.zeros((int(base_sizes.sum()), c)),
        R=np.eye(c), alpha=np.zeros(m), offsets=offsets, base_counts=np.zeros(0),
    )
    # With α = 0, λ1 = 1 and R = I the rows of B are the one-hot rows of Y, so the stacked
    # Y(i)ᵀB are the contingency tables of every base clustering against the reference.
    _, contingency, _ = _stats(base, ref, placeholder, 1.0)
    R_all = np.zeros_like(contingency)
    for i in range(m):
        sl = slice(offsets[i], offsets[i] + base_sizes[i])
        R_all[sl] = polar(contingency[sl], "hungarian")
    counts = block_sum(_group_counts, groups, ref, n_groups=n_groups, c=c)
    return ConsensusState(
        labels=ref, counts=counts.astype(np.int64), R_all=R_all, R=np.eye(c),
        alpha=np.full(m, 1.0 / m), offsets=offsets, base_counts=contingency.sum(axis=1),
    )


def _vote_rows(base: np.ndarray, R_all: np.ndarray, offsets: np.ndarray,
               alpha2: np.ndarray) -> np.ndarray:
    # rows of B = Σ αᵢ² Y(i)R(i): B without its consensus term (λ1 = 0)
    c = R_all.shape[1]
    return b_rows(base, np.zeros(len(base), dtype=np.int64), R_all, offsets, alpha2,
                  np.eye(c), 0.0)


def _paper_block(base: np.ndarray, *, R_all: np.ndarray, offsets: np.ndarray,
                 alpha2: np.ndarray, n_rows: int) -> tuple[np.ndarray, np.ndarray]:
    # BᵀB of B = Σ αᵢ² Y(i)R(i), and every base clustering's cluster sizes
    B = _vote_rows(base, R_all, offsets, alpha2)
    sizes = np.bincount((base + offsets).ravel(), minlength=n_rows).astype(np.float64)
    return B.T @ B, sizes


def _paper_labels(base: np.ndarray, R_all: np.ndarray, offsets: np.ndarray,
                  alpha2: np.ndarray, Q: np.ndarray) -> np.ndarray:
    # the nearest one-hot rows of H = B Q (R = I, no fairness term)
    return np.argmax(_vote_rows(base, R_all, offsets, alpha2) @ Q, axis=1).astype(np.int64)


def paper_state(
    base: Any,
    groups: Any,
    n_clusters: int,
    base_sizes: np.ndarray,
    n_groups: int,
) -> ConsensusState:
    """The FCE seed's start: R(i) = I (its first c columns when c_i ≠ c), R = I, α = 1/m,
    H = polar(Σ Y(i)) (the seed's SVD of Σ Y(i), up to a rotation that R absorbs).

    The consensus state holds labels, not H, so Y starts as the one-hot rows nearest to HR
    (the seed's Y-step without its fairness term); the iterations then continue from there.
    One pass for ΣY(i)'s c × c Gram matrix and the base cluster sizes, one for the labels
    (kept in memory, from which A = GᵀY is counted).
    """
    m = len(base_sizes)
    c = n_clusters
    offsets = np.concatenate([[0], np.cumsum(base_sizes)[:-1]]).astype(np.int64)
    R_all = np.vstack([np.eye(int(ci), c) for ci in base_sizes])
    alpha = np.full(m, 1.0 / m)
    gram, sizes = block_sum(_paper_block, base, R_all=R_all, offsets=offsets,
                            alpha2=alpha**2, n_rows=R_all.shape[0])
    Q = _inv_sqrt(gram)
    if is_dask(base):
        # on the canonical row blocks, so the labels' bits never depend on the chunking
        labels = align_rows(base)[0].map_blocks(_paper_labels, R_all, offsets, alpha**2, Q,
                                                dtype=np.int64, drop_axis=1).persist()
    else:
        labels = _paper_labels(base, R_all, offsets, alpha**2, Q)
    counts = block_sum(_group_counts, groups, labels, n_groups=n_groups, c=c)
    return ConsensusState(
        labels=labels, counts=counts.astype(np.int64), R_all=R_all, R=np.eye(c),
        alpha=alpha, offsets=offsets, base_counts=sizes,
    )


def _sweep(
    base: Any, groups: Any, state: ConsensusState, Q: np.ndarray, R_new: np.ndarray,
    lambda1: float, lambda2: float,
) -> tuple[Any, np.ndarray, float]:
    kwargs = dict(R_all=state.R_all, offsets=state.offsets, alpha2=state.alpha**2,
                  R_h=state.R, Q=Q, R=R_new, lambda1=lambda1, lambda2=lambda2)
    if not any(is_dask(a) for a in (base, groups, state.labels)):
        return sweep_block(base, groups, state.labels, state.counts, **kwargs)
    base, groups, labels = align_rows(base, groups, state.labels)
    counts = state.counts
    parts, traces = [], []
    hr_kwargs = {k: v for k, v in kwargs.items() if k != "lambda2"}
    # A chain: block b starts from the counts block b − 1 left (exact sequential semantics).
    # Only the per-row choices are chained; each block's HR rows (the heavy part) do not
    # depend on the counts and are computed in parallel ahead of the chain.
    for (b, g, lab), size in zip(row_blocks(base, groups, labels), labels.chunks[0],
                                 strict=True):
        hr = dask.delayed(hr_block, pure=True)(b, lab, **hr_kwargs)
        out = dask.delayed(sweep_hr, nout=3, pure=True)(hr, g, lab, counts, lambda2)
        parts.append(da.from_delayed(out[0], shape=(size,), dtype=np.int64))
        counts = out[1]
        traces.append(out[2])
    new_labels = da.concatenate(parts)
    new_labels, counts, trace = dask.persist(new_labels, counts, dask.delayed(sum)(traces))
    counts, trace = dask.compute(counts, trace)
    return new_labels, counts, float(trace)


def consensus_step(
    base: Any,
    groups: Any,
    state: ConsensusState,
    *,
    lambda1: float,
    lambda2: float,
    alignment: str = "rotation",
) -> ConsensusState:
    """One full iteration (H, R(i), R, Y, α); returns the new state with its objective."""
    c = state.R.shape[0]
    BtB, YiB, YB = _stats(base, state.labels, state, lambda1)
    Q = _inv_sqrt(BtB)
    M = YiB @ Q  # stacked Y(i)ᵀH
    R_all = np.zeros_like(state.R_all)
    sizes = np.diff(np.append(state.offsets, len(R_all)))
    for off, size in zip(state.offsets, sizes, strict=True):
        sl = slice(off, off + size)
        R_all[sl] = align_base(M[sl], state.base_counts[sl], state.R_all[sl], alignment)
    R = polar((YB @ Q).T, alignment)  # HᵀY
    labels, counts, trace = _sweep(base, groups, state, Q, R, lambda1, lambda2)
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
                   objective=[*state.objective, objective], n_iter=state.n_iter + 1)


def run_consensus(
    base: Any,
    groups: Any,
    state: ConsensusState,
    *,
    lambda1: float,
    lambda2: float,
    alignment: str,
    max_iter: int,
    tol: float,
    callback: Callable[[ConsensusState], None] | None = None,
) -> tuple[ConsensusState, bool]:
    """Iterate until the relative objective change is below ``tol`` or ``max_iter``.

    Returns the final state and whether it converged. ``callback(state)`` runs after every
    iteration (checkpoints, progress).
    """
    # Convergence is judged from the objective history, so a state restored from a
    # checkpoint taken after the last iteration does not take another step.
    safe, recoveries = _on_client(state), 0
    while state.n_iter < max_iter and not _converged(state.objective, tol):
        try:
            new = consensus_step(base, groups, state, lambda1=lambda1, lambda2=lambda2,
                                 alignment=alignment)
            new_safe = _on_client(new)
        except LOST_WORK as exc:
            # the labels on the workers depend on released labels of earlier iterations, so
            # dask cannot recompute them: restart the iteration from the client's copy
            recoveries = count_recovery(recoveries, exc, "FCE consensus")
            wait_for_workers(distributed.get_client())
            state = _on_cluster(safe, base)
            continue
        state, safe = new, new_safe
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
