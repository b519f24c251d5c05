"""Model selection under a disparity bound: every candidate from one pass, scored in one more.

:class:`FairKernelClassifierCV` and :class:`FairKernelRegressorCV` (scikit-learn's
``RidgeCV``/``LogisticRegressionCV`` are the models) split the rows into folds by a seeded
hash of their position (:func:`~daskfair.fkr.statistics.fold_of`). One pass returns every
fold's moments; every candidate of every fold is then a small solve on the client
(:mod:`~daskfair.fkr.candidates`), and the refit on all rows comes from the total moments for
free. The classifier needs one more pass: every row's validation score under every candidate
of its fold, counted in histograms (:mod:`~daskfair.fkr.scores`), which give the error and
the disparity of every threshold of every candidate. The regressor needs none: squared error
and the groups' mean predictions on a fold are functions of that fold's moments.

The selected model is the most accurate candidate whose validation disparity is within
``disparity_bound`` (the fairest, with a warning, when none is); ``cv_results_`` lists every
candidate with its validation disparity and error (:mod:`~daskfair.fkr.frontier`).
"""

from __future__ import annotations

import logging
from numbers import Real
from typing import Any

import dask.array as da
import numpy as np
import pandas as pd
from scipy.stats import norm
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.exceptions import NotFittedError
from sklearn.utils.validation import check_is_fitted

from .._random import as_seed_sequence, child_rng
from ..runtime.threads import one_blas_thread
from ._base import CalibratedClassifierMixin, FitInput, KernelModelMixin, shown
from .calibration import calibrate
from .candidates import CONSTRAINTS, FAMILIES, Search
from .candidates import embedding_components as _components
from .folds import FoldPlan, check_cv, fold_plan
from .frontier import choose, cv_results, frontier_table, plot_frontier
from .scores import regression_validation
from .search import KernelSearch, fold_candidates, validate_scores
from .statistics import FoldedMoments, Moments

__all__ = ["FairKernelClassifierCV", "FairKernelRegressorCV", "constraint_name"]

logger = logging.getLogger(__name__)

#: 1e-7 is the smallest penalty whose solves stay accurate (the centred Gram loses digits to
#: the kernel features' shared mean; 1e-8 breaks on Adult) and the most accurate there
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


def _grid(values: Any, default: tuple, cast: Any = float) -> tuple:
    if values is None:
        return default
    values = np.atleast_1d(np.asarray(values, dtype=object)).tolist()
    return tuple(None if v is None else cast(v) for v in values)


