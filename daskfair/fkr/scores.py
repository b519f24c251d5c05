"""Decision-level quantities of many linear score functions in one pass (DESIGN §7).

Error rates and disparities of thresholded predictions are not functions of the moments: they
need every row's score. One pass evaluates the kernel block C = k(X, L) once per row block
and, for the rows of each fold f, the scores of every candidate,

    S = (C Θ_f + b_f) M_f + c_f     (Θ_f: m × P basis, M_f: P × K mixing, K candidates),

and returns, per candidate and cell, a histogram of the scores on fixed bins. Every threshold
of every candidate is then scored on the client: the predicted-positive count of a cell at a
threshold is a reverse cumulative sum of its histogram. The bins are the same for every fold,
so the validation rows of all folds pool into one histogram per candidate.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.special import expit

from .._blocks import block_sum
from ..kernels import kernel_block
from ._binning import bin_scores
from .statistics import fold_of, row_index

__all__ = [
    "ScoreModel",
    "ThresholdTable",
    "platt_scaling",
    "score_histograms",
    "threshold_table",
]


@dataclass(frozen=True)
class ScoreModel:
    """K linear score functions per fold, and the bins their scores are counted in.

    Attributes
    ----------
    basis : ndarray of shape (F, m, P)
        Θ_f, the dual coefficients of P basis scores per fold.
    offset : ndarray of shape (F, P)
    mix : ndarray of shape (F, P, K)
        M_f: each candidate's score as a combination of the basis scores.
    shift : ndarray of shape (F, K)
    lo, width : ndarray of shape (K,)
        Bin b of candidate k holds scores in [lo + b·width, lo + (b+1)·width); scores below
        or above the range fall into the first or last bin.
    n_bins : int
    """

    basis: np.ndarray
    offset: np.ndarray
    mix: np.ndarray
    shift: np.ndarray
    lo: np.ndarray
    width: np.ndarray
    n_bins: int

    @property
    def n_candidates(self) -> int:
        return self.mix.shape[2]

    def scores(self, C: np.ndarray, fold: int) -> np.ndarray:
        """Scores (rows × K) of kernel rows C under fold ``fold``'s model."""
        return (C @ self.basis[fold] + self.offset[fold]) @ self.mix[fold] + self.shift[fold]

    def edges(self) -> np.ndarray:
        """Threshold values, shape (K, n_bins + 1): edge j predicts positive from bin j on."""
        return self.lo[:, None] + self.width[:, None] * np.arange(self.n_bins + 1)


def _block_histograms(
    X: np.ndarray,
    cells: np.ndarray,
    w: np.ndarray | None,
    rows: np.ndarray | None,
    *,
    landmarks: np.ndarray,
    params: dict[str, Any],
    model: ScoreModel,
    n_cells: int,
    fold_seed: int,
) -> np.ndarray:
    # Pure per-block kernel: the kernel block once, then each fold's rows scored by that
    # fold's candidates (two small products) and counted per (candidate, cell, bin) in one
    # numba loop over the score matrix.
    K, B = model.n_candidates, model.n_bins
    n_folds = model.basis.shape[0]
    folds = fold_of(rows, n_folds, fold_seed) if n_folds > 1 else np.zeros(len(X), np.int64)
    C = kernel_block(X, landmarks, params)
    hist = np.zeros((K, n_cells, B))
    for f in range(n_folds):
        sel = np.flatnonzero(folds == f)
        if sel.size == 0:
            continue
        bin_scores(model.scores(C[sel], f), cells[sel].astype(np.int64),
                   np.ones(sel.size) if w is None else w[sel].astype(np.float64),
                   model.lo, model.width, hist)
    return hist


def score_histograms(
    X: Any,
    cells: Any,
    weights: Any,
    landmarks: np.ndarray,
    params: dict[str, Any],
    model: ScoreModel,
    *,
    n_cells: int,
    fold_seed: int = 0,
) -> np.ndarray:
    """One pass: histograms of every candidate's scores per cell, shape (K, q, n_bins).

    Rows are scored by the model of their own fold (:func:`~daskfair.fkr.statistics.fold_of`
    with the seed of the moments), so with F > 1 these are validation scores.
    """
    rows = row_index(X) if model.basis.shape[0] > 1 else None
    return block_sum(_block_histograms, X, cells, weights, rows, landmarks=landmarks,
                     params=params, model=model, n_cells=n_cells, fold_seed=fold_seed,
                     row_width=len(landmarks) + model.basis.shape[2] + model.n_candidates)


