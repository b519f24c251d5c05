"""Model selection under a disparity bound (scikit-learn's ``RidgeCV`` and
``LogisticRegressionCV`` are the models): :class:`FairKernelClassifierCV` and
:class:`FairKernelRegressorCV` fit every candidate on every fold from one pass, score them on
the validation rows and keep the most accurate within the bound, refitted on all rows."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.exceptions import NotFittedError
from sklearn.utils.validation import check_is_fitted

from .._random import as_seed_sequence, child_rng
from ..runtime.threads import one_blas_thread
from ._base import (
    FitInput,
    KernelModelMixin,
    check_flag,
    check_kernel_params,
    check_positive_int,
    input_attributes,
)
from ._predict import CalibratedClassifierMixin, KernelRegressionMixin
from .candidates import CONSTRAINTS, FAMILIES
from .folds import FoldPlan, check_cv, fold_plan
from .frontier import frontier_table, plot_frontier
from .scores import regression_validation
from .search import (
    KernelSearch,
    check_folds,
    fold_candidates,
    search_attributes,
    search_grid,
    validate_scores,
)
from .selection import check_bound, check_confidence, select
from .statistics import FoldedMoments

__all__ = ["FairKernelClassifierCV", "FairKernelRegressorCV", "constraint_name"]

#: The default ``relative_alphas``: 1e-7 is the smallest penalty whose solves stay accurate
#: (docs/design.md#fkr-relative-penalties)
DEFAULT_RELATIVE_ALPHAS = (1e-7, 1e-6, 1e-5, 1e-4, 1e-3)
_FAIRLEARN_MOMENTS = {"DemographicParity": "demographic_parity",
                      "EqualizedOdds": "equalized_odds"}


def constraint_name(constraints: Any, allowed: tuple[str, ...] = CONSTRAINTS) -> str:
    """The constraint as daskfair's string, from a string or a fairlearn moment object
    (``DemographicParity()``, ``EqualizedOdds()``; their bounds are not read:
    ``disparity_bound`` is the bound)."""
    name = constraints if isinstance(constraints, str) else _FAIRLEARN_MOMENTS.get(
        type(constraints).__name__)
    if name not in allowed:
        raise ValueError(
            f"constraints must be one of {allowed} or fairlearn's "
            f"{', '.join(k + '()' for k, v in _FAIRLEARN_MOMENTS.items() if v in allowed)}; "
            f"got {constraints!r}.")
    if getattr(constraints, "ratio_bound", None) is not None:
        raise ValueError("ratio constraints are not supported: give the difference as "
                         "disparity_bound.")
    return name


def _grid(values: Any, default: tuple | None, cast: Any = float) -> tuple | None:
    if values is None:
        return default
    values = np.atleast_1d(np.asarray(values, dtype=object)).tolist()
    return tuple(None if v is None else cast(v) for v in values)


class _FairKernelCV(KernelModelMixin, BaseEstimator):
    """What both CV estimators share: parameters, the search of every kernel setting on the
    folds, the choice under the bound and the refit. Subclasses define ``_task``,
    ``_constraints`` (allowed), ``_default_strengths``, ``_error_name`` and ``_validate``
    (one kernel setting's validation results)."""

    _task = "classification"
    _constraints: tuple[str, ...] = CONSTRAINTS
    _default_strengths: tuple[float, ...] = ()
    _error_name = "error"

    def __init__(
        self,
        kernel: str = "rbf",
        *,
        gammas: Any = None,
        degree: int = 3,
        coef0: float = 1.0,
        disparity_bound: float = 0.01,
        disparity_confidence: float | None = 0.9,
        constraints: Any = "demographic_parity",
        families: Any = ("reduction", "embedding"),
        relative_alphas: Any = None,
        strengths: Any = None,
        fair_feature_counts: Any = None,
        fairness_weights: Any = (None, 1.0),
        cv: Any = 5,
        refit: bool = True,
        approximation: str = "nystroem",
        n_landmarks: int = 1000,
        landmarks: str = "uniform",
        rcond: float = 1e-10,
        random_state: Any = None,
        min_group_size: int = 1,
        small_groups: str = "raise",
    ) -> None:
        self.kernel = kernel
        self.gammas = gammas
        self.degree = degree
        self.coef0 = coef0
        self.disparity_bound = disparity_bound
        self.disparity_confidence = disparity_confidence
        self.constraints = constraints
        self.families = families
        self.relative_alphas = relative_alphas
        self.strengths = strengths
        self.fair_feature_counts = fair_feature_counts
        self.fairness_weights = fairness_weights
        self.cv = cv
        self.refit = refit
        self.approximation = approximation
        self.n_landmarks = n_landmarks
        self.landmarks = landmarks
        self.rcond = rcond
        self.random_state = random_state
        self.min_group_size = min_group_size
        self.small_groups = small_groups

    def _checked_params(self) -> dict[str, Any]:
        """Every parameter, checked; the grids as tuples (defaults filled in) and
        ``constraint``, the constraint's name."""
        p = self.get_params()
        check_kernel_params(p, None)
        check_cv(p["cv"])
        check_flag("refit", p["refit"])
        families = (p["families"],) if isinstance(p["families"], str) else tuple(p["families"])
        if not families or any(f not in FAMILIES for f in families):
            raise ValueError(f"families must be a subset of {FAMILIES}, got {p['families']!r}.")
        alphas = _grid(p["relative_alphas"], DEFAULT_RELATIVE_ALPHAS)
        if not alphas or not all(a is not None and a >= 0 for a in alphas):
            raise ValueError(
                f"relative_alphas must be numbers >= 0, got {p['relative_alphas']!r}.")
        gammas = _grid(p["gammas"], (None,))
        if not gammas or any(g is not None and not g > 0 for g in gammas):
            raise ValueError(f"gammas must be positive numbers or None (1/n_features), got "
                             f"{p['gammas']!r}.")
        strengths = _grid(p["strengths"], self._default_strengths)
        if not strengths or None in strengths:
            raise ValueError(f"strengths must be numbers, got {p['strengths']!r}.")
        counts = _grid(p["fair_feature_counts"], None, int)
        for k in counts or ():
            check_positive_int("fair_feature_counts", k)
        if counts == ():
            raise ValueError("fair_feature_counts must hold at least one count, or be None.")
        weights = _grid(p["fairness_weights"], (None,))
        if not weights or any(w is not None and not w >= 0 for w in weights):
            raise ValueError(f"fairness_weights must be numbers >= 0 or None (the exact "
                             f"constraint), got {p['fairness_weights']!r}.")
        return {**p, "disparity_bound": check_bound(p["disparity_bound"]),
                "disparity_confidence": check_confidence(p["disparity_confidence"]),
                "families": families, "relative_alphas": alphas, "gammas": gammas,
                "strengths": strengths, "fair_feature_counts": counts,
                "fairness_weights": weights,
                "constraint": constraint_name(p["constraints"], self._constraints)}

    def _fold_seed(self) -> int:
        return int(child_rng(as_seed_sequence(self.random_state), 1).integers(2**32))

    def fit(self, X: Any, y: Any, *, sensitive_features: Any = None,
            sample_weight: Any = None) -> Any:
        """Search the candidates on the folds of ``cv`` and refit the chosen one on all rows.

        Parameters
        ----------
        X : array-like, pandas or dask of shape (n_samples, n_features)
            Training rows.
        y : array-like, pandas or dask of shape (n_samples,)
            Two classes (:class:`FairKernelClassifierCV`) or continuous targets
            (:class:`FairKernelRegressorCV`).
        sensitive_features : array-like of shape (n_samples,) or (n_samples, c), default=None
            Group of every row (numpy, pandas or dask; any number of groups); several
            columns make one group of every combination of their values.
        sample_weight : array-like or dask of shape (n_samples,), default=None
            Weight of every row.

        Returns
        -------
        self
            The fitted estimator.

        Raises
        ------
        ValueError
            On a parameter out of its range, bad inputs (as :meth:`FairKernelRegressor.fit`
            and :meth:`FairKernelClassifier.fit`), or a fold whose training rows miss a
            group or a class.

        Examples
        --------
        >>> import numpy as np
        >>> from daskfair import FairKernelClassifierCV, FairKernelRegressorCV
        >>> from daskfair import make_fair_regression
        >>> X, y, s = (np.asarray(a) for a in make_fair_regression(600, 4, random_state=0))
        >>> clf = FairKernelClassifierCV(disparity_bound=0.05, n_landmarks=100, random_state=0)
        >>> clf = clf.fit(X, (y > 0).astype(int), sensitive_features=s)
        >>> bool(clf.best_disparity_ <= 0.05), clf.predict(X[:4]).shape
        (True, (4,))
        >>> reg = FairKernelRegressorCV(disparity_bound=0.1, n_landmarks=100, random_state=0)
        >>> reg.fit(X, y, sensitive_features=s).predict(X[:4]).shape
        (4,)
        """
        with one_blas_thread():  # bits independent of the client's threads
            p = self._checked_params()
            classify = self._task == "classification"
            data = self._fit_input(X, y, sensitive_features, sample_weight, p,
                                   classify=classify)
            folds = fold_plan(p["cv"], data.n, self._fold_seed(), data.X,
                              data.labels if data.classify else data.y)
            searches, landmarks = [], None
            for gamma in p["gammas"]:
                # one draw of landmarks for every kernel setting
                searches.append(self._search_kernel(data, p, gamma, folds, landmarks))
                landmarks, data = searches[-1].feature_map.landmarks, searches[-1].data
            fitted = {**search_attributes(searches), "n_splits_": folds.n_folds}
            fitted.update(select(fitted, p["disparity_bound"], p["disparity_confidence"],
                                 classify=classify, refit=p["refit"]))
            self._set_fitted({**fitted, **input_attributes(data, None)})
            return self

    def _search_kernel(self, data: FitInput, p: dict[str, Any], gamma: float | None,
                       folds: FoldPlan, landmarks: np.ndarray | None) -> KernelSearch:
        """Every candidate of one kernel setting, with its validation results."""
        fmap = self._fit_feature_map(data, p, gamma, landmarks)
        folded, data = self._moments(data, fmap, folds=folds)
        check_folds(folded, data)
        search = search_grid(folded.total, p, self._task)
        table, per_fold, refit = fold_candidates(folded, search)
        table.insert(1, "gamma", fmap.params["gamma"])
        results = self._validate(data, fmap, folded, per_fold, refit, folds, search.constraint)
        return KernelSearch(feature_map=fmap, data=data, total=folded.total, table=table,
                            dual_coef=fmap.whitening @ refit.coef, intercept=refit.intercept,
                            **results)

    def choose(self, disparity_bound: float, disparity_confidence: Any = "unchanged") -> Any:
        """Choose again under another bound, from the stored validation results (no pass).

        Changes the choice, ``disparity_bound_``, ``disparity_confidence_`` and (with
        ``refit=True``) the model; the constructor's parameters are left as they are.

        Parameters
        ----------
        disparity_bound : float
            The new bound on the disparity.
        disparity_confidence : float, None or "unchanged", default="unchanged"
            The new confidence of the margin (None: no margin); "unchanged" keeps
            ``disparity_confidence_``.

        Returns
        -------
        self
            The estimator, with the new choice.

        Raises
        ------
        sklearn.exceptions.NotFittedError
            Before ``fit``.
        ValueError
            On a bound or confidence out of range (or a parameter changed to one).
        """
        check_is_fitted(self, "cv_error_")
        p = self._checked_params()
        bound = check_bound(disparity_bound)
        unchanged = isinstance(disparity_confidence, str) and disparity_confidence == "unchanged"
        confidence = (self.disparity_confidence_ if unchanged
                      else check_confidence(disparity_confidence))
        self._set_fitted(select(vars(self), bound, confidence,
                                classify=self._task == "classification", refit=p["refit"]))
        return self

    @property
    def frontier_(self) -> pd.DataFrame:
        """``cv_results_`` as a table: the parameters, ``candidate``, ``threshold``,
        validation ``disparity``, ``disparity_sem``, ``disparity_upper`` and ``error``,
        ``pareto`` and ``selected``."""
        check_is_fitted(self, "cv_results_")
        return frontier_table(self.cv_results_)

    def plot_frontier(self, ax: Any = None) -> Any:
        """The validation disparity and error of every candidate, the front and the choice
        (:func:`daskfair.fkr.frontier.plot_frontier`).

        Parameters
        ----------
        ax : matplotlib.axes.Axes, default=None
            Where to draw (None: a new figure).

        Returns
        -------
        matplotlib.axes.Axes
            The axes drawn on.
        """
        check_is_fitted(self, "cv_results_")
        chosen = (self.best_disparity_,
                  float(self.cv_results_["mean_test_error"][self.best_index_]))
        return plot_frontier(self.frontier_, bound=self.disparity_bound_, chosen=chosen,
                             interval=self.best_disparity_interval_,
                             confidence=self.disparity_confidence_,
                             error_name=self._error_name, ax=ax)

    def _check_model(self, attribute: str) -> None:
        if not self.refit and hasattr(self, "cv_results_"):
            raise NotFittedError(
                f"{type(self).__name__} was fitted with refit=False: it keeps the search "
                "(cv_results_, best_params_) but no model. Fit with refit=True, or "
                "set_params(**best_params_) and fit to refit the chosen candidate alone.")
        super()._check_model(attribute)


class FairKernelClassifierCV(CalibratedClassifierMixin, ClassifierMixin, _FairKernelCV):
    """The most accurate fair kernel classifier within a disparity bound, chosen by CV.

    Every candidate of the grids is fitted on every fold and scored on its validation rows at
    257 thresholds; the choice is the most accurate candidate and threshold whose validation
    disparity plus a margin for its noise is within ``disparity_bound`` (the fairest, with a
    warning, when none is), refitted on all rows. The sensitive features are needed to fit,
    never to predict. The kernel, Nyström and group parameters mean what they mean in
    :class:`FairKernelRegressor`.

    Parameters
    ----------
    kernel : {"rbf", "linear", "polynomial", "sigmoid"}, default="rbf"
    gammas : float, None or sequence of them, default=None
        Kernel coefficients (None: 1/n_features); each is searched with its own passes and
        competes with the others.
    degree : int, default=3
    coef0 : float, default=1.0
    disparity_bound : float, default=0.01
        The largest disparity accepted: the demographic parity difference (the largest gap
        in positive rate between groups; the paper's statistical disparity) or the
        equalized odds difference (the largest gap in true- or false-positive rate).
    disparity_confidence : float in [0.5, 1) or None, default=0.9
        Confidence that the disparity on new rows as many as one fold stays within the
        bound: a candidate qualifies when its validation disparity d plus z·s·√(1 + F) is
        within it, with s the standard error of d, F the number of folds and z the normal
        quantile of this confidence (docs/design.md#fkr-selection-margin). None: d alone
        (more accurate choices, a bound more often exceeded).
    constraints : {"demographic_parity", "equalized_odds"}, default="demographic_parity"
        fairlearn's ``DemographicParity()`` and ``EqualizedOdds()`` are accepted too (their
        own bounds are not read).
    families : sequence of {"reduction", "embedding"}, default=("reduction", "embedding")
        "reduction": the decision-level reduction of the constraint (Agarwal et al. 2018) on
        least-squares posteriors, for every ridge penalty and strength; "embedding":
        FKR-F²E for every number of fair features, fairness weight and ridge penalty
        (docs/design.md#fkr-reductions-on-cell-statistics).
    relative_alphas : sequence of float, default=None
        Ridge penalties relative to tr(K) (``relative_alpha`` of
        :class:`FairKernelRegressor`); None means (1e-7, 1e-6, 1e-5, 1e-4, 1e-3).
    strengths : sequence of float, default=None
        Reduction strengths t; None means 31 values in [0, 3]. t = 0 is unconstrained
        kernel ridge; t = 1 equalises the groups' mean scores on the training rows.
    fair_feature_counts : sequence of int, default=None
        Fair features k of the embedding family; None means r/8, r/4 and r/2 of the
        feature map's rank r.
    fairness_weights : sequence of (float or None), default=(None, 1.0)
        Fairness weights of the embedding family (None: the exact mean constraint).
    cv : int, splitter or iterable of (train, test), default=5
        An integer: that many folds, rows assigned by a seeded hash of their position
        (nothing read). A scikit-learn splitter (``KFold``, ``StratifiedKFold``, …) or
        (train, test) index pairs: every row in exactly one validation fold, trained on all
        others (a splitter needs y in memory: for dask input it is read once).
    refit : bool, default=True
        Keep the chosen candidate refitted on all rows (free: the total moments). With
        False only the search is kept and ``predict`` raises ``NotFittedError``.
    approximation : {"nystroem", "exact"}, default="nystroem"
    n_landmarks : int, default=1000
    landmarks : {"uniform", "kmeans++"}, default="uniform"
    rcond : float, default=1e-10
    random_state : int, RandomState, Generator, SeedSequence or None, default=None
        Seeds the landmarks and the folds.
    min_group_size : int, default=1
    small_groups : {"raise", "merge"}, default="raise"

    Attributes
    ----------
    cv_results_ : dict of ndarray
        One entry per candidate and threshold on that candidate's own disparity/error
        front: ``param_<name>``, ``params``, ``candidate``, ``threshold``,
        ``mean_test_score`` (accuracy on the validation rows of all folds),
        ``mean_test_error``, ``mean_test_disparity``, ``sem_test_disparity`` (its standard
        error), ``upper_test_disparity`` (plus the margin: what is compared with the bound),
        ``rank_test_score``, ``pareto``, ``selected``.
    frontier_ : pandas.DataFrame
        ``cv_results_`` as a table.
    best_params_ : dict
        The chosen candidate as this estimator's grids, each holding its value alone:
        ``set_params(**best_params_)`` searches that candidate only.
    best_index_ : int
        Its entry in ``cv_results_``.
    best_threshold_, best_score_, best_disparity_ : float
        Its threshold on the score, validation accuracy and validation disparity.
    best_disparity_interval_ : tuple of float
        (lower, upper): the disparity expected on new rows as many as one fold, at
        ``disparity_confidence`` on each side (lower clipped at 0); upper is what was
        compared with the bound. Both equal ``best_disparity_`` without a margin.
    cv_disparity_, cv_disparity_sem_, cv_error_, thresholds_ : ndarray of shape (K, 257)
        Every one of the K candidates' validation disparity, its standard error and its
        error at each of its thresholds.
    n_candidates_, n_splits_ : int
        K and the number of folds.
    disparity_bound_, disparity_confidence_ : float, float or None
        The bound and confidence of the current choice (the constructor's or
        :meth:`choose`'s).
    dual_coef_, intercept_, threshold_ : ndarray of shape (m,), float, float
        The refitted score ``k(x, L) @ dual_coef_ + intercept_`` and the threshold from
        which ``classes_[1]`` is predicted.
    calibration_ : tuple of float
        (a, c): ``predict_proba`` is σ(a·score + c), fitted on the validation scores with
        probability 1/2 at the threshold.
    candidate_dual_coef_, candidate_intercept_, candidate_kernel_ : ndarray
        Every candidate refitted on all rows, and the kernel setting it belongs to.
    feature_maps_, moments_ : list
        Per kernel setting: the Nyström map and the moments of all training rows, from
        which :meth:`FairKernelRidge.fit_moments` fits with no pass.
    classes_, feature_map_, groups_, merged_groups_, n_features_in_, feature_names_in_
        As in :class:`FairKernelClassifier`.

    See Also
    --------
    FairKernelClassifier : One FKR-F²E classifier with given parameters.
    FairKernelRegressorCV : The same choice for a continuous target.
    FairKernelRidge : The FKRR baseline, from ``moments_`` with no pass.

    Notes
    -----
    ``fit`` reads X, y and the groups twice per kernel setting, whatever the numbers of
    candidates and folds: every fold's moments, then every candidate's validation scores (a
    dask label or group column exactly as often as X); the landmarks, one draw for every
    setting, read 8 row blocks of X more. :meth:`choose` reads nothing. The embedding family
    is eq. (10)–(13) of Okray, Hu & Lan (2019).
    """

    _task = "classification"
    _default_strengths = tuple(np.linspace(0, 3, 31))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        tags.classifier_tags.poor_score = True
        return tags

    def _validate(self, data: FitInput, fmap: Any, folded: FoldedMoments, per_fold: list,
                  refit: Any, folds: FoldPlan, constraint: str) -> dict[str, np.ndarray]:
        return validate_scores(data, fmap, folded.total, per_fold, refit, folds, constraint)


class FairKernelRegressorCV(KernelRegressionMixin, RegressorMixin, _FairKernelCV):
    """The most accurate fair kernel regressor within a mean-prediction gap, chosen by CV.

    As :class:`FairKernelClassifierCV`, whose parameters mean the same except those described
    here, with the label's ridge regression as the base of the reduction; the validation
    error and gap of every candidate are functions of the folds' moments.

    Parameters
    ----------
    kernel : {"rbf", "linear", "polynomial", "sigmoid"}, default="rbf"
    gammas : float, None or sequence of them, default=None
    degree : int, default=3
    coef0 : float, default=1.0
    disparity_bound : float, default=0.01
        The largest accepted gap between the groups' mean predictions (in the units of y).
    disparity_confidence : float in [0.5, 1) or None, default=0.9
        As in :class:`FairKernelClassifierCV`, with the gap's standard error from the folds'
        spread (the standard deviation of the F folds' own gaps over √F).
    constraints : {"demographic_parity"}, default="demographic_parity"
        The mean-prediction gap; fairlearn's ``DemographicParity()`` is accepted too.
    families : sequence of {"reduction", "embedding"}, default=("reduction", "embedding")
    relative_alphas : sequence of float, default=None
    strengths : sequence of float, default=None
        Reduction strengths t; None means 25 values in [0, 1.2]. t = 1 equalises the
        groups' mean predictions on the training rows.
    fair_feature_counts : sequence of int, default=None
    fairness_weights : sequence of (float or None), default=(None, 1.0)
    cv : int, splitter or iterable of (train, test), default=5
    refit : bool, default=True
    approximation : {"nystroem", "exact"}, default="nystroem"
    n_landmarks : int, default=1000
    landmarks : {"uniform", "kmeans++"}, default="uniform"
    rcond : float, default=1e-10
    random_state : int, RandomState, Generator, SeedSequence or None, default=None
    min_group_size : int, default=1
    small_groups : {"raise", "merge"}, default="raise"

    Attributes
    ----------
    cv_results_ : dict of ndarray
        As in :class:`FairKernelClassifierCV` without thresholds: ``mean_test_score`` is
        −RMSE, ``mean_test_error`` the RMSE, ``mean_test_disparity`` the mean gap.
    cv_disparity_, cv_disparity_sem_, cv_error_ : ndarray of shape (n_candidates_, 1)
        Every candidate's validation gap, its standard error and its RMSE.
    frontier_, best_params_, best_index_, best_score_, best_disparity_
        As in :class:`FairKernelClassifierCV`.
    best_disparity_interval_, disparity_bound_, disparity_confidence_, n_splits_
        As in :class:`FairKernelClassifierCV`.
    n_candidates_, candidate_dual_coef_, candidate_intercept_, candidate_kernel_
        As in :class:`FairKernelClassifierCV`.
    dual_coef_, intercept_, feature_maps_, moments_, feature_map_, groups_, merged_groups_
        As in :class:`FairKernelClassifierCV`.
    n_features_in_, feature_names_in_
        As in :class:`FairKernelRegressor`.

    See Also
    --------
    FairKernelRegressor : One FKR-F²E regressor with given parameters.
    FairKernelClassifierCV : The same choice for a binary label.
    FairKernelRidge : The FKRR baseline, from ``moments_`` with no pass.

    Notes
    -----
    ``fit`` reads X, y and the groups once per kernel setting, whatever the numbers of
    candidates and folds (a dask label or group column exactly as often as X); the
    landmarks, one draw for every setting, read 8 row blocks of X more. :meth:`choose`
    reads nothing. The embedding family is eq. (10)–(13) of Okray, Hu & Lan (2019).
    """

    _task = "regression"
    _constraints = ("demographic_parity",)
    _default_strengths = tuple(np.linspace(0, 1.2, 25))
    _error_name = "RMSE"

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.regressor_tags.poor_score = True
        return tags

    def _validate(self, data: FitInput, fmap: Any, folded: FoldedMoments, per_fold: list,
                  refit: Any, folds: FoldPlan, constraint: str) -> dict[str, np.ndarray]:
        error, gap, sem = regression_validation(folded, per_fold)
        return {"disparity": gap[:, None], "error": error[:, None],
                "disparity_sem": sem[:, None]}
