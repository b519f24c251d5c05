"""Predictions from the score f(x) = k(x, L)·dual_coef_ + intercept_."""

from __future__ import annotations

from typing import Any

import dask.array as da
import numpy as np
from scipy.special import expit

from .._validation import is_dask

__all__ = ["CalibratedClassifierMixin", "KernelRegressionMixin", "calibration_attributes"]


def calibration_attributes(slope: float, threshold: float) -> dict[str, Any]:
    """``threshold_`` and ``calibration_ = (a, c)`` with c = −a·threshold (a > 0)."""
    return {"threshold_": float(threshold),
            "calibration_": (float(slope), float(-slope * threshold))}


class KernelRegressionMixin:
    """``predict`` of the regressors: the score itself."""

    def predict(self, X: Any) -> Any:
        """Predictions ``k(x, L)·dual_coef_ + intercept_``.

        Parameters
        ----------
        X : array-like, pandas or dask of shape (n_samples, n_features)
            Rows to predict (no group needed).

        Returns
        -------
        ndarray or dask array of shape (n_samples,)
            The predictions, lazy for dask input.
        """
        return self._kernel_output(X)


class CalibratedClassifierMixin:
    """Decisions from the score f(x), ``threshold_`` and ``calibration_ = (a, c)``."""

    def decision_function(self, X: Any) -> Any:
        """a·(f(x) − ``threshold_``), the calibrated log-odds of ``classes_[1]``.

        Parameters
        ----------
        X : array-like, pandas or dask of shape (n_samples, n_features)
            Rows to score (no group needed).

        Returns
        -------
        ndarray or dask array of shape (n_samples,)
            The log-odds (positive: ``classes_[1]``), lazy for dask input.
        """
        self._check_model("calibration_")
        return self.calibration_[0] * (self._kernel_output(X) - self.threshold_)

    def predict_proba(self, X: Any) -> Any:
        """Probabilities of ``classes_``: σ(``decision_function(X)``) for ``classes_[1]``.

        Parameters
        ----------
        X : as in :meth:`decision_function`.

        Returns
        -------
        ndarray or dask array of shape (n_samples, 2)
            The probability of each class, lazy for dask input.
        """
        return self.proba_from_decision(self.decision_function(X))

    @staticmethod
    def proba_from_decision(decision: Any) -> Any:
        """:meth:`predict_proba` from :meth:`decision_function`'s values (no pass).

        Parameters
        ----------
        decision : ndarray or dask array of shape (n_samples,)
            What :meth:`decision_function` returned.

        Returns
        -------
        ndarray or dask array of shape (n_samples, 2)
        """
        if is_dask(decision):
            p = decision.map_blocks(expit, dtype=np.float64)
            return da.stack([1 - p, p], axis=1)
        p = expit(decision)
        return np.column_stack([1 - p, p])

    def predict(self, X: Any) -> Any:
        """Class labels: ``classes_[1]`` where f(x) ≥ ``threshold_``, else ``classes_[0]``.

        Parameters
        ----------
        X : as in :meth:`decision_function`.

        Returns
        -------
        ndarray or dask array of shape (n_samples,)
            The predicted classes, lazy for dask input.
        """
        return self.predict_from_decision(self.decision_function(X))

    def predict_from_decision(self, decision: Any) -> Any:
        """:meth:`predict` from :meth:`decision_function`'s values (no pass).

        Parameters
        ----------
        decision : ndarray or dask array of shape (n_samples,)
            What :meth:`decision_function` returned.

        Returns
        -------
        ndarray or dask array of shape (n_samples,)
        """
        positive = decision >= 0
        if is_dask(positive):
            return da.where(positive, self.classes_[1], self.classes_[0])
        return np.where(positive, self.classes_[1], self.classes_[0])
