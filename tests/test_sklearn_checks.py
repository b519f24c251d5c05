"""scikit-learn's estimator checks on the FKR estimators.

The checks call ``fit(X, y)`` without sensitive features, so each estimator is wrapped in a
subclass that supplies alternating groups. With that, every check passes; the FKR-F²E
regressor and classifier declare ``poor_score`` (their features are chosen for equal group
means, not for fit), so the training-score thresholds are not applied to them, and the
classifier declares ``multi_class=False`` (the seed is binary).
"""

import numpy as np
from sklearn.utils.estimator_checks import parametrize_with_checks

from daskfair.fkr.estimators import FairKernelClassifier, FairKernelRegressor, FairKernelRidge


def _groups(X):
    n = X.shape[0] if hasattr(X, "shape") else len(np.asarray(X))
    return np.arange(n) % 2


class _Regressor(FairKernelRegressor):
    def fit(self, X, y):
        return super().fit(X, y, sensitive_features=_groups(X))


class _Classifier(FairKernelClassifier):
    def fit(self, X, y):
        return super().fit(X, y, sensitive_features=_groups(X))


class _Ridge(FairKernelRidge):
    def fit(self, X, y):
        return super().fit(X, y, sensitive_features=_groups(X))


@parametrize_with_checks(
    [
        _Regressor(n_components=5, n_landmarks=50, random_state=0),
        _Classifier(n_components=5, n_landmarks=50, random_state=0),
        _Ridge(n_landmarks=50, random_state=0),
    ]
)
def test_sklearn_compatible(estimator, check):
    check(estimator)
