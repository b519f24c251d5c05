"""Error and disparity of many linear scores, from one pass of score histograms per cell."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from .._blocks import block_sum
from ..kernels import kernel_block
from ._binning import bin_scores
from .statistics import FoldedMoments, block_folds, row_index

if TYPE_CHECKING:
    from .candidates import Linear

__all__ = ["ScoreModel", "ThresholdTable", "group_rates", "pair_sem", "regression_validation",
           "score_histograms", "threshold_table"]


@dataclass(frozen=True)
class ScoreModel:
    """K scores per fold f, (C Θ_f + b_f) M_f + c_f, and the bins they are counted in."""

    basis: np.ndarray   # (F, m, P): Θ_f, dual coefficients of P basis scores
    offset: np.ndarray  # (F, P): b_f
    mix: np.ndarray     # (F, P, K): M_f, each candidate from the basis scores
    shift: np.ndarray   # (F, K): c_f
    lo: np.ndarray      # (K,): bin b holds [lo + b·width, lo + (b+1)·width)
    width: np.ndarray   # (K,)
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


def _block_histograms(X: np.ndarray, cells: np.ndarray, w: np.ndarray | None,
                      rows: np.ndarray | None, *, landmarks: np.ndarray, params: dict[str, Any],
                      model: ScoreModel, n_cells: int, fold_seed: int) -> np.ndarray:
    """Block function: (K, cells, B) histograms of each row's scores under its fold's model."""
    K, B = model.n_candidates, model.n_bins
    n_folds = model.basis.shape[0]
    folds = (block_folds(rows, n_folds, fold_seed) if n_folds > 1
             else np.zeros(len(X), np.int64))
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


def score_histograms(X: Any, cells: Any, weights: Any, landmarks: np.ndarray,
                     params: dict[str, Any], model: ScoreModel, *, n_cells: int,
                     fold_seed: int = 0, folds: Any = None) -> np.ndarray:
    """One pass: histograms (K, q, n_bins) of every candidate's scores, by its fold's model."""
    rows = ((folds if folds is not None else row_index(X)) if model.basis.shape[0] > 1
            else None)
    return block_sum(_block_histograms, X, cells, weights, rows, landmarks=landmarks,
                     params=params, model=model, n_cells=n_cells, fold_seed=fold_seed,
                     row_width=len(landmarks) + model.basis.shape[2] + model.n_candidates)


@dataclass(frozen=True)
class ThresholdTable:
    """Error, disparities and their sems, (K, B + 1): threshold j is positive from bin j on."""

    error: np.ndarray
    demographic_parity: np.ndarray
    equalized_odds: np.ndarray | None
    demographic_parity_sem: np.ndarray
    equalized_odds_sem: np.ndarray | None = None


def pair_sem(rate: np.ndarray, total: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The largest gap between the groups' rates (K, J, T) and its binomial standard error."""
    filled_hi = np.where(np.isnan(rate), -np.inf, rate)
    filled_lo = np.where(np.isnan(rate), np.inf, rate)
    hi, lo = filled_hi.argmax(axis=1), filled_lo.argmin(axis=1)
    n = np.broadcast_to(total, rate.shape)
    with np.errstate(invalid="ignore", divide="ignore"):
        var = rate * (1 - rate) / n

    def at(values: np.ndarray, index: np.ndarray) -> np.ndarray:
        return np.take_along_axis(values, index[:, None, :], axis=1)[:, 0, :]

    gap = at(rate, hi) - at(rate, lo)
    return gap, np.sqrt(at(var, hi) + at(var, lo))


