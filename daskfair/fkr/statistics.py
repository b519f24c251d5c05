"""The one pass: moments of k(X, L) per fold and cell (docs/design.md#fkr-one-pass-of-moments)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import dask.array as da
import numpy as np

from .._blocks import block_sum
from .._keyed import Keyed, arrange, local_codes, merge
from .._random import fold_of
from .._validation import is_dask
from ..kernels import kernel_block

__all__ = ["EXPLICIT_FOLDS", "FoldedMoments", "Moments", "arrange_moments", "block_folds",
           "cell_moments", "kernel_moments", "row_index"]


#: ``fold_seed`` of a pass whose row column already holds every row's fold (a splitter's).
EXPLICIT_FOLDS = -1


def block_folds(rows: np.ndarray | None, n_folds: int, fold_seed: int) -> np.ndarray | int:
    """Fold of every row of a block: ``rows`` hashed, or ``rows`` itself with EXPLICIT_FOLDS."""
    if n_folds == 1:
        return 0
    if fold_seed == EXPLICIT_FOLDS:
        return np.asarray(rows, dtype=np.int64)
    return fold_of(rows, n_folds, fold_seed)


def row_index(X: Any) -> Any:
    """Global row positions 0..n-1 aligned with ``X`` (numpy, or a lazy dask array)."""
    n = X.shape[0]
    return da.arange(n, chunks=X.chunks[0]) if is_dask(X) else np.arange(n)


@dataclass(frozen=True)
class Moments:
    """Moments of features z per cell: Σ w, Σ w z, Σ w z zᵀ (per cell, or one (1, p, p)),
    Σ w y z, Σ w y, Σ w y²; each cell's group 0..J-1 and class (0/1, or -1)."""

    counts: np.ndarray
    sums: np.ndarray
    grams: np.ndarray
    fy: np.ndarray
    sum_y: np.ndarray
    sum_yy: np.ndarray
    cell_group: np.ndarray
    cell_label: np.ndarray

    def _combine(self, other: Moments, sign: float) -> Moments:
        names = ("counts", "sums", "grams", "fy", "sum_y", "sum_yy")
        return replace(self, **{k: getattr(self, k) + sign * getattr(other, k) for k in names})

    def __add__(self, other: Moments) -> Moments:
        return self._combine(other, 1.0)

    def __sub__(self, other: Moments) -> Moments:
        return self._combine(other, -1.0)

    def change_basis(self, T: np.ndarray) -> Moments:
        """The same moments for the features ``z T`` (T of shape (p, p'))."""
        return replace(self, sums=self.sums @ T, fy=self.fy @ T,
                       grams=np.einsum("pi,gpq,qj->gij", T, self.grams, T, optimize=True))

    @property
    def n(self) -> float:
        """Σ w over all rows."""
        return float(self.counts.sum())

    @property
    def n_groups(self) -> int:
        return int(self.cell_group.max()) + 1

    @property
    def has_cell_grams(self) -> bool:
        return self.grams.shape[0] == self.counts.shape[0] and self.counts.shape[0] > 1

    @property
    def gram(self) -> np.ndarray:
        """Σ w z zᵀ over all rows."""
        return self.grams.sum(axis=0)

    @property
    def mean(self) -> np.ndarray:
        return self.sums.sum(axis=0) / self.n

    def covariance(self) -> np.ndarray:
        """(1/n) Σ w (z − z̄)(z − z̄)ᵀ."""
        mean = self.mean
        return self.gram / self.n - np.outer(mean, mean)

    def _by_group(self, values: np.ndarray) -> np.ndarray:
        out = np.zeros((self.n_groups, *values.shape[1:]))
        np.add.at(out, self.cell_group, values)
        return out

    @property
    def group_counts(self) -> np.ndarray:
        """Σ w per sensitive group, shape (J,)."""
        return self._by_group(self.counts)

    @property
    def group_sums(self) -> np.ndarray:
        """Σ w z per sensitive group, shape (J, p)."""
        return self._by_group(self.sums)

    @property
    def group_means(self) -> np.ndarray:
        """z̄_g, shape (J, p)."""
        return self.group_sums / self.group_counts[:, None]

    @property
    def group_grams(self) -> np.ndarray:
        """Σ w z zᵀ per sensitive group, shape (J, p, p) (needs per-cell Gram matrices)."""
        if not self.has_cell_grams:
            raise ValueError("these moments hold one Gram matrix, not one per cell.")
        return self._by_group(self.grams)

    @property
    def total_fy(self) -> np.ndarray:
        return self.fy.sum(axis=0)

    @property
    def total_y(self) -> float:
        return float(self.sum_y.sum())


@dataclass(frozen=True)
class FoldedMoments:
    """Moments of every fold: ``folds[f]`` is fold f's; ``total`` their sum."""

    folds: tuple[Moments, ...]

    @property
    def n_folds(self) -> int:
        return len(self.folds)

    @property
    def total(self) -> Moments:
        out = self.folds[0]
        for m in self.folds[1:]:
            out = out + m
        return out

    def train(self, f: int) -> Moments:
        """The moments of every row outside fold f."""
        return self.total - self.folds[f]

    def with_binary_targets(self) -> FoldedMoments:
        """These moments with y the cell's class (0/1): a classifier's pass reads no y."""
        def targets(m: Moments) -> Moments:
            one = (m.cell_label == 1).astype(np.float64)
            return replace(m, fy=m.sums * one[:, None], sum_y=m.counts * one,
                           sum_yy=m.counts * one)
        return FoldedMoments(tuple(targets(m) for m in self.folds))


