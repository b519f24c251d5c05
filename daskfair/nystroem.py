"""Nyström feature maps on row-chunked arrays (docs/design.md#fkr-feature-maps).

With landmarks L (m rows), W = k(L, L) = U Λ Uᵀ and C = k(X, L), the map
``Z = C T`` with ``T = U_r Λ_r^{-1/2}`` (eigenvalues below ``rcond · max Λ`` dropped) satisfies
``Z Zᵀ = C W⁺ Cᵀ ≈ K``. With all training points as landmarks it is exact: ``Z Zᵀ = K`` on the
range of K, which is how daskfair's "exact" mode works.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

import dask.array as da
import numpy as np

from ._blocks import align_rows, canonical_rows, numpy_blocks
from ._random import as_seed_sequence, child_rng
from ._validation import is_dask
from .kernels import kernel_block

__all__ = [
    "LANDMARK_METHODS",
    "NystroemMap",
    "fit_nystroem",
    "landmark_pool",
    "select_landmarks",
    "whitening",
]

LANDMARK_METHODS = ("uniform", "kmeans++")


#: Landmarks are drawn from a seeded sample of at least this many canonical row blocks.
MIN_LANDMARK_BLOCKS = 8


def landmark_pool(n_rows: int, n_landmarks: int, method: str, width: int,
                  rng: np.random.Generator) -> np.ndarray:
    """Row indices the landmarks are drawn from: every row of a seeded sample of blocks.

    The blocks are the canonical row blocks (:func:`daskfair._blocks.canonical_rows`), so
    the pool depends on the data's shape and the seed only, never on the chunking. Enough
    blocks are taken to hold the rows the method needs (m for "uniform", 20 m for
    "kmeans++"), and at least :data:`MIN_LANDMARK_BLOCKS`: a fraction of a pass, not one
    more read of every block (docs/design.md#fkr-feature-maps).

    Parameters
    ----------
    n_rows : int
        Rows of the data.
    n_landmarks : int
        m, the landmarks to draw.
    method : {"uniform", "kmeans++"}
        How the landmarks will be drawn from the pool.
    width : int
        Columns of the data (it sets the canonical block size).
    rng : numpy.random.Generator
        Draws the blocks.

    Returns
    -------
    ndarray of int
        The row indices of the pool, sorted.

    See Also
    --------
    select_landmarks : Draws the landmarks from this pool.
    """
    bounds = np.cumsum((0, *canonical_rows(n_rows, width)))
    n_blocks = len(bounds) - 1
    need = n_landmarks if method == "uniform" else 20 * n_landmarks
    order = rng.permutation(n_blocks)
    sizes = np.diff(bounds)[order]
    take = max(MIN_LANDMARK_BLOCKS, int(np.searchsorted(np.cumsum(sizes), need)) + 1)
    chosen = np.sort(order[:take])
    return np.concatenate([np.arange(bounds[b], bounds[b + 1]) for b in chosen])


def select_landmarks(
    X: np.ndarray | da.Array,
    n_landmarks: int,
    *,
    method: str = "uniform",
    random_state: Any = None,
    row_width: int | None = None,
) -> np.ndarray:
    """Choose landmark rows of ``X``.

    Parameters
    ----------
    X : ndarray or dask array of shape (n_samples, n_features)
        The data.
    n_landmarks : int
        Number of landmarks m; ``m >= n_samples`` returns every row (exact mode).
    method : {"uniform", "kmeans++"}, default="uniform"
        "uniform": m distinct rows drawn uniformly from the pool of :func:`landmark_pool`.
        "kmeans++": k-means++ seeding (:func:`sklearn.cluster.kmeans_plusplus`) run on
        ``min(pool, 20 m)`` rows of the pool, which spreads the landmarks over the data.
        The rows depend on the seed and the data's shape only, never on the chunking.
    random_state : int, RandomState, Generator, SeedSequence or None, default=None
        Seeds the draw (None: fresh entropy).
    row_width : int, default=None
        Values per row of the pass the landmarks feed (it sets the canonical blocks); None:
        ``n_landmarks``, as for a kernel block.

    Returns
    -------
    ndarray of shape (m, n_features)
        The landmark rows, in the order of the data (``min(m, n_samples)`` of them).

    Raises
    ------
    ValueError
        An unknown ``method``, or ``n_landmarks`` below 1.

    See Also
    --------
    fit_nystroem : Draws the landmarks and fits the map.
    """
    n = X.shape[0]
    if method not in LANDMARK_METHODS:
        raise ValueError(f"unknown landmark method {method!r}; choose one of {LANDMARK_METHODS}.")
    if n_landmarks < 1:
        raise ValueError(f"n_landmarks must be >= 1, got {n_landmarks}.")
    if n_landmarks >= n:
        return np.asarray(X.compute() if is_dask(X) else X)
    rng = child_rng(as_seed_sequence(random_state), 0)
    pool = landmark_pool(n, n_landmarks, method, max(row_width or n_landmarks,
                                                     int(np.prod(X.shape[1:]))), rng)
    size = n_landmarks if method == "uniform" else min(len(pool), 20 * n_landmarks)
    idx = np.sort(rng.choice(pool, size=size, replace=False))
    rows = X[idx]
    rows = np.asarray(rows.compute() if is_dask(rows) else rows)
    if method == "uniform":
        return rows
    from sklearn.cluster import kmeans_plusplus

    _, chosen = kmeans_plusplus(rows, n_landmarks, random_state=int(rng.integers(2**31)))
    return rows[np.sort(chosen)]


def whitening(W: np.ndarray, rcond: float = 1e-10) -> tuple[np.ndarray, np.ndarray]:
    """``T = U_r Λ_r^{-1/2}`` from ``W = U Λ Uᵀ``, keeping eigenvalues above ``rcond · max Λ``.

    An indefinite kernel (sigmoid) keeps only the positive part of its spectrum, with a
    :class:`UserWarning` saying how much was dropped (docs/design.md#fkr-feature-maps).

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
        ``W`` has no positive (or a non-finite) eigenvalue.
    """
    W = 0.5 * (W + W.T)
    lam, U = np.linalg.eigh(W)
    lam, U = lam[::-1], U[:, ::-1]
    if not np.isfinite(lam).all() or lam[0] <= 0:
        raise ValueError(
            "the landmark kernel matrix has no positive eigenvalue; the kernel is degenerate on "
            "these data (check the kernel parameters and the feature scaling)."
        )
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
        Resolved kernel parameters (:func:`daskfair.kernels.kernel_params`).
    """

    landmarks: np.ndarray
    whitening: np.ndarray
    eigenvalues: np.ndarray
    params: dict[str, Any]

    @property
    def n_components(self) -> int:
        """r, the dimension of the feature map (rank of the landmark kernel)."""
        return self.whitening.shape[1]

    def kernel(self, X: np.ndarray) -> np.ndarray:
        """``C = k(X, L)`` for a numpy block.

        Parameters
        ----------
        X : ndarray of shape (n_rows, n_features)
            A row block.

        Returns
        -------
        ndarray of shape (n_rows, m)
            The kernel between the rows and the landmarks.
        """
        return kernel_block(X, self.landmarks, self.params)

    def project(self, X: np.ndarray | da.Array, P: np.ndarray) -> np.ndarray | da.Array:
        """``k(X, L) @ P`` per row block: numpy in, numpy out; dask in, lazy dask out.

        Parameters
        ----------
        X : ndarray or dask array of shape (n_samples, n_features)
            Rows.
        P : ndarray of shape (m, k)
            The projection.

        Returns
        -------
        ndarray or dask array of shape (n_samples, k)
            The projected rows.
        """
        if is_dask(X):
            # computed on the canonical row blocks (the bits of a row's result may depend on
            # the size of its block), returned in the caller's row chunks
            (Xc,) = align_rows(X, row_width=len(self.landmarks))
            out = Xc.map_blocks(
                _project_block, self.landmarks, self.params, P,
                dtype=np.float64, chunks=(Xc.chunks[0], (P.shape[1],)),
            )
            return out if out.chunks[0] == X.chunks[0] else out.rechunk({0: X.chunks[0]})
        return np.concatenate([_project_block(b, self.landmarks, self.params, P)
                               for (b,) in numpy_blocks([X], len(self.landmarks))])

    def transform(self, X: np.ndarray | da.Array) -> np.ndarray | da.Array:
        """Features ``Z = k(X, L) T`` of shape (n_samples, r).

        Parameters
        ----------
        X : ndarray or dask array of shape (n_samples, n_features)
            Rows.

        Returns
        -------
        ndarray or dask array of shape (n_samples, r)
            The Nyström features.
        """
        return self.project(X, self.whitening)


def _project_block(
    X: np.ndarray, landmarks: np.ndarray, params: dict[str, Any], P: np.ndarray
) -> np.ndarray:
    return kernel_block(X, landmarks, params) @ P


def fit_nystroem(
    X: np.ndarray | da.Array,
    params: dict[str, Any],
    *,
    n_landmarks: int,
    method: str = "uniform",
    rcond: float = 1e-10,
    random_state: Any = None,
    landmarks: np.ndarray | None = None,
) -> NystroemMap:
    """Choose landmarks (or take ``landmarks``) and compute the clipped whitening ``W^{-1/2}``.

    Parameters
    ----------
    X : ndarray or dask array of shape (n_samples, n_features)
        The data the landmarks are drawn from.
    params : dict
        Resolved kernel parameters (:func:`daskfair.kernels.kernel_params`).
    n_landmarks : int
        m, the landmarks.
    method : {"uniform", "kmeans++"}, default="uniform"
        How the landmarks are drawn from the pool (:func:`select_landmarks`).
    rcond : float, default=1e-10
        Eigenvalues below ``rcond · max Λ`` are dropped (:func:`whitening`).
    random_state : int, RandomState, Generator, SeedSequence or None, default=None
        Seeds the draw.
    landmarks : ndarray of shape (m, n_features), default=None
        Landmarks to use instead of drawing them.

    Returns
    -------
    NystroemMap
        The fitted map.

    Raises
    ------
    ValueError
        The landmarks' kernel is not finite or has no positive eigenvalue; a bad ``method``
        or ``n_landmarks`` (:func:`select_landmarks`).

    See Also
    --------
    select_landmarks, whitening, NystroemMap.transform

    Examples
    --------
    >>> import numpy as np
    >>> from daskfair.kernels import kernel_params
    >>> from daskfair.nystroem import fit_nystroem
    >>> X = np.random.default_rng(0).normal(size=(200, 3))
    >>> fmap = fit_nystroem(X, kernel_params("rbf", 3), n_landmarks=20, random_state=0)
    >>> fmap.transform(X).shape
    (200, 20)
    """
    L = (select_landmarks(X, n_landmarks, method=method, random_state=random_state)
         if landmarks is None else landmarks)
    W = kernel_block(L, L, params)
    if not np.isfinite(W).all():
        raise ValueError(
            "the kernel of the landmarks is not finite (the values overflow): scale the "
            "features first (e.g. min-max or standard scaling), or lower gamma/degree.")
    T, lam = whitening(W, rcond)
    return NystroemMap(landmarks=L, whitening=T, eigenvalues=lam, params=params)
