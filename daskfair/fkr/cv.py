"""Model selection under a disparity bound: the CV estimators."""

from __future__ import annotations

import warnings
from typing import Any, ClassVar

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.exceptions import NotFittedError
from sklearn.utils.validation import check_is_fitted

from .._params import (
    Flag,
    Grid,
    Integer,
    Named,
    Nothing,
    Options,
    ParamsMixin,
    Real,
    Spec,
    check_params,
)
from .._random import as_seed_sequence, child_rng
from ..runtime.threads import one_blas_thread
from ._base import (
    ABSENT,
    KERNEL,
    NYSTROEM,
    FitInput,
    KernelModelMixin,
    check_kernel,
    input_attributes,
)
from ._predict import CalibratedClassifierMixin, KernelRegressionMixin
from .candidates import CONSTRAINTS, FAMILIES
from .folds import MAX_FOLDS, FoldPlan, fold_plan
from .frontier import frontier_table, plot_frontier
from .rank import LandmarkChoice, draw_landmarks
from .scores import regression_validation
from .search import (
    KernelSearch,
    check_folds,
    fold_candidates,
    search_attributes,
    search_grid,
    validate_scores,
)
from .selection import select
from .statistics import FoldedMoments
from .widths import (
    SAMPLE_LANDMARKS,
    SAMPLE_ROWS,
    WIDTH_FACTORS,
    median_gamma,
    sample_input,
    search_widths,
)

__all__ = ["FairKernelClassifierCV", "FairKernelRegressorCV", "constraint_name"]

#: 1e-7 is the smallest penalty whose solves stay accurate (docs/design.md#fkr-relative-penalties)
DEFAULT_RELATIVE_ALPHAS = (1e-7, 1e-6, 1e-5, 1e-4, 1e-3)
_FAIRLEARN_MOMENTS = {"DemographicParity": "demographic_parity", "EqualizedOdds": "equalized_odds"}


def constraint_name(constraints: Any, allowed: tuple[str, ...] = CONSTRAINTS) -> str:
    """The constraint's name from a string, ``DemographicParity()`` or ``EqualizedOdds()``."""
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


_POSITIVE = Real(0, low_open=True)
_CONFIDENCE: list[Spec] = [Nothing, Real(0.5, 1, high_open=True)]


def _grid(values: Any, default: tuple | None, cast: Any = float) -> tuple | None:
    if values is None:
        return default
    values = np.atleast_1d(np.asarray(values, dtype=object)).tolist()
    return tuple(None if v is None else cast(v) for v in values)


