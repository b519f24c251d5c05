"""FKR-F²E and the methods it is compared with: one entry per method.

The command line's ``fkr`` job (:func:`daskfair.cli.jobs.fkr_job`) and the FKR-F²E paper's
protocol (:func:`daskfair.reproduce.fkr_paper.run_method`) build, fit and score every method
through :data:`REGISTRY`, so both fit the same models:

- ``"FKR-F2E"``: :class:`~daskfair.FairKernelClassifier` (or the regressor for a continuous
  label) with ``n_components`` fair features and the chosen objective;
- ``"CV"``: :class:`~daskfair.FairKernelClassifierCV` (or the regressor's), the most accurate
  candidate within the validation disparity bound;
- ``"FKRR"``: :class:`~daskfair.FairKernelRidge` with penalty μ (Pérez-Suay et al.);
- ``"kernel ridge"``: the same with μ = 0, no fairness term;
- ``"constant"``: the majority class (or the mean label), no model — reported by the paper,
  since on its data sets it has SD = 0 and an error close to the fair regressor's.

Every method is scored by :func:`score`: statistical disparity (the paper's eq. 16) and
error for 0/1 labels; the gap between the groups' mean predictions and the RMSE otherwise.
"""

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

__all__ = ["REGISTRY", "RIDGE_THRESHOLD", "FitSettings", "Method", "constant_from_labels",
           "constant_from_moments", "predict_classes", "score"]

#: The cut of a ridge regressor's output to a class: ½, the midpoint of the coded classes
#: 0 and 1 (the paper's rule for every regression method it classifies with).
RIDGE_THRESHOLD = 0.5


@dataclass(frozen=True)
class FitSettings:
    """What every method of :data:`REGISTRY` is built from.

    Parameters
    ----------
    kernel : mapping
        ``kernel`` name and its parameters (``gamma``, ``degree``, ``coef0``), as the FKR
        estimators take them.
    approximation : mapping
        ``{"approximation": "exact"}``, or the Nyström ``n_landmarks`` and ``random_state``.
    classify : bool
        0/1 labels (the classifiers, thresholds and SD/error) or a continuous label.
    alpha : float
        Relative ridge penalty of the single models (γ / tr(K)).
    mu : float
        FKRR's fairness penalty μ.
    n_components : int, optional
        FKR-F²E's k; default its own (n_train / 250 as in the paper).
    objective : str
        FKR-F²E's objective, "mean_discrepancy" or "paper".
    fairness : float, optional
        FKR-F²E's γ on the group-mean gaps (mean-discrepancy objective).
    disparity_bound : float
        The CV estimator's largest disparity.
    disparity_confidence : float or None
        The CV estimator's confidence margin (None: no margin).
    constraints : str
        The CV classifier's fairness constraint.
    folds : int
        The CV estimator's folds.
    cv_kernel : mapping
        Kernel parameters the CV estimator searches in place of ``kernel``'s (its ``gamma``
        may be a grid); empty: ``kernel``'s.
    """

    kernel: Mapping[str, Any]
    approximation: Mapping[str, Any]
    classify: bool = True
    alpha: float = 1e-4
    mu: float = 1.0
    n_components: int | None = None
    objective: str = "mean_discrepancy"
    fairness: float | None = None
    disparity_bound: float = 0.01
    disparity_confidence: float | None = 0.9
    constraints: str = "demographic_parity"
    folds: int = 5
    cv_kernel: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Method:
    """One method: how its model is built, how its row is labelled, how it classifies.

    Attributes
    ----------
    name : str
        Its key in :data:`REGISTRY`.
    build : callable or None
        ``build(settings)``: the unfitted estimator; None for the constant predictor, which
        has no model (:func:`constant_from_labels`, :func:`constant_from_moments`).
    label : callable
        ``label(settings)``: the method's row in the command line's table.
    baseline : bool
        A baseline that the ``fkr`` job fits next to the fair model.
    from_moments : bool
        Its estimator can be solved from the moments another fit summed
        (:meth:`~daskfair.FairKernelRidge.fit_moments`), with no pass of its own.
    threshold : float or None
        Cut of its regression output to a class; None when the estimator classifies itself.
    """

    name: str
    build: Callable[[FitSettings], Any] | None
    label: Callable[[FitSettings], str]
    baseline: bool = False
    from_moments: bool = False
    threshold: float | None = None


