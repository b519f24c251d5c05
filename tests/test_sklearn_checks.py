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

from daskfair.ensemble import FairClusteringEnsemble
from daskfair.fkr import (
    FairKernelClassifier,
    FairKernelClassifierCV,
    FairKernelRegressor,
    FairKernelRegressorCV,
    FairKernelRidge,
)
from daskfair.safairkm import SAFairKMeans, VFairKMeans


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
        _Regressor(n_landmarks=50, random_state=0),
        _Classifier(n_landmarks=50, random_state=0),
        _Ridge(n_landmarks=50, random_state=0),
        _ClassifierCV(**SMALL_CV),
        _RegressorCV(**SMALL_CV),
    ],
    expected_failed_checks=lambda est: _WEIGHTS,
)
def test_sklearn_compatible(estimator, check):
    check(estimator)


# -- FairClusteringEnsemble ----------------------------------------------------------------


def _labelings(X):
    """The checks' float X as base labelings: each column cut at its terciles into clusters
    0, 1, 2. NaN and inf stay where they are, and input that is not a non-empty 2-D numeric
    array or list (1-D, empty, complex, object, sparse) passes unchanged: the estimator's
    own checks must answer it."""
    if not isinstance(X, list | np.ndarray):
        return X
    X = np.asarray(X)
    if X.ndim != 2 or X.dtype.kind not in "biuf" or X.size == 0:
        return X
    finite = np.isfinite(X)
    cuts = np.nanquantile(np.where(finite, X, np.nan), [1 / 3, 2 / 3], axis=0)
    labels = (X[None] > cuts[:, None]).sum(axis=0).astype(float)
    labels[~finite] = X[~finite]
    return labels


class _Ensemble(FairClusteringEnsemble):
    """FairClusteringEnsemble on the checks' data.

    FCE clusters base labelings, not features, and needs groups: this thin adapter turns X
    into labelings (:func:`_labelings`) and supplies alternating groups (:func:`_groups`).
    Everything else (parameters, the fit, ``fit_predict``, the fitted attributes) is the
    estimator's own.
    """

    def fit(self, X, y=None, **kwargs):
        return super().fit(_labelings(X), y, sensitive_features=_groups(X), **kwargs)


#: The checks FairClusteringEnsemble fails, and why.
_FCE_FAILS = {
    "check_dtype_object": "labels of object dtype are refused (TypeError: base labels "
                          "must have an integer or float dtype), not converted",
    "check_estimators_empty_data_messages": "the message for no columns speaks of "
                                            "labelings ('base_labels is empty (shape (12, "
                                            "0))'), not of '0 feature(s)'",
    "check_fit2d_1sample": "one row is one group and fairness needs two: the groups' "
                           "error ('1 distinct group') comes before any count of rows",
}


@parametrize_with_checks([_Ensemble(n_clusters=3, random_state=0)],
                         expected_failed_checks=lambda est: _FCE_FAILS)
def test_fce_sklearn_compatible(estimator, check):
    """scikit-learn's checks on FairClusteringEnsemble, through a thin adapter.

    FCE's ``X`` is base labelings and its fit needs ``sensitive_features``: ``_Ensemble.fit``
    cuts every column of the checks' float X at its terciles into a labeling of 3 clusters
    (keeping NaN and inf, and passing any other input unchanged, so the estimator's own
    checks answer it) and supplies alternating groups. The checks it fails are named with
    their reasons in ``_FCE_FAILS``.
    """
    check(estimator)


# -- SAFairKMeans and VFairKMeans ----------------------------------------------------------


class _SAFairKMeans(SAFairKMeans):
    """SAFairKMeans with alternating groups supplied (everything else is the estimator's)."""

    def fit(self, X, y=None):
        return super().fit(X, y, sensitive_features=_groups(X))


class _VFairKMeans(VFairKMeans):
    """VFairKMeans with alternating groups supplied (everything else is the estimator's)."""

    def fit(self, X, y=None):
        return super().fit(X, y, sensitive_features=_groups(X))


#: The checks the fair k-means estimators fail, and why: each sets ``n_clusters = 1``, and a
#: balance trade-off needs two clusters ("n_clusters must be >= 2 for a balance trade-off").
_FAIR_KMEANS_FAILS = {
    name: "sets n_clusters=1; the estimator refuses it (a balance trade-off needs 2 clusters)"
    for name in ("check_dont_overwrite_parameters", "check_fit2d_1feature", "check_fit2d_1sample",
                 "check_fit2d_predict1d", "check_methods_subset_invariance")
}


@parametrize_with_checks([_SAFairKMeans(max_iter=20, random_state=0),
                          _VFairKMeans(random_state=0)],
                         expected_failed_checks=lambda est: _FAIR_KMEANS_FAILS)
@pytest.mark.filterwarnings("ignore:group\\(s\\) .* have fewer rows than n_clusters")
def test_fair_kmeans_sklearn_compatible(estimator, check):
    check(estimator)
