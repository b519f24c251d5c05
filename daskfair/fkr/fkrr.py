"""FKRR, the FKR-F²E paper's baseline: kernel ridge with a covariance penalty."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin

from .._params import Flag, Nothing, ParamsMixin, Real, Spec
from ..runtime.threads import one_blas_thread
from ._base import KERNEL, NYSTROEM, KernelModelMixin, check_kernel, input_attributes
from ._predict import KernelRegressionMixin
from .ridge import fkrr_penalty, ridge_fit

__all__ = ["FairKernelRidge"]


def _solution(stats: Any, fmap: Any, p: dict[str, Any]) -> dict[str, Any]:
    """The ridge with FKRR's penalty, solved from the moments."""
    coef, intercept = ridge_fit(
        stats, p["relative_alpha"], fit_intercept=p["fit_intercept"],
        penalty=fkrr_penalty(stats, p["fairness_weight"]))
    return {"coef_": coef, "intercept_": intercept, "dual_coef_": fmap.whitening @ coef}


class FairKernelRidge(ParamsMixin, KernelRegressionMixin, KernelModelMixin, RegressorMixin,
                      BaseEstimator):
    """FKRR: kernel ridge with a penalty on the prediction–group covariance.

    Parameters
    ----------
    fairness_weight : float, default=1.0
        The scale-free fairness penalty μ ≥ 0 (0: plain Nyström kernel ridge).
    kernel, gamma, degree, coef0, relative_alpha, fit_intercept : as in FairKernelRegressor.
    approximation, n_landmarks, landmarks, rcond : as in FairKernelRegressor.
    random_state, min_group_size, small_groups : as in FairKernelRegressor.

    Attributes
    ----------
    coef_ : ndarray of shape (r,)
        Coefficients on the r Nyström features.
    dual_coef_, intercept_, feature_map_, groups_, merged_groups_ : as in FairKernelRegressor.
    n_features_in_, feature_names_in_ : as in FairKernelRegressor.

    See Also
    --------
    FairKernelRegressor : FKR-F²E, the method this is the baseline of.
    FairKernelClassifierCV : Its ``moments_`` and ``feature_maps_`` feed :meth:`fit_moments`.

    Notes
    -----
    Pérez-Suay et al. (2017), the paper's eq. (1) (docs/design.md#fkrr-baseline). ``fit`` reads
    X, y and the groups once (plus 8 row blocks of X for the landmarks); :meth:`fit_moments`
    reads no data.
    """

    def __init__(self, fairness_weight: float = 1.0, *, kernel: str = "rbf",
                 gamma: float | None = None, degree: int = 3, coef0: float = 1.0,
                 relative_alpha: float = 1e-4, fit_intercept: bool = True,
                 approximation: str = "nystroem", n_landmarks: int = 1000,
                 landmarks: str = "uniform", rcond: float = 1e-10, random_state: Any = None,
                 min_group_size: int = 1, small_groups: str = "raise") -> None:
        self.fairness_weight, self.kernel, self.gamma = fairness_weight, kernel, gamma
        self.degree, self.coef0, self.relative_alpha = degree, coef0, relative_alpha
        self.fit_intercept, self.approximation = fit_intercept, approximation
        self.n_landmarks, self.landmarks, self.rcond = n_landmarks, landmarks, rcond
        self.random_state, self.min_group_size = random_state, min_group_size
        self.small_groups = small_groups

    _parameter_constraints: ClassVar[dict[str, list[Spec]]] = {
        "fairness_weight": [Real(0)], **KERNEL, "gamma": [Nothing, Real()],
        "relative_alpha": [Real(0)], "fit_intercept": [Flag], **NYSTROEM}

    def _check_combination(self, p: dict[str, Any]) -> None:
        check_kernel(p, p["gamma"])

    def fit(self, X: Any, y: Any, *, sensitive_features: Any = None,
            sample_weight: Any = None) -> FairKernelRidge:
        """Fit on ``X``, ``y`` and the groups (numpy, pandas or dask; any number of groups).

        Parameters
        ----------
        X, y, sensitive_features, sample_weight : as in :meth:`FairKernelRegressor.fit`.

        Returns
        -------
        self : FairKernelRidge

        Raises
        ------
        ValueError
            On bad parameters or input (the message says which).

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
            p = self._validate_params()
            data = self._fit_input(X, y, sensitive_features, sample_weight, p, classify=False)
            fmap = self._fit_feature_map(data, p, p["gamma"])
            folded, data = self._moments(data, fmap)
            self._set_fitted({**_solution(folded.total, fmap, p),
                              **input_attributes(data, fmap)})
            return self

    def fit_moments(self, moments: Any, feature_map: Any, *,
                    groups: Any = None) -> FairKernelRidge:
        """Fit from another fit's moments with no pass (as ``fit`` on those rows, up to rounding).

        Parameters
        ----------
        moments : daskfair.fkr.statistics.Moments
            All training rows' moments in ``feature_map``'s whitened basis (``moments_[i]``).
        feature_map : daskfair.nystroem.NystroemMap
            The map the moments were summed in (a CV estimator's ``feature_maps_[i]``).
        groups : ndarray of shape (n_groups,), default=None
            The groups, in the order of the moments' cells (sets ``groups_``).

        Returns
        -------
        self : FairKernelRidge
        """
        with one_blas_thread():  # bits independent of the client's threads
            p = self._validate_params()
            fitted = _solution(moments, feature_map, p)
            fitted.update(feature_map_=feature_map,
                          n_features_in_=int(np.shape(feature_map.landmarks)[1]))
            if groups is not None:
                fitted["groups_"] = np.asarray(groups)
            self._set_fitted(fitted)
            return self
