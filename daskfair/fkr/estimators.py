"""FKR-F²E regressor and classifier, and the FKRR baseline, as scikit-learn estimators.

All three fit from the moments of one pass over the kernel block C = k(X, L)
(:func:`daskfair.fkr.statistics.kernel_moments`) and predict with one kernel block per row
block: ``f(x) = k(x, L) · dual_coef_ + intercept_``. The classifier reads the training rows
a second time, to place its threshold and calibrate its probabilities on the training scores
(:mod:`daskfair.fkr.scores`); with ``loss="logistic"`` each Newton step is one more pass.
Each pass reads X, y and ``sensitive_features`` together and lists the distinct groups and
classes itself (:mod:`daskfair._keyed`): a dask label or group column is read exactly as often
as X. Besides these passes, the landmarks are drawn from a seeded sample of 8 row blocks of
X. The counts are tested in
``tests/test_fkr_cv.py``.
"""

from __future__ import annotations

import logging
from typing import Any

import dask.array as da
import numpy as np
from sklearn.base import (
    BaseEstimator,
    ClassifierMixin,
    ClassNamePrefixFeaturesOutMixin,
    RegressorMixin,
    TransformerMixin,
)

from ..runtime.threads import one_blas_thread
from ._base import CalibratedClassifierMixin, FitInput, KernelModelMixin
from .calibration import N_BINS, calibrate, score_bins, score_spread
from .embedding import OBJECTIVES, constrained_rank, fair_directions
from .logistic import logistic_newton
from .ridge import fkrr_penalty, penalty_scale, ridge_fit
from .scores import ScoreModel, score_histograms
from .statistics import Moments

__all__ = ["FairKernelClassifier", "FairKernelRegressor", "FairKernelRidge"]

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
    """(slope, threshold) of the classifier from its training scores (one pass).

    f(x) = zᵀ``coef`` + ``intercept`` in the whitened basis of ``stats``, which is also
    ``k(x, L) @ dual_coef + intercept``; the training rows' scores are binned per class
    (:mod:`daskfair.fkr.calibration`) and calibrated there.
    """
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


class _FairFeatureModel(KernelModelMixin, BaseEstimator):
    """FKR-F²E's fair features and the ridge on them: what the regressor and the classifier
    share (parameters, the pass, the fair directions W and the ridge)."""


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

    def _params(self) -> dict[str, Any]:
        """The parameters, checked."""
        p = self.get_params()
        if self.objective not in OBJECTIVES:
            raise ValueError(f"objective must be one of {OBJECTIVES}, got {self.objective!r}.")
        if not p["relative_alpha"] >= 0:
            raise ValueError(f"relative_alpha must be >= 0, got {p['relative_alpha']}.")
        return p

    def _fit_embedding(self, data: FitInput, p: dict[str, Any]
                       ) -> tuple[Moments, np.ndarray, FitInput, Any, dict[str, Any]]:
        """The pass, the fair directions W and the ridge on them; returns (moments, W, data
        with its groups and classes known, the feature map, the fitted attributes — which
        ``fit`` sets once all of it has succeeded)."""
        fmap = self._fit_feature_map(data)
        folded, data = self._moments(data, fmap, cell_grams=self.objective == "paper")
        stats = folded.total
        k = p["n_fair_features"]
        if k is None:
            k = _default_k(stats, self.objective, p["fairness_weight"])
        W, values = fair_directions(stats, k, self.objective, p["fairness_weight"])
        coef, intercept = ridge_fit(
            stats.change_basis(W), p["relative_alpha"], fit_intercept=self.fit_intercept,
            scale=penalty_scale(stats))
        projection = fmap.whitening @ W
        fitted = {"coef_": coef, "intercept_": intercept, "projection_": projection,
                  "dual_coef_": projection @ coef, "eigenvalues_": values,
                  "n_fair_features_": k, "_n_features_out": k}
        return stats, W, data, fmap, fitted

    def _set_fitted(self, fitted: dict[str, Any], data: FitInput, fmap: Any) -> None:
        """Every fitted attribute at once, after the whole fit has succeeded."""
        for name, value in fitted.items():
            setattr(self, name, value)
        self._set_input_attributes(data, fmap)


