"""Column scaling learnt on training rows and applied to new ones, numpy or dask."""

from __future__ import annotations

from typing import Any, ClassVar

import dask.array as da
import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from ._params import Flag, Options, ParamsMixin, Spec
from ._validation import check_array, is_dask

__all__ = ["METHODS", "ColumnScaler"]

#: ``method``: each column to [0, 1] on its training range, or to z-scores.
METHODS = ("minmax", "standard")


class ColumnScaler(ParamsMixin, TransformerMixin, BaseEstimator):
    """Scale every column as ``(x - offset_) / scale_``; optionally make every row unit length.

    A constant column becomes 0. Unlike scikit-learn's scalers, a dask input stays lazy.

    Parameters
    ----------
    method : {"minmax", "standard"}, default="minmax"
        ``offset_`` and ``scale_`` are the training minimum and range, or mean and deviation.
    unit_rows : bool, default=False
        Divide every scaled row by its Euclidean norm (a zero row stays zero), as the SAfairKM
        authors' preprocessing does.

    Attributes
    ----------
    offset_, scale_ : ndarray of shape (n_features,)
        What is subtracted from, then divided into, every column (``scale_`` > 0).
    n_features_in_ : int
        Columns seen by ``fit``.
    """

    def __init__(self, method: str = "minmax", *, unit_rows: bool = False) -> None:
        self.method = method
        self.unit_rows = unit_rows

    def fit(self, X: Any, y: Any = None) -> ColumnScaler:
        """Learn ``offset_`` and ``scale_`` from ``X`` (one pass for dask).

        Parameters
        ----------
        X : array-like or dask array of shape (n_samples, n_features)
        y : None
            Not used (the scikit-learn API).

        Returns
        -------
        self : ColumnScaler
        """
        self._validate_params()
        X = check_array(X, "X")
        if self.method == "minmax":
            low, high = X.min(axis=0), X.max(axis=0)
            if is_dask(X):
                low, high = da.compute(low, high)
            return self._set(low, high - low)
        mean, std = X.mean(axis=0), X.std(axis=0)
        if is_dask(X):
            mean, std = da.compute(mean, std)
        return self._set(mean, std)

    _parameter_constraints: ClassVar[dict[str, list[Spec]]] = {
        "method": [Options(METHODS)], "unit_rows": [Flag]}

    def _set(self, offset: np.ndarray, spread: np.ndarray) -> ColumnScaler:
        offset, spread = np.asarray(offset, np.float64), np.asarray(spread, np.float64)
        self.offset_ = offset
        self.scale_ = np.where(spread > 0, spread, 1.0)
        self.n_features_in_ = len(offset)
        return self

    @classmethod
    def from_values(cls, offset: Any, spread: Any, *, method: str = "minmax",
                    unit_rows: bool = False) -> ColumnScaler:
        """A fitted scaler from statistics computed elsewhere (a table's one pass, say).

        Parameters
        ----------
        offset, spread : array-like of shape (n_features,)
            The minimum and range (or mean and deviation); a spread of 0 becomes 1.
        method, unit_rows : as in the class.

        Returns
        -------
        ColumnScaler
        """
        return cls(method, unit_rows=unit_rows)._set(offset, spread)

    def transform(self, X: Any) -> Any:
        """Scale ``X``: numpy in, numpy out; dask in, lazy dask out.

        Parameters
        ----------
        X : array-like or dask array of shape (n_samples, n_features)

        Returns
        -------
        ndarray or dask array of shape (n_samples, n_features)
        """
        check_is_fitted(self, "scale_")
        X = check_array(X, "X", finite=False)
        if X.shape[1] != self.n_features_in_:
            raise ValueError(f"X has {X.shape[1]} features, but ColumnScaler is expecting "
                             f"{self.n_features_in_} features as input.")
        Z = (X - self.offset_) / self.scale_
        if self.unit_rows:
            norm = (da if is_dask(Z) else np).linalg.norm(Z, axis=1, keepdims=True)
            Z = Z / (da if is_dask(Z) else np).maximum(norm, 1e-300)
        return Z

    def transform_into(self, X: np.ndarray) -> np.ndarray:
        """:meth:`transform` of a float64 numpy array, in ``X`` itself: the same bits, no copy.

        Only the columns the scaling changes are written (a column with offset 0 and scale 1,
        a one-hot column, is ``(x - 0) / 1``: ``x`` exactly).

        Parameters
        ----------
        X : ndarray of float64, shape (n_samples, n_features)
            Rows this call may overwrite (an encoder's fresh output, say).

        Returns
        -------
        ndarray
            ``X``, scaled.
        """
        check_is_fitted(self, "scale_")
        if not (isinstance(X, np.ndarray) and X.dtype == np.float64 and X.ndim == 2
                and X.shape[1] == self.n_features_in_):
            raise ValueError(f"transform_into takes a float64 numpy array of "
                             f"{self.n_features_in_} columns; use transform.")
        cols = np.flatnonzero((self.offset_ != 0) | (self.scale_ != 1))
        if len(cols):
            part = X[:, cols]
            part -= self.offset_[cols]
            part /= self.scale_[cols]
            X[:, cols] = part
        if self.unit_rows:
            X /= np.maximum(np.linalg.norm(X, axis=1, keepdims=True), 1e-300)
        return X