class _FairKernelCV(ParamsMixin, KernelModelMixin, BaseEstimator):
    """The CV estimators' parameters, search, choice and refit (subclasses: ``_validate``)."""

    _task = "classification"
    _constraints: tuple[str, ...] = CONSTRAINTS
    _default_strengths: tuple[float, ...] = ()
    _error_name = "error"

    def __init__(self, kernel: str = "rbf", *, gammas: Any = "auto", degree: int = 3,
                 coef0: float = 1.0, disparity_bound: float = 0.01,
                 disparity_confidence: float | None = 0.9, new_rows: int | None = None,
                 constraints: Any = "demographic_parity",
                 families: Any = ("reduction", "embedding"), relative_alphas: Any = None,
                 strengths: Any = None, fair_feature_counts: Any = None,
                 fairness_weights: Any = (None, 1.0), cv: Any = 5, refit: bool = True,
                 approximation: str = "nystroem", n_landmarks: int | str = "auto",
                 max_landmarks: int = 2000, landmarks: str = "uniform", rcond: float = 1e-10,
                 random_state: Any = None, min_group_size: int = 1,
                 small_groups: str = "raise") -> None:
        self.kernel, self.gammas, self.degree, self.coef0 = kernel, gammas, degree, coef0
        self.disparity_bound, self.disparity_confidence = disparity_bound, disparity_confidence
        self.new_rows = new_rows
        self.constraints, self.families = constraints, families
        self.relative_alphas, self.strengths = relative_alphas, strengths
        self.fair_feature_counts, self.fairness_weights = fair_feature_counts, fairness_weights
        self.cv, self.refit, self.approximation = cv, refit, approximation
        self.n_landmarks, self.max_landmarks = n_landmarks, max_landmarks
        self.landmarks, self.rcond = landmarks, rcond
        self.random_state, self.min_group_size = random_state, min_group_size
        self.small_groups = small_groups

    _parameter_constraints: ClassVar[dict[str, list[Spec]]] = {
        **KERNEL, "gammas": [Options(("auto",)), Nothing, _POSITIVE,
                             Grid((Nothing, _POSITIVE))],
        "disparity_bound": [Real(0)], "disparity_confidence": _CONFIDENCE,
        "new_rows": [Nothing, Integer(1)],
        "constraints": [Options(CONSTRAINTS), Named(
            "a fairlearn DemographicParity() or EqualizedOdds()",
            lambda v: type(v).__name__ in _FAIRLEARN_MOMENTS)],
        "families": [Options(FAMILIES), Grid((Options(FAMILIES),))],
        "relative_alphas": [Nothing, Real(0), Grid((Real(0),))],
        "strengths": [Nothing, Real(), Grid((Real(),))],
        "fair_feature_counts": [Nothing, Integer(1), Grid((Integer(1),))],
        "fairness_weights": [Nothing, Real(0), Grid((Nothing, Real(0)))],
        "cv": [Integer(2, MAX_FOLDS), Named("a scikit-learn splitter", lambda v: hasattr(
                   v, "split") and not isinstance(v, str | bytes)),
               Named("(train, test) index pairs", lambda v: hasattr(v, "__iter__")
                     and not isinstance(v, str | bytes))],
        "refit": [Flag], **NYSTROEM, "n_landmarks": [Options(("auto",)), Integer(1)],
        "max_landmarks": [Integer(1)]}

    def _check_combination(self, p: dict[str, Any]) -> None:
        check_kernel(p, None)
        constraint_name(p["constraints"], self._constraints)

    def _search_params(self) -> dict[str, Any]:
        """The parameters, checked, with the grids as tuples (their defaults for None) and the
        constraint's name."""
        p = self._validate_params()
        return {**p, "families": _grid(p["families"], (), str),
                "relative_alphas": _grid(p["relative_alphas"], DEFAULT_RELATIVE_ALPHAS),
                "gammas": (p["gammas"] if isinstance(p["gammas"], str)
                           else _grid(p["gammas"], (None,))),
                "strengths": _grid(p["strengths"], self._default_strengths),
                "fair_feature_counts": _grid(p["fair_feature_counts"], None, int),
                "fairness_weights": _grid(p["fairness_weights"], (None,)),
                "disparity_bound": float(p["disparity_bound"]),
                "constraint": constraint_name(p["constraints"], self._constraints)}

    def _fold_seed(self) -> int:
        return int(child_rng(as_seed_sequence(self.random_state), 1).integers(2**32))

    def fit(self, X: Any, y: Any, *, sensitive_features: Any = None,
            sample_weight: Any = None) -> Any:
        """Search the candidates on the folds of ``cv`` and refit the chosen one on all rows.

        Parameters
        ----------
        X, sensitive_features, sample_weight : as in :meth:`FairKernelRegressor.fit`.
        y : array-like, pandas or dask of shape (n_samples,)
            Two classes (classifier) or targets (regressor).

        Returns
        -------
        self

        Raises
        ------
        ValueError
            On bad parameters or input, or a fold whose training rows miss a group or class.

        Examples
        --------
        >>> import numpy as np
        >>> from daskfair import FairKernelClassifierCV, make_fair_regression
        >>> X, y, s = (np.asarray(a) for a in make_fair_regression(600, 4, random_state=0))
        >>> clf = FairKernelClassifierCV(disparity_bound=0.05, n_landmarks=100, random_state=0)
        >>> clf = clf.fit(X, (y > 0).astype(int), sensitive_features=s)
        >>> bool(clf.best_disparity_ <= 0.05), clf.predict(X[:4]).shape
        (True, (4,))
        """
        with one_blas_thread():  # bits independent of the client's threads
            p = self._search_params()
            classify = self._task == "classification"
            data = self._fit_input(X, y, sensitive_features, sample_weight, p,
                                   classify=classify)
            folds = fold_plan(p["cv"], data.n, self._fold_seed(), data.X,
                              data.labels if data.classify else data.y)
            # one landmark draw for every kernel setting (with "auto", its rank per setting)
            choice = draw_landmarks(data.X, data.n if p["approximation"] == "exact"
                                    else p["n_landmarks"], p["max_landmarks"],
                                    landmarks=p["landmarks"], random_state=p["random_state"],
                                    rcond=p["rcond"])
            gammas, widths, searches = p["gammas"], ABSENT, []
            if isinstance(gammas, str):  # "auto"
                gammas, widths, searches = self._width_from_data(data, p, folds, choice)
            if searches:  # the sample was every row: its searches are the fit's
                data = searches[-1].data
                gammas = ()
            for gamma in gammas:
                landmarks = choice.rows(self._kernel_params(data, p, gamma))
                searches.append(self._search_kernel(data, p, gamma, folds, landmarks))
                data = searches[-1].data
            ranks = choice.table()
            fitted = {**search_attributes(searches), "n_splits_": folds.n_folds,
                      "_constraint": p["constraint"], "_n_rows": data.n,
                      "width_search_": widths,
                      "rank_search_": ABSENT if ranks is None else ranks}
            fitted.update(select(fitted, p["disparity_bound"], p["disparity_confidence"],
                                 classify=classify, refit=p["refit"], new_rows=p["new_rows"]))
            self._set_fitted({**fitted, **input_attributes(data, None)})
            return self

    def _width_from_data(self, data: FitInput, p: dict[str, Any], folds: FoldPlan,
                         choice: LandmarkChoice
                         ) -> tuple[tuple[float | None, ...], Any, list[KernelSearch]]:
        """``gammas="auto"``: the width of :data:`WIDTH_FACTORS` times the median heuristic
        (1/n_features for kernels other than rbf) whose candidates, searched on a sample of
        rows as the whole fit searches its own, choose the lowest validation error under the
        bound; with the table of every width and, when the sample is every row, its folds
        the fit's and its landmarks the chosen width's, every width's search."""
        if p["kernel"] == "linear":  # no width
            return (None,), ABSENT, []
        base = median_gamma(choice.pool) if p["kernel"] == "rbf" else None
        base = base or 1.0 / data.X.shape[1]
        grid = [base * f for f in WIDTH_FACTORS]
        sample = sample_input(data, SAMPLE_ROWS, p["random_state"],
                              max(len(choice.pool), data.X.shape[1]))
        if sample is None:  # a group or class missing from the sample: the heuristic alone
            return (base,), ABSENT, []
        # every row: the fit's folds; else the same number or splitter (index pairs name
        # the whole input's rows: 5 folds)
        cv = p["cv"] if isinstance(p["cv"], int) or hasattr(p["cv"], "split") else 5
        plan = (folds if sample.n == data.n else
                fold_plan(cv, sample.n, self._fold_seed(), sample.X,
                          sample.labels if sample.classify else sample.y))
        searches, few = [], choice.first(SAMPLE_LANDMARKS)

        def fit(gamma: float) -> dict[str, float]:
            search = self._search_kernel(sample, p, gamma, plan, few)
            searches.append(search)
            state = {**search_attributes([search]), "_constraint": p["constraint"],
                     "_n_rows": sample.n}
            with warnings.catch_warnings():  # no candidate within the bound: the fairest
                warnings.simplefilter("ignore", UserWarning)
                chosen = select(state, p["disparity_bound"], p["disparity_confidence"],
                                classify=sample.classify, refit=False, new_rows=p["new_rows"])
            best = chosen["best_index_"]
            return {"error": float(chosen["cv_results_"]["mean_test_error"][best]),
                    "disparity": chosen["best_disparity_"]}

        gamma, table = search_widths(grid, fit)
        table.insert(1, "factor", WIDTH_FACTORS)
        table.insert(2, "sample_rows", sample.n)
        whole = (plan is folds and len(searches) == len(grid) and np.array_equal(
            few, choice.rows(self._kernel_params(data, p, gamma))))
        return (gamma,), table, searches if whole else []

    def _search_kernel(self, data: FitInput, p: dict[str, Any], gamma: float | None,
                       folds: FoldPlan, landmarks: np.ndarray | None) -> KernelSearch:
        """Every candidate of one kernel setting, with its validation results."""
        fmap = self._fit_feature_map(data, p, gamma, landmarks)
        folded, data = self._moments(data, fmap, folds=folds)
        check_folds(folded, data)
        search = search_grid(folded.total, p, self._task)
        table, per_fold, refit = fold_candidates(folded, search)
        table.insert(1, "gamma", fmap.params["gamma"])
        table.insert(2, "n_landmarks", len(fmap.landmarks))
        results = self._validate(data, fmap, folded, per_fold, refit, folds, search.constraint)
        return KernelSearch(feature_map=fmap, data=data, total=folded.total, table=table,
                            dual_coef=fmap.whitening @ refit.coef, intercept=refit.intercept,
                            **results)

    def choose(self, disparity_bound: float, disparity_confidence: Any = "unchanged",
               new_rows: Any = "unchanged") -> Any:
        """Choose again under another bound from the stored validation results (no pass).

        Parameters
        ----------
        disparity_bound : float
            The new bound on the disparity.
        disparity_confidence : float, None or "unchanged", default="unchanged"
            The new confidence of the bound (None: the validation disparity alone).
        new_rows : int, None or "unchanged", default="unchanged"
            The new sample the bound is to hold on (None: the population).

        Returns
        -------
        self
        """
        check_is_fitted(self, "cv_error_")
        p = self._validate_params()
        unchanged = Options(("unchanged",))
        check_params({"disparity_bound": disparity_bound,
                      "disparity_confidence": disparity_confidence, "new_rows": new_rows},
                     {"disparity_bound": [Real(0)],
                      "disparity_confidence": [*_CONFIDENCE, unchanged],
                      "new_rows": [Nothing, Integer(1), unchanged]})

        def given(value: Any) -> bool:
            return not (isinstance(value, str) and value == "unchanged")

        bound = float(disparity_bound)
        confidence = (disparity_confidence if given(disparity_confidence)
                      else self.disparity_confidence_)
        rows = new_rows if given(new_rows) else self.new_rows_
        self._set_fitted(select(vars(self), bound, confidence, new_rows=rows,
                                classify=self._task == "classification", refit=p["refit"]))
        return self

    @property
    def frontier_(self) -> pd.DataFrame:
        """``cv_results_`` as a table (:func:`daskfair.fkr.frontier.frontier_table`)."""
        check_is_fitted(self, "cv_results_")
        return frontier_table(self.cv_results_)

    def plot_frontier(self, ax: Any = None) -> Any:
        """Plot every candidate's validation disparity and error, the front and the choice.

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

    Every candidate is fitted on every fold and scored at 257 thresholds; the most accurate
    within the bound (else the fairest, with a warning) is refitted on all rows.

    Parameters
    ----------
    kernel, degree, coef0, landmarks, rcond : as in FairKernelRegressor.
    gammas : "auto", float, None or sequence of them, default="auto"
        Kernel coefficients. "auto" chooses the width from the data: γ₀ = 1 / the median
        squared distance between landmarks (the median heuristic; 1/n_features for the
        polynomial and sigmoid kernels) times each of 1/64, 1/16, 1/4, 1 and 4, every
        width searched as the fit searches on a sample of up to
        20,000 rows, and the one whose choice under the bound has the lowest validation
        error kept (``width_search_``); the sample's search uses 500 of the landmarks
        (with at most 500 landmarks and 20,000 rows, the sample is the fit: every width
        stays in the search). Numbers (None: 1/n_features) are searched on every row,
        each with its own two passes.
    n_landmarks : int or "auto", default="auto"
        Nyström landmarks m (at least the rows: every row, the exact kernel). "auto" chooses
        the rank from the data, for each kernel setting: with at most ``max_landmarks``
        rows every row is a landmark; else ``max_landmarks`` + 2,000 rows are drawn, 2,000
        of them held out, and m is the first of 250, 500, 1000, … (up to
        ``max_landmarks``) whose landmarks capture 99 % of the kernel's trace on the
        held-out rows (``rank_search_``).
    max_landmarks : int, default=2000
        The ceiling of ``n_landmarks="auto"``.
    disparity_bound : float, default=0.01
        The largest disparity accepted (demographic parity or equalized odds difference).
    disparity_confidence : float in [0.5, 1) or None, default=0.9
        A candidate is accepted when an upper confidence bound of its disparity, at this
        confidence and over every pair of groups, is within ``disparity_bound`` (None: its
        validation disparity is; docs/design.md#fkr-selection-margin).
    new_rows : int or None, default=None
        What the bound is about: None, the disparity of the population the training rows were
        drawn from (the validation estimate's own noise); a number, the disparity measured on
        a new sample of that many rows (its noise added).
    constraints : {"demographic_parity", "equalized_odds"}, default="demographic_parity"
        Or fairlearn's ``DemographicParity()``, ``EqualizedOdds()`` (their bounds not read).
    families : sequence of {"reduction", "embedding"}, default=("reduction", "embedding")
        The constraint's reduction (Agarwal et al. 2018) and FKR-F²E's fair features.
    relative_alphas : sequence of float, default=None
        Ridge penalties relative to tr(K); None means (1e-7, 1e-6, 1e-5, 1e-4, 1e-3).
    strengths : sequence of float, default=None
        Reduction strengths t; None means 31 values in [0, 3] (0: unconstrained).
    fair_feature_counts : sequence of int, default=None
        Fair features k of the embedding; None means r/8, r/4 and r/2 of the map's rank r.
    fairness_weights : sequence of (float or None), default=(None, 1.0)
        Fairness weights of the embedding (None: the exact mean constraint).
    cv : int, splitter or iterable of (train, test), default=5
        Folds: a number (rows hashed by position), a KFold-like splitter or index pairs.
    refit : bool, default=True
        Keep the chosen candidate refitted on all rows (False: no ``predict``).
    approximation, min_group_size, small_groups : as in FairKernelRegressor.
    random_state : int, RandomState, Generator, SeedSequence or None, default=None
        Seeds the landmarks and the folds.

    Attributes
    ----------
    cv_results_, frontier_ : dict of ndarray, pandas.DataFrame
        Per candidate and threshold on its own front (and as a table): ``param_<name>``,
        ``params``, ``candidate``, ``threshold``, ``mean_test_{score,error,disparity}``,
        ``{sem,upper}_test_disparity``, ``rank_test_score``, ``pareto``, ``selected``.
    best_params_, best_index_ : dict, int
        The chosen candidate as one-value grids (for ``set_params``); its ``cv_results_`` entry.
    best_threshold_, best_score_, best_disparity_ : float
        Its threshold, validation accuracy and validation disparity.
    best_disparity_interval_ : tuple of float
        The chosen candidate's validation disparity minus and plus the margin: its upper end
        is the bound that was compared with ``disparity_bound`` (the population's, or that of
        ``new_rows`` new rows).
    cv_disparity_, cv_disparity_sem_, cv_error_, thresholds_ : ndarray of shape (K, 257)
        Every candidate's validation disparity, its standard error and error per threshold.
    n_candidates_, n_splits_ : int
        K and the number of folds.
    disparity_bound_, disparity_confidence_, new_rows_ : float, float or None, int or None
        The bound, confidence and sample of the current choice.
    dual_coef_, intercept_, threshold_, calibration_ : ndarray of shape (m,), float, float, tuple
        The refitted score ``k(x, L) @ dual_coef_ + intercept_``, its threshold, Platt's (a, c).
    candidate_dual_coef_, candidate_intercept_, candidate_kernel_ : ndarray
        Every candidate refitted on all rows, and its kernel setting.
    feature_maps_, moments_ : list
        Per kernel setting, the Nyström map and the moments (for ``fit_moments``).
    width_search_ : pandas.DataFrame
        With ``gammas="auto"`` (and a kernel with a width): per width, ``gamma``,
        ``factor`` (of γ₀), ``sample_rows``, the validation ``error`` and ``disparity`` of
        its choice under the bound on the sample, and whether it was ``chosen``.
    rank_search_ : pandas.DataFrame
        With ``n_landmarks="auto"`` on more than ``max_landmarks`` rows: per kernel setting
        (``gamma``) and landmark count tried, the ``captured`` share of the kernel's trace
        on the ``held_rows`` and whether it was ``chosen`` (also ``cv_results_``'s
        ``param_n_landmarks``).
    classes_, feature_map_, groups_, merged_groups_ : as in FairKernelClassifier.
    n_features_in_, feature_names_in_ : as in FairKernelClassifier.

    See Also
    --------
    FairKernelClassifier : One FKR-F²E classifier with given parameters.
    FairKernelRegressorCV : The same choice for a continuous target.

    Notes
    -----
    ``fit`` reads X, y and the groups twice per kernel setting (moments, validation scores),
    whatever the candidates and folds (plus 8 row blocks of X for the landmarks, and a dask y
    once for a splitter); :meth:`choose` reads nothing. With ``gammas="auto"`` there is one
    kernel setting on more than 20,000 rows: before the two passes, the row blocks of a
    sample of 20,000 rows are read once, and each of the 5 widths is searched on it in
    memory with 500 landmarks, work that does not grow with n (a few seconds per width).
    A pass costs O(n·m·(d + m)) for m landmarks and d features (the kernel against the
    landmarks, then the moments). ``n_landmarks="auto"`` reads no more rows than one
    landmark draw; per count m tried it costs an m×m eigendecomposition and 2,000·m kernel
    values, whatever n, and stops at the first count that captures 99 %.
    The embedding family is eq. (10)–(13).
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

    As :class:`FairKernelClassifierCV` (the reduction's base is the label's ridge regression),
    with its attributes but ``classes_``, ``thresholds_``, ``best_threshold_``, ``threshold_``
    and ``calibration_``.

    Parameters
    ----------
    kernel, gammas, degree, coef0, families, relative_alphas : as in FairKernelClassifierCV.
    disparity_bound : float, default=0.01
        The largest accepted gap between the groups' mean predictions (in the units of y).
    disparity_confidence : float in [0.5, 1) or None, default=0.9
        As in FairKernelClassifierCV, with the gap's standard error from the folds' spread.
    new_rows : int or None, default=None
        As in FairKernelClassifierCV.
    constraints : {"demographic_parity"}, default="demographic_parity"
        The mean-prediction gap; fairlearn's ``DemographicParity()`` is accepted too.
    strengths : sequence of float, default=None
        Reduction strengths t; None means 25 values in [0, 1.2].
    fair_feature_counts, fairness_weights, cv, refit : as in FairKernelClassifierCV.
    approximation, n_landmarks, max_landmarks, landmarks, rcond, random_state
        As in FairKernelClassifierCV.
    min_group_size, small_groups : as in FairKernelClassifierCV.

    Attributes
    ----------
    cv_results_ : dict of ndarray
        As in FairKernelClassifierCV, without thresholds; ``mean_test_score`` is −RMSE.
    cv_disparity_, cv_disparity_sem_, cv_error_ : ndarray of shape (n_candidates, 1)
        Every candidate's validation gap, its standard error and its RMSE.

    See Also
    --------
    FairKernelRegressor : One FKR-F²E regressor with given parameters.
    FairKernelClassifierCV : The same choice for a binary label.

    Notes
    -----
    ``fit`` reads X, y and the groups once per kernel setting, whatever the candidates and folds
    (plus 8 row blocks of X for the landmarks, and a dask y once for a splitter); :meth:`choose`
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
