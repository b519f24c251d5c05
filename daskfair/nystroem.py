"""Nyström feature maps ``Z = k(X, L) T`` with ``Z Zᵀ ≈ K`` on row-chunked arrays; exact with
every row a landmark (docs/design.md#fkr-feature-maps)."""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

import dask.array as da
import numpy as np

from ._blocks import canonical_rows
from ._random import as_seed_sequence, child_rng
from ._validation import is_dask
from .kernels import kernel_block

__all__ = ["NystroemMap", "fit_nystroem", "select_landmarks", "whitening"]

LANDMARK_METHODS = ("uniform", "kmeans++")
MIN_LANDMARK_BLOCKS = 8  # landmarks come from a seeded sample of at least this many blocks


def landmark_pool(n_rows: int, n_landmarks: int, landmarks: str, width: int,
                  rng: np.random.Generator) -> np.ndarray:
    """Sorted row indices of a seeded sample of canonical row blocks to draw landmarks from."""
    bounds = np.cumsum((0, *canonical_rows(n_rows, width)))
    need = n_landmarks if landmarks == "uniform" else 20 * n_landmarks
    order = rng.permutation(len(bounds) - 1)
    sizes = np.diff(bounds)[order]
    take = max(MIN_LANDMARK_BLOCKS, int(np.searchsorted(np.cumsum(sizes), need)) + 1)
    chosen = np.sort(order[:take])
    return np.concatenate([np.arange(bounds[b], bounds[b + 1]) for b in chosen])


def select_landmarks(X: np.ndarray | da.Array, n_landmarks: int, *, landmarks: str = "uniform",
                     random_state: Any = None, row_width: int | None = None) -> np.ndarray:
    """Choose landmark rows of ``X``; they depend on the seed and the shape, not the chunks.

    Parameters
    ----------
    X : ndarray or dask array of shape (n_samples, n_features)
        The data.
    n_landmarks : int
        Number of landmarks m; ``m >= n_samples`` returns every row.
    landmarks : {"uniform", "kmeans++"}, default="uniform"
        Uniform rows, or k-means++ seeding on ``20 m`` rows, from a sample of row blocks.
    random_state : int, RandomState, Generator, SeedSequence or None, default=None
        Seeds the draw.
    row_width : int, default=None
        Values per row of the pass the landmarks feed (sets the blocks); None: m.

    Returns
    -------
    ndarray of shape (min(m, n_samples), n_features)
        The landmark rows, in the order of the data.

    Raises
    ------
    ValueError
        On an unknown ``landmarks`` or ``n_landmarks`` below 1.
    """
    n = X.shape[0]
    if landmarks not in LANDMARK_METHODS:
        raise ValueError(f"unknown landmark method {landmarks!r}; choose one of "
                         f"{LANDMARK_METHODS}.")
    if n_landmarks < 1:
        raise ValueError(f"n_landmarks must be >= 1, got {n_landmarks}.")
    if n_landmarks >= n:
        return np.asarray(X.compute() if is_dask(X) else X)
    rng = child_rng(as_seed_sequence(random_state), 0)
    pool = landmark_pool(n, n_landmarks, landmarks, max(row_width or n_landmarks,
                                                        int(np.prod(X.shape[1:]))), rng)
    size = n_landmarks if landmarks == "uniform" else min(len(pool), 20 * n_landmarks)
    idx = np.sort(rng.choice(pool, size=size, replace=False))
    rows = X[idx]
    rows = np.asarray(rows.compute() if is_dask(rows) else rows)
    if landmarks == "uniform":
        return rows
    from sklearn.cluster import kmeans_plusplus

    _, chosen = kmeans_plusplus(rows, n_landmarks, random_state=int(rng.integers(2**31)))
    return rows[np.sort(chosen)]


def whitening(W: np.ndarray, rcond: float = 1e-10) -> tuple[np.ndarray, np.ndarray]:
    """``T = U_r Λ_r^{-1/2}`` from ``W = U Λ Uᵀ``, keeping eigenvalues above ``rcond · max Λ``.

    A negative part of the spectrum (an indefinite kernel) is dropped with a UserWarning.

    Parameters
    ----------
    W : ndarray of shape (m, m)
        The kernel matrix of the landmarks.
    rcond : float, default=1e-10
        Relative cut-off of the eigenvalues.

    Returns
    -------
    T : ndarray of shape (m, r)
        The whitening, ``Z = k(X, L) T``.
    eigenvalues : ndarray of shape (r,)
        The kept eigenvalues, in decreasing order.

    Raises
    ------
    ValueError
        If ``W`` has no positive (or a non-finite) eigenvalue.
    """
    W = 0.5 * (W + W.T)
    lam, U = np.linalg.eigh(W)
    lam, U = lam[::-1], U[:, ::-1]
    if not np.isfinite(lam).all() or lam[0] <= 0:
        raise ValueError(
            "the landmark kernel matrix has no positive eigenvalue; the kernel is degenerate on "
            "these data (check the kernel parameters and the feature scaling).")
    keep = lam > rcond * lam[0]
    negative = lam < -rcond * lam[0]
    if negative.any():
        share = float(np.abs(lam[negative]).sum() / np.abs(lam).sum())
        warnings.warn(
            f"the kernel is not positive semi-definite on the landmarks (sigmoid kernels are "
            f"indefinite): {int(negative.sum())} negative eigenvalues, down to "
            f"{lam[negative].min():.3g} ({share:.1%} of the spectrum's absolute mass), are "
            "dropped; the features represent the kernel's positive part only. Use a positive "
            "definite kernel (rbf, polynomial) to avoid this.", UserWarning, stacklevel=3)
    return U[:, keep] / np.sqrt(lam[keep]), lam[keep]