def _block_moments(X: np.ndarray, y: np.ndarray | None, w: np.ndarray | None,
                   rows: np.ndarray | None, *columns: np.ndarray, landmarks: np.ndarray,
                   params: dict[str, Any], n_folds: int, fold_seed: int, cell_grams: bool
                   ) -> Keyed:
    """Block function: moments per (fold, raw cell value), keyed so the pass lists the cells."""
    # rows sorted by (fold, cell): each segment of C is a view, each Gram matrix one AᵀA (syrk)
    cells, keys = local_codes(*columns)
    folds = block_folds(rows, n_folds, fold_seed)
    F, Q = n_folds, len(keys)
    key = np.asarray(folds * Q + cells, dtype=np.int64)
    order = np.argsort(key, kind="stable")
    bounds = np.searchsorted(key[order], np.arange(F * Q + 1))
    C = kernel_block(X[order], landmarks, params)
    yy = np.zeros(len(key)) if y is None else y[order]
    ww = None if w is None else w[order]
    m = C.shape[1]
    grams = np.zeros((F, Q if cell_grams else 1, m, m))

    def gram(lo: int, hi: int) -> np.ndarray:
        A = C[lo:hi] if ww is None else C[lo:hi] * np.sqrt(ww[lo:hi])[:, None]
        return A.T @ A

    # Σ w c and Σ w y c of every segment in one product Aᵀ C (A: w and w·y in its columns)
    wts = np.ones(len(key)) if ww is None else ww
    seg = np.repeat(np.arange(F * Q), np.diff(bounds))
    A = np.zeros((len(key), 2 * F * Q))
    index = np.arange(len(key))
    A[index, 2 * seg] = wts
    A[index, 2 * seg + 1] = wts * yy
    S = (A.T @ C).reshape(F, Q, 2, m)
    sums, fy = S[:, :, 0], S[:, :, 1]
    counts = np.bincount(seg, weights=wts, minlength=F * Q).reshape(F, Q)
    sum_y = np.bincount(seg, weights=wts * yy, minlength=F * Q).reshape(F, Q)
    sum_yy = np.bincount(seg, weights=wts * yy * yy, minlength=F * Q).reshape(F, Q)
    for f in range(F):
        if cell_grams:
            for q in range(Q):
                lo, hi = bounds[f * Q + q], bounds[f * Q + q + 1]
                if hi > lo:
                    grams[f, q] = gram(lo, hi)
        elif bounds[(f + 1) * Q] > bounds[f * Q]:
            grams[f, 0] = gram(bounds[f * Q], bounds[(f + 1) * Q])
    per_cell = [np.moveaxis(v, 1, 0) for v in (counts, sums, fy, sum_y, sum_yy)]
    if cell_grams:
        return Keyed(keys, (*per_cell, np.moveaxis(grams, 1, 0)))
    return Keyed(keys, tuple(per_cell), (grams,))


def cell_moments(X: Any, columns: list[Any], y: Any, weights: Any, landmarks: np.ndarray,
                 params: dict[str, Any], *, n_folds: int = 1, fold_seed: int = 0,
                 cell_grams: bool = False, folds: Any = None) -> Keyed:
    """The one pass: Keyed moments of k(X, L) per fold and distinct row of the raw ``columns``."""
    rows = (folds if folds is not None else row_index(X)) if n_folds > 1 else None
    return block_sum(_block_moments, X, y, weights, rows, *columns, landmarks=landmarks,
                     params=params, n_folds=n_folds, fold_seed=fold_seed, cell_grams=cell_grams,
                     combine=merge, row_width=len(landmarks))


def arrange_moments(keyed: Keyed, codes: list[dict[Any, int]], sizes: tuple[int, ...], *,
                    cell_group: np.ndarray, cell_label: np.ndarray) -> FoldedMoments:
    """:class:`FoldedMoments` on the cell grid ``sizes`` (``codes[c]`` codes column c)."""
    counts, sums, fy, sum_y, sum_yy, *grams = (
        np.moveaxis(v.reshape(-1, *v.shape[len(sizes):]), 0, 1)
        for v in arrange(keyed, codes, sizes))
    grams = grams[0] if grams else keyed.plain[0]
    return FoldedMoments(tuple(
        Moments(counts=counts[f], sums=sums[f], grams=grams[f], fy=fy[f], sum_y=sum_y[f],
                sum_yy=sum_yy[f], cell_group=np.asarray(cell_group),
                cell_label=np.asarray(cell_label))
        for f in range(counts.shape[0])))


def kernel_moments(X: Any, cells: Any, y: Any, weights: Any, landmarks: np.ndarray,
                   params: dict[str, Any], *, cell_group: np.ndarray, cell_label: np.ndarray,
                   n_folds: int = 1, fold_seed: int = 0, cell_grams: bool = False
                   ) -> FoldedMoments:
    """One pass: :class:`FoldedMoments` of C = k(X, L) for ``cells`` coded 0..q-1."""
    keyed = cell_moments(X, [cells], y, weights, landmarks, params, n_folds=n_folds,
                         fold_seed=fold_seed, cell_grams=cell_grams)
    n_cells = len(cell_group)
    unknown = [k[0] for k in keyed.keys if not (isinstance(k[0], int) and 0 <= k[0] < n_cells)]
    if unknown:
        raise ValueError(f"cells must be codes 0..{n_cells - 1}, found {unknown[:5]}.")
    return arrange_moments(keyed, [{q: q for q in range(n_cells)}], (n_cells,),
                           cell_group=cell_group, cell_label=cell_label)
