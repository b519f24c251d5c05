"""FKR-F²E's estimators: a ridge or a calibrated classifier on fair kernel features."""

from __future__ import annotations

import logging
from typing import Any, ClassVar

import numpy as np
from sklearn.base import (
    BaseEstimator,
    ClassifierMixin,
    ClassNamePrefixFeaturesOutMixin,
    RegressorMixin,
    TransformerMixin,
)

from .._params import Flag, Integer, Nothing, Options, ParamsMixin, Real, Spec
from ..runtime.threads import one_blas_thread
from ._base import KERNEL, NYSTROEM, FitInput, KernelModelMixin, check_kernel, input_attributes
from ._predict import CalibratedClassifierMixin, KernelRegressionMixin, calibration_attributes
from .calibration import N_BINS, calibrate, score_bins, score_spread
from .embedding import OBJECTIVES, constrained_rank, mean_discrepancy_directions, paper_directions
from .logistic import logistic_newton
from .ridge import penalty_scale, ridge_fit
from .scores import ScoreModel, score_histograms
from .statistics import Moments

__all__ = ["FairKernelClassifier", "FairKernelRegressor"]

logger = logging.getLogger(__name__)

LOSSES = ("squared", "logistic")


def _default_k(stats: Moments, objective: str, fairness: float | None) -> int:
    # the paper's n/250, capped at the rank (an explicit n_fair_features above it is an error)
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
    """(slope, threshold) from the training scores per class (one pass; ``coef`` whitened)."""
    mean, std = score_spread(stats, coef[:, None], np.array([intercept]))
    lo, width = score_bins(mean, std)
    model = ScoreModel(basis=dual_coef[None, :, None], offset=np.zeros((1, 1)),
                       mix=np.ones((1, 1, 1)), shift=np.full((1, 1), intercept),
                       lo=lo, width=width, n_bins=N_BINS)
    hist = score_histograms(data.X, data.cells, data.weights, fmap.landmarks, fmap.params,
                            model, n_cells=len(data.cell_group))[0]
    return calibrate(hist, data.cell_label, float(lo[0]), float(width[0]), threshold)


def _logistic_fit(data: FitInput, fmap: Any, stats: Moments, fitted: dict[str, Any],
                  p: dict[str, Any]) -> dict[str, Any]:
    """The logistic loss on the fair features by Newton's method (one pass per step)."""
    # logit p ≈ 4 (p − 1/2): start from 4 × the least-squares fit; α·scale/4 is the same penalty
    start = np.r_[4 * fitted["coef_"], 4 * (fitted["intercept_"] - 0.5)]
    theta, n_iter, converged = logistic_newton(
        data.X, data.y, data.weights, fmap.landmarks, fmap.params, fitted["projection_"],
        start, penalty=p["relative_alpha"] * penalty_scale(stats) / 4, max_iter=p["max_iter"])
    if not converged:
        logger.warning("logistic loss: Newton's method did not converge in %d steps",
                       p["max_iter"])
    return {"coef_": theta[:-1], "intercept_": float(theta[-1]),
            "dual_coef_": fitted["projection_"] @ theta[:-1], "n_iter_": n_iter}


