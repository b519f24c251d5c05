"""Independent dense references for FKR-F²E and FKRR (n × n, scipy/numpy only).

They follow the seed's formulation directly (eq. 6 with M of eq. 18, cross term symmetrised),
posed on the range of K as docs/design.md#fkr-range-of-k prescribes: K = UΛUᵀ, keep
Λ > tol·max Λ, solve eigh(U_rᵀ M U_r, Λ_r).
"""

import numpy as np
import scipy.linalg
from sklearn.linear_model import Ridge
from sklearn.metrics.pairwise import pairwise_kernels


def dense_fkr_predict(X, y, s, Xt, k, alpha, tol=1e-10, **kernel):
    K = pairwise_kernels(X, **kernel)
    lam, U = np.linalg.eigh(K)
    keep = lam > tol * lam.max()
    Ur, Lr = U[:, keep], lam[keep]
    Ku, Kp = K[s == 0], K[s == 1]
    mu_u, mu_p = Ku.mean(axis=0), Kp.mean(axis=0)
    M = Ku.T @ Ku / len(Ku) ** 2 + Kp.T @ Kp / len(Kp) ** 2
    M -= np.outer(mu_u, mu_p) + np.outer(mu_p, mu_u)
    _, V = scipy.linalg.eigh(Ur.T @ M @ Ur, np.diag(Lr))
    A = Ur @ V[:, :k]  # the k least generalized eigenvectors α
    ridge = Ridge(alpha=alpha).fit(K @ A, y)
    return ridge.predict(pairwise_kernels(Xt, X, **kernel) @ A)


def dense_fkrr_predict(X, y, s, Xt, mu, alpha, tol=1e-10, **kernel):
    # min ‖H(y − Zw)‖² + α‖w‖² + μ (sᵀHZw)² as one least-squares problem on an augmented
    # system, with the exact feature map Z = U_r Λ_r^{1/2}.
    K = pairwise_kernels(X, **kernel)
    lam, U = np.linalg.eigh(K)
    keep = lam > tol * lam.max()
    Ur, Lr = U[:, keep], lam[keep]
    Z = Ur * np.sqrt(Lr)
    Zc, yc = Z - Z.mean(axis=0), y - y.mean()
    sc = s - s.mean()
    A = np.vstack([Zc, np.sqrt(alpha) * np.eye(Z.shape[1]), np.sqrt(mu) * (sc @ Zc)[None]])
    b = np.concatenate([yc, np.zeros(Z.shape[1] + 1)])
    w = np.linalg.lstsq(A, b, rcond=None)[0]
    intercept = y.mean() - Z.mean(axis=0) @ w
    Zt = pairwise_kernels(Xt, X, **kernel) @ (Ur / np.sqrt(Lr))
    return Zt @ w + intercept


def absolute_alpha(K, alpha, tol=1e-10):
    """daskfair's relative ridge penalty in absolute units: α · tr(K) on the range of K (the
    eigenvalues above ``tol`` · max, as the feature map keeps them)."""
    lam = np.linalg.eigvalsh(K)
    return alpha * lam[lam > tol * lam.max()].sum()


def absolute_mu(K, s, mu):
    """daskfair's relative FKRR penalty for a 0/1 group vector s, in the units of
    ``dense_fkrr_predict`` (μ (sᵀHZw)²): μ · sᵀHKHKHs / (sᵀHKHs)²."""
    n = len(K)
    H = np.eye(n) - 1.0 / n
    v = H @ s
    return mu * (v @ K @ H @ K @ v) / (v @ K @ v) ** 2
