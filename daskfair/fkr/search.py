"""The CV estimators' search of one kernel setting: every candidate on every fold."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from .._params import shown
from ..nystroem import NystroemMap
from ._base import FitInput
from .calibration import N_BINS, score_bins, score_spread
from .candidates import Linear, Search, build_candidates, embedding_components
from .ridge import penalty_scale
from .scores import ScoreModel, score_histograms, threshold_table
from .statistics import FoldedMoments, Moments

__all__ = ["KernelSearch", "check_folds", "fold_candidates", "search_attributes", "search_grid",
           "validate_scores"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class KernelSearch:
    """One kernel setting's K candidates refitted on all rows, and their validation results."""

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
    """The classifier's second pass: error and disparity of every candidate and threshold."""
    lo, width = score_bins(*score_spread(total, refit.coef, refit.intercept))
    parts = zip(*[(fmap.whitening @ f.basis, f.offset, f.mix, f.shift) for f in per_fold],
                strict=True)
    model = ScoreModel(*(np.stack(p) for p in parts), lo=lo, width=width, n_bins=N_BINS)
    hist = score_histograms(data.X, data.cells, data.weights, fmap.landmarks, fmap.params,
                            model, n_cells=len(data.cell_group), fold_seed=folds.seed,
                            folds=folds.rows(data.X))
    scores = threshold_table(hist, data.cell_group, data.cell_label, data.n / total.n)
    eo = constraint == "equalized_odds"
    return {"thresholds": model.edges(),
            "disparity": scores.equalized_odds if eo else scores.demographic_parity,
            "disparity_sem": scores.equalized_odds_sem if eo else scores.demographic_parity_sem,
            "error": scores.error, "hist": hist, "lo": lo, "width": width}


def search_grid(total: Moments, p: dict[str, Any], task: str) -> Search:
    """One kernel setting's Search; the fair feature counts (r/8, r/4, r/2) capped by rank."""
    r = total.sums.shape[1]
    counts = p["fair_feature_counts"]
    if counts is None:
        counts = tuple(sorted({max(1, r // 8), max(1, r // 4), max(1, r // 2)}))
    search = Search(task=task, constraint=p["constraint"], families=p["families"],
                    alphas=p["relative_alphas"], strengths=p["strengths"], components=counts,
                    fairness=p["fairness_weights"])
    if "embedding" in search.families:
        search = Search(**{**search.__dict__, "components": embedding_components(total, search)})
    return search


def check_folds(folded: FoldedMoments, data: FitInput) -> None:
    """Every fold's training rows must hold every group (and both classes)."""
    for f in range(folded.n_folds):
        train = folded.train(f)
        counts = train.group_counts
        if data.groups is not None and (counts <= 0).any():
            g = int(np.argmin(counts))
            raise ValueError(
                f"group {shown(data.groups[g])} has no rows in the training rows of fold "
                f"{f} (it has {folded.total.group_counts[g]:g} rows in all): "
                "every fold's training rows need every group. Use fewer folds (cv=...) "
                "or merge the small groups.")
        if (data.cell_label >= 0).all():
            weight = np.bincount(data.cell_label, weights=train.counts, minlength=2)
            if (weight <= 0).any():
                raise ValueError(
                    f"the training rows of fold {f} hold one class only; use fewer folds "
                    "(cv=...).")


def search_attributes(searches: list[KernelSearch]) -> dict[str, Any]:
    """The fitted attributes of the candidates of every kernel setting, side by side."""
    table = pd.concat([s.table for s in searches], ignore_index=True)
    out = {"feature_maps_": [s.feature_map for s in searches],
           "moments_": [s.total for s in searches], "_table": table,
           "candidate_kernel_": np.concatenate(
               [np.full(len(s.table), i) for i, s in enumerate(searches)]),
           "candidate_dual_coef_": np.hstack([s.dual_coef for s in searches]),
           "candidate_intercept_": np.concatenate([s.intercept for s in searches]),
           "cv_disparity_": np.vstack([s.disparity for s in searches]),
           "cv_disparity_sem_": np.vstack([s.disparity_sem for s in searches]),
           "cv_error_": np.vstack([s.error for s in searches]),
           "n_candidates_": len(table)}
    if searches[0].thresholds is not None:
        out.update(thresholds_=np.vstack([s.thresholds for s in searches]),
                   _hist=np.concatenate([s.hist for s in searches]),
                   _bins=(np.concatenate([s.lo for s in searches]),
                          np.concatenate([s.width for s in searches])),
                   _cell_label=searches[0].data.cell_label,
                   _cell_group=searches[0].data.cell_group,
                   _rows_per_weight=searches[0].data.n / searches[0].total.n)
    return out