@dataclass(frozen=True)
class NystroemMap:
    """A fitted Nyström map ``z(x) = k(x, L) T``.

    Parameters
    ----------
    landmarks : ndarray of shape (m, n_features)
    whitening : ndarray of shape (m, r)
    eigenvalues : ndarray of shape (r,)
    params : dict
        Kernel parameters (:func:`daskfair.kernels.kernel_params`).
    """

    landmarks: np.ndarray
    whitening: np.ndarray
    eigenvalues: np.ndarray
    params: dict[str, Any]

    @property
    def n_components(self) -> int:
        """r, the dimension of the feature map."""
        return self.whitening.shape[1]

    def kernel(self, X: np.ndarray) -> np.ndarray:
        """``k(X, L)`` for a numpy block.

        Parameters
        ----------
        X : ndarray of shape (n_rows, n_features)

        Returns
        -------
        ndarray of shape (n_rows, m)
        """
        return kernel_block(X, self.landmarks, self.params)

    def project(self, X: np.ndarray | da.Array, P: np.ndarray) -> np.ndarray | da.Array:
        """``k(X, L) @ P`` per row block (dask in, lazy dask out in ``X``'s row chunks).

        Parameters
        ----------
        X : ndarray or dask array of shape (n_samples, n_features)
        P : ndarray of shape (m, k)

        Returns
        -------
        ndarray or dask array of shape (n_samples, k)
        """
        if is_dask(X):
            return X.map_blocks(_project_block, self.landmarks, self.params, P,
                                dtype=np.float64, chunks=(X.chunks[0], (P.shape[1],)))
        return _project_block(np.asarray(X), self.landmarks, self.params, P)

    def transform(self, X: np.ndarray | da.Array) -> np.ndarray | da.Array:
        """The features ``Z = k(X, L) T`` (lazy for dask ``X``).

        Parameters
        ----------
        X : ndarray or dask array of shape (n_samples, n_features)

        Returns
        -------
        ndarray or dask array of shape (n_samples, r)
        """
        return self.project(X, self.whitening)


#: Rows of every kernel block a projection computes. One shape for every block (the last
#: padded with zero rows) makes a row's result the same bits whatever block, partition or
#: position it is in (docs/design.md#saved-models; tests/test_models.py checks it).
PROJECT_ROWS = 256


def _project_block(X: np.ndarray, landmarks: np.ndarray, params: dict[str, Any],
                   P: np.ndarray) -> np.ndarray:
    """``k(X, L) @ P``, in blocks of :data:`PROJECT_ROWS` rows."""
    n, R = len(X), PROJECT_ROWS
    out = np.empty((n, P.shape[1]), dtype=np.float64)
    for lo in range(0, n, R):
        part = X[lo:lo + R]
        if len(part) < R:
            part = np.concatenate([part, np.zeros((R - len(part), X.shape[1]), X.dtype)])
        out[lo:lo + R] = (kernel_block(part, landmarks, params) @ P)[:n - lo]
    return out


def fit_nystroem(X: np.ndarray | da.Array, params: dict[str, Any], *, n_landmarks: int,
                 landmarks: str = "uniform", rcond: float = 1e-10, random_state: Any = None,
                 fixed_landmarks: np.ndarray | None = None) -> NystroemMap:
    """Draw landmarks (or take ``fixed_landmarks``) and fit the Nyström map.

    Parameters
    ----------
    X : ndarray or dask array of shape (n_samples, n_features)
        The data the landmarks are drawn from.
    params : dict
        Kernel parameters (:func:`daskfair.kernels.kernel_params`).
    n_landmarks : int
        Number of landmarks m.
    landmarks : {"uniform", "kmeans++"}, default="uniform"
        How the landmarks are drawn (:func:`select_landmarks`).
    rcond : float, default=1e-10
        Relative cut-off of the landmark kernel's eigenvalues (:func:`whitening`).
    random_state : int, RandomState, Generator, SeedSequence or None, default=None
        Seeds the draw.
    fixed_landmarks : ndarray of shape (m, n_features), default=None
        Landmark rows to use instead of drawing them.

    Returns
    -------
    NystroemMap
        The fitted map.

    Raises
    ------
    ValueError
        On bad parameters, or a landmark kernel that is not finite or has no positive
        eigenvalue (the message says which).
    """
    L = (select_landmarks(X, n_landmarks, landmarks=landmarks, random_state=random_state)
         if fixed_landmarks is None else fixed_landmarks)
    W = kernel_block(L, L, params)
    if not np.isfinite(W).all():
        raise ValueError(
            "the kernel of the landmarks is not finite (the values overflow): scale the "
            "features first (e.g. min-max or standard scaling), or lower gamma/degree.")
    T, lam = whitening(W, rcond)
    return NystroemMap(landmarks=L, whitening=T, eigenvalues=lam, params=params)