def _positives(hist: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per candidate and cell, the rows at every threshold or above (K, q, T), and all rows."""
    positives = np.concatenate(
        [np.cumsum(hist[:, :, ::-1], axis=2)[:, :, ::-1], np.zeros((*hist.shape[:2], 1))],
        axis=2)
    return positives, hist.sum(axis=2)[:, :, None]


def _rates(positives: np.ndarray, totals: np.ndarray, index: np.ndarray, size: int,
           rows_per_weight: float) -> tuple[np.ndarray, np.ndarray]:
    """The positive rate (K, size, T) of the cells summed by ``index``, and their rows."""
    def summed(values: np.ndarray) -> np.ndarray:
        out = np.zeros((positives.shape[0], size, values.shape[2]))
        np.add.at(out, (slice(None), index), values)
        return out

    tot = summed(totals)
    with np.errstate(invalid="ignore", divide="ignore"):
        return summed(positives) / tot, tot * rows_per_weight


def group_rates(hist: np.ndarray, cell_group: np.ndarray, cell_label: np.ndarray,
                rows_per_weight: float, constraint: str) -> list[tuple[np.ndarray, np.ndarray]]:
    """The groups' positive rates (K, J, T) and rows (K, J, 1) the disparity compares: one
    pair for demographic parity, one per class (FPR, TPR) for equalized odds."""
    positives, totals = _positives(hist)
    J = int(cell_group.max()) + 1
    if constraint != "equalized_odds":
        return [_rates(positives, totals, cell_group, J, rows_per_weight)]
    rate, rows = _rates(positives, totals, cell_group * 2 + cell_label, 2 * J,
                        rows_per_weight)
    K = hist.shape[0]
    rate, rows = rate.reshape(K, J, 2, -1), rows.reshape(K, J, 2, 1)
    return [(rate[:, :, c], rows[:, :, c]) for c in (0, 1)]


def threshold_table(hist: np.ndarray, cell_group: np.ndarray, cell_label: np.ndarray,
                    rows_per_weight: float = 1.0) -> ThresholdTable:
    """Every threshold of every candidate scored from its per-cell histograms (K, q, B)."""
    positives, totals = _positives(hist)
    n = totals.sum(axis=1)
    label = cell_label[None, :, None]
    wrong = np.where(label == 1, totals - positives, positives).sum(axis=1)
    dp, dp_sem = pair_sem(*group_rates(hist, cell_group, cell_label, rows_per_weight,
                                       "demographic_parity")[0])
    eo = eo_sem = None
    if (cell_label >= 0).all():
        # equalized odds: the larger of the two classes' gaps (FPR for class 0, TPR for 1)
        gaps = [pair_sem(*family) for family in group_rates(
            hist, cell_group, cell_label, rows_per_weight, "equalized_odds")]
        worse = (gaps[1][0] > gaps[0][0]) | np.isnan(gaps[0][0])
        eo = np.where(worse, gaps[1][0], gaps[0][0])
        eo_sem = np.where(worse, gaps[1][1], gaps[0][1])
    return ThresholdTable(error=wrong / n, demographic_parity=dp, equalized_odds=eo,
                          demographic_parity_sem=dp_sem, equalized_odds_sem=eo_sem)


def regression_validation(folded: FoldedMoments, per_fold: list[Linear]
                          ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every candidate's validation RMSE, mean-prediction gap and its sem, from the moments."""
    total = folded.total
    K = per_fold[0].mix.shape[1]
    sse = np.zeros(K)
    group_sum = np.zeros((total.n_groups, K))
    fold_gaps = []
    for f, lin in enumerate(per_fold):
        held = folded.folds[f]
        coef, b = lin.coef, lin.intercept
        # Σ (zᵀβ + b − y)² over the fold
        sse += (((held.gram @ coef) * coef).sum(axis=0)
                + 2 * b * (held.sums.sum(axis=0) @ coef) + held.n * b**2
                - 2 * (held.total_fy @ coef) - 2 * b * held.total_y
                + held.sum_yy.sum())
        fold_sum = held.group_sums @ coef + np.outer(held.group_counts, b)
        group_sum += fold_sum
        with np.errstate(invalid="ignore", divide="ignore"):
            fold_means = fold_sum / held.group_counts[:, None]
        fold_gaps.append(np.nanmax(fold_means, axis=0) - np.nanmin(fold_means, axis=0))
    means = group_sum / total.group_counts[:, None]
    F = len(per_fold)
    sem = np.std(fold_gaps, axis=0, ddof=1) / np.sqrt(F) if F > 1 else np.full(K, np.nan)
    return (np.sqrt(np.maximum(sse, 0.0) / total.n), means.max(axis=0) - means.min(axis=0),
            sem)