@dataclass(frozen=True)
class ThresholdTable:
    """Error and disparity of every candidate at every threshold (arrays of shape (K, B+1)).

    Threshold j predicts positive for scores in bins j, j+1, …: j = 0 predicts every row
    positive, j = B none.
    """

    error: np.ndarray
    demographic_parity: np.ndarray
    equalized_odds: np.ndarray | None
    positive_rate: np.ndarray


def threshold_table(hist: np.ndarray, cell_group: np.ndarray, cell_label: np.ndarray
                    ) -> ThresholdTable:
    """Score every threshold of every candidate from its per-cell histograms.

    Parameters
    ----------
    hist : ndarray of shape (K, q, B)
    cell_group, cell_label : ndarray of int, shape (q,)
        Cells are (group, class) pairs; classes 0/1.
    """
    # positives[k, q, j] = rows of cell q with a score in bin j or above
    positives = np.concatenate(
        [np.cumsum(hist[:, :, ::-1], axis=2)[:, :, ::-1], np.zeros((*hist.shape[:2], 1))],
        axis=2)
    totals = hist.sum(axis=2)[:, :, None]
    n = totals.sum(axis=1)
    label = cell_label[None, :, None]
    wrong = np.where(label == 1, totals - positives, positives).sum(axis=1)
    J = int(cell_group.max()) + 1

    def rates(index: np.ndarray, size: int) -> np.ndarray:
        pos = np.zeros((hist.shape[0], size, positives.shape[2]))
        tot = np.zeros((hist.shape[0], size, 1))
        np.add.at(pos, (slice(None), index), positives)
        np.add.at(tot, (slice(None), index), totals)
        with np.errstate(invalid="ignore", divide="ignore"):
            return pos / tot

    group_rate = rates(cell_group, J)
    dp = np.nanmax(group_rate, axis=1) - np.nanmin(group_rate, axis=1)
    eo = None
    if (cell_label >= 0).all():
        cell_rate = rates(cell_group * 2 + cell_label, 2 * J).reshape(
            hist.shape[0], J, 2, -1)
        eo = np.nanmax(np.nanmax(cell_rate, axis=1) - np.nanmin(cell_rate, axis=1), axis=1)
    return ThresholdTable(error=wrong / n, demographic_parity=dp, equalized_odds=eo,
                          positive_rate=positives.sum(axis=1) / n)


def platt_scaling(hist: np.ndarray, centers: np.ndarray, *, slope_only_at: float | None = None,
                  max_iter: int = 50) -> tuple[float, float]:
    """Fit P(y = 1 | score) = σ(a·score + c) to binned scores (Platt 1999), by Newton.

    Parameters
    ----------
    hist : ndarray of shape (2, B)
        Weighted counts of class 0 and class 1 per score bin.
    centers : ndarray of shape (B,)
        The bins' centre scores.
    slope_only_at : float, optional
        Fit the slope only, with the 1/2-probability point fixed at this score
        (c = −a·slope_only_at): the calibration of a decision rule whose threshold is chosen
        elsewhere.

    Returns
    -------
    a, c : float
    """
    neg, pos = hist
    keep = (neg + pos) > 0
    neg, pos, x = neg[keep], pos[keep], centers[keep]
    total = neg + pos
    x0 = 0.0 if slope_only_at is None else slope_only_at
    u = x - x0
    scale = max(float(np.sqrt((total * u**2).sum() / total.sum())), 1e-300)
    u = u / scale
    # Platt's targets: (N+ + 1)/(N+ + 2) and 1/(N− + 2) instead of 1 and 0, so that separable
    # bins do not send the slope to infinity
    t_pos = (pos.sum() + 1) / (pos.sum() + 2)
    t_neg = 1 / (neg.sum() + 2)
    target_mass = pos * t_pos + neg * t_neg
    theta = np.zeros(1 if slope_only_at is not None else 2)
    design = u[:, None] if slope_only_at is not None else np.column_stack([u, np.ones_like(u)])
    for _ in range(max_iter):
        p = expit(design @ theta)
        grad = design.T @ (target_mass - total * p)
        hess = (design * (total * p * (1 - p))[:, None]).T @ design + 1e-12 * np.eye(len(theta))
        step = np.linalg.solve(hess, grad)
        theta = theta + step
        if np.abs(step).max() < 1e-10:
            break
    a = float(theta[0]) / scale
    c = -a * x0 if slope_only_at is not None else float(theta[1]) - a * x0
    return a, c