class _FairFeatureModel(ParamsMixin, KernelModelMixin, BaseEstimator):
    """The regressor's and the classifier's parameters, pass, fair directions W and ridge."""

    def __init__(self, kernel: str = "rbf", *, gamma: float | None = None, degree: int = 3,
                 coef0: float = 1.0, n_fair_features: int | None = None,
                 relative_alpha: float = 1e-4, fit_intercept: bool = True,
                 objective: str = "mean_discrepancy", fairness_weight: float | None = None,
                 approximation: str = "nystroem", n_landmarks: int = 1000,
                 landmarks: str = "uniform", rcond: float = 1e-10, random_state: Any = None,
                 min_group_size: int = 1, small_groups: str = "raise") -> None:
        self.kernel, self.gamma, self.degree, self.coef0 = kernel, gamma, degree, coef0
        self.n_fair_features, self.relative_alpha = n_fair_features, relative_alpha
        self.fit_intercept, self.objective = fit_intercept, objective
        self.fairness_weight, self.approximation = fairness_weight, approximation
        self.n_landmarks, self.landmarks, self.rcond = n_landmarks, landmarks, rcond
        self.random_state, self.min_group_size = random_state, min_group_size
        self.small_groups = small_groups

    _parameter_constraints: ClassVar[dict[str, list[Spec]]] = {
        **KERNEL, "gamma": [Nothing, Real()], "n_fair_features": [Nothing, Integer(1)],
        "relative_alpha": [Real(0)], "fit_intercept": [Flag],
        "objective": [Options(OBJECTIVES)], "fairness_weight": [Nothing, Real(0)], **NYSTROEM}

    def _check_combination(self, p: dict[str, Any]) -> None:
        check_kernel(p, p["gamma"])
        if p["fairness_weight"] is not None and p["objective"] == "paper":
            raise ValueError(
                "fairness_weight applies to objective='mean_discrepancy' only; the paper "
                "objective has no trade-off parameter (vary n_fair_features instead).")

    def _fit_embedding(self, data: FitInput, p: dict[str, Any]
                       ) -> tuple[Moments, np.ndarray, FitInput, Any, dict[str, Any]]:
        """(moments, W, data, feature map, fitted attributes): the pass, W and the ridge."""
        fmap = self._fit_feature_map(data, p, p["gamma"])
        folded, data = self._moments(data, fmap, cell_grams=p["objective"] == "paper")
        stats = folded.total
        k = p["n_fair_features"]
        if k is None:
            k = _default_k(stats, p["objective"], p["fairness_weight"])
        W, values = (paper_directions(stats, k) if p["objective"] == "paper"
                     else mean_discrepancy_directions(stats, k, p["fairness_weight"]))
        coef, intercept = ridge_fit(
            stats.change_basis(W), p["relative_alpha"], fit_intercept=p["fit_intercept"],
            scale=penalty_scale(stats))
        projection = fmap.whitening @ W
        fitted = {"coef_": coef, "intercept_": intercept, "projection_": projection,
                  "dual_coef_": projection @ coef, "eigenvalues_": values,
                  "n_fair_features_": k, "_n_features_out": k,
                  **input_attributes(data, fmap)}
        return stats, W, data, fmap, fitted


