"""Logistic loss on the fair features by Newton's method (docs/design.md#fkr-logistic-loss)."""

from __future__ import annotations

import logging
from typing import Any

import numpy as np
from scipy.special import expit, log_expit

from .._blocks import block_sum
from ..kernels import kernel_block
from .ridge import solve_spd

__all__ = ["logistic_newton"]

logger = logging.getLogger(__name__)


def _block_newton(X: np.ndarray, y: np.ndarray, w: np.ndarray | None, *, landmarks: np.ndarray,
                  params: dict[str, Any], projection: np.ndarray, theta: np.ndarray
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Block function: Hessian, gradient and loss of the weighted log-likelihood."""
    F = kernel_block(X, landmarks, params) @ projection
    F = np.column_stack([F, np.ones(len(F))])
    eta = F @ theta
    p = expit(eta)
    w = np.ones(len(F)) if w is None else w
    loss = -(w * (y * log_expit(eta) + (1 - y) * log_expit(-eta))).sum()
    curvature = w * p * (1 - p)
    hess = (F * curvature[:, None]).T @ F
    grad = F.T @ (w * (y - p))
    return hess, grad, np.array([loss])


def logistic_newton(X: Any, y: Any, weights: Any, landmarks: np.ndarray, params: dict[str, Any],
                    projection: np.ndarray, start: np.ndarray, *, penalty: float,
                    max_iter: int = 25, tol: float = 1e-8) -> tuple[np.ndarray, int, bool]:
    """(θ = (β, b), passes, converged): Newton on Σ w·logloss + (penalty/2)·‖β‖², one pass each."""
    theta = np.asarray(start, dtype=np.float64).copy()
    k = len(theta) - 1
    reg = np.diag(np.r_[np.full(k, penalty), 0.0])
    previous, base, step = np.inf, theta, None
    for it in range(1, max_iter + 1):
        hess, grad, loss = block_sum(
            _block_newton, X, y, weights, landmarks=landmarks, params=params,
            projection=projection, theta=theta, row_width=len(landmarks))
        objective = float(loss[0]) + 0.5 * penalty * float(theta[:k] @ theta[:k])
        logger.debug("logistic Newton step %d: objective %.10g", it, objective)
        if step is not None and objective > previous:
            # the full step overshot: halve it (the objective is convex, so this ends)
            step = step / 2
            theta = base + step
            continue
        if previous - objective <= tol * max(abs(objective), 1.0):
            return theta, it, True
        previous, base = objective, theta
        step = solve_spd(hess + reg, grad - reg @ theta)
        theta = theta + step
    return base, max_iter, False
