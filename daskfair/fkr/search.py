"""One kernel setting's search: its folds' moments, every candidate on every fold, and the
candidates' validation errors and disparities (:class:`KernelSearch`).

The classifier's validation scores need a second pass (score histograms per candidate,
:mod:`~daskfair.fkr.scores`); the regressor's are functions of the folds' moments
(:func:`~daskfair.fkr.scores.regression_validation`).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ..nystroem import NystroemMap
from ._base import FitInput
from .calibration import N_BINS, score_bins, score_spread
from .candidates import Linear, Search, build_candidates
from .ridge import penalty_scale
from .scores import ScoreModel, score_histograms, threshold_table
from .statistics import FoldedMoments, Moments

__all__ = ["KernelSearch", "fold_candidates", "validate_scores"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class KernelSearch:
    """Every candidate of one kernel setting, refitted on all rows, with its validation
    results (K candidates; T thresholds per candidate, 1 for a regressor)."""

    feature_map: NystroemMap
    data: FitInput                   # groups and classes known
    total: Moments                   # all training rows, whitened basis
    table: pd.DataFrame              # one row of parameters per candidate
    dual_coef: np.ndarray            # (m, K): scores k(x, L) @ dual_coef + intercept
    intercept: np.ndarray            # (K,)
    disparity: np.ndarray            # (K, T)
    error: np.ndarray                # (K, T): error rate, or RMSE
    disparity_sem: np.ndarray        # (K, T): the disparity's standard error
    thresholds: np.ndarray | None = None   # (K, T) classifier: the threshold of each column
    hist: np.ndarray | None = None   # (K, cells, N_BINS) validation score histograms
    lo: np.ndarray | None = None     # (K,) the histograms' bins
    width: np.ndarray | None = None  # (K,)


def fold_candidates(folded: FoldedMoments, search: Search
                    ) -> tuple[pd.DataFrame, list[Linear], Linear]:
    """Every candidate fitted on every fold's training rows, and on all rows (the refit)."""
    per_fold = []
    for f in range(folded.n_folds):
        train = folded.train(f)
        per_fold.append(build_candidates(train, search, penalty_scale(train))[1])
    total = folded.total
    rows, refit = build_candidates(total, search, penalty_scale(total))
    logger.info("%d candidates per fold, %d folds", refit.mix.shape[1], folded.n_folds)
    return pd.DataFrame(rows), per_fold, refit


def validate_scores(data: FitInput, fmap: NystroemMap, total: Moments, per_fold: list[Linear],
                    refit: Linear, folds: Any, constraint: str
                    ) -> dict[str, np.ndarray]:
    """The classifier's second pass: every row's validation score under every candidate of
    its fold, binned per cell; the error and disparity of every threshold follow."""
    lo, width = score_bins(*score_spread(total, refit.coef, refit.intercept))
    T = fmap.whitening
    model = ScoreModel(
        basis=np.stack([T @ lin.basis for lin in per_fold]),
        offset=np.stack([lin.offset for lin in per_fold]),
        mix=np.stack([lin.mix for lin in per_fold]),
        shift=np.stack([lin.shift for lin in per_fold]),
        lo=lo, width=width, n_bins=N_BINS)
    hist = score_histograms(data.X, data.cells, data.weights, fmap.landmarks, fmap.params,
                            model, n_cells=len(data.cell_group), fold_seed=folds.seed,
                            folds=folds.rows(data.X))
    scores = threshold_table(hist, data.cell_group, data.cell_label, data.n / total.n)
    eo = constraint == "equalized_odds"
    return {"thresholds": model.edges(),
            "disparity": scores.equalized_odds if eo else scores.demographic_parity,
            "disparity_sem": scores.equalized_odds_sem if eo else scores.demographic_parity_sem,
            "error": scores.error, "hist": hist, "lo": lo, "width": width}
