"""The CV estimators' scikit-learn contract: best_params_ usable with set_params, cv as a
splitter, refit=False, choose() leaving the constructor parameters, fairlearn's constraint
objects, and random_state as scikit-learn accepts it."""

from __future__ import annotations

import dask
import dask.array as da
import numpy as np
import pytest
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.model_selection import KFold, ShuffleSplit

from daskfair import (
    FairKernelClassifier,
    FairKernelClassifierCV,
    FairKernelRegressor,
    FairKernelRegressorCV,
)
from daskfair._random import fold_of

SMALL = {"relative_alphas": (1e-4, 1e-2), "strengths": (0.0, 0.5, 1.0),
         "fair_feature_counts": (3,), "fairness_weights": (None, 1.0), "n_landmarks": 60}


def _data(n=400, seed=0):
    rng = np.random.default_rng(seed)
    s = rng.integers(0, 2, n)
    X = rng.normal(size=(n, 4)) + 0.8 * s[:, None]
    y = (X[:, 0] + X[:, 1] * s + 0.5 * rng.normal(size=n) > 0.6).astype(int)
    return X, y, s


@pytest.mark.parametrize("cls", [FairKernelClassifierCV, FairKernelRegressorCV])
def test_best_params_refit_alone_gives_the_chosen_model(cls):
    X, y, s = _data()
    target = y if cls is FairKernelClassifierCV else X[:, 0] + s
    cv = cls(cv=3, disparity_bound=0.05, random_state=0, **SMALL).fit(
        X, target, sensitive_features=s)
    assert len(cv.cv_results_["params"]) == len(cv.frontier_)
    alone = clone(cv).set_params(**cv.best_params_).fit(X, target, sensitive_features=s)
    assert alone.n_candidates_ == 1
    np.testing.assert_allclose(alone.dual_coef_, cv.dual_coef_, rtol=1e-9, atol=1e-12)
    assert alone.intercept_ == pytest.approx(cv.intercept_, rel=1e-9, abs=1e-12)
    assert alone.best_disparity_ == pytest.approx(cv.best_disparity_, abs=1e-9)
    assert alone.best_score_ == pytest.approx(cv.best_score_, abs=1e-9)
    if cls is FairKernelClassifierCV:
        assert alone.best_threshold_ == pytest.approx(cv.best_threshold_, rel=1e-9)
    # the results table and its frontier view agree
    fr = cv.frontier_
    np.testing.assert_array_equal(fr["error"], cv.cv_results_["mean_test_error"])
    assert cv.cv_results_["rank_test_score"][cv.best_index_] == 1
    assert fr["selected"].sum() == 1


def test_a_kfold_splitter_equals_the_same_folds_given_as_pairs_and_as_dask():
    X, y, s = _data()
    folds = fold_of(np.arange(len(X)), 3, 11)
    pairs = [(np.flatnonzero(folds != f), np.flatnonzero(folds == f)) for f in range(3)]
    with dask.config.set({"daskfair.block-rows": 64}):
        a = FairKernelClassifierCV(cv=pairs, random_state=0, **SMALL).fit(
            X, y, sensitive_features=s)
        b = FairKernelClassifierCV(cv=iter(pairs), random_state=0, **SMALL).fit(
            da.from_array(X, chunks=97), da.from_array(y, chunks=97), sensitive_features=s)
    np.testing.assert_allclose(a.cv_error_, b.cv_error_, atol=1e-12)
    np.testing.assert_allclose(a.dual_coef_, b.dual_coef_, rtol=1e-9, atol=1e-12)
    # a KFold splitter: its validation folds, and a result other than the hashed folds'
    k = FairKernelClassifierCV(cv=KFold(3), random_state=0, **SMALL).fit(
        X, y, sensitive_features=s)
    blocks = np.array_split(np.arange(len(X)), 3)  # KFold's folds: contiguous, in order
    c = FairKernelClassifierCV(
        cv=[(np.setdiff1d(np.arange(len(X)), t), t) for t in blocks], random_state=0,
        **SMALL).fit(X, y, sensitive_features=s)
    np.testing.assert_array_equal(k.cv_error_, c.cv_error_)
    assert not np.array_equal(k.cv_error_, a.cv_error_)


