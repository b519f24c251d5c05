"""FKR-F²E and the methods it is compared with, one :data:`REGISTRY` entry each: the ``fkr``
job and the paper's protocol build every model from one mapping of library parameters, each
estimator taking the entries its signature has."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ...fkr import (
    FairKernelClassifier,
    FairKernelClassifierCV,
    FairKernelRegressor,
    FairKernelRegressorCV,
    FairKernelRidge,
)
from ...metrics import demographic_parity_difference, error_rate, regression_report
from ..params import takes

__all__ = ["REGISTRY", "RIDGE_THRESHOLD", "Method", "constant_from_labels",
           "constant_from_moments", "predict_classes", "score"]

#: The cut of a ridge regressor's output to a class: ½, the midpoint of the coded classes
#: 0 and 1 (the paper's rule for every regression method it classifies with).
RIDGE_THRESHOLD = 0.5

Params = Mapping[str, Any]


def _first(gammas: Any) -> Any:
    return None if gammas is None else np.atleast_1d(gammas).tolist()[0]


@dataclass(frozen=True)
class Method:
    """One method: ``estimator(classify)`` its class (None: the constant predictor),
    ``label(params, classify)`` its row's name, ``fixed(params)`` the parameters it sets
    itself, ``baseline`` fitted next to the fair model by the ``fkr`` job, ``threshold`` the
    cut of its regression output to a class (None: it classifies itself)."""

    name: str
    estimator: Callable[[bool], type] | None
    label: Callable[[Params, bool], str]
    fixed: Callable[[Params], dict[str, Any]] = field(default=lambda p: {})
    baseline: bool = False
    threshold: float | None = None

    def build(self, params: Params, *, classify: bool) -> Any:
        """The unfitted estimator, from the entries of ``params`` its class takes."""
        cls = self.estimator(classify)
        return cls(**takes(cls, {**params, **self.fixed(params)}))


def _single(params: Params) -> dict[str, Any]:
    # one kernel: the first of a grid of gammas; the paper thresholds at ½
    return {"gamma": params["gamma"] if "gamma" in params else _first(params.get("gammas")),
            "threshold": RIDGE_THRESHOLD}


def _grid(params: Params) -> dict[str, Any]:
    return {"gammas": params["gammas"] if "gammas" in params else params.get("gamma")}


def _ridge(weight: Callable[[Params], float]) -> Callable[[Params], dict[str, Any]]:
    return lambda p: {**_single(p), "fairness_weight": weight(p)}


def _cv_class(classify: bool) -> type:
    return FairKernelClassifierCV if classify else FairKernelRegressorCV


#: Every method, by name.
REGISTRY: dict[str, Method] = {m.name: m for m in (
    Method("FKR-F2E", lambda c: FairKernelClassifier if c else FairKernelRegressor,
           lambda p, c: f"FKR-F2E ({p.get('objective', 'mean_discrepancy')})", _single),
    Method("CV", _cv_class,
           lambda p, c: f"{_cv_class(c).__name__} (<= {p.get('disparity_bound', 0.01):g})",
           _grid),
    Method("FKRR", lambda c: FairKernelRidge,
           lambda p, c: f"FKRR (fairness_weight={p.get('fkrr_fairness_weight', 1.0):g})",
           _ridge(lambda p: p.get("fkrr_fairness_weight", 1.0)), baseline=True,
           threshold=RIDGE_THRESHOLD),
    Method("kernel ridge", lambda c: FairKernelRidge, lambda p, c: "kernel ridge",
           _ridge(lambda p: 0.0), baseline=True, threshold=RIDGE_THRESHOLD),
    Method("constant", None, lambda p, c: "constant", baseline=True),
)}


def constant_from_labels(y: Any, *, classify: bool) -> float:
    """The majority class of 0/1 labels (the smaller on a tie), or the mean label."""
    if classify:
        return float(np.bincount(np.asarray(y).astype(np.int64)).argmax())
    return float(np.mean(y))


def constant_from_moments(moments: Any, *, classify: bool) -> float:
    """:func:`constant_from_labels` from a CV estimator's ``moments_[i]`` (no pass)."""
    if classify:
        return float(np.argmax(np.bincount(moments.cell_label, weights=moments.counts,
                                           minlength=2)))
    return moments.total_y / moments.n


def predict_classes(method: Method, est: Any, X: Any) -> Any:
    """0/1 predictions of a fitted ``est`` of ``method`` on the rows ``X``."""
    if method.threshold is None:
        return est.predict(X)
    return (est.predict(X) >= method.threshold).astype(int)


def score(pred: Any, y: Any, s: Any, *, classify: bool) -> dict[str, float]:
    """``{"disparity", "error"}`` on the test rows: the demographic parity difference and
    the error rate of 0/1 labels, or the gap of the groups' mean predictions and the RMSE."""
    if classify:
        return {"disparity": demographic_parity_difference(y, pred, sensitive_features=s),
                "error": error_rate(y, pred)}
    report = regression_report(y, pred, sensitive_features=s)
    return {"disparity": report["mean_prediction_gap"], "error": report["rmse"]}
