"""Fair feature embedding in kernel space (FKR-F²E, Okray, Hu & Lan 2019) from moments: the
paper's eq. (17)/(18) as a symmetric r × r eigenproblem (docs/design.md#fkr-feature-maps)
and the literal mean discrepancy of eq. (3) for J groups
(docs/design.md#any-number-of-groups)."""

from __future__ import annotations

import numpy as np
import scipy.linalg

from .statistics import Moments

__all__ = [
    "OBJECTIVES",
    "between_groups",
    "constrained_rank",
    "fair_directions",
    "mean_discrepancy_directions",
    "paper_directions",
    "paper_matrix",
]

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
    """D = [√p_g (z̄_g − z̄)]_g of shape (p, J): D Dᵀ is the between-group covariance.

    Dᵀw = 0 exactly when every group's mean of the feature wᵀz equals the overall mean.
    """
    p = stats.group_counts / stats.n
    return ((stats.group_means - stats.mean) * np.sqrt(p)[:, None]).T


def _check_k(k: int, available: int, what: str) -> None:
    if k < 1:
        raise ValueError(f"n_fair_features must be >= 1, got {k}.")
    if k > available:
        raise ValueError(
            f"n_fair_features={k} is larger than the {what} ({available}). Use at most "
            f"{available} fair features, or more landmarks / a kernel of higher rank."
        )


def paper_directions(stats: Moments, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The k least eigenvectors of S (eq. 6 posed on the range of K).

    Returns
    -------
    W : ndarray of shape (r, k)
        Orthonormal directions w (η = Σ αᵢ φ(xᵢ) with w = Zᵀα, ‖η‖ = 1: eq. 5).
    values : ndarray of shape (k,)
        Their eigenvalues J(α), increasing.
    """
    S = paper_matrix(stats)
    _check_k(k, S.shape[0], "rank of the kernel feature map")
    values, vectors = np.linalg.eigh(S)
    return vectors[:, :k], values[:k]


def constrained_rank(stats: Moments) -> int:
    """Directions left after the exact mean constraint: r − rank(D)."""
    return stats.sums.shape[1] - _constraint_basis(stats).shape[1]


def _constraint_basis(stats: Moments) -> np.ndarray:
    # orthonormal basis of range(D); singular values at rounding level are no constraint
    U, sv, _ = np.linalg.svd(between_groups(stats), full_matrices=False)
    if sv.size == 0 or sv[0] == 0:
        return U[:, :0]
    return U[:, sv > 1e-12 * max(sv[0], np.sqrt(np.trace(stats.covariance())))]


def mean_discrepancy_directions(
    stats: Moments, k: int, fairness: float | None = None,
    kpca: tuple[np.ndarray, np.ndarray] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Largest-variance directions with equal group means: the literal eq. (3), J groups.

    ``fairness=None`` maximises wᵀΣw over orthonormal w with Dᵀw = 0 (kernel PCA in the
    mean-matched subspace); a number γ ≥ 0 maximises wᵀ(Σ − γ·s·D Dᵀ)w, s the scale that
    makes γ mean the same for any data (docs/design.md#any-number-of-groups). ``kpca`` may
    hold ``numpy.linalg.eigh`` of the covariance, computed once for several γ.

    Returns
    -------
    W : ndarray of shape (r, k)
    values : ndarray of shape (k,)
        The maximised objective per direction, decreasing.
    """
    cov = stats.covariance()
    r = cov.shape[0]
    if fairness is None:
        U = _constraint_basis(stats)
        _check_k(k, r - U.shape[1], "rank of the feature map minus the constrained directions")
        # an orthonormal basis of the complement of range(D): the constraint holds exactly
        Q = scipy.linalg.null_space(U.T) if U.shape[1] else np.eye(r)
        values, vectors = np.linalg.eigh(Q.T @ cov @ Q)
        return Q @ vectors[:, ::-1][:, :k], values[::-1][:k]
    if not fairness >= 0:
        raise ValueError(f"fairness must be >= 0 or None, got {fairness}.")
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


def fair_directions(
    stats: Moments, k: int, objective: str = "mean_discrepancy", fairness: float | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Dispatch to :func:`mean_discrepancy_directions` or :func:`paper_directions`."""
    if objective == "paper":
        if fairness is not None:
            raise ValueError(
                "fairness_weight applies to objective='mean_discrepancy' only; the paper "
                "objective has no trade-off parameter (vary n_fair_features instead)."
            )
        return paper_directions(stats, k)
    if objective == "mean_discrepancy":
        return mean_discrepancy_directions(stats, k, fairness)
    raise ValueError(f"unknown objective {objective!r}; choose one of {OBJECTIVES}.")