@pytest.mark.parametrize("cv, message", [
    (ShuffleSplit(3, test_size=0.5, random_state=0), "exactly one validation fold"),
    ([(np.arange(200), np.arange(200, 400))] * 2, "exactly one validation fold"),
    ([(np.arange(100), np.arange(200, 400)), (np.arange(200, 400), np.arange(200))],
     "complement"),
    ([(np.r_[0, 0, 1:200], np.arange(200, 400)), (np.arange(200, 400), np.arange(200))],
     "complement"),
    ([(np.arange(200, 400), np.arange(200.0)), (np.arange(200), np.arange(200, 400))],
     "indices of type float64"),
    ([(np.arange(200, 401), np.arange(200)), (np.arange(200), np.arange(200, 400))],
     "outside 0..399"),
    (1, "cv must be an integer from 2 to 50 or a scikit-learn splitter"),
    ("five", "cv must be an integer from 2 to 50 or a scikit-learn splitter"),
])
def test_splitters_the_folds_cannot_use_are_refused(cv, message):
    X, y, s = _data()
    with pytest.raises(TypeError if cv == "five" else ValueError, match=message):
        FairKernelClassifierCV(cv=cv, **SMALL).fit(X, y, sensitive_features=s)


def test_refit_false_keeps_the_search_and_refuses_to_predict():
    X, y, s = _data()
    cv = FairKernelClassifierCV(cv=3, random_state=0, **SMALL).fit(X, y, sensitive_features=s)
    cv.set_params(refit=False).fit(X, y, sensitive_features=s)  # no model left from before
    assert cv.best_params_ and len(cv.cv_results_["params"]) > 1
    assert not hasattr(cv, "dual_coef_") and not hasattr(cv, "feature_map_")
    with pytest.raises(NotFittedError, match="refit=False"):
        cv.predict(X)


def test_choose_leaves_the_constructor_parameter_and_clone_keeps_it():
    X, y, s = _data()
    cv = FairKernelClassifierCV(cv=3, disparity_bound=0.1, random_state=0, **SMALL).fit(
        X, y, sensitive_features=s)
    cv.choose(0.0)
    assert cv.disparity_bound == 0.1 and cv.disparity_bound_ == 0.0
    assert clone(cv).get_params()["disparity_bound"] == 0.1


def test_fairlearn_constraint_objects_are_their_strings():
    fairlearn = pytest.importorskip("fairlearn.reductions")
    X, y, s = _data()
    for obj, name in ((fairlearn.DemographicParity(), "demographic_parity"),
                      (fairlearn.EqualizedOdds(), "equalized_odds")):
        a = FairKernelClassifierCV(cv=3, constraints=obj, random_state=0, **SMALL).fit(
            X, y, sensitive_features=s)
        b = FairKernelClassifierCV(cv=3, constraints=name, random_state=0, **SMALL).fit(
            X, y, sensitive_features=s)
        np.testing.assert_array_equal(a.cv_disparity_, b.cv_disparity_)
    with pytest.raises(ValueError, match="constraints must be one of"):
        FairKernelRegressorCV(constraints="equalized_odds").fit(X, y + 0.0,
                                                                sensitive_features=s)


def test_random_state_accepts_a_numpy_randomstate_as_scikit_learn_does():
    X, y, s = _data()
    a = FairKernelRegressor(n_landmarks=30, random_state=np.random.RandomState(5)).fit(
        X, y + 0.0, sensitive_features=s)
    b = FairKernelRegressor(n_landmarks=30, random_state=np.random.RandomState(5)).fit(
        X, y + 0.0, sensitive_features=s)
    np.testing.assert_array_equal(a.feature_map_.landmarks, b.feature_map_.landmarks)
    shared = np.random.RandomState(5)
    c = FairKernelRegressor(n_landmarks=30, random_state=shared).fit(X, y + 0.0,
                                                                     sensitive_features=s)
    d = FairKernelRegressor(n_landmarks=30, random_state=shared).fit(X, y + 0.0,
                                                                     sensitive_features=s)
    # one instance drawn from twice: two streams, as in scikit-learn
    assert not np.array_equal(c.feature_map_.landmarks, d.feature_map_.landmarks)


