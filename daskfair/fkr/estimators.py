"""FKR-F²E's estimators: fair features learned from one pass of kernel moments, then a ridge
(:class:`FairKernelRegressor`) or a calibrated classifier (:class:`FairKernelClassifier`) on
them."""

from __future__ import annotations

import logging
from typing import Any

import numpy as np
from sklearn.base import (
    BaseEstimator,
    ClassifierMixin,
    ClassNamePrefixFeaturesOutMixin,
    RegressorMixin,
    TransformerMixin,
)

from ..runtime.threads import one_blas_thread
from ._base import (
    FitInput,
    KernelModelMixin,
    check_choice,
    check_flag,
    check_kernel_params,
    check_positive_int,
    input_attributes,
)
from ._predict import CalibratedClassifierMixin, KernelRegressionMixin, calibration_attributes
from .calibration import N_BINS, calibrate, score_bins, score_spread
from .embedding import OBJECTIVES, constrained_rank, fair_directions
from .logistic import logistic_newton
from .ridge import penalty_scale, ridge_fit
from .scores import ScoreModel, score_histograms
from .statistics import Moments

__all__ = ["FairKernelClassifier", "FairKernelRegressor"]

logger = logging.getLogger(__name__)

LOSSES = ("squared", "logistic")


def _default_k(stats: Moments, objective: str, fairness: float | None) -> int:
    # The paper's default n/250, capped at what the feature map can give (an explicit
    # n_fair_features above the rank is an error instead).
    r = (constrained_rank(stats) if objective == "mean_discrepancy" and fairness is None
         else stats.sums.shape[1])
    if r < 1:
        raise ValueError(
            "the kernel feature map has no direction left once the group means are matched "
            "(its rank is at most the number of groups minus one): use a fairness trade-off "
            "(fairness_weight=...), or a kernel of higher rank.")
    want = max(1, int(stats.n) // 250)
    if want > r:
        logger.info("n_fair_features: n/250 = %d exceeds the rank %d; using %d", want, r, r)
    return min(want, r)


def _training_calibration(data: FitInput, fmap: Any, stats: Moments, coef: np.ndarray,
                          dual_coef: np.ndarray, intercept: float, threshold: float | None
                          ) -> tuple[float, float]:
    """(slope, threshold) of the classifier from its training scores binned per class (one
    pass); ``coef`` is the score's in the whitened basis of ``stats``."""
    mean, std = score_spread(stats, coef[:, None], np.array([intercept]))
    lo, width = score_bins(mean, std)
    model = ScoreModel(basis=dual_coef[None, :, None], offset=np.zeros((1, 1)),
                       mix=np.ones((1, 1, 1)), shift=np.full((1, 1), intercept),
                       lo=lo, width=width, n_bins=N_BINS)
    hist = score_histograms(data.X, data.cells, data.weights, fmap.landmarks, fmap.params,
                            model, n_cells=len(data.cell_group))[0]
    by_class = np.zeros((2, N_BINS))
    np.add.at(by_class, data.cell_label, hist)
    return calibrate(by_class, float(lo[0]), float(width[0]), threshold)


def _logistic_fit(data: FitInput, fmap: Any, stats: Moments, fitted: dict[str, Any],
                  p: dict[str, Any]) -> dict[str, Any]:
    """The logistic loss on the fair features by Newton's method (one pass per step)."""
    # near p = 1/2, logit p ≈ 4 (p − 1/2): the least-squares fit is the start, and
    # α·scale/4 the logistic penalty of the same strength
    start = np.r_[4 * fitted["coef_"], 4 * (fitted["intercept_"] - 0.5)]
    theta, n_iter, converged = logistic_newton(
        data.X, data.y, data.weights, fmap.landmarks, fmap.params, fitted["projection_"],
        start, penalty=p["relative_alpha"] * penalty_scale(stats) / 4, max_iter=p["max_iter"])
    if not converged:
        logger.warning("logistic loss: Newton's method did not converge in %d steps",
                       p["max_iter"])
    return {"coef_": theta[:-1], "intercept_": float(theta[-1]),
            "dual_coef_": fitted["projection_"] @ theta[:-1], "n_iter_": n_iter}


class _FairFeatureModel(KernelModelMixin, BaseEstimator):
    """What the regressor and the classifier share: parameters, the pass, the fair
    directions W and the ridge on them."""

    def __init__(
        self,
        kernel: str = "rbf",
        *,
        gamma: float | None = None,
        degree: int = 3,
        coef0: float = 1.0,
        n_fair_features: int | None = None,
        relative_alpha: float = 1e-4,
        fit_intercept: bool = True,
        objective: str = "mean_discrepancy",
        fairness_weight: float | None = None,
        approximation: str = "nystroem",
        n_landmarks: int = 1000,
        landmarks: str = "uniform",
        rcond: float = 1e-10,
        random_state: Any = None,
        min_group_size: int = 1,
        small_groups: str = "raise",
    ) -> None:
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.n_fair_features = n_fair_features
        self.relative_alpha = relative_alpha
        self.fit_intercept = fit_intercept
        self.objective = objective
        self.fairness_weight = fairness_weight
        self.approximation = approximation
        self.n_landmarks = n_landmarks
        self.landmarks = landmarks
        self.rcond = rcond
        self.random_state = random_state
        self.min_group_size = min_group_size
        self.small_groups = small_groups

    def _checked_params(self) -> dict[str, Any]:
        """Every parameter, checked."""
        p = self.get_params()
        check_kernel_params(p, p["gamma"])
        check_choice("objective", p["objective"], OBJECTIVES)
        if p["n_fair_features"] is not None:
            check_positive_int("n_fair_features", p["n_fair_features"])
        if not p["relative_alpha"] >= 0:
            raise ValueError(f"relative_alpha must be >= 0, got {p['relative_alpha']}.")
        check_flag("fit_intercept", p["fit_intercept"])
        weight = p["fairness_weight"]
        if weight is not None and p["objective"] == "paper":
            raise ValueError(
                "fairness_weight applies to objective='mean_discrepancy' only; the paper "
                "objective has no trade-off parameter (vary n_fair_features instead).")
        if weight is not None and not weight >= 0:
            raise ValueError(f"fairness_weight must be >= 0 or None, got {weight}.")
        return p

    def _fit_embedding(self, data: FitInput, p: dict[str, Any]
                       ) -> tuple[Moments, np.ndarray, FitInput, Any, dict[str, Any]]:
        """The pass, the fair directions W and the ridge on them: (moments, W, data with its
        groups and classes known, the feature map, the fitted attributes)."""
        fmap = self._fit_feature_map(data, p, p["gamma"])
        folded, data = self._moments(data, fmap, cell_grams=p["objective"] == "paper")
        stats = folded.total
        k = p["n_fair_features"]
        if k is None:
            k = _default_k(stats, p["objective"], p["fairness_weight"])
        W, values = fair_directions(stats, k, p["objective"], p["fairness_weight"])
        coef, intercept = ridge_fit(
            stats.change_basis(W), p["relative_alpha"], fit_intercept=p["fit_intercept"],
            scale=penalty_scale(stats))
        projection = fmap.whitening @ W
        fitted = {"coef_": coef, "intercept_": intercept, "projection_": projection,
                  "dual_coef_": projection @ coef, "eigenvalues_": values,
                  "n_fair_features_": k, "_n_features_out": k,
                  **input_attributes(data, fmap)}
        return stats, W, data, fmap, fitted


class FairKernelRegressor(
    ClassNamePrefixFeaturesOutMixin,
    RegressorMixin,
    TransformerMixin,
    KernelRegressionMixin,
    _FairFeatureModel,
):
    """Fair kernel regression via fair feature embedding (FKR-F²E).

    Learns k directions in kernel space on which every sensitive group has the same mean,
    embeds the data on them and fits ridge regression on the embedding.

    Parameters
    ----------
    kernel : {"rbf", "linear", "polynomial", "sigmoid"}, default="rbf"
        The kernel k.
    gamma : float, default=None
        Kernel coefficient; None means ``1 / n_features`` (scikit-learn's convention).
    degree : int, default=3
        Degree of the polynomial kernel.
    coef0 : float, default=1.0
        Additive constant of the polynomial and sigmoid kernels (the paper's c).
    n_fair_features : int, default=None
        The number k of fair features; None means ``max(1, n_samples // 250)`` (the paper's)
        capped at the rank of the feature map (minus the directions the exact constraint
        takes). An explicit value above that rank is an error.
    relative_alpha : float, default=1e-4
        Ridge penalty relative to tr(K): the paper's γ (eq. 13) is ``relative_alpha · tr(K)``,
        so one value means the same for any number of rows and any kernel scale
        (scikit-learn's ``KernelRidge.alpha`` is the absolute penalty, hence another name).
        About 1e-8 is almost no penalty, 1e-1 close to the mean predictor.
    fit_intercept : bool, default=True
        Fit an unpenalised intercept (the paper's eq. 13 has none).
    objective : {"mean_discrepancy", "paper"}, default="mean_discrepancy"
        "mean_discrepancy": the largest-variance directions on which every sensitive group
        has the same mean (the literal eq. 3, any number of groups). "paper": the least
        eigenvectors of eq. (17)/(18) with the cross term symmetrised, two groups only, kept
        to reproduce the paper (docs/design.md#fkr-mean-discrepancy).
    fairness_weight : float, default=None
        For ``objective="mean_discrepancy"`` only: a scale-free penalty γ ≥ 0 on the
        group-mean gaps instead of the exact constraint (None); 0 is plain kernel PCA
        (docs/design.md#any-number-of-groups).
    approximation : {"nystroem", "exact"}, default="nystroem"
        "exact" uses every training row as a landmark (n × n statistics: small data only).
    n_landmarks : int, default=1000
        Landmarks m of the Nyström map.
    landmarks : {"uniform", "kmeans++"}, default="uniform"
        How the landmarks are drawn.
    rcond : float, default=1e-10
        Eigenvalues of the landmark kernel below ``rcond`` times the largest are dropped;
        in [1e-15, 1).
    random_state : int, RandomState, Generator, SeedSequence or None, default=None
        Seeds the landmark draw.
    min_group_size : int, default=1
        The fewest rows a sensitive group may have (a group is one value of the sensitive
        column, or one combination of values of several); 1 accepts every group. For dask
        input a value above 1 costs one small reduction that reads the sensitive columns.
    small_groups : {"raise", "merge"}, default="raise"
        Groups of fewer than ``min_group_size`` rows: "raise" is a ``ValueError`` naming
        them; "merge" puts them into one group "other" ("other_1", … if that name is taken)
        with a ``UserWarning``, every group name becoming a string; it is an error when the
        merged group is still too small or fewer than two groups remain.

    Attributes
    ----------
    feature_map_ : NystroemMap
        The Nyström map (landmarks L, whitening, kernel parameters).
    projection_ : ndarray of shape (m, n_fair_features_)
        Fair features are ``k(x, L) @ projection_``.
    eigenvalues_ : ndarray of shape (n_fair_features_,)
        Objective value of each direction.
    coef_ : ndarray of shape (n_fair_features_,)
        Ridge coefficients on the fair features.
    dual_coef_ : ndarray of shape (m,)
        ``projection_ @ coef_``: predictions are ``k(x, L) @ dual_coef_ + intercept_``.
    intercept_ : float
        The intercept (0 with ``fit_intercept=False``).
    n_fair_features_ : int
        The number of fair features k.
    groups_ : ndarray of shape (n_groups,) or None
        The sensitive groups in code order (None when fitted without them); several
        sensitive columns give combined names such as ``"black,F"`` (fairlearn's convention:
        each value as ``str``, a comma or backslash in it escaped by a backslash).
    merged_groups_ : dict of str to int
        The groups merged into "other" by ``small_groups="merge"``, with their rows.
    n_features_in_ : int
        The number of features seen by ``fit``.
    feature_names_in_ : ndarray of str of shape (n_features_in_,)
        Only when X was a DataFrame with string column names.

    See Also
    --------
    FairKernelClassifier : The same fair features for a binary label.
    FairKernelRegressorCV : Parameters chosen by cross-validation under a disparity bound.
    FairKernelRidge : The FKRR baseline, kernel ridge with a covariance penalty.

    Notes
    -----
    Okray, Hu & Lan (2019): the mean discrepancy of eq. (3), the embedding of eq. (10)–(12),
    the ridge of eq. (13) and the fair features of eq. (14); ``objective="paper"`` is eq.
    (17)/(18). ``fit`` reads X, y and the groups once, block by block (a dask label or group
    column exactly as often as X; the pass also lists the groups), plus 8 row blocks of X for
    the landmark draw. ``predict`` and ``transform`` compute one kernel block per row block,
    lazily for dask input.
    """

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # Fair features are chosen for equal group means, not for fit: on data where the
        # target follows the group, a low training score is the intended outcome.
        tags.regressor_tags.poor_score = True
        return tags

    def fit(self, X: Any, y: Any, *, sensitive_features: Any = None,
            sample_weight: Any = None) -> FairKernelRegressor:
        """Fit on ``X``, ``y`` and the groups (numpy, pandas or dask).

        Parameters
        ----------
        X : array-like, pandas or dask of shape (n_samples, n_features)
            Training rows.
        y : array-like, pandas or dask of shape (n_samples,)
            Targets.
        sensitive_features : array-like of shape (n_samples,) or (n_samples, c), default=None
            Group of every row (numpy, pandas or dask), any number of groups (two for
            ``objective="paper"``); several columns make one group of every combination of
            their values. None: no fairness constraint (with a warning).
        sample_weight : array-like or dask of shape (n_samples,), default=None
            Weight of every row in the moments.

        Returns
        -------
        self : FairKernelRegressor
            The fitted estimator.

        Raises
        ------
        ValueError
            On a parameter out of its range, inputs of different lengths, NaN or infinite
            values, a group without rows of positive weight, or more fair features than the
            feature map's rank.

        Examples
        --------
        >>> import numpy as np
        >>> from daskfair import FairKernelRegressor, make_fair_regression
        >>> X, y, s = (np.asarray(a) for a in make_fair_regression(500, 4, random_state=0))
        >>> reg = FairKernelRegressor(n_fair_features=5, n_landmarks=100, random_state=0)
        >>> reg = reg.fit(X, y, sensitive_features=s)
        >>> Z = reg.transform(X)
        >>> bool(abs(Z[s == 0].mean(axis=0) - Z[s == 1].mean(axis=0)).max() < 1e-8)
        True
        """
        with one_blas_thread():  # bits independent of the client's threads
            p = self._checked_params()
            data = self._fit_input(X, y, sensitive_features, sample_weight, p, classify=False)
            fitted = self._fit_embedding(data, p)[-1]
            self._set_fitted(fitted)
            return self

    def transform(self, X: Any) -> Any:
        """The k fair features ``k(x, L) @ projection_`` (eq. 14).

        Parameters
        ----------
        X : array-like, pandas or dask of shape (n_samples, n_features)
            Rows to map.

        Returns
        -------
        ndarray or dask array of shape (n_samples, n_fair_features_)
            The fair features (lazy for dask input); on the training rows every group has
            the same mean.
        """
        X = self._check_X(X)
        return self.feature_map_.project(X, self.projection_)


class FairKernelClassifier(CalibratedClassifierMixin, ClassifierMixin, _FairFeatureModel):
    """FKR-F²E for binary classification, with a threshold and probabilities.

    The fair features are learned as in :class:`FairKernelRegressor`, whose parameters mean
    the same here. On them the classifier fits least squares on the 0/1-coded label (the
    paper's), calibrated by Platt's logistic fit on the training scores, or logistic
    regression.

    Parameters
    ----------
    kernel : {"rbf", "linear", "polynomial", "sigmoid"}, default="rbf"
    gamma : float, default=None
    degree : int, default=3
    coef0 : float, default=1.0
    n_fair_features : int, default=None
    relative_alpha : float, default=1e-4
    fit_intercept : bool, default=True
    objective : {"mean_discrepancy", "paper"}, default="mean_discrepancy"
    fairness_weight : float, default=None
    loss : {"squared", "logistic"}, default="squared"
        "squared": least squares, calibrated on the training scores; "logistic": penalised
        logistic regression by Newton's method, whose score is the log-odds.
    threshold : "auto" or float, default="auto"
        For ``loss="squared"``: "auto" predicts ``classes_[1]`` where the calibrated
        probability is at least 1/2; a number thresholds the least-squares score there
        (0.5 is the paper's rule).
    max_iter : int, default=25
        Newton steps at most for ``loss="logistic"``.
    approximation : {"nystroem", "exact"}, default="nystroem"
    n_landmarks : int, default=1000
    landmarks : {"uniform", "kmeans++"}, default="uniform"
    rcond : float, default=1e-10
    random_state : int, RandomState, Generator, SeedSequence or None, default=None
    min_group_size : int, default=1
    small_groups : {"raise", "merge"}, default="raise"

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
        ``classes_[1]`` is the positive class (coded 1).
    calibration_ : tuple of float
        (a, c): ``predict_proba`` is σ(a·f(x) + c) with f the score.
    threshold_ : float
        The decision threshold on f.
    n_iter_ : int
        Newton steps (``loss="logistic"``), else 1.
    feature_map_, projection_, eigenvalues_, coef_, dual_coef_, intercept_
        As in :class:`FairKernelRegressor`; f(x) = ``k(x, L) @ dual_coef_ + intercept_``.
    n_fair_features_, groups_, merged_groups_, n_features_in_, feature_names_in_
        As in :class:`FairKernelRegressor`.

    See Also
    --------
    FairKernelRegressor : The same fair features for a continuous target.
    FairKernelClassifierCV : Parameters and threshold chosen by cross-validation under a
        disparity bound.

    Notes
    -----
    The fair features are the paper's eq. (10)–(14), as in :class:`FairKernelRegressor`.
    ``fit`` reads X, y and the groups twice with ``loss="squared"``: the moments pass, then
    the training scores for the calibration; with ``loss="logistic"`` once plus once per
    Newton step (``n_iter_``). A dask label or group column is read exactly as often as X;
    the landmark draw reads 8 row blocks of X more.
    """

    def __init__(
        self,
        kernel: str = "rbf",
        *,
        gamma: float | None = None,
        degree: int = 3,
        coef0: float = 1.0,
        n_fair_features: int | None = None,
        relative_alpha: float = 1e-4,
        fit_intercept: bool = True,
        objective: str = "mean_discrepancy",
        fairness_weight: float | None = None,
        loss: str = "squared",
        threshold: float | str = "auto",
        max_iter: int = 25,
        approximation: str = "nystroem",
        n_landmarks: int = 1000,
        landmarks: str = "uniform",
        rcond: float = 1e-10,
        random_state: Any = None,
        min_group_size: int = 1,
        small_groups: str = "raise",
    ) -> None:
        super().__init__(
            kernel, gamma=gamma, degree=degree, coef0=coef0, n_fair_features=n_fair_features,
            relative_alpha=relative_alpha, fit_intercept=fit_intercept, objective=objective,
            fairness_weight=fairness_weight, approximation=approximation,
            n_landmarks=n_landmarks, landmarks=landmarks, rcond=rcond,
            random_state=random_state, min_group_size=min_group_size,
            small_groups=small_groups)
        self.loss = loss
        self.threshold = threshold
        self.max_iter = max_iter

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        tags.classifier_tags.poor_score = True
        return tags

    def _checked_params(self) -> dict[str, Any]:
        """Every parameter, checked."""
        p = super()._checked_params()
        check_choice("loss", p["loss"], LOSSES)
        if not (p["threshold"] == "auto" or isinstance(p["threshold"], int | float)):
            raise ValueError(f"threshold must be 'auto' or a number, got {p['threshold']!r}.")
        check_positive_int("max_iter", p["max_iter"])
        return p

    def fit(self, X: Any, y: Any, *, sensitive_features: Any = None,
            sample_weight: Any = None) -> FairKernelClassifier:
        """Fit on two classes; ``classes_[1]`` is coded 1.

        ``sample_weight`` weighs every row in the moments, the calibration and the logistic
        loss, so fairlearn's reductions (ExponentiatedGradient, GridSearch) can wrap the
        classifier.

        Parameters
        ----------
        X : array-like, pandas or dask of shape (n_samples, n_features)
            Training rows.
        y : array-like, pandas or dask of shape (n_samples,)
            Two classes.
        sensitive_features : array-like of shape (n_samples,) or (n_samples, c), default=None
            Group of every row (numpy, pandas or dask); several columns make one group of
            every combination of their values. None: no fairness constraint (with a warning).
        sample_weight : array-like or dask of shape (n_samples,), default=None
            Weight of every row.

        Returns
        -------
        self : FairKernelClassifier
            The fitted estimator.

        Raises
        ------
        ValueError
            As :meth:`FairKernelRegressor.fit`, and when y does not hold exactly two classes.

        Examples
        --------
        >>> import numpy as np
        >>> from daskfair import FairKernelClassifier, make_fair_regression
        >>> X, y, s = (np.asarray(a) for a in make_fair_regression(500, 4, random_state=0))
        >>> clf = FairKernelClassifier(n_fair_features=5, n_landmarks=100, random_state=0)
        >>> clf = clf.fit(X, (y > 0).astype(int), sensitive_features=s)
        >>> clf.predict(X[:5]).shape, clf.predict_proba(X[:5]).shape
        ((5,), (5, 2))
        """
        with one_blas_thread():  # bits independent of the client's threads
            p = self._checked_params()
            data = self._fit_input(X, y, sensitive_features, sample_weight, p, classify=True)
            stats, W, data, fmap, fitted = self._fit_embedding(data, p)
            fitted["n_iter_"] = 1  # the least-squares solve
            if p["loss"] == "logistic":
                fitted.update(_logistic_fit(data, fmap, stats, fitted, p))
                slope, threshold = 1.0, 0.0  # the score is the log-odds
            else:
                slope, threshold = _training_calibration(
                    data, fmap, stats, W @ fitted["coef_"], fitted["dual_coef_"],
                    fitted["intercept_"],
                    None if p["threshold"] == "auto" else float(p["threshold"]))
            self._set_fitted({**fitted, **calibration_attributes(slope, threshold)})
            return self