class FairKernelRegressor(ClassNamePrefixFeaturesOutMixin, RegressorMixin, TransformerMixin,
                          KernelRegressionMixin, _FairFeatureModel):
    """Fair kernel regression via fair feature embedding (FKR-F²E).

    Learns k directions in kernel space on which every sensitive group has the same mean,
    embeds the data on them and fits ridge regression on the embedding.

    Parameters
    ----------
    kernel : {"rbf", "linear", "polynomial", "sigmoid"}, default="rbf"
        The kernel k.
    gamma : float, default=None
        Kernel coefficient; None means ``1 / n_features``.
    degree : int, default=3
        Degree of the polynomial kernel.
    coef0 : float, default=1.0
        Constant of the polynomial and sigmoid kernels (the paper's c).
    n_fair_features : int, default=None
        Fair features k; None: ``max(1, n_samples // 250)`` capped at the feature map's rank.
    relative_alpha : float, default=1e-4
        Ridge penalty relative to tr(K) (docs/design.md#fkr-relative-penalties).
    fit_intercept : bool, default=True
        Fit an unpenalised intercept (the paper's eq. 13 has none).
    objective : {"mean_discrepancy", "paper"}, default="mean_discrepancy"
        Equal group means for any number of groups (eq. 3), or eq. (17)/(18) for two groups.
    fairness_weight : float, default=None
        With "mean_discrepancy": a penalty γ ≥ 0 on the group-mean gaps (None: exact means).
    approximation : {"nystroem", "exact"}, default="nystroem"
        "exact" makes every training row a landmark (small data only).
    n_landmarks : int, default=1000
        Landmarks m of the Nyström map.
    landmarks : {"uniform", "kmeans++"}, default="uniform"
        How the landmarks are drawn.
    rcond : float, default=1e-10
        Landmark-kernel eigenvalues below ``rcond`` times the largest are dropped; in [1e-15, 1).
    random_state : int, RandomState, Generator, SeedSequence or None, default=None
        Seeds the landmark draw.
    min_group_size : int, default=1
        The fewest rows a sensitive group may have.
    small_groups : {"raise", "merge"}, default="raise"
        Smaller groups raise a ``ValueError``, or are merged into a group "other" (warning).

    Attributes
    ----------
    feature_map_ : NystroemMap
        The Nyström map (landmarks L, whitening, kernel parameters).
    projection_, eigenvalues_, n_fair_features_ : ndarray of shape (m, k), ndarray, int
        Fair features are ``k(x, L) @ projection_``; each one's objective value; their number k.
    coef_, intercept_ : ndarray of shape (k,), float
        The ridge on the fair features (intercept 0 with ``fit_intercept=False``).
    dual_coef_ : ndarray of shape (m,)
        Predictions are ``k(x, L) @ dual_coef_ + intercept_``.
    groups_, merged_groups_ : ndarray of shape (n_groups,) or None, dict of str to int
        The groups in code order (None without them); those merged into "other", with rows.
    n_features_in_, feature_names_in_ : int, ndarray of str of shape (n_features_in,)
        The features seen by ``fit`` (names from a DataFrame with string column names).

    See Also
    --------
    FairKernelClassifier : The same fair features for a binary label.
    FairKernelRegressorCV : Parameters chosen by cross-validation under a disparity bound.
    FairKernelRidge : The FKRR baseline, kernel ridge with a covariance penalty.

    Notes
    -----
    Okray, Hu & Lan (2019), eq. (3) and (10)–(14); ``objective="paper"`` is eq. (17)/(18).
    ``fit`` reads X, y and the groups once (plus 8 row blocks of X for the landmarks);
    ``predict`` and ``transform`` compute one kernel block per row block, lazy for dask.
    """

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # fair features are chosen for equal group means: a low score can be the intent
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
            Group of every row (several columns: one group per combination); None: no fairness.
        sample_weight : array-like or dask of shape (n_samples,), default=None
            Weight of every row.

        Returns
        -------
        self : FairKernelRegressor

        Raises
        ------
        ValueError
            On bad parameters or input (the message says which).

        Examples
        --------
        >>> import numpy as np
        >>> from daskfair import FairKernelRegressor, make_fair_regression
        >>> X, y, s = (np.asarray(a) for a in make_fair_regression(500, 4, random_state=0))
        >>> reg = FairKernelRegressor(n_fair_features=5, n_landmarks=100, random_state=0)
        >>> Z = reg.fit(X, y, sensitive_features=s).transform(X)
        >>> bool(abs(Z[s == 0].mean(axis=0) - Z[s == 1].mean(axis=0)).max() < 1e-8)
        True
        """
        with one_blas_thread():  # bits independent of the client's threads
            p = self._validate_params()
            data = self._fit_input(X, y, sensitive_features, sample_weight, p, classify=False)
            self._set_fitted(self._fit_embedding(data, p)[-1])
            return self

    def transform(self, X: Any) -> Any:
        """The k fair features ``k(x, L) @ projection_`` (eq. 14).

        Parameters
        ----------
        X : as in :meth:`predict`.

        Returns
        -------
        ndarray or dask array of shape (n_samples, n_fair_features)
            The fair features, lazy for dask input.
        """
        X = self._check_X(X)
        return self.feature_map_.project(X, self.projection_)


class FairKernelClassifier(CalibratedClassifierMixin, ClassifierMixin, _FairFeatureModel):
    """FKR-F²E for binary classification, with a threshold and probabilities.

    Parameters
    ----------
    kernel, gamma, degree, coef0, n_fair_features : as in FairKernelRegressor.
    relative_alpha, fit_intercept, objective, fairness_weight : as in FairKernelRegressor.
    loss : {"squared", "logistic"}, default="squared"
        Least squares calibrated on the training scores, or penalised logistic regression.
    threshold : "auto" or float, default="auto"
        For "squared": "auto" is probability 1/2; a number thresholds the score (0.5: paper).
    max_iter : int, default=25
        Newton steps at most for ``loss="logistic"``.
    approximation, n_landmarks, landmarks, rcond : as in FairKernelRegressor.
    random_state, min_group_size, small_groups : as in FairKernelRegressor.

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
        ``classes_[1]`` is the positive class (coded 1).
    threshold_, calibration_ : float, tuple of float
        The threshold on the score f, and (a, c): ``predict_proba`` is σ(a·f(x) + c).
    n_iter_ : int
        Newton steps (``loss="logistic"``), else 1.
    feature_map_, projection_, eigenvalues_, coef_, dual_coef_ : as in FairKernelRegressor.
    intercept_, n_fair_features_, groups_, merged_groups_ : as in FairKernelRegressor.
    n_features_in_, feature_names_in_ : as in FairKernelRegressor.

    See Also
    --------
    FairKernelRegressor : The same fair features for a continuous target.
    FairKernelClassifierCV : Parameters and threshold chosen by cross-validation.

    Notes
    -----
    The paper's eq. (10)–(14). ``fit`` reads X, y and the groups twice with ``loss="squared"``
    (moments, training scores), with ``loss="logistic"`` once plus once per Newton step
    (``n_iter_``), and 8 row blocks of X for the landmarks.
    """

    def __init__(self, kernel: str = "rbf", *, gamma: float | None = None, degree: int = 3,
                 coef0: float = 1.0, n_fair_features: int | None = None,
                 relative_alpha: float = 1e-4, fit_intercept: bool = True,
                 objective: str = "mean_discrepancy", fairness_weight: float | None = None,
                 loss: str = "squared", threshold: float | str = "auto", max_iter: int = 25,
                 approximation: str = "nystroem", n_landmarks: int = 1000,
                 landmarks: str = "uniform", rcond: float = 1e-10, random_state: Any = None,
                 min_group_size: int = 1, small_groups: str = "raise") -> None:
        super().__init__(
            kernel, gamma=gamma, degree=degree, coef0=coef0, n_fair_features=n_fair_features,
            relative_alpha=relative_alpha, fit_intercept=fit_intercept, objective=objective,
            fairness_weight=fairness_weight, approximation=approximation,
            n_landmarks=n_landmarks, landmarks=landmarks, rcond=rcond,
            random_state=random_state, min_group_size=min_group_size,
            small_groups=small_groups)
        self.loss, self.threshold, self.max_iter = loss, threshold, max_iter

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        tags.classifier_tags.poor_score = True
        return tags

    _parameter_constraints: ClassVar[dict[str, list[Spec]]] = {
        **_FairFeatureModel._parameter_constraints, "loss": [Options(LOSSES)],
        "threshold": [Options(("auto",)), Real()], "max_iter": [Integer(1)]}

    def fit(self, X: Any, y: Any, *, sensitive_features: Any = None,
            sample_weight: Any = None) -> FairKernelClassifier:
        """Fit on two classes; ``classes_[1]`` is coded 1.

        Parameters
        ----------
        X, sensitive_features, sample_weight : as in :meth:`FairKernelRegressor.fit`.
        y : array-like, pandas or dask of shape (n_samples,)
            Two classes.

        Returns
        -------
        self : FairKernelClassifier

        Raises
        ------
        ValueError
            On bad parameters or input, or y without exactly two classes.

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
            p = self._validate_params()
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
