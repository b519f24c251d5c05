"""scikit-learn's estimator checks on the FKR estimators.

The checks call ``fit(X, y)`` without sensitive features, so each estimator is wrapped in a
subclass that supplies alternating groups (without them the estimators fit with no fairness
constraint and say so with a warning). With that, every check passes; the FKR-F²E estimators
declare ``poor_score`` (their features are chosen for equal group means, not for fit), so the
training-score thresholds are not applied to them, and the classifiers declare
``multi_class=False`` (binary only).
"""

import numpy as np
import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

from daskfair.fkr import (
    FairKernelClassifier,
    FairKernelClassifierCV,
    FairKernelRegressor,
    FairKernelRegressorCV,
    FairKernelRidge,
)


def _groups(X):
    n = X.shape[0] if hasattr(X, "shape") else len(np.asarray(X))
    return np.arange(n) % 2


class _Regressor(FairKernelRegressor):
    def fit(self, X, y, sample_weight=None):
        return super().fit(X, y, sensitive_features=_groups(X), sample_weight=sample_weight)


class _Classifier(FairKernelClassifier):
    def fit(self, X, y, sample_weight=None):
        return super().fit(X, y, sensitive_features=_groups(X), sample_weight=sample_weight)


class _Ridge(FairKernelRidge):
    def fit(self, X, y, sample_weight=None):
        return super().fit(X, y, sensitive_features=_groups(X), sample_weight=sample_weight)


class _ClassifierCV(FairKernelClassifierCV):
    def fit(self, X, y, sample_weight=None):
        return super().fit(X, y, sensitive_features=_groups(X), sample_weight=sample_weight)


class _RegressorCV(FairKernelRegressorCV):
    def fit(self, X, y, sample_weight=None):
        return super().fit(X, y, sensitive_features=_groups(X), sample_weight=sample_weight)


SMALL_CV = {"relative_alphas": (1e-4, 1e-2), "strengths": (0.0, 1.0),
            "fairness_weights": (None,), "n_landmarks": 50, "cv": 3, "random_state": 0}

# The landmarks are a seeded uniform draw of rows, so a fit with integer weights and a fit
# with the rows repeated (or zero-weight rows removed) use different landmarks: the same
# model class, not the same bits.
_WEIGHTS = {"check_sample_weight_equivalence_on_dense_data":
            "landmarks are drawn from the rows, so repeated rows change them"}


@parametrize_with_checks(
    [
        # n_fair_features at its default: scikit-learn's checks set ``n_components = 1``
        # where an estimator has that attribute, here the renamed parameter (which warns and
        # would conflict with an explicit n_fair_features)
        _Regressor(n_landmarks=50, random_state=0),
        _Classifier(n_landmarks=50, random_state=0),
        _Ridge(n_landmarks=50, random_state=0),
        _ClassifierCV(**SMALL_CV),
        _RegressorCV(**SMALL_CV),
    ],
    expected_failed_checks=lambda est: _WEIGHTS,
)
@pytest.mark.filterwarnings("ignore:.*'n_components' is renamed:FutureWarning")
def test_sklearn_compatible(estimator, check):
    check(estimator)
