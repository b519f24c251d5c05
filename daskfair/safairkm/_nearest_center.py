"""``predict`` of the fair k-means estimators: every new row to its nearest center."""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.utils.validation import check_is_fitted

from .._nearest import nearest_center
from .._validation import check_array, is_dask

__all__ = ["NearestCenterMixin"]


class NearestCenterMixin:
    """``predict`` from ``cluster_centers_``."""

    def predict(self, X: Any) -> Any:
        """Nearest center of each row (no balance guarantee for new rows).

        Parameters
        ----------
        X : array-like or dask array of shape (n_samples, n_features)
            The points.

        Returns
        -------
        ndarray or dask.array.Array of shape (n_samples,)
            The nearest cluster center of every row (lazy for dask input).

        Raises
        ------
        ValueError
            If X has another number of features than in ``fit`` or is not finite.
        """
        check_is_fitted(self, "cluster_centers_")
        X = check_array(X, "X")
        if X.shape[1] != self.n_features_in_:
            raise ValueError(
                f"X has {X.shape[1]} features, but {type(self).__name__} is expecting "
                f"{self.n_features_in_} features as input.")
        if is_dask(X):
            return X.map_blocks(nearest_center, self.cluster_centers_, drop_axis=1,
                                dtype=np.intp)
        return nearest_center(X, self.cluster_centers_)