def test_cv_results_rank_the_entries_within_the_bound_first_and_name_missing_params_none():
    X, y, s = _data()
    cv = FairKernelClassifierCV(cv=3, disparity_bound=0.02, random_state=0, **SMALL).fit(
        X, y, sensitive_features=s)
    r = cv.cv_results_
    order = np.argsort(r["rank_test_score"])
    feasible = r["upper_test_disparity"][order] <= 0.02 + 1e-12
    assert r["selected"][order[0]] and feasible[0]
    # every entry within the bound comes before every entry outside it
    assert not np.any(~feasible[:-1] & feasible[1:])
    scores = r["mean_test_score"][order][feasible]
    assert np.all(np.diff(scores[1:]) <= 0)
    embedding = r["param_family"] == "embedding"
    exact = [p.get("fairness_weights") == (None,) for p in r["params"]]
    np.testing.assert_array_equal(r["param_fairness_weight"][embedding] == None,  # noqa: E711
                                  np.array(exact)[embedding])
    assert all(v is None for v in r["param_strength"][embedding])


def test_set_params_of_best_params_keeps_the_chosen_one_of_several_gammas():
    X, y, s = _data()
    cv = FairKernelClassifierCV(gammas=[0.2, 0.5], cv=3, random_state=0, **SMALL).fit(
        X, y, sensitive_features=s)
    alone = clone(cv).set_params(**cv.best_params_)
    assert alone.get_params()["gammas"] in ((0.2,), (0.5,))
    alone.fit(X, y, sensitive_features=s)
    np.testing.assert_allclose(alone.dual_coef_, cv.dual_coef_, rtol=1e-9, atol=1e-12)


def test_a_failed_refit_leaves_the_earlier_model_whole(monkeypatch):
    X, y, s = _data()
    est = FairKernelClassifier(n_fair_features=3, n_landmarks=40, random_state=0).fit(
        X, y, sensitive_features=s)
    before = {k: v for k, v in vars(est).items() if k.endswith("_")}

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr("daskfair.fkr.estimators._training_calibration", interrupted)
    with pytest.raises(KeyboardInterrupt):
        est.fit(5 * X, y, sensitive_features=s)
    after = {k: v for k, v in vars(est).items() if k.endswith("_")}
    assert after.keys() == before.keys()
    for k, v in before.items():
        assert after[k] is v, k


@pytest.mark.parametrize("cls", [FairKernelClassifierCV, FairKernelRegressorCV])
def test_a_failed_cv_fit_leaves_the_earlier_fit_whole(cls, monkeypatch):
    """The CV estimators set their fitted attributes at the end: a fit that fails in the
    choice, after every pass, leaves the earlier fit as it was."""
    X, y, s = _data()
    target = y if cls is FairKernelClassifierCV else X[:, 0] + s
    est = cls(cv=3, disparity_bound=0.1, random_state=0, **SMALL).fit(
        X, target, sensitive_features=s)
    before = dict(vars(est))

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr("daskfair.fkr.cv.select", interrupted)
    with pytest.raises(KeyboardInterrupt):
        est.set_params(gammas=[0.1, 0.3]).fit(2 * X, target, sensitive_features=s)
    after = vars(est)
    assert after.keys() == before.keys()
    for k, v in before.items():
        assert k == "gammas" or after[k] is v, k


def test_choose_and_fit_moments_check_the_parameters_first():
    """choose() and FairKernelRidge.fit_moments go through their estimator's one parameter
    check; a refused call changes nothing."""
    from daskfair import FairKernelRidge

    X, y, s = _data()
    cv = FairKernelClassifierCV(cv=3, disparity_bound=0.1, random_state=0, **SMALL).fit(
        X, y, sensitive_features=s)
    before = dict(vars(cv))
    with pytest.raises(ValueError, match="disparity_bound must be a finite number >= 0"):
        cv.choose(-0.1)
    with pytest.raises(ValueError, match=r"disparity_confidence must be None or a finite "
                                         r"number in \[0.5, 1\)"):
        cv.choose(0.1, disparity_confidence=1.5)
    for rows, error in ((0, ValueError), (-5, ValueError), (2.5, TypeError), (True, TypeError)):
        with pytest.raises(error, match=r"new_rows must be None or an integer >= 1"):
            cv.choose(0.1, new_rows=rows)
    with pytest.raises(TypeError, match="refit must be True or False"):
        clone(cv).set_params(refit="no").fit(X, y, sensitive_features=s)
    cv.set_params(refit="no")
    with pytest.raises(TypeError, match="refit must be True or False"):
        cv.choose(0.2)
    assert vars(cv).keys() == before.keys()
    assert all(vars(cv)[k] is v for k, v in before.items() if k != "refit")
    with pytest.raises(ValueError, match="fairness_weight must be a finite number >= 0"):
        FairKernelRidge(-1.0).fit_moments(cv.moments_[0], cv.feature_maps_[0])