class FairKernelRegressor(
    ClassNamePrefixFeaturesOutMixin,
    RegressorMixin,
    TransformerMixin,
    _FairFeatureModel,
):
    """Fair kernel regression via fair feature embedding (FKR-F²E).

    Learns the k directions η in kernel space whose group means differ least, embeds the data
    on them (the paper's eq. 10–12) and fits ridge regression on the embedding (eq. 13). Fits
    in one pass over the row blocks of X, y and the groups, which also lists the groups (plus
    the landmark draw from 8 blocks of X); predicts lazily for dask input.

    Parameters
    ----------
    kernel : {"linear", "polynomial", "sigmoid", "rbf"}
    gamma : float, optional
        Kernel coefficient; default ``1 / n_features`` (scikit-learn's convention).
    degree : int
        Degree of the polynomial kernel.
    coef0 : float
        Additive constant of the polynomial and sigmoid kernels (the paper's c).
    n_fair_features : int, optional
        Number of fair features k; default ``max(1, n_samples // 250)`` as in the paper,
        capped at the rank of the feature map (minus the constrained directions for the exact
        mean-discrepancy constraint). An explicit value above that is an error.
    relative_alpha : float
        Ridge penalty relative to tr(K): the paper's γ of eq. (13) is
        ``relative_alpha · tr(K)`` (n times the mean of k(x, x); ``relative_alpha · n`` for
        the rbf kernel; scikit-learn's ``KernelRidge.alpha`` is the absolute penalty, hence
        another name), so the same value means the same
        for any number of rows and any kernel scale. It acts between about 1e-8 (almost no
        penalty) and 1e-1 (close to the mean predictor).
    fit_intercept : bool
        Fit an unpenalised intercept (the paper's eq. 13 has none).
    objective : {"mean_discrepancy", "paper"}
        "mean_discrepancy" (default): the literal mean discrepancy of eq. (3) — the
        largest-variance directions on which every sensitive group has the same mean (kernel
        PCA in the mean-matched subspace), for any number of groups. "paper": the paper's
        eq. (17)/(18) with its cross term symmetrised (two groups only). Its least
        eigenvectors follow the data's dominant direction (docs/design.md#fkr-mean-discrepancy; what it gives
        on the paper's data: docs/findings.md F1.1); it is kept to reproduce the paper.
    fairness_weight : float, optional
        Only for ``objective="mean_discrepancy"``: a scale-free penalty γ on the group-mean
        gaps instead of the exact constraint (``None``, the default); 0 is plain kernel PCA
        (:func:`~daskfair.fkr.embedding.mean_discrepancy_directions`; how fast the gaps shrink
        with γ: docs/findings.md F1.3).
    approximation : {"nystroem", "exact"}
        "exact" uses every training row as a landmark (n × n statistics: small data only).
    n_landmarks : int
        Landmarks m of the Nyström map.
    landmarks : {"uniform", "kmeans++"}
        How landmarks are chosen.
    rcond : float
        Eigenvalues of the landmark kernel below ``rcond · max`` are dropped (the range of K).
    random_state : int, RandomState, Generator, SeedSequence or None
        Landmark selection seed.
    min_group_size : int, default=1
        The fewest rows a sensitive group may have (a group is one value of the sensitive
        column, or one combination of values when there are several columns); 1 accepts
        every group. For dask input a value above 1 costs one small reduction that reads
        the sensitive column(s) only, to count every group's rows (``sample_weight`` is
        not read: the count is of rows).
    small_groups : {"raise", "merge"}, default="raise"
        What happens to groups of fewer than ``min_group_size`` rows: "raise" is a
        ``ValueError`` naming each of them with its rows; "merge" puts them into one group
        named "other" ("other_1", … if a group is called "other"), with a ``UserWarning``
        naming them, and every group name becomes a string. It is an error when the merged
        group is still too small or fewer than two groups remain.

    Attributes
    ----------
    feature_map_ : NystroemMap
    projection_ : ndarray of shape (m, k)
        Fair features are ``k(x, L) @ projection_``.
    eigenvalues_ : ndarray of shape (k,)
        Objective value of each direction.
    coef_ : ndarray of shape (k,)
        Ridge coefficients on the fair features.
    dual_coef_ : ndarray of shape (m,)
        ``projection_ @ coef_``: predictions are ``k(x, L) @ dual_coef_ + intercept_``.
    intercept_ : float
    n_fair_features_ : int
    groups_ : ndarray of shape (J,) or None
        The sensitive groups, in code order (None when fitted without them); several
        sensitive columns give combined names such as ``"black,F"`` (fairlearn's
        convention: each value as ``str``, a comma or backslash in it escaped by a
        backslash, joined by commas).
    merged_groups_ : dict of str to int
        The groups merged into "other" by ``small_groups="merge"``, with their rows (empty
        when none were).
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Only when X was a DataFrame with string column names.
    """

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # Fair features are chosen for equal group means, not for fit: on data where the
        # target follows the group, a low training score is the intended outcome.
        tags.regressor_tags.poor_score = True
        return tags

    def fit(self, X: Any, y: Any, *, sensitive_features: Any = None,
            sample_weight: Any = None) -> FairKernelRegressor:
        """Fit on ``X`` (n_samples, n_features), ``y`` (n_samples,) and the groups.

        numpy, pandas and dask inputs are accepted; dask inputs are read once, block by block
        (plus the landmark draw's 8 blocks).
        ``sensitive_features`` may hold any number of groups (two for ``objective="paper"``);
        without it the model has no fairness constraint (a warning says so).

        Parameters
        ----------
        X : array-like, pandas or dask of shape (n_samples, n_features)
            Training rows.
        y : array-like, pandas or dask of shape (n_samples,)
            Targets.
        sensitive_features : array-like, pandas or dask, (n_samples,) or (n_samples, c), optional
            Group of every row; several columns (a 2-D array, a DataFrame, a list of
            columns) make one group of every combination of their values.
        sample_weight : array-like or dask of shape (n_samples,), optional
            Weight of every row in the moments.

        Returns
        -------
        self : FairKernelRegressor
            The fitted estimator.

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
            p = self._params()
            data = self._fit_input(X, y, sensitive_features, sample_weight, classify=False)
            _, _, data, fmap, fitted = self._fit_embedding(data, p)
            self._set_fitted(fitted, data, fmap)
            return self

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

    def transform(self, X: Any) -> np.ndarray | da.Array:
        """The k fair features ``φ_FS(x)`` (eq. 14), shape (n_samples, k); lazy for dask.

        Parameters
        ----------
        X : array-like, pandas or dask of shape (n_samples, n_features)
            Rows to map.

        Returns
        -------
        ndarray or dask array of shape (n_samples, k)
            The fair features; on the training rows every group has the same mean.
        """
        X = self._check_X(X)
        return self.feature_map_.project(X, self.projection_)


class FairKernelClassifier(CalibratedClassifierMixin, ClassifierMixin, _FairFeatureModel):
    """FKR-F²E for binary classification, with a threshold and probabilities.

    The fair features are learned as in :class:`FairKernelRegressor`; on them the classifier
    fits either least squares on the 0/1-coded label (``loss="squared"``, the paper's) or
    logistic regression (``loss="logistic"``, Newton's method, one pass per step). Least
    squares scores are then calibrated by Platt's logistic fit on the training scores (a
    second pass), which also places the threshold at probability 1/2 unless ``threshold``
    fixes it (the paper thresholds at 0.5, the midpoint of the coded classes).

    Parameters
    ----------
    loss : {"squared", "logistic"}
    threshold : "auto" or float
        For ``loss="squared"``: "auto" predicts ``classes_[1]`` where the calibrated
        probability is at least 1/2; a number thresholds the least-squares output there.
    max_iter : int
        Newton steps at most for ``loss="logistic"``.
    kernel, gamma, degree, coef0, n_fair_features, relative_alpha, fit_intercept
        As in :class:`FairKernelRegressor`.
    objective, fairness_weight, approximation, n_landmarks, landmarks, rcond, random_state
        As in :class:`FairKernelRegressor`.
    min_group_size, small_groups
        The smallest group accepted and what happens to smaller ones, as in
        :class:`FairKernelRegressor`.

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
        ``classes_[1]`` is the positive class (coded 1).
    calibration_ : tuple of float
        (a, c): ``predict_proba`` is σ(a·f(x) + c) with f the regression output.
    threshold_ : float
        The decision threshold on f.
    n_iter_ : int
        Newton steps (``loss="logistic"``; each one pass over the data), else 1.
    Other attributes as in :class:`FairKernelRegressor`. The fair features themselves
    (``transform``) are the regressor's: the classifier is not a transformer.
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
        sensitive_features : array-like, pandas or dask, (n_samples,) or (n_samples, c), optional
            Group of every row; several columns (a 2-D array, a DataFrame, a list of
            columns) make one group of every combination of their values.
        sample_weight : array-like or dask of shape (n_samples,), optional
            Weight of every row.

        Returns
        -------
        self : FairKernelClassifier
            The fitted estimator.

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
            p = self._params()
            if self.loss not in LOSSES:
                raise ValueError(f"loss must be one of {LOSSES}, got {self.loss!r}.")
            if not (self.threshold == "auto" or isinstance(self.threshold, int | float)):
                raise ValueError(f"threshold must be 'auto' or a number, got {self.threshold!r}.")
            data = self._fit_input(X, y, sensitive_features, sample_weight, classify=True)
            stats, W, data, fmap, fitted = self._fit_embedding(data, p)
            fitted["n_iter_"] = 1  # the least-squares solve; Newton's steps for the logistic loss
            if self.loss == "logistic":
                # near p = 1/2, logit p ≈ 4 (p − 1/2): the least-squares fit is the start, and
                # α·scale/4 the logistic penalty of the same strength
                start = np.r_[4 * fitted["coef_"], 4 * (fitted["intercept_"] - 0.5)]
                theta, fitted["n_iter_"], converged = logistic_newton(
                    data.X, data.y, data.weights, fmap.landmarks, fmap.params,
                    fitted["projection_"], start,
                    penalty=p["relative_alpha"] * penalty_scale(stats) / 4, max_iter=self.max_iter)
                if not converged:
                    logger.warning("logistic loss: Newton's method did not converge in %d steps",
                                   self.max_iter)
                fitted.update(coef_=theta[:-1], intercept_=float(theta[-1]),
                              dual_coef_=fitted["projection_"] @ theta[:-1])
                slope, threshold = 1.0, 0.0  # the score is the log-odds
            else:
                slope, threshold = _training_calibration(
                    data, fmap, stats, W @ fitted["coef_"], fitted["dual_coef_"],
                    fitted["intercept_"],
                    None if self.threshold == "auto" else float(self.threshold))
            self._set_fitted(fitted, data, fmap)
            self._set_calibration(slope, threshold)
            return self


class FairKernelRidge(KernelModelMixin, RegressorMixin, BaseEstimator):
    """FKRR baseline: kernel ridge with a penalty on the prediction–group covariance.

    Pérez-Suay et al. (2017), the FKR-F²E paper's main comparison (its eq. 1). In explicit
    features Z (docs/design.md#fkrr-baseline)::

        w = (ZᵀHZ + α·tr(ZᵀHZ)·I + μ_eff Σ_g v_g v_gᵀ)⁻¹ ZᵀHy,   v_g = ZᵀH 1_g,

    H the centering operator and 1_g the indicator of group g; the penalty is the squared
    covariance between the predictions and each group (two groups: the paper's binary
    penalty). μ is scale-free (:func:`~daskfair.fkr.ridge.fkrr_penalty`): μ = 1 halves the
    covariance's pull, μ ≥ 100 all but removes it; ``fairness_weight=0`` is plain (Nyström)
    kernel ridge.

    Parameters
    ----------
    fairness_weight : float
        The relative fairness penalty μ.
    kernel, gamma, degree, coef0, relative_alpha, fit_intercept
        As in :class:`FairKernelRegressor`.
    approximation, n_landmarks, landmarks, rcond, random_state
        As in :class:`FairKernelRegressor`.
    min_group_size, small_groups
        The smallest group accepted and what happens to smaller ones, as in
        :class:`FairKernelRegressor`.

    Attributes
    ----------
    coef_ : ndarray of shape (r,)
    dual_coef_ : ndarray of shape (m,)
    intercept_ : float
    feature_map_, groups_, merged_groups_, n_features_in_, feature_names_in_
        As in :class:`FairKernelRegressor`.
    """

    def __init__(
        self,
        fairness_weight: float = 1.0,
        *,
        kernel: str = "rbf",
        gamma: float | None = None,
        degree: int = 3,
        coef0: float = 1.0,
        relative_alpha: float = 1e-4,
        fit_intercept: bool = True,
        approximation: str = "nystroem",
        n_landmarks: int = 1000,
        landmarks: str = "uniform",
        rcond: float = 1e-10,
        random_state: Any = None,
        min_group_size: int = 1,
        small_groups: str = "raise",
    ) -> None:
        self.fairness_weight = fairness_weight
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.relative_alpha = relative_alpha
        self.fit_intercept = fit_intercept
        self.approximation = approximation
        self.n_landmarks = n_landmarks
        self.landmarks = landmarks
        self.rcond = rcond
        self.random_state = random_state
        self.min_group_size = min_group_size
        self.small_groups = small_groups

    def _params(self) -> dict[str, Any]:
        p = self.get_params()
        if not p["fairness_weight"] >= 0:
            raise ValueError(f"fairness_weight must be >= 0, got {p['fairness_weight']}.")
        if not p["relative_alpha"] >= 0:
            raise ValueError(f"relative_alpha must be >= 0, got {p['relative_alpha']}.")
        return p

    def fit(self, X: Any, y: Any, *, sensitive_features: Any = None,
            sample_weight: Any = None) -> FairKernelRidge:
        """Fit on ``X``, ``y`` and the groups (numpy, pandas or dask; any number of groups).

        Parameters
        ----------
        X : array-like, pandas or dask of shape (n_samples, n_features)
            Training rows.
        y : array-like, pandas or dask of shape (n_samples,)
            Targets.
        sensitive_features : array-like, pandas or dask, (n_samples,) or (n_samples, c), optional
            Group of every row; several columns (a 2-D array, a DataFrame, a list of
            columns) make one group of every combination of their values.
        sample_weight : array-like or dask of shape (n_samples,), optional
            Weight of every row in the moments.

        Returns
        -------
        self : FairKernelRidge
            The fitted estimator.

        Examples
        --------
        >>> import numpy as np
        >>> from daskfair import FairKernelRidge, make_fair_regression
        >>> X, y, s = (np.asarray(a) for a in make_fair_regression(500, 4, random_state=0))
        >>> ridge = FairKernelRidge(fairness_weight=1.0, n_landmarks=100, random_state=0)
        >>> ridge.fit(X, y, sensitive_features=s).predict(X[:3]).shape
        (3,)
        """
        with one_blas_thread():  # bits independent of the client's threads
            p = self._params()
            data = self._fit_input(X, y, sensitive_features, sample_weight, classify=False)
            fmap = self._fit_feature_map(data)
            folded, data = self._moments(data, fmap)
            self._solve(folded.total, fmap, p)  # no pass left to fail after it
            self._set_input_attributes(data, fmap)
            return self

    def fit_moments(self, moments: Any, feature_map: Any, *,
                    groups: Any = None) -> FairKernelRidge:
        """Fit from moments another fit already summed, with no pass over the data.

        ``moments`` are the training rows' moments in ``feature_map``'s whitened basis, such
        as a CV estimator's ``moments_[i]`` and ``feature_maps_[i]``
        (:class:`FairKernelClassifierCV` sums them in its first pass): the model equals
        ``fit`` on those rows with the same landmarks, up to the order of the sums.

        Parameters
        ----------
        moments : object
            The training rows' moments in ``feature_map``'s whitened basis (a CV estimator's
            ``moments_[i]``).
        feature_map : daskfair.nystroem.NystroemMap
            The map the moments were summed in (a CV estimator's ``feature_maps_[i]``).
        groups : ndarray, optional
            The groups, in the order of the moments' cells.

        Returns
        -------
        self : FairKernelRidge
            The fitted estimator.
        """
        with one_blas_thread():  # bits independent of the client's threads
            p = self._params()
            self._solve(moments, feature_map, p)
            self.feature_map_ = feature_map
            self.n_features_in_ = int(np.shape(feature_map.landmarks)[1])
            if groups is not None:
                self.groups_ = np.asarray(groups)
            return self

    def _solve(self, stats: Any, fmap: Any, p: dict[str, Any]) -> None:
        self.coef_, self.intercept_ = ridge_fit(
            stats, p["relative_alpha"], fit_intercept=self.fit_intercept,
            penalty=fkrr_penalty(stats, p["fairness_weight"]))
        self.dual_coef_ = fmap.whitening @ self.coef_

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