class _FairKernelCV(KernelModelMixin, BaseEstimator):
    """What both CV estimators share: parameters, folds, the search of every kernel setting,
    the choice under the bound and the refit.

    Subclasses define ``_task`` ("classification" or "regression"), ``_constraints``
    (allowed), ``_default_strengths`` and ``_validate(...)`` (one kernel setting's
    validation results).
    """

    _task = "classification"
    _constraints: tuple[str, ...] = CONSTRAINTS

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

    # -- parameters ---------------------------------------------------------------------

    def _grids(self) -> dict[str, Any]:
        """Every grid, checked, under its current name (old names warn here)."""
        p = self.get_params()
        check_cv(self.cv)
        _check_bound(self.disparity_bound)
        _check_confidence(self.disparity_confidence)
        families = (self.families,) if isinstance(self.families, str) else tuple(self.families)
        if not families or any(f not in FAMILIES for f in families):
            raise ValueError(f"families must be a subset of {FAMILIES}, got {self.families!r}.")
        alphas = _grid(p["relative_alphas"], DEFAULT_RELATIVE_ALPHAS)
        if not alphas or not all(a is not None and a >= 0 for a in alphas):
            raise ValueError(
                f"relative_alphas must be numbers >= 0, got {p['relative_alphas']!r}.")
        gammas = _grid(p["gammas"], (None,))
        if not gammas or any(g is not None and not g > 0 for g in gammas):
            raise ValueError(f"gammas must be positive numbers or None (1/n_features), got "
                             f"{p['gammas']!r}.")
        return {"families": families, "relative_alphas": alphas, "gammas": gammas,
                "strengths": _grid(self.strengths, self._default_strengths),
                "fair_feature_counts": _grid(p["fair_feature_counts"], None, int),
                "fairness_weights": _grid(p["fairness_weights"], (None,)),
                "constraint": constraint_name(self.constraints, self._constraints)}

    def _search_of(self, total: Moments, grids: dict[str, Any]) -> Search:
        r = total.sums.shape[1]
        counts = grids["fair_feature_counts"]
        if counts is None:
            counts = tuple(sorted({max(1, r // 8), max(1, r // 4), max(1, r // 2)}))
        search = Search(task=self._task, constraint=grids["constraint"],
                        families=grids["families"], alphas=grids["relative_alphas"],
                        strengths=grids["strengths"], components=counts,
                        fairness=grids["fairness_weights"])
        if "embedding" in search.families:
            search = Search(**{**search.__dict__, "components": _components(total, search)})
        return search

    def _fold_seed(self) -> int:
        return int(child_rng(as_seed_sequence(self.random_state), 1).integers(2**32))

    # -- fit ------------------------------------------------------------------------------

    def _fit(self, X: Any, y: Any, sensitive_features: Any, sample_weight: Any) -> Any:
        with one_blas_thread():  # bits independent of the client's threads
            grids = self._grids()
            data = self._fit_input(X, y, sensitive_features, sample_weight,
                                   classify=self._task == "classification")
            folds = fold_plan(self.cv, data.n, self._fold_seed(), data.X,
                              data.labels if data.classify else data.y)
            searches, landmarks = [], None
            for gamma in grids["gammas"]:
                # one draw of landmarks for every kernel setting
                searches.append(self._search_kernel(data, gamma, folds, landmarks, grids))
                landmarks, data = searches[-1].feature_map.landmarks, searches[-1].data
            self._keep(searches)
            self.n_splits_ = folds.n_folds
            self.disparity_confidence_ = self.disparity_confidence
            self.disparity_bound_ = float(self.disparity_bound)
            self._select()
            self._set_input_attributes(data, None)
            return self

    def _search_kernel(self, data: FitInput, gamma: float | None, folds: FoldPlan,
                       landmarks: np.ndarray | None, grids: dict[str, Any]) -> KernelSearch:
        """Every candidate of one kernel setting, with its validation results."""
        fmap = self._fit_feature_map(data, gamma, landmarks)
        folded, data = self._moments(data, fmap, folds=folds)
        _check_folds(folded, data)
        search = self._search_of(folded.total, grids)
        table, per_fold, refit = fold_candidates(folded, search)
        table.insert(1, "gamma", fmap.params["gamma"])
        results = self._validate(data, fmap, folded, per_fold, refit, folds, search.constraint)
        return KernelSearch(feature_map=fmap, data=data, total=folded.total, table=table,
                            dual_coef=fmap.whitening @ refit.coef, intercept=refit.intercept,
                            **results)

    def _keep(self, searches: list[KernelSearch]) -> None:
        """Candidates of every kernel setting side by side."""
        self.feature_maps_ = [s.feature_map for s in searches]
        self.moments_ = [s.total for s in searches]
        self._table = pd.concat([s.table for s in searches], ignore_index=True)
        self.candidate_kernel_ = np.concatenate(
            [np.full(len(s.table), i) for i, s in enumerate(searches)])
        self.candidate_dual_coef_ = np.hstack([s.dual_coef for s in searches])
        self.candidate_intercept_ = np.concatenate([s.intercept for s in searches])
        self.cv_disparity_ = np.vstack([s.disparity for s in searches])
        self.cv_disparity_sem_ = np.vstack([s.disparity_sem for s in searches])
        self.cv_error_ = np.vstack([s.error for s in searches])
        self.n_candidates_ = len(self._table)
        if searches[0].thresholds is not None:
            self.thresholds_ = np.vstack([s.thresholds for s in searches])
            self._hist = np.concatenate([s.hist for s in searches])
            self._bins = (np.concatenate([s.lo for s in searches]),
                          np.concatenate([s.width for s in searches]))
            self._cell_label = searches[0].data.cell_label

    # -- choice ---------------------------------------------------------------------------

    def _margin(self) -> np.ndarray:
        """z·σ of every candidate and threshold: the noise allowed for when its validation
        disparity is compared with the bound (0 with ``disparity_confidence=None``).

        The disparity measured on new rows as many as one fold differs from the validation
        estimate by the noise of both: with the validation estimate's standard error s (on
        all n rows), σ = s·√(1 + F) (one fold's rows: variance F·s²).
        """
        if self.disparity_confidence_ is None:
            return np.zeros_like(self.cv_disparity_)
        z = float(norm.ppf(self.disparity_confidence_))
        return z * np.sqrt(1.0 + self.n_splits_) * self.cv_disparity_sem_

    def _select(self) -> None:
        margin = self._margin()
        upper = self.cv_disparity_ + margin
        k, j = choose(self.cv_disparity_, self.cv_error_, self.disparity_bound_, upper=upper,
                      margin=self.disparity_confidence_ is not None)
        edges = getattr(self, "thresholds_", None)
        self.cv_results_ = cv_results(self._table, edges, self.cv_disparity_, self.cv_error_,
                                      (k, j), classify=self._task == "classification",
                                      bound=self.disparity_bound_, upper=upper,
                                      sem=self.cv_disparity_sem_)
        self.best_index_ = int(np.flatnonzero(self.cv_results_["selected"])[0])
        self.best_params_ = self.cv_results_["params"][self.best_index_]
        self.best_score_ = float(self.cv_results_["mean_test_score"][self.best_index_])
        self.best_disparity_ = float(self.cv_disparity_[k, j])
        self.best_disparity_interval_ = (max(0.0, self.best_disparity_ - margin[k, j]),
                                         float(upper[k, j]))
        if edges is not None:
            self.best_threshold_ = float(edges[k, j])
        if self.refit:
            self.feature_map_ = self.feature_maps_[self.candidate_kernel_[k]]
            self.dual_coef_ = self.candidate_dual_coef_[:, k]
            self.intercept_ = float(self.candidate_intercept_[k])
            self._refit_extra(k, j)
        else:  # no model, not even an earlier fit's
            for name in ("feature_map_", "dual_coef_", "intercept_", "threshold_",
                         "calibration_"):
                self.__dict__.pop(name, None)

    def _refit_extra(self, k: int, j: int) -> None:
        """What the chosen candidate needs beyond its score (the classifier's calibration)."""

    def choose(self, disparity_bound: float, disparity_confidence: Any = "unchanged") -> Any:
        """Select again under another bound, from the stored validation results (no pass).

        Every candidate was refitted on all rows during ``fit``, so this only changes the
        choice, ``disparity_bound_``, ``disparity_confidence_`` and (with ``refit=True``)
        the model; the constructor parameters are left as they are.

        Parameters
        ----------
        disparity_bound : float
            The new bound on the disparity.
        disparity_confidence : float, None or "unchanged"
            The new confidence of the margin (None: no margin); by default the current one.

        Returns
        -------
        self
            The estimator, with the new choice.
        """
        check_is_fitted(self, "cv_error_")
        _check_bound(disparity_bound)
        if not (isinstance(disparity_confidence, str) and disparity_confidence == "unchanged"):
            _check_confidence(disparity_confidence)
            self.disparity_confidence_ = disparity_confidence
        self.disparity_bound_ = float(disparity_bound)
        self._select()
        return self

    @property
    def frontier_(self) -> pd.DataFrame:
        """``cv_results_`` as a table: the parameters, ``threshold``, validation
        ``disparity`` and ``error``, ``pareto`` and ``selected``."""
        check_is_fitted(self, "cv_results_")
        return frontier_table(self.cv_results_)

    def _check_model(self, attribute: str) -> None:
        if not self.refit and hasattr(self, "cv_results_"):
            raise NotFittedError(
                f"{type(self).__name__} was fitted with refit=False: it keeps the search "
                "(cv_results_, best_params_) but no model. Fit with refit=True, or "
                "set_params(**best_params_) and fit to refit the chosen candidate alone.")
        super()._check_model(attribute)


def _check_bound(bound: Any) -> None:
    if not (isinstance(bound, Real) and not isinstance(bound, bool) and bound >= 0):
        raise ValueError(f"disparity_bound must be a number >= 0, got {bound!r}.")


def _check_confidence(confidence: Any) -> None:
    if confidence is None:
        return
    if not (isinstance(confidence, Real) and not isinstance(confidence, bool)
            and 0.5 <= confidence < 1):
        raise ValueError(
            f"disparity_confidence must be a number in [0.5, 1) or None (no margin), got "
            f"{confidence!r}.")


def _check_folds(folded: FoldedMoments, data: FitInput) -> None:
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


class FairKernelClassifierCV(CalibratedClassifierMixin, ClassifierMixin, _FairKernelCV):
    """The most accurate fair kernel classifier within a disparity bound, chosen by CV.

    Reads the training data twice per kernel setting, whatever the number of candidates and
    folds: one pass for
    the moments of every fold (:mod:`~daskfair.fkr.statistics`), one for every candidate's
    validation scores. Candidates (:mod:`~daskfair.fkr.candidates`):

    * ``"reduction"``: the decision-level reduction of demographic parity or equalized odds
      (Agarwal et al. 2018) with least-squares posteriors on the kernel features: for every
      ridge penalty α and strength t, the score η̂(x) − ½ Σ λ_c(t) φ̂_c(x); t = 0 is
      unconstrained kernel ridge.
    * ``"embedding"``: FKR-F²E, ridge on k mean-matched fair features, for every
      (k, fairness weight, α).

    Every candidate is scored at 257 thresholds on the validation rows, so the threshold is
    chosen too. The sensitive attribute is needed to fit, never to predict.

    The validation disparity is an estimate: the selection keeps a margin for its noise
    (``disparity_confidence``), so that the bound holds on new rows too, not only on the
    validation rows. A candidate is feasible when its validation disparity d plus
    z·s·√(1 + F) is within the bound: s is d's standard error from the per-group counts
    of the validation rows (binomial, for the two groups of the largest gap), F the number
    of folds and z the normal quantile of ``disparity_confidence``. d + z·s·√(1 + F) is then
    a one-sided prediction bound, at that confidence, for the disparity measured on new
    rows as many as one fold (a test set of a fifth to a third of the training rows, with
    5 folds). Larger test sets have less noise: the bound is then conservative.

    Parameters
    ----------
    kernel, degree, coef0
        The kernel, as in :class:`~daskfair.FairKernelRegressor`.
    gammas : float, None or sequence of them
        Kernel coefficients (None: 1/n_features): each is searched with its own two passes
        and competes with the others (the chosen one is in ``best_params_``).
    disparity_bound : float
        The largest disparity accepted: demographic parity difference (the FKR-F²E
        paper's statistical disparity; largest gap in positive rate between groups) or equalized
        odds difference (largest gap in true- or false-positive rate). It is compared with
        the validation disparity plus its margin (``disparity_confidence``).
    disparity_confidence : float in [0.5, 1) or None
        Confidence that the disparity on new rows as many as one fold stays within the bound
        (default 0.9; see above). None: no margin, the validation disparity alone is compared
        with the bound (more accurate candidates, a bound often exceeded on new rows).
    constraints : {"demographic_parity", "equalized_odds"} or a fairlearn moment
        fairlearn's ``DemographicParity()`` and ``EqualizedOdds()`` are accepted too (their
        own bounds are not read: the bound is ``disparity_bound``).
    families : sequence of {"reduction", "embedding"}
        Candidate families searched.
    relative_alphas : sequence of float, optional
        Ridge penalties relative to tr(K) (default 1e-7, 1e-6, 1e-5, 1e-4, 1e-3; see
        :class:`~daskfair.FairKernelRegressor`).
    strengths : sequence of float, optional
        Reduction strengths t (default 31 values in [0, 3]; t = 1 equalises the groups'
        mean scores on the training rows).
    fair_feature_counts : sequence of int, optional
        Fair features k of the embedding family (default r/8, r/4, r/2 of the feature map's
        rank r).
    fairness_weights : sequence of (float or None)
        Fairness weights of the embedding family (None: exact mean constraint); default
        (None, 1.0).
    cv : int, splitter or iterable of (train, test)
        An integer: that many folds, rows assigned by a seeded hash of their position
        (nothing read). A scikit-learn splitter (``KFold``, ``StratifiedKFold``, …) or
        (train, test) index pairs: every row in exactly one validation fold, trained on all
        others (a splitter needs y in memory: for dask input it is read once).
    refit : bool
        Keep the selected candidate refitted on all rows (free: the total moments) for
        ``predict``. With False the search is kept (``cv_results_``, ``best_params_``) and
        ``predict`` raises ``NotFittedError``.
    n_landmarks, landmarks, rcond, approximation
        The Nyström map, as in :class:`~daskfair.FairKernelRegressor`.
    random_state : int, RandomState, Generator, SeedSequence or None
        Seeds the landmarks and the folds.
    min_group_size, small_groups
        The smallest group accepted and what happens to smaller ones, as in
        :class:`~daskfair.FairKernelRegressor`.

    Attributes
    ----------
    cv_results_ : dict of arrays
        One entry per candidate and threshold on that candidate's own disparity/error front
        (:func:`~daskfair.fkr.frontier.cv_results`): ``param_<name>``, ``params``,
        ``threshold``, ``mean_test_score`` (accuracy on the validation rows of all folds),
        ``mean_test_error``, ``mean_test_disparity``, ``sem_test_disparity`` (its standard
        error), ``upper_test_disparity`` (plus the margin: what is compared with the bound),
        ``rank_test_score``, ``pareto``, ``selected``.
    frontier_ : pandas.DataFrame
        ``cv_results_`` as a table (``disparity``, ``disparity_sem``, ``disparity_upper``,
        ``error`` columns).
    best_params_ : dict
        The selected candidate as this estimator's grids, each holding its value alone:
        ``set_params(**best_params_)`` searches that candidate only.
    best_index_ : int
        Its entry in ``cv_results_``.
    best_threshold_ : float
        Its threshold on the score.
    best_score_, best_disparity_ : float
        Its validation accuracy and disparity.
    best_disparity_interval_ : tuple of float
        (lower, upper): the disparity expected on new rows as many as one fold, at
        ``disparity_confidence`` on each side (lower clipped at 0); upper is what was
        compared with the bound. Both equal ``best_disparity_`` without a margin.
    cv_disparity_, cv_disparity_sem_, cv_error_ : ndarray of shape (n_candidates, 257)
        Every candidate's validation disparity, its standard error and its error at every
        threshold (``thresholds_``).
    n_splits_ : int
        The number of folds.
    disparity_bound_, disparity_confidence_
        The bound and confidence of the current choice (the constructor's, or the ones given
        to :meth:`choose`).
    dual_coef_, intercept_, threshold_ : ndarray, float, float
        The refitted score ``k(x, L)·dual_coef_ + intercept_``
        and the threshold above which ``classes_[1]`` is predicted.
    calibration_ : tuple of float
        (a, c): ``predict_proba`` is σ(a·score + c), fitted on the validation scores with
        probability 1/2 at the threshold.
    classes_, feature_map_, groups_, merged_groups_, n_features_in_, feature_names_in_
        As in :class:`~daskfair.FairKernelClassifier`.
    feature_maps_, moments_ : list
        Per kernel setting searched: the Nyström map and the moments of all training rows
        (:class:`~daskfair.fkr.statistics.Moments`), from which
        :meth:`FairKernelRidge.fit_moments` gives kernel ridge and FKRR with no pass.
    """

    _task = "classification"
    _default_strengths = tuple(np.linspace(0, 3, 31))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        tags.classifier_tags.poor_score = True
        return tags

    def fit(self, X: Any, y: Any, *, sensitive_features: Any = None,
            sample_weight: Any = None) -> FairKernelClassifierCV:
        """Search the candidates on the folds of ``cv`` and refit the chosen one on all rows.

        Two passes per kernel setting.

        Parameters
        ----------
        X : array-like, pandas or dask of shape (n_samples, n_features)
            Training rows.
        y : array-like, pandas or dask of shape (n_samples,)
            Two classes.
        sensitive_features : array-like, pandas or dask, (n_samples,) or (n_samples, c)
            Group of every row (any number of groups); needed to fit, never to predict.
            Several columns make one group of every combination of their values.
        sample_weight : array-like or dask of shape (n_samples,), optional
            Weight of every row.

        Returns
        -------
        self : FairKernelClassifierCV
            The fitted estimator.

        Examples
        --------
        >>> import numpy as np
        >>> from daskfair import FairKernelClassifierCV, make_fair_regression
        >>> X, y, s = (np.asarray(a) for a in make_fair_regression(600, 4, random_state=0))
        >>> clf = FairKernelClassifierCV(disparity_bound=0.05, n_landmarks=100, random_state=0)
        >>> clf = clf.fit(X, (y > 0).astype(int), sensitive_features=s)
        >>> bool(clf.best_disparity_ <= 0.05)
        True
        >>> clf.predict(X[:4]).shape
        (4,)
        """
        return self._fit(X, y, sensitive_features, sample_weight)

    def _validate(self, data: FitInput, fmap: Any, folded: FoldedMoments, per_fold: list,
                  refit: Any, folds: FoldPlan, constraint: str) -> dict[str, np.ndarray]:
        return validate_scores(data, fmap, folded.total, per_fold, refit, folds, constraint)

    def _refit_extra(self, k: int, j: int) -> None:
        lo, width = self._bins
        by_class = np.zeros((2, self._hist.shape[2]))
        np.add.at(by_class, self._cell_label, self._hist[k])
        self._set_calibration(*calibrate(by_class, lo[k], width[k], self.thresholds_[k, j]))

    def plot_frontier(self, ax: Any = None) -> Any:
        """The validation disparity/error of every candidate, the front and the choice.

        Parameters
        ----------
        ax : matplotlib.axes.Axes, optional
            Where to draw (default: a new figure).

        Returns
        -------
        matplotlib.axes.Axes
            The axes drawn on.
        """
        check_is_fitted(self, "cv_results_")
        return plot_frontier(self, ax, "error")


class FairKernelRegressorCV(RegressorMixin, _FairKernelCV):
    """The most accurate fair kernel regressor within a mean-prediction gap, chosen by CV.

    One pass: the validation squared error and the groups' mean predictions of every
    candidate on every fold are functions of the folds' moments. Candidates as in
    :class:`FairKernelClassifierCV`, with the label's ridge regression as the base of the
    reduction (t = 1 equalises the groups' mean predictions on the training rows).

    Parameters
    ----------
    disparity_bound : float
        The largest accepted gap between the groups' mean predictions (in the units of y),
        compared with the validation gap plus its margin.
    disparity_confidence : float in [0.5, 1) or None
        As in :class:`FairKernelClassifierCV`, with the gap's standard error from the folds'
        spread (the standard deviation of the F folds' own gaps over √F): the one pass has
        no per-group second moments of the predictions.
    constraints : {"demographic_parity"} or fairlearn's ``DemographicParity()``
        The mean-prediction gap (demographic parity of a score).
    strengths : sequence of float, optional
        Default 25 values in [0, 1.2].
    kernel, gammas, degree, coef0, families, relative_alphas, fair_feature_counts
        As in :class:`FairKernelClassifierCV` (each gamma one pass).
    fairness_weights, cv, refit, approximation, n_landmarks, landmarks, rcond, random_state
        As in :class:`FairKernelClassifierCV`.
    min_group_size, small_groups
        As in :class:`~daskfair.FairKernelRegressor`.

    Attributes
    ----------
    cv_results_ : dict of arrays
        Every candidate: parameters, ``mean_test_score`` (−RMSE), ``mean_test_error``
        (RMSE), ``mean_test_disparity`` (mean gap), ``rank_test_score``, ``pareto``,
        ``selected``.
    frontier_ : pandas.DataFrame
        ``cv_results_`` as a table.
    best_params_, best_index_, best_score_, best_disparity_, best_disparity_interval_
        As in :class:`FairKernelClassifierCV`.
    disparity_bound_, disparity_confidence_, n_splits_, cv_disparity_, cv_disparity_sem_
        As in :class:`FairKernelClassifierCV` (one column: no threshold).
    dual_coef_, intercept_, feature_map_, groups_, merged_groups_, n_features_in_
        As in :class:`FairKernelClassifierCV`.
    feature_names_in_
        As in :class:`FairKernelClassifierCV`.
    """

    _task = "regression"
    _constraints = ("demographic_parity",)
    _default_strengths = tuple(np.linspace(0, 1.2, 25))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.regressor_tags.poor_score = True
        return tags

    def fit(self, X: Any, y: Any, *, sensitive_features: Any = None,
            sample_weight: Any = None) -> FairKernelRegressorCV:
        """Search the candidates on the folds of ``cv`` and refit the chosen one.

        One pass per kernel setting.

        Parameters
        ----------
        X : array-like, pandas or dask of shape (n_samples, n_features)
            Training rows.
        y : array-like, pandas or dask of shape (n_samples,)
            Continuous targets.
        sensitive_features : array-like, pandas or dask, (n_samples,) or (n_samples, c)
            Group of every row (any number of groups); several columns make one group of
            every combination of their values.
        sample_weight : array-like or dask of shape (n_samples,), optional
            Weight of every row.

        Returns
        -------
        self : FairKernelRegressorCV
            The fitted estimator.

        Examples
        --------
        >>> import numpy as np
        >>> from daskfair import FairKernelRegressorCV, make_fair_regression
        >>> X, y, s = (np.asarray(a) for a in make_fair_regression(600, 4, random_state=0))
        >>> reg = FairKernelRegressorCV(disparity_bound=0.1, n_landmarks=100, random_state=0)
        >>> reg.fit(X, y, sensitive_features=s).predict(X[:4]).shape
        (4,)
        """
        return self._fit(X, y, sensitive_features, sample_weight)

    def _validate(self, data: FitInput, fmap: Any, folded: FoldedMoments, per_fold: list,
                  refit: Any, folds: FoldPlan, constraint: str) -> dict[str, np.ndarray]:
        error, gap, sem = regression_validation(folded, per_fold)
        return {"disparity": gap[:, None], "error": error[:, None],
                "disparity_sem": sem[:, None]}

    def predict(self, X: Any) -> np.ndarray | da.Array:
        """Predictions of shape (n_samples,); lazy for dask input.

        Parameters
        ----------
        X : array-like, pandas or dask of shape (n_samples, n_features)
            Rows to predict (no group needed).

        Returns
        -------
        ndarray or dask array of shape (n_samples,)
            The predictions.
        """
        return self._kernel_output(X)

    def plot_frontier(self, ax: Any = None) -> Any:
        """The validation mean gap/RMSE of every candidate, the front and the choice.

        Parameters
        ----------
        ax : matplotlib.axes.Axes, optional
            Where to draw (default: a new figure).

        Returns
        -------
        matplotlib.axes.Axes
            The axes drawn on.
        """
        check_is_fitted(self, "cv_results_")
        return plot_frontier(self, ax, "RMSE")
