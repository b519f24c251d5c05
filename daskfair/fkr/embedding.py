"""Fair feature embedding in kernel space (FKR-F²E, Okray, Hu & Lan 2019), in one data pass.

With an explicit feature map Z (n × r, Z Zᵀ ≈ K) and η = Σ αᵢ φ(xᵢ), write w = Zᵀα; then
αᵀKα = ‖w‖² and αᵀKgᵀKgα = wᵀ(ZgᵀZg)w, so the seed's generalized eigenproblem (6) becomes the
symmetric r × r problem ``S w = λ w`` (DESIGN §2), with

    S = ZuᵀZu/nu² + ZpᵀZp/np² − (z̄u z̄pᵀ + z̄p z̄uᵀ),   z̄g = Zgᵀ1/ng,

which is eq. (17)/(18) with its non-symmetric cross term replaced by its symmetric part (the
quadratic form only sees that). Everything comes from per-group sufficient statistics of the
kernel block C = k(X, L), accumulated in one pass over row blocks; the whitening T is applied
afterwards on the client (ZgᵀZg = Tᵀ CgᵀCg T), so the pass costs one CᵀC.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .._blocks import block_sum
from ..kernels import kernel_block

__all__ = [
    "OBJECTIVES",
    "GroupStats",
    "fair_directions",
    "group_statistics",
    "mean_discrepancy_directions",
    "paper_directions",
    "paper_matrix",
]

OBJECTIVES = ("paper", "mean_discrepancy")


@dataclass(frozen=True)
class GroupStats:
    """Sufficient statistics of a binary-group data set in some feature basis.

    Attributes
    ----------
    counts : ndarray of shape (2,)
        n_u, n_p (rows with group code 0 and 1).
    sums : ndarray of shape (2, p)
        Σ of the features over each group.
    grams : ndarray of shape (2, p, p)
        Zgᵀ Zg per group.
    fy : ndarray of shape (p,)
        Zᵀ y (zeros without y).
    sum_y : float
        Σ y.
    """

    counts: np.ndarray
    sums: np.ndarray
    grams: np.ndarray
    fy: np.ndarray
    sum_y: float

    @property
    def n(self) -> int:
        return int(self.counts.sum())

    def change_basis(self, T: np.ndarray) -> GroupStats:
        """The same statistics for features ``Z T`` (T of shape (p, q))."""
        return GroupStats(
            counts=self.counts,
            sums=self.sums @ T,
            grams=np.einsum("pi,gpq,qj->gij", T, self.grams, T, optimize=True),
            fy=T.T @ self.fy,
            sum_y=self.sum_y,
        )

    @property
    def means(self) -> np.ndarray:
        """Group means z̄g, shape (2, p)."""
        return self.sums / self.counts[:, None]

    @property
    def gram(self) -> np.ndarray:
        """ZᵀZ over all rows."""
        return self.grams.sum(axis=0)

    def centered_covariance(self) -> np.ndarray:
        """(1/n) Σ (z − z̄)(z − z̄)ᵀ over all rows."""
        mean = self.sums.sum(axis=0) / self.n
        return self.gram / self.n - np.outer(mean, mean)


def _block_stats(
    X: np.ndarray,
    s: np.ndarray,
    y: np.ndarray | None,
    landmarks: np.ndarray,
    params: dict[str, Any],
) -> tuple[np.ndarray, ...]:
    # Pure per-block kernel: C = k(X_b, L) and its per-group moments. The (small) X block is
    # sorted by group before the kernel is evaluated, so each group's rows of C are a
    # contiguous view and no copy of C is ever made.
    order = np.argsort(s, kind="stable")
    n0 = int(np.count_nonzero(s == 0))
    C = kernel_block(X[order], landmarks, params)
    m = C.shape[1]
    counts = np.array([n0, C.shape[0] - n0], dtype=np.float64)
    sums = np.zeros((2, m))
    grams = np.zeros((2, m, m))
    for g, rows in enumerate((slice(0, n0), slice(n0, None))):
        Cg = C[rows]
        if Cg.shape[0]:
            sums[g] = Cg.sum(axis=0)
            grams[g] = Cg.T @ Cg  # numpy uses syrk for AᵀA: half the flops of a product
    if y is None:
        return counts, sums, grams, np.zeros(m), np.zeros(1)
    return counts, sums, grams, C.T @ y[order], np.array([y.sum()])


def group_statistics(
    X: Any, s: Any, y: Any, landmarks: np.ndarray, params: dict[str, Any]
) -> GroupStats:
    """One pass over the row blocks of ``X`` (numpy or dask): statistics of C = k(X, L).

    Parameters
    ----------
    X : ndarray or dask array of shape (n_samples, n_features)
    s : ndarray or dask array of shape (n_samples,)
        Group codes in {0, 1}.
    y : ndarray or dask array of shape (n_samples,), or None
    landmarks : ndarray of shape (m, n_features)
    params : dict
        Resolved kernel parameters.
    """
    counts, sums, grams, fy, sum_y = block_sum(
        _block_stats, X, s, y, landmarks=landmarks, params=params, row_width=len(landmarks)
    )
    return GroupStats(counts=counts, sums=sums, grams=grams, fy=fy, sum_y=float(sum_y[0]))


def paper_matrix(stats: GroupStats) -> np.ndarray:
    """S of eq. (17)/(18) in the feature basis, cross term symmetrised."""
    nu, npr = stats.counts
    mu_u, mu_p = stats.means
    S = stats.grams[0] / nu**2 + stats.grams[1] / npr**2
    S -= np.outer(mu_u, mu_p) + np.outer(mu_p, mu_u)
    return 0.5 * (S + S.T)


def _check_k(k: int, available: int, what: str) -> None:
    if k < 1:
        raise ValueError(f"n_components must be >= 1, got {k}.")
    if k > available:
        raise ValueError(
            f"n_components={k} is larger than the {what} ({available}). Use at most "
            f"{available} components, or more landmarks / a kernel of higher rank."
        )


def paper_directions(stats: GroupStats, k: int) -> tuple[np.ndarray, np.ndarray]:
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


def mean_discrepancy_directions(
    stats: GroupStats, k: int, fairness: float | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Largest-variance directions with (near) equal group means: the literal eq. (3).

    With C the centered covariance of Z and d = z̄u − z̄p, maximise wᵀ(C − γ d dᵀ)w over
    orthonormal w. ``fairness=None`` is the exact constraint dᵀw = 0 (kernel PCA in the
    mean-matched subspace); γ = 0 is plain kernel PCA; a growing γ traces the trade-off.

    Returns
    -------
    W : ndarray of shape (r, k)
    values : ndarray of shape (k,)
        The maximised objective per direction, decreasing.
    """
    C = stats.centered_covariance()
    d = stats.means[0] - stats.means[1]
    r = C.shape[0]
    if fairness is None:
        norm = np.linalg.norm(d)
        if norm > 0:
            u = d / norm
            P = np.eye(r) - np.outer(u, u)
            C = P @ C @ P
            r -= 1
        _check_k(k, r, "rank of the feature map minus the constrained direction")
    else:
        if fairness < 0:
            raise ValueError(f"fairness must be >= 0 or None, got {fairness}.")
        _check_k(k, r, "rank of the kernel feature map")
        C = C - fairness * np.outer(d, d)
    values, vectors = np.linalg.eigh(0.5 * (C + C.T))
    return vectors[:, ::-1][:, :k], values[::-1][:k]


def fair_directions(
    stats: GroupStats, k: int, objective: str = "paper", fairness: float | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Dispatch to :func:`paper_directions` or :func:`mean_discrepancy_directions`."""
    if objective == "paper":
        if fairness is not None:
            raise ValueError(
                "fairness applies to objective='mean_discrepancy' only; the paper objective "
                "has no trade-off parameter (vary n_components instead)."
            )
        return paper_directions(stats, k)
    if objective == "mean_discrepancy":
        return mean_discrepancy_directions(stats, k, fairness)
    raise ValueError(f"unknown objective {objective!r}; choose one of {OBJECTIVES}.")