def _fkr(st: FitSettings) -> Any:
    if st.classify:
        # the paper thresholds the regression output at ½, the midpoint of the coded classes
        return FairKernelClassifier(**st.kernel, n_fair_features=st.n_components,
                                    objective=st.objective, fairness_weight=st.fairness,
                                    relative_alpha=st.alpha, threshold=RIDGE_THRESHOLD,
                                    **st.approximation)
    return FairKernelRegressor(**st.kernel, n_fair_features=st.n_components,
                               objective=st.objective, fairness_weight=st.fairness,
                               relative_alpha=st.alpha, **st.approximation)


def _cv_class(st: FitSettings) -> type:
    return FairKernelClassifierCV if st.classify else FairKernelRegressorCV


def _cv(st: FitSettings) -> Any:
    kernel = {**st.kernel, **st.cv_kernel}
    gammas = kernel.pop("gamma", None)  # the CV estimators search a grid of them
    return _cv_class(st)(**kernel, gammas=gammas, disparity_bound=st.disparity_bound,
                         disparity_confidence=st.disparity_confidence, constraints=st.constraints,
                         cv=st.folds, **st.approximation)


def _ridge(mu: Callable[[FitSettings], float]) -> Callable[[FitSettings], Any]:
    def build(st: FitSettings) -> Any:
        return FairKernelRidge(mu(st), **st.kernel, relative_alpha=st.alpha, **st.approximation)

    return build


#: Every method, by name.
REGISTRY: dict[str, Method] = {m.name: m for m in (
    Method("FKR-F2E", _fkr, lambda st: f"FKR-F2E ({st.objective})"),
    Method("CV", _cv, lambda st: f"{_cv_class(st).__name__} (<= {st.disparity_bound:g})"),
    Method("FKRR", _ridge(lambda st: st.mu), lambda st: f"FKRR (mu={st.mu:g})",
           baseline=True, from_moments=True, threshold=RIDGE_THRESHOLD),
    Method("kernel ridge", _ridge(lambda st: 0.0), lambda st: "kernel ridge",
           baseline=True, from_moments=True, threshold=RIDGE_THRESHOLD),
    Method("constant", None, lambda st: "constant", baseline=True),
)}


def constant_from_labels(y: Any, *, classify: bool) -> float:
    """The constant predictor fitted on the training labels ``y`` (a numpy array).

    Returns
    -------
    float
        The majority class of 0/1 labels (the smaller on a tie), or the mean label.
    """
    if classify:
        return float(np.bincount(np.asarray(y).astype(np.int64)).argmax())
    return float(np.mean(y))


def constant_from_moments(moments: Any, *, classify: bool) -> float:
    """The constant predictor from moments a fit already summed (no pass of its own).

    ``moments`` are a CV estimator's ``moments_[i]``: their per-cell class and row counts
    give the majority class, their label sum and row count the mean.
    """
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
    """What every method reports on the test rows: ``{"sd": ..., "error": ...}``.

    For 0/1 labels the statistical disparity of the predictions and their error rate; for a
    continuous label the gap between the groups' mean predictions (SD's continuous analogue)
    and the RMSE.
    """
    if classify:
        return {"sd": demographic_parity_difference(None, pred, sensitive_features=s),
                "error": error_rate(y, pred)}
    report = regression_report(y, pred, sensitive_features=s)
    return {"sd": report["mean_prediction_gap"], "error": report["rmse"]}
