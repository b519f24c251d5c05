"""The CV candidates from one fold's moments (docs/design.md#fkr-reductions-on-cell-statistics)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.linalg

from .embedding import constrained_rank, mean_discrepancy_directions
from .ridge import ridge_fit
from .statistics import Moments

__all__ = ["CONSTRAINTS", "FAMILIES", "Linear", "Search", "build_candidates"]

CONSTRAINTS = ("demographic_parity", "equalized_odds")
FAMILIES = ("reduction", "embedding")


@dataclass(frozen=True)
class Search:
    """What to search: the task, the constraint, the families and their grids."""

    task: str                      # "classification" or "regression"
    constraint: str                # "demographic_parity" or "equalized_odds"
    families: tuple[str, ...]
    alphas: tuple[float, ...]
    strengths: tuple[float, ...]   # t of the reduction path λ = t·λ*
    components: tuple[int, ...]    # k of the embedding family
    fairness: tuple[float | None, ...]  # γ of the embedding family (None: exact constraint)


@dataclass(frozen=True)
class Linear:
    """K score functions f_k(z) = z @ coef[:, k] + intercept[k], as basis @ mix."""

    basis: np.ndarray   # (r, P)
    offset: np.ndarray  # (P,)
    mix: np.ndarray     # (P, K)
    shift: np.ndarray   # (K,)

    @property
    def coef(self) -> np.ndarray:
        return self.basis @ self.mix

    @property
    def intercept(self) -> np.ndarray:
        return self.offset @ self.mix + self.shift

    @staticmethod
    def stack(parts: list[Linear]) -> Linear:
        """Candidates of several families side by side (block-diagonal mixing)."""
        return Linear(basis=np.hstack([p.basis for p in parts]),
                      offset=np.concatenate([p.offset for p in parts]),
                      mix=scipy.linalg.block_diag(*[p.mix for p in parts]),
                      shift=np.concatenate([p.shift for p in parts]))


def _cell_sets(stats: Moments, search: Search) -> list[list[np.ndarray]]:
    """Comparison classes of cell sets whose mean scores the constraint equalises."""
    J = stats.n_groups
    group, label = stats.cell_group, stats.cell_label
    if search.constraint == "equalized_odds":
        return [[np.flatnonzero((group == g) & (label == v)) for g in range(J)]
                for v in (0, 1)]
    return [[np.flatnonzero(group == g) for g in range(J)]]


def _reduction(stats: Moments, search: Search, scale: float) -> tuple[list[dict], Linear]:
    q = len(stats.counts)
    reg = search.task == "regression"
    P = q + reg                     # basis columns: [label regression] + one per cell
    p_cell = stats.counts / stats.n
    # the base score: η̂ = Σ of the positive cells' posteriors (classification), ŷ (regression)
    base = np.zeros(P)
    base[[0] if reg else np.flatnonzero(stats.cell_label == 1)] = 1.0
    # constraint features φ_c as combinations of the basis columns plus a constant
    sets = _cell_sets(stats, search)
    phi, phi0 = [], []
    for comparison in sets:
        union = np.concatenate(comparison)
        p_union = p_cell[union].sum()
        for cells in comparison:
            v = np.zeros(P)
            v[cells + reg] = 1.0 / max(p_cell[cells].sum(), 1e-300)
            if search.constraint == "equalized_odds":
                v[union + reg] -= 1.0 / p_union
            phi.append(v)
            phi0.append(0.0 if search.constraint == "equalized_odds" else -1.0)
    Phi, phi0 = np.array(phi).T, np.array(phi0)        # (P, C), (C,)
    rows, parts = [], []
    for alpha in search.alphas:
        coef, icpt = ridge_fit(stats, alpha, targets="cells", scale=scale)
        if reg:
            cy, by = ridge_fit(stats, alpha, targets="y", scale=scale)
            coef, icpt = np.column_stack([cy, coef]), np.r_[by, icpt]
        # mean of every basis column over every cell set (training rows)
        means = []
        for comparison in sets:
            for cells in comparison:
                n_set = stats.counts[cells].sum()
                means.append((stats.sums[cells].sum(axis=0) @ coef + n_set * icpt)
                             / max(n_set, 1e-300))
        means = np.array(means)                          # (sets, P)
        a = means @ base
        Fm = means @ Phi + phi0                          # mean of φ_c over each set
        # λ* equalises the mean score within each comparison class (min-norm solution)
        N, e, start = [], [], 0
        for comparison in sets:
            for i in range(1, len(comparison)):
                N.append(0.5 * (Fm[start + i] - Fm[start]))
                e.append(a[start + i] - a[start])
            start += len(comparison)
        lam = (np.linalg.lstsq(np.array(N), np.array(e), rcond=None)[0]
               if N else np.zeros(Phi.shape[1]))
        mix = np.array([base - 0.5 * t * (Phi @ lam) for t in search.strengths]).T
        shift = np.array([-0.5 * t * (phi0 @ lam) for t in search.strengths])
        parts.append(Linear(basis=coef, offset=icpt, mix=mix, shift=shift))
        rows += [{"family": "reduction", "relative_alpha": alpha, "strength": t,
                  "n_fair_features": None, "fairness_weight": None} for t in search.strengths]
    return rows, Linear.stack(parts)


def _embedding(stats: Moments, search: Search, scale: float) -> tuple[list[dict], Linear]:
    rows, coefs, icpts = [], [], []
    kmax = max(search.components)
    kpca = np.linalg.eigh(stats.covariance()) if any(
        g is not None for g in search.fairness) else None
    for gamma in search.fairness:
        W, _ = mean_discrepancy_directions(stats, kmax, gamma, kpca=kpca)
        top = stats.change_basis(W)
        for k in search.components:
            sub = top.change_basis(np.eye(top.sums.shape[1])[:, :k])  # the first k features
            for alpha in search.alphas:
                beta, b = ridge_fit(sub, alpha, targets="y", scale=scale)
                coefs.append(W[:, :k] @ beta)
                icpts.append(b)
                rows.append({"family": "embedding", "relative_alpha": alpha, "strength": None,
                             "n_fair_features": k, "fairness_weight": gamma})
    K = len(coefs)
    return rows, Linear(basis=np.array(coefs).T, offset=np.array(icpts), mix=np.eye(K),
                        shift=np.zeros(K))


def embedding_components(stats: Moments, search: Search) -> tuple[int, ...]:
    """The k grid, capped at what the exact constraint leaves (duplicates dropped)."""
    cap = constrained_rank(stats) if None in search.fairness else stats.sums.shape[1]
    if cap < 1:
        raise ValueError("the kernel feature map has no direction left once the group means "
                         "are matched; drop the exact constraint from the fairness grid.")
    return tuple(sorted({min(int(k), cap) for k in search.components}))


def build_candidates(stats: Moments, search: Search, scale: float
                     ) -> tuple[list[dict[str, Any]], Linear]:
    """(parameters, scores) of every candidate fitted on ``stats``, in ``search``'s order."""
    rows, parts = [], []
    for family in search.families:
        r, lin = (_reduction if family == "reduction" else _embedding)(stats, search, scale)
        rows += r
        parts.append(lin)
    return rows, Linear.stack(parts)
