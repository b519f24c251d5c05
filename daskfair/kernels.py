"""Kernels as pure functions of two row blocks ``X (a, d)``, ``Y (b, d)`` → ``K (a, b)``, with
the parameters of :func:`sklearn.metrics.pairwise_kernels` (docs/design.md#fkr-feature-maps)."""

from __future__ import annotations

import math
from collections.abc import Callable
from numbers import Real
from typing import Any

import numpy as np
from sklearn.metrics.pairwise import linear_kernel, polynomial_kernel, sigmoid_kernel

__all__ = ["KERNELS", "MAX_DEGREE", "kernel_block", "kernel_params"]

#: The largest degree of the polynomial kernel.
MAX_DEGREE = 100


def _linear(X: np.ndarray, Y: np.ndarray, **_: Any) -> np.ndarray:
    # k(x, y) = x·y
    return linear_kernel(X, Y)


def _polynomial(X: np.ndarray, Y: np.ndarray, *, gamma: float, degree: float, coef0: float,
                **_: Any) -> np.ndarray:
    # k(x, y) = (γ x·y + c)^degree
    return polynomial_kernel(X, Y, degree=degree, gamma=gamma, coef0=coef0)


def _sigmoid(X: np.ndarray, Y: np.ndarray, *, gamma: float, coef0: float, **_: Any
             ) -> np.ndarray:
    # k(x, y) = tanh(γ x·y + c)
    return sigmoid_kernel(X, Y, gamma=gamma, coef0=coef0)


def _rbf(X: np.ndarray, Y: np.ndarray, *, gamma: float, **_: Any) -> np.ndarray:
    # k(x, y) = exp(-γ ‖x − y‖²), ‖x − y‖² = ‖x‖² + ‖y‖² − 2 x·y clipped at 0, both sides
    # shifted by the fixed Y's mean against cancellation (docs/findings.md F1.4)
    shift = Y.mean(axis=0)
    X, Y = X - shift, Y - shift
    K = X @ Y.T
    K *= -2.0
    K += np.einsum("ij,ij->i", X, X)[:, None]
    K += np.einsum("ij,ij->i", Y, Y)[None, :]
    np.maximum(K, 0.0, out=K)
    K *= -gamma
    return np.exp(K, out=K)


KERNELS: dict[str, Callable[..., np.ndarray]] = {
    "linear": _linear,
    "polynomial": _polynomial,
    "poly": _polynomial,
    "sigmoid": _sigmoid,
    "rbf": _rbf,
}


def kernel_params(kernel: str, n_features: int, *, gamma: float | None = None,
                  degree: float = 3, coef0: float = 1.0) -> dict[str, Any]:
    """Resolve a kernel's parameters (scikit-learn's defaults) for :func:`kernel_block`.

    Parameters
    ----------
    kernel : {"linear", "polynomial", "poly", "sigmoid", "rbf"}
        The kernel's name.
    n_features : int
        Number of input features.
    gamma : float, default=None
        Coefficient of the polynomial, sigmoid and rbf kernels, finite (positive for rbf);
        None: ``1 / n_features``.
    degree : float, default=3
        The polynomial kernel's degree, an integer from 1 to :data:`MAX_DEGREE` (100).
    coef0 : float, default=1.0
        Additive constant of the polynomial and sigmoid kernels (the paper's c).

    Returns
    -------
    dict
        ``kernel``, ``gamma``, ``degree`` and ``coef0``, resolved.

    Raises
    ------
    ValueError
        On an unknown kernel or a bad parameter (the message says which).
    """
    if not isinstance(kernel, str) or kernel not in KERNELS:
        raise ValueError(f"unknown kernel {kernel!r}; choose one of {sorted(KERNELS)}.")
    if gamma is None:
        gamma = 1.0 / n_features
    for name, value in (("gamma", gamma), ("coef0", coef0), ("degree", degree)):
        if isinstance(value, bool) or not isinstance(value, Real) or not math.isfinite(value):
            raise ValueError(f"{name} must be a finite number, got {value!r}.")
    if gamma <= 0 and kernel in ("rbf",):
        raise ValueError(f"gamma must be positive for the rbf kernel, got {gamma}.")
    if kernel in ("polynomial", "poly") and not (
            degree == int(degree) and 1 <= degree <= MAX_DEGREE):
        raise ValueError(f"degree must be an integer from 1 to {MAX_DEGREE}, got {degree}: "
                         "higher degrees overflow float64 for most inputs.")
    return {"kernel": kernel, "gamma": float(gamma), "degree": degree, "coef0": float(coef0)}


def kernel_block(X: np.ndarray, Y: np.ndarray, params: dict[str, Any]) -> np.ndarray:
    """The kernel block ``k(X, Y)``.

    Parameters
    ----------
    X : ndarray of shape (n_x, n_features)
    Y : ndarray of shape (n_y, n_features)
    params : dict
        From :func:`kernel_params`.

    Returns
    -------
    ndarray of shape (n_x, n_y)
    """
    return KERNELS[params["kernel"]](X, Y, **params)
