"""FKR-F²E's fair directions from moments (docs/design.md#any-number-of-groups)."""

from __future__ import annotations

import numpy as np
import scipy.linalg

from .statistics import Moments

__all__ = ["OBJECTIVES", "between_groups", "constrained_rank", "mean_discrepancy_directions",
           "paper_directions", "paper_matrix"]

OBJECTIVES = ("mean_discrepancy", "paper")


def paper_matrix(stats: Moments) -> np.ndarray:
    """S of eq. (17)/(18) in the feature basis, cross term symmetrised (two groups only)."""
    if stats.n_groups != 2:
        raise ValueError(
            f"objective='paper' (the paper's eq. 17/18) is defined for two groups, got "
            f"{stats.n_groups}. Use objective='mean_discrepancy', which takes any number.")
    nu, npr = stats.group_counts
    grams = stats.group_grams
    mu_u, mu_p = stats.group_means
    S = grams[0] / nu**2 + grams[1] / npr**2
    S -= np.outer(mu_u, mu_p) + np.outer(mu_p, mu_u)
    return 0.5 * (S + S.T)


def between_groups(stats: Moments) -> np.ndarray:
    """D = [√p_g (z̄_g − z̄)]_g of shape (p, J): Dᵀw = 0 when wᵀz has equal group means."""
    p = stats.group_counts / stats.n
    return ((stats.group_means - stats.mean) * np.sqrt(p)[:, None]).T


def _check_k(k: int, available: int, what: str) -> None:
    if k > available:
        raise ValueError(
            f"n_fair_features={k} is larger than the {what} ({available}). Use at most "
            f"{available} fair features, or more landmarks / a kernel of higher rank.")


def paper_directions(stats: Moments, k: int) -> tuple[np.ndarray, np.ndarray]:
    """(W of shape (r, k), eigenvalues increasing): the k least eigenvectors of S (eq. 6)."""
    S = paper_matrix(stats)
    _check_k(k, S.shape[0], "rank of the kernel feature map")
    values, vectors = np.linalg.eigh(S)
    return vectors[:, :k], values[:k]


def constrained_rank(stats: Moments) -> int:
    """Directions left after the exact mean constraint: r − rank(D)."""
    return stats.sums.shape[1] - _constraint_basis(stats).shape[1]


def _constraint_basis(stats: Moments) -> np.ndarray:
    """Orthonormal basis of range(D) (singular values at rounding level are no constraint)."""
    U, sv, _ = np.linalg.svd(between_groups(stats), full_matrices=False)
    if sv.size == 0 or sv[0] == 0:
        return U[:, :0]
    return U[:, sv > 1e-12 * max(sv[0], np.sqrt(np.trace(stats.covariance())))]


def mean_discrepancy_directions(stats: Moments, k: int, fairness: float | None = None,
                                kpca: tuple[np.ndarray, np.ndarray] | None = None
                                ) -> tuple[np.ndarray, np.ndarray]:
    """(W of shape (r, k), objective values decreasing): the largest-variance directions with
    equal group means (``fairness=None``) or of wᵀ(Σ − γ·s·D Dᵀ)w; ``kpca``: eigh(Σ) if known."""
    cov = stats.covariance()
    r = cov.shape[0]
    if fairness is None:
        U = _constraint_basis(stats)
        _check_k(k, r - U.shape[1], "rank of the feature map minus the constrained directions")
        # an orthonormal basis of the complement of range(D): Dᵀw = 0 exactly
        Q = scipy.linalg.null_space(U.T) if U.shape[1] else np.eye(r)
        values, vectors = np.linalg.eigh(Q.T @ cov @ Q)
        return Q @ vectors[:, ::-1][:, :k], values[::-1][:k]
    _check_k(k, r, "rank of the kernel feature map")
    D = between_groups(stats)
    B = D @ D.T
    values, vectors = np.linalg.eigh(cov) if kpca is None else kpca
    top = vectors[:, ::-1][:, :k]  # the unconstrained solution: kernel PCA
    captured = float(np.linalg.norm(D.T @ top) ** 2)
    if captured > 0:
        cov = cov - fairness * (float(values[::-1][:k].sum()) / captured) * B
        values, vectors = np.linalg.eigh(0.5 * (cov + cov.T))
    return vectors[:, ::-1][:, :k], values[::-1][:k]

