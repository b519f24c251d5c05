"""One declarative parameter check (daskfair/_params.py): every public estimator declares all
of its constructor's parameters in one table, checked before any work; a bool is not a number,
NaN and ±inf are refused where a number must be finite, a wrong type raises TypeError and a
wrong value ValueError, and the message names the parameter, the value and what is allowed."""

from __future__ import annotations

import inspect

import numpy as np
import pytest
from sklearn.base import clone

import daskfair
from daskfair import (
    ColumnScaler,
    FairClusteringEnsemble,
    FairKernelClassifier,
    FairKernelClassifierCV,
    FairKernelRegressor,
    FairKernelRegressorCV,
    FairKernelRidge,
    SAFairKMeans,
    TableEncoder,
    VFairKMeans,
)
from daskfair._params import Grid, Integer, Options, Real, check_params

ESTIMATORS = [FairKernelRegressor, FairKernelClassifier, FairKernelRidge,
              FairKernelRegressorCV, FairKernelClassifierCV, SAFairKMeans, VFairKMeans,
              FairClusteringEnsemble, TableEncoder, ColumnScaler]


@pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda c: c.__name__)
def test_every_parameter_is_in_its_estimators_table(cls):
    names = [p for p in inspect.signature(cls.__init__).parameters if p != "self"]
    assert set(cls._parameter_constraints) == set(names)
    est = cls(3) if "n_clusters" in names and names[0] == "n_clusters" else cls()
    est._validate_params()  # the defaults pass


def test_the_kinds_of_value_and_their_messages():
    table = {"n": [Integer(1)], "w": [Real(0)], "how": [Options(("a", "b"))],
             "grid": [Grid((Real(0, low_open=True),))]}
    good = {"n": 3, "w": 0.0, "how": "a", "grid": [0.1, 2]}
    check_params(good, table)
    check_params({**good, "n": np.int64(2), "w": np.float32(1.5)}, table)  # numpy scalars
    for bad, error, message in [
            ({"n": True}, TypeError, r"n must be an integer >= 1, got True\."),
            ({"n": 1.0}, TypeError, r"n must be an integer >= 1, got 1\.0\."),
            ({"n": 0}, ValueError, r"n must be an integer >= 1, got 0\."),
            ({"w": np.inf}, ValueError, r"w must be a finite number >= 0, got inf\."),
            ({"w": float("nan")}, ValueError, r"w must be a finite number >= 0, got nan\."),
            ({"w": False}, TypeError, r"w must be a finite number >= 0, got False\."),
            ({"w": "1"}, TypeError, r"w must be a finite number >= 0, got '1'\."),
            ({"how": "c"}, ValueError, r"how must be one of \('a', 'b'\), got 'c'\."),
            ({"grid": []}, ValueError, r"grid must be a non-empty list of values, each a "
                                       r"finite number > 0, got \[\]\."),
            ({"grid": [0.1, 0]}, ValueError, r"grid must be .*, got \[0\.1, 0\]\.")]:
        with pytest.raises(error, match=message):
            check_params({**good, **bad}, table)


@pytest.mark.parametrize(("make", "error", "message"), [
    (lambda: FairKernelRidge(fairness_weight=np.inf), ValueError,
     r"fairness_weight must be a finite number >= 0, got inf"),
    (lambda: FairKernelRegressor(relative_alpha=True), TypeError,
     r"relative_alpha must be a finite number >= 0, got True"),
    (lambda: FairKernelRidge(fairness_weight="abc"), TypeError,
     r"fairness_weight must be a finite number >= 0, got 'abc'"),
    (lambda: FairKernelClassifier(threshold=np.inf), ValueError,
     r"threshold must be 'auto' or a finite number, got inf"),
    (lambda: FairKernelRegressorCV(gammas=[0.1, -1]), ValueError,
     r"gammas must be 'auto' or None or a finite number > 0 or a non-empty list of values"),
    (lambda: SAFairKMeans(1), ValueError,
     r"n_clusters must be an integer >= 2 \(a balance trade-off needs two clusters\), got 1"),
    (lambda: FairClusteringEnsemble(consensus_weight=0), ValueError,
     r"consensus_weight must be a finite number > 0, got 0"),
    (lambda: TableEncoder(max_levels=0), ValueError, r"max_levels must be an integer >= 1"),
    (lambda: ColumnScaler(unit_rows=1), TypeError, r"unit_rows must be True or False, got 1")])
def test_a_bad_parameter_is_refused_before_the_data_are_read(make, error, message):
    class Unread:  # any read of the data fails the test
        def __getattr__(self, name):
            raise AssertionError(f"the data were read ({name}) before the parameters")

    est = make()
    with pytest.raises(error, match=message):
        est._validate_params()
    fit = est.fit
    kwargs = {"sensitive_features": Unread()} if "sensitive_features" in inspect.signature(
        fit).parameters else {}
    args = (Unread(), Unread()) if "y" in inspect.signature(fit).parameters and not isinstance(
        est, SAFairKMeans | VFairKMeans | FairClusteringEnsemble) else (Unread(),)
    with pytest.raises(error, match=message):
        fit(*args, **kwargs)
    assert clone(est).get_params() == est.get_params()


@pytest.mark.parametrize(("call", "error", "message"), [
    (lambda: daskfair.pareto_front(np.zeros((4, 2)), sensitive_features=[0, 1, 0, 1],
                                   update_pairs=[(0, 0)]),
     ValueError, r"update_pairs must be a non-empty list of \(n_kmeans_updates"),
    (lambda: daskfair.pareto_front(np.zeros((4, 2)), sensitive_features=[0, 1, 0, 1],
                                   n_init=1.5), TypeError, r"n_init must be an integer >= 1"),
    (lambda: daskfair.vfairkm_front(np.zeros((4, 2)), sensitive_features=[0, 1, 0, 1],
                                    fairness_weights=[1, np.nan]),
     ValueError, r"fairness_weights must be a finite number >= 0 or a non-empty list"),
    (lambda: daskfair.base_clusterings(np.zeros((4, 2)), methods=["dbscan"]),
     ValueError, r"methods must be a non-empty list of values, each one of"),
    (lambda: daskfair.metrics.audit([0, 1], [0, 1], sensitive_features=[0, 1],
                                    confidence=1.0),
     ValueError, r"confidence must be a finite number in \(0, 1\), got 1\.0"),
    (lambda: daskfair.make_fair_blobs(10, n_groups=1), ValueError,
     r"n_groups must be an integer >= 2 \(fairness needs two groups\), got 1"),
    (lambda: daskfair.sa2gd(lambda x, r: x, lambda x, r: x, [0.0], n_a=1, n_b=1, n_iter=0),
     ValueError, r"n_iter must be an integer >= 1, got 0")])
def test_functions_check_their_parameters_alike(call, error, message):
    with pytest.raises(error, match=message):
        call()
