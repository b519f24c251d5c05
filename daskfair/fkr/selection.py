"""The CV estimators' choice under the disparity bound (docs/design.md#fkr-selection-margin)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from scipy.stats import norm

from ._base import ABSENT
from ._predict import calibration_attributes
from .bound import disparity_upper
from .calibration import calibrate
from .frontier import choose, cv_results
from .scores import group_rates

__all__ = ["select", "upper_bounds"]


def upper_bounds(state: Mapping[str, Any], confidence: Any, new_rows: int | None
                 ) -> np.ndarray:
    """Every candidate's and threshold's upper bound of the disparity (the validation
    disparity itself without a confidence)."""
    disparity = state["cv_disparity_"]
    if confidence is None:
        return disparity
    if "_hist" in state:  # a classifier: the groups' rates at every threshold
        families = group_rates(state["_hist"], state["_cell_group"], state["_cell_label"],
                               state["_rows_per_weight"], state["_constraint"])
        return np.fmax(disparity_upper(families, confidence, new_rows), disparity)
    # a regressor: s from the folds' spread; a sample of new_rows rows adds s²·n/new_rows
    scale = 1.0 if new_rows is None else np.sqrt(1.0 + state["_n_rows"] / new_rows)
    return disparity + float(norm.ppf(confidence)) * scale * state["cv_disparity_sem_"]


def select(state: Mapping[str, Any], bound: float, confidence: Any, *, classify: bool,
           refit: bool, new_rows: int | None = None) -> dict[str, Any]:
    """The fitted attributes of the choice under ``bound`` from the search's ``state``."""
    disparity, error = state["cv_disparity_"], state["cv_error_"]
    upper = upper_bounds(state, confidence, new_rows)
    allowed = upper - disparity
    k, j = choose(disparity, error, bound, upper=upper, margin=confidence is not None)
    edges = state.get("thresholds_")
    results = cv_results(state["_table"], edges, disparity, error, (k, j), classify=classify,
                         bound=bound, upper=upper, sem=state["cv_disparity_sem_"])
    best = int(np.flatnonzero(results["selected"])[0])
    out = {"disparity_bound_": bound, "disparity_confidence_": confidence,
           "new_rows_": new_rows,
           "cv_results_": results, "best_index_": best,
           "best_params_": results["params"][best],
           "best_score_": float(results["mean_test_score"][best]),
           "best_disparity_": float(disparity[k, j])}
    out["best_disparity_interval_"] = (max(0.0, float(out["best_disparity_"] - allowed[k, j])),
                                       float(upper[k, j]))
    if edges is not None:
        out["best_threshold_"] = float(edges[k, j])
    if not refit:
        return out | dict.fromkeys(
            ("feature_map_", "dual_coef_", "intercept_", "threshold_", "calibration_"), ABSENT)
    out.update(feature_map_=state["feature_maps_"][state["candidate_kernel_"][k]],
               dual_coef_=state["candidate_dual_coef_"][:, k],
               intercept_=float(state["candidate_intercept_"][k]))
    if classify:  # probability 1/2 at the chosen threshold, from the validation scores
        lo, width = state["_bins"]
        out.update(calibration_attributes(*calibrate(state["_hist"][k], state["_cell_label"],
                                                     lo[k], width[k], edges[k, j])))
    return out
