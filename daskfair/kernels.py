"""Kernels as pure functions of two row blocks, with scikit-learn's parameter conventions.

Each kernel maps two row blocks ``X (a, d)`` and ``Y (b, d)`` to the block ``K (a, b)``. The
linear, polynomial and sigmoid kernels are scikit-learn's (:mod:`sklearn.metrics.pairwise`,
already pure two-block functions); the rbf kernel is written here for its translation-safe
distance. The parameters follow :func:`sklearn.metrics.pairwise_kernels`: ``gamma`` defaults
to ``1 / n_features`` for the polynomial, sigmoid and rbf kernels, ``coef0`` to 1 and
``degree`` to 3. The FKR-F²E paper's "additive coefficient" c is ``coef0``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from sklearn.metrics.pairwise import linear_kernel, polynomial_kernel, sigmoid_kernel

__all__ = ["KERNELS", "kernel_block", "kernel_params"]


def _linear(X: np.ndarray, Y: np.ndarray, **_: Any) -> np.ndarray:
    # k(x, y) = x·y
    return linear_kernel(X, Y)


def _polynomial(
    X: np.ndarray, Y: np.ndarray, *, gamma: float, degree: float, coef0: float, **_: Any
) -> np.ndarray:
    # k(x, y) = (γ x·y + c)^degree
    return polynomial_kernel(X, Y, degree=degree, gamma=gamma, coef0=coef0)


def _sigmoid(
    X: np.ndarray, Y: np.ndarray, *, gamma: float, coef0: float, **_: Any
) -> np.ndarray:
    # k(x, y) = tanh(γ x·y + c)
    return sigmoid_kernel(X, Y, gamma=gamma, coef0=coef0)


def _rbf(X: np.ndarray, Y: np.ndarray, *, gamma: float, **_: Any) -> np.ndarray:
    # k(x, y) = exp(-γ ‖x − y‖²), with ‖x − y‖² = ‖x‖² + ‖y‖² − 2 x·y clipped at 0, after
    # shifting both sides by Y's mean: a large common offset would cancel the three terms
    # (scikit-learn's rbf_kernel does not shift: docs/findings.md F1.4). Y is the fixed side
    # (landmarks), so the shift does not depend on how X is chunked.
    shift = Y.mean(axis=0)
    X, Y = X - shift, Y - shift
    K = X @ Y.T
    K *= -2.0
    K += np.einsum("ij,ij->i", X, X)[:, None]
    K += np.einsum("ij,ij->i", Y, Y)[None, :]
    np.maximum(K, 0.0, out=K)
    K *= -gamma
    return np.exp(K, out=K)


#: Registry of kernels by name; each entry is a pure function of two numpy blocks.
KERNELS: dict[str, Callable[..., np.ndarray]] = {
    "linear": _linear,
    "polynomial": _polynomial,
    "poly": _polynomial,
    "sigmoid": _sigmoid,
    "rbf": _rbf,
}


def kernel_params(
    kernel: str,
    n_features: int,
    *,
    gamma: float | None = None,
    degree: float = 3,
    coef0: float = 1.0,
) -> dict[str, Any]:
    """Resolve a kernel's parameters (scikit-learn defaults) into a dict for :func:`kernel_block`.

    Parameters
    ----------
    kernel : {"linear", "polynomial", "poly", "sigmoid", "rbf"}
        The kernel's name (a key of :data:`KERNELS`).
    n_features : int
        Number of input features (``gamma`` defaults to its inverse).
    gamma : float, default=None
        The kernel coefficient of the polynomial, sigmoid and rbf kernels; None:
        ``1 / n_features``.
    degree : float, default=3
        The polynomial kernel's degree, a positive integer.
    coef0 : float, default=1.0
        The additive constant of the polynomial and sigmoid kernels.

    Returns
    -------
    dict
        ``kernel``, ``gamma``, ``degree`` and ``coef0``, resolved.

    Raises
    ------
    ValueError
        An unknown kernel, a non-positive ``gamma`` for rbf, or a polynomial ``degree`` that
        is not a positive integer.

    See Also
    --------
    kernel_block : The kernel of two row blocks with these parameters.
    sklearn.metrics.pairwise_kernels : The same parameters.
    """
    if kernel not in KERNELS:
        raise ValueError(f"unknown kernel {kernel!r}; choose one of {sorted(KERNELS)}.")
    if gamma is None:
        gamma = 1.0 / n_features
    if gamma <= 0 and kernel in ("rbf",):
        raise ValueError(f"gamma must be positive for the rbf kernel, got {gamma}.")
    if kernel in ("polynomial", "poly") and (degree < 1 or degree != int(degree)):
        raise ValueError(f"degree must be a positive integer, got {degree}.")
    return {"kernel": kernel, "gamma": float(gamma), "degree": degree, "coef0": float(coef0)}


def kernel_block(X: np.ndarray, Y: np.ndarray, params: dict[str, Any]) -> np.ndarray:
    """The kernel block ``k(X, Y)`` of shape (len(X), len(Y)) for resolved ``params``.

    Parameters
    ----------
    X : ndarray of shape (n_x, n_features)
        Rows.
    Y : ndarray of shape (n_y, n_features)
        Rows (landmarks, say).
    params : dict
        From :func:`kernel_params`.

    Returns
    -------
    ndarray of shape (n_x, n_y)
        The kernel values.

    See Also
    --------
    kernel_params : Resolves ``params``.

    Examples
    --------
    >>> import numpy as np
    >>> from daskfair.kernels import kernel_block, kernel_params
    >>> kernel_block(np.zeros((2, 3)), np.ones((1, 3)), kernel_params("linear", 3))
    array([[0.],
           [0.]])
    """
    return KERNELS[params["kernel"]](X, Y, **params)
