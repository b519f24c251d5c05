"""Intersectional groups: several sensitive columns, min_group_size and small_groups, and
metrics.group_report.

Every fit with several columns is compared with a fit on one column of combined names that
the test builds itself with the documented convention (fairlearn's): each value as ``str``,
a backslash or comma in it escaped by a backslash, joined by commas.
"""

from __future__ import annotations

import dask
import dask.array as da
import dask.dataframe as dd
import numpy as np
import pandas as pd
import pytest

from daskfair import (
    FairClusteringEnsemble,
    FairKernelClassifier,
    FairKernelClassifierCV,
    FairKernelRegressor,
    FairKernelRegressorCV,
    FairKernelRidge,
    SAFairKMeans,
    VFairKMeans,
    make_fair_blobs,
    make_fair_regression,
)
from daskfair._groups import sensitive_column
from daskfair.metrics import demographic_parity_difference, equalized_odds_difference, group_report

N = 600


def combine(*columns: np.ndarray) -> np.ndarray:
    """The documented convention, written out independently of daskfair."""
    def text(v: object) -> str:
        return str(v).replace("\\", "\\\\").replace(",", "\\,")

    return np.array([",".join(text(v) for v in row) for row in zip(*columns, strict=True)],
                    dtype=object)


def merge(names: np.ndarray, small: set[str], other: str = "other") -> np.ndarray:
    return np.array([other if v in small else v for v in names], dtype=object)


@pytest.fixture(autouse=True)
def _sync():
    with dask.config.set(scheduler="synchronous"):
        yield


@pytest.fixture(scope="module")
def fkr_data():
    X, y, s = (np.asarray(a) for a in make_fair_regression(N, 4, random_state=0))
    race = np.random.default_rng(1).choice(np.array(["black", "white"]), N)
    return X, (y > np.median(y)).astype(np.int64), s, race


CV_SMALL = {"n_landmarks": 50, "strengths": (0.0, 0.5, 1.0), "relative_alphas": (1e-4,),
            "families": ("reduction",), "cv": 3, "random_state": 0}


def _cv_fit(X, y, s, **params):
    return FairKernelClassifierCV(**{**CV_SMALL, **params}).fit(X, y, sensitive_features=s)


def _assert_same_fkr(a, b, X):
    np.testing.assert_array_equal(a.groups_, b.groups_)
    np.testing.assert_array_equal(a.dual_coef_, b.dual_coef_)
    assert a.intercept_ == b.intercept_ and a.threshold_ == b.threshold_
    np.testing.assert_array_equal(np.asarray(a.predict(X)), np.asarray(b.predict(X)))


# -- the combination convention ---------------------------------------------------------------

def test_combined_names_follow_the_documented_convention_and_fairlearn():
    a = np.array(["x", "a,b", "c\\", "x"], dtype=object)
    b = np.array([1, 2, 2, 1])
    got = sensitive_column(pd.DataFrame({"a": a, "b": b}))
    np.testing.assert_array_equal(got, combine(a, b))
    fairlearn = pytest.importorskip("fairlearn.utils._input_validation")
    ours = sensitive_column(np.column_stack([a, b]))
    np.testing.assert_array_equal(ours, fairlearn._merge_columns(np.column_stack([a, b])))


def test_every_input_kind_gives_the_same_column():
    rng = np.random.default_rng(0)
    a, b = rng.choice(["p", "q"], 40), rng.integers(0, 3, 40)
    want = combine(a, b)
    frame = pd.DataFrame({"a": a, "b": b})
    kinds = {
        "frame": frame,
        "list": [a, b],
        "list-series": [frame["a"], frame["b"]],
        "dask-frame": dd.from_pandas(frame, npartitions=3),
        "dask-array": da.from_array(np.column_stack([a, b.astype(object)]), chunks=(7, 1)),
        "dask-list": [da.from_array(a, chunks=9), b],
    }
    for kind, value in kinds.items():
        got = sensitive_column(value, 40)
        np.testing.assert_array_equal(np.asarray(got.compute() if hasattr(got, "compute")
                                                 else got), want, err_msg=kind)


def test_one_column_stays_as_it_is():
    s = np.array([0, 1, 1, 0])
    np.testing.assert_array_equal(sensitive_column(s[:, None]), s)
    np.testing.assert_array_equal(sensitive_column(pd.DataFrame({"g": s})), s)
    assert sensitive_column(pd.DataFrame({"g": s})).dtype == s.dtype


def test_dask_columns_are_combined_lazily():
    s = da.from_array(np.array([[0, 1], [1, 1], [0, 0], [1, 0]]), chunks=(2, 2))
    got = sensitive_column(s, 4)
    assert isinstance(got, da.Array)
    np.testing.assert_array_equal(got.compute(), combine([0, 1, 0, 1], [1, 1, 0, 0]))


@pytest.mark.parametrize("dask_input", [False, True])
def test_a_missing_value_in_any_column_is_the_missing_values_error(dask_input):
    from daskfair._groups import check_sensitive

    frame = pd.DataFrame({"a": ["x", "y", None, "x"], "b": [1, 2, 1, 2]})
    s = dd.from_pandas(frame, npartitions=2) if dask_input else frame
    with pytest.raises(ValueError, match="missing values"):
        check_sensitive(s, 4)
    with pytest.raises(ValueError, match="missing values"):
        check_sensitive(pd.DataFrame({"a": ["x", "y", "x", "y"], "b": [1.0, np.nan, 1, 2]}))


def test_columns_of_different_lengths_are_an_error():
    with pytest.raises(ValueError, match=r"different lengths \(\[4, 3\]\)"):
        sensitive_column([np.zeros(4), np.zeros(3)])


# -- the three methods ------------------------------------------------------------------------

def test_fkr_several_columns_equal_the_combined_column(fkr_data):
    X, y, s, race = fkr_data
    reference = _cv_fit(X, y, combine(s, race))
    assert reference.groups_.tolist() == ["0,black", "0,white", "1,black", "1,white"]
    assert reference.merged_groups_ == {}
    for value in (np.column_stack([s, race]), pd.DataFrame({"sex": s, "race": race}),
                  [s, race]):
        _assert_same_fkr(_cv_fit(X, y, value), reference, X)


def test_fkr_dask_columns_equal_the_combined_column(fkr_data):
    X, y, s, race = fkr_data
    Xd, yd = da.from_array(X, chunks=(150, -1)), da.from_array(y, chunks=150)
    reference = _cv_fit(Xd, yd, da.from_array(combine(s, race), chunks=150))
    frame = dd.from_pandas(pd.DataFrame({"sex": s, "race": race}), npartitions=5)  # 120 rows
    _assert_same_fkr(_cv_fit(Xd, yd, frame), reference, X)
    array = da.from_array(np.column_stack([s.astype(object), race]), chunks=(100, 1))
    _assert_same_fkr(_cv_fit(Xd, yd, array), reference, X)


def test_fkr_regressor_several_columns(fkr_data):
    X, _, s, race = fkr_data
    y = X[:, 0] + s
    fit = [FairKernelRegressor(n_landmarks=50, random_state=0).fit(
        X, y, sensitive_features=value) for value in (combine(s, race),
                                                      pd.DataFrame({"s": s, "r": race}))]
    np.testing.assert_array_equal(fit[0].dual_coef_, fit[1].dual_coef_)
    np.testing.assert_array_equal(fit[0].groups_, fit[1].groups_)


def _blobs(n=400):
    X, s, _ = (np.asarray(a) for a in make_fair_blobs(n, n_clusters=3, random_state=0))
    age = np.where(np.random.default_rng(2).random(n) < 0.5, "young", "old")
    return X, s, age


def test_safairkm_several_columns_equal_the_combined_column():
    X, s, age = _blobs()
    fits = [SAFairKMeans(3, max_iter=20, random_state=0).fit(X, sensitive_features=value)
            for value in (combine(s, age), np.column_stack([s, age]),
                          pd.DataFrame({"s": s, "age": age}))]
    for fit in fits[1:]:
        np.testing.assert_array_equal(fit.labels_, fits[0].labels_)
        np.testing.assert_array_equal(fit.cluster_centers_, fits[0].cluster_centers_)
        np.testing.assert_array_equal(fit.groups_, fits[0].groups_)
    vfair = [VFairKMeans(3, fairness_weight=10.0, max_iter=5, random_state=0).fit(
        X, sensitive_features=value) for value in (combine(s, age), [s, age])]
    np.testing.assert_array_equal(vfair[0].labels_, vfair[1].labels_)


def _pool(n=300, m=6, c=3):
    rng = np.random.default_rng(0)
    truth = rng.integers(0, c, n)
    base = np.column_stack([np.where(rng.random(n) < 0.75, truth, rng.integers(0, c, n))
                            for _ in range(m)])
    return base, rng.integers(0, 2, n), rng.choice(np.array(["a", "b", "c"]), n)


def test_fce_several_columns_equal_the_combined_column():
    base, s, t = _pool()
    fits = [FairClusteringEnsemble(3, max_iter=5, random_state=0).fit(
        base, sensitive_features=value)
        for value in (combine(s, t), np.column_stack([s, t]), pd.DataFrame({"s": s, "t": t}))]
    for fit in fits[1:]:
        np.testing.assert_array_equal(fit.labels_, fits[0].labels_)
        np.testing.assert_array_equal(fit.weights_, fits[0].weights_)
        np.testing.assert_array_equal(fit.groups_, fits[0].groups_)


# -- min_group_size and small_groups ----------------------------------------------------------

def _with_small_groups(s: np.ndarray, race: np.ndarray) -> tuple[np.ndarray, dict[str, int]]:
    """race with a rare value, and the rows of the combinations below 25 (by pandas)."""
    race = race.astype(object).copy()
    race[np.random.default_rng(4).choice(len(race), 30, replace=False)] = "asian"
    names = pd.Series(combine(s, race))
    counts = names.value_counts()
    return race, {k: int(v) for k, v in counts[counts < 25].items()}


def test_small_groups_raise_names_every_small_group(fkr_data):
    X, y, s, race = fkr_data
    race, small = _with_small_groups(s, race)
    assert len(small) >= 2
    with pytest.raises(ValueError, match="min_group_size=25") as info:
        _cv_fit(X, y, [s, race], min_group_size=25)
    for name, count in small.items():
        assert f"{name!r} ({count} row" in str(info.value)
    assert "small_groups='merge'" in str(info.value)


def test_small_groups_merge_equals_an_explicit_merge(fkr_data):
    X, y, s, race = fkr_data
    race, small = _with_small_groups(s, race)
    names = combine(s, race)
    reference = _cv_fit(X, y, merge(names, set(small)))
    with pytest.warns(UserWarning, match="merged into the group 'other'") as record:
        fit = _cv_fit(X, y, pd.DataFrame({"s": s, "race": race}), min_group_size=25,
                      small_groups="merge")
    assert record[0].filename == __file__  # the warning points at the caller's fit
    message = " ".join(str(w.message) for w in record)
    for name, count in small.items():
        assert f"{name!r} ({count} row" in message
    _assert_same_fkr(fit, reference, X)
    assert fit.merged_groups_ == small
    Xd, yd = da.from_array(X, chunks=(200, -1)), da.from_array(y, chunks=200)
    with pytest.warns(UserWarning, match="merged"):
        lazy = _cv_fit(Xd, yd,
                       dd.from_pandas(pd.DataFrame({"s": s, "race": race}), npartitions=3),
                       min_group_size=25, small_groups="merge")
    _assert_same_fkr(lazy, _cv_fit(Xd, yd, da.from_array(merge(names, set(small)), chunks=200)),
                     X)
    np.testing.assert_array_equal(lazy.groups_, fit.groups_)
    assert lazy.merged_groups_ == small


def test_merged_name_avoids_an_existing_group():
    from daskfair._groups import merge_small_groups

    s = np.array(["other"] * 5 + ["a"] * 5 + ["b", "c"], dtype=object)
    with pytest.warns(UserWarning, match="'other_1'"):
        out, merged = merge_small_groups(s, 2, "merge")
    np.testing.assert_array_equal(out, merge(s, {"b", "c"}, "other_1"))
    assert merged == {"b": 1, "c": 1}


def test_merge_that_stays_too_small_or_leaves_one_group_raises():
    from daskfair._groups import merge_small_groups

    with pytest.raises(ValueError, match="still fewer than min_group_size=3"):
        merge_small_groups(np.array(["a"] * 5 + ["b"]), 3, "merge")
    with pytest.raises(ValueError, match="leaves a single group"):
        merge_small_groups(np.array(["a", "b", "c"]), 2, "merge")


def test_safairkm_and_fce_merge_small_groups():
    X, s, age = _blobs()
    age = age.astype(object)
    age[np.random.default_rng(5).choice(len(age), 14, replace=False)] = "child"
    names = combine(s, age)
    counts = pd.Series(names).value_counts()
    small = {k: int(v) for k, v in counts[counts < 10].items()}
    reference = SAFairKMeans(3, max_iter=20, random_state=0).fit(
        X, sensitive_features=merge(names, set(small)))
    with pytest.warns(UserWarning, match="merged"):
        fit = SAFairKMeans(3, max_iter=20, random_state=0, min_group_size=10,
                           small_groups="merge").fit(X, sensitive_features=[s, age])
    np.testing.assert_array_equal(fit.labels_, reference.labels_)
    np.testing.assert_array_equal(fit.groups_, reference.groups_)
    assert fit.merged_groups_ == small
    with pytest.raises(ValueError, match="fewer than min_group_size=10"):
        SAFairKMeans(3, min_group_size=10).fit(X, sensitive_features=[s, age])

    base, s, t = _pool()
    t = t.astype(object)
    t[np.random.default_rng(6).choice(len(t), 14, replace=False)] = "d"
    names = combine(s, t)
    counts = pd.Series(names).value_counts()
    small = {k: int(v) for k, v in counts[counts < 10].items()}
    reference = FairClusteringEnsemble(3, max_iter=5, random_state=0).fit(
        base, sensitive_features=merge(names, set(small)))
    with pytest.warns(UserWarning, match="merged"):
        fit = FairClusteringEnsemble(3, max_iter=5, random_state=0, min_group_size=10,
                                     small_groups="merge").fit(
            da.from_array(base, chunks=(100, -1)),
            sensitive_features=da.from_array(np.column_stack([s.astype(object), t]),
                                             chunks=(100, 2)))
    np.testing.assert_array_equal(np.asarray(fit.labels_), reference.labels_)
    np.testing.assert_array_equal(fit.groups_, reference.groups_)
    assert fit.merged_groups_ == small


ESTIMATORS = [
    (FairKernelRegressor, {"n_landmarks": 20}, "regress"),
    (FairKernelRidge, {"n_landmarks": 20}, "regress"),
    (FairKernelClassifier, {"n_landmarks": 20}, "classify"),
    (FairKernelClassifierCV, CV_SMALL, "classify"),
    (FairKernelRegressorCV, {**CV_SMALL, "disparity_bound": 10.0}, "regress"),
    (SAFairKMeans, {"n_clusters": 2, "max_iter": 2}, "cluster"),
    (VFairKMeans, {"n_clusters": 2, "max_iter": 2}, "cluster"),
    (FairClusteringEnsemble, {"n_clusters": 2, "max_iter": 2}, "ensemble"),
]


def _fit(cls, params, kind, **extra):
    rng = np.random.default_rng(0)
    X, s = rng.normal(size=(60, 3)), np.arange(60) % 2
    est = cls(**params, **extra)
    if kind == "regress":
        return est.fit(X, X[:, 0], sensitive_features=s)
    if kind == "classify":
        return est.fit(X, (X[:, 0] > 0).astype(int), sensitive_features=s)
    if kind == "cluster":
        return est.fit(X, sensitive_features=s)
    return est.fit(rng.integers(0, 2, size=(60, 3)), sensitive_features=s)


@pytest.mark.parametrize(("cls", "params", "kind"), ESTIMATORS,
                         ids=[e[0].__name__ for e in ESTIMATORS])
def test_group_size_parameters_are_checked(cls, params, kind):
    est = cls(**params)
    assert est.get_params()["min_group_size"] == 1
    assert est.get_params()["small_groups"] == "raise"
    for bad, error in ((0, ValueError), (1.5, TypeError), (True, TypeError), ("2", TypeError)):
        with pytest.raises(error, match="min_group_size must be an integer >= 1"):
            _fit(cls, params, kind, min_group_size=bad)
    with pytest.raises(ValueError, match=r"small_groups must be one of \('raise', 'merge'\)"):
        _fit(cls, params, kind, small_groups="drop")
    fitted = _fit(cls, params, kind, min_group_size=30)  # both groups have 30 rows
    assert fitted.merged_groups_ == {}
    assert fitted.min_group_size == 30


# -- group_report -----------------------------------------------------------------------------

def _predictions(n=500):
    rng = np.random.default_rng(3)
    a, b = rng.choice(["x", "y", "z"], n), rng.integers(0, 2, n)
    y_true = rng.integers(0, 2, n)
    y_pred = np.where(rng.random(n) < 0.3 + 0.1 * b, 1 - y_true, y_true)
    return y_true, y_pred, a, b


def _pandas_table(y_true, y_pred, groups):
    frame = pd.DataFrame({"g": groups, "t": y_true, "p": y_pred})
    rows = frame.groupby("g").size()
    return pd.DataFrame({
        "rows": rows,
        "selection_rate": frame.groupby("g")["p"].mean(),
        "true_positive_rate": frame[frame.t == 1].groupby("g")["p"].mean(),
        "false_positive_rate": frame[frame.t == 0].groupby("g")["p"].mean(),
        "error_rate": (frame.t != frame.p).groupby(frame.g).mean(),
    })


@pytest.mark.parametrize("kind", ["numpy", "frame", "dask-frame", "dask-array"])
def test_group_report_equals_a_pandas_groupby(kind):
    y_true, y_pred, a, b = _predictions()
    frame = pd.DataFrame({"a": a, "b": b})
    s = {"numpy": np.column_stack([a, b]), "frame": frame,
         "dask-frame": dd.from_pandas(frame, npartitions=3),
         "dask-array": da.from_array(frame.to_numpy(), chunks=(120, 1))}[kind]
    truth, pred = y_true, y_pred
    if kind.startswith("dask"):
        truth, pred = da.from_array(y_true, chunks=100), da.from_array(y_pred, chunks=100)
    report = group_report(truth, pred, sensitive_features=s)
    names = np.asarray(sensitive_column(frame))  # combined with fairlearn's convention
    want = _pandas_table(y_true, y_pred, combine(a, frame["b"].to_numpy()))
    np.testing.assert_array_equal(names, combine(a, frame["b"].to_numpy()))
    assert report.table.index.tolist() == want.index.tolist()
    pd.testing.assert_frame_equal(report.table, want, check_names=False, check_dtype=False)

    sd = demographic_parity_difference(None, pred, sensitive_features=s)
    eod = equalized_odds_difference(truth, pred, sensitive_features=s)
    dp, eo = report.demographic_parity, report.equalized_odds
    assert dp.difference == sd
    assert eo.difference == eod
    rates = want["selection_rate"]
    assert (dp.low, dp.high) == (rates.idxmin(), rates.idxmax())
    assert eo.difference == pytest.approx(want.loc[eo.high, eo.rate] - want.loc[eo.low, eo.rate])
    assert eo.rate in ("true_positive_rate", "false_positive_rate")


def test_group_report_without_both_classes_in_a_group():
    report = group_report([1, 1, 0, 1], [1, 0, 0, 1], sensitive_features=["a", "a", "b", "b"])
    assert report.equalized_odds is None
    assert np.isnan(report.table.loc["a", "false_positive_rate"])
    assert report.demographic_parity.difference == demographic_parity_difference(None,
        [1, 0, 0, 1], sensitive_features=["a", "a", "b", "b"])


# -- command line: several --sensitive columns of a table -------------------------------------

def _table(n=240):
    rng = np.random.default_rng(1)
    return pd.DataFrame({"age": rng.integers(19, 75, n), "x": rng.normal(size=n),
                         "housing": rng.choice(["own", "rent"], n),
                         "sex": rng.choice(["female", "male"], n),
                         "risk": rng.choice(["bad", "good"], n)})


def test_a_table_with_several_sensitive_columns(tmp_path):
    from daskfair.cli.inputs import load_input

    df = _table()
    df.to_csv(tmp_path / "t.csv", index=False)
    d = load_input(path=tmp_path / "t.csv", label="risk", sensitive=["sex", "housing"],
                   need_label=True)
    np.testing.assert_array_equal(np.asarray(d.sensitive.compute(), dtype=object),
                                  combine(df["sex"], df["housing"]))
    assert d.feature_names == ["age", "x"]
    assert d.description["sensitive"] == "sex,housing"
    assert d.description["sensitive_columns"] == ["sex", "housing"]
    one = load_input(path=tmp_path / "t.csv", label="risk", sensitive=["sex"], need_label=True)
    assert one.description["sensitive"] == "sex" and "sensitive_columns" not in one.description
    assert sorted(one.feature_names) == ["age", "housing=own", "housing=rent", "x"]

    df.loc[3, "housing"] = None
    df.to_csv(tmp_path / "missing.csv", index=False)
    with pytest.raises(ValueError, match=r"sensitive column 'sex,housing' has 1 missing"):
        load_input(path=tmp_path / "missing.csv", label="risk", sensitive=["sex", "housing"])
    with pytest.raises(ValueError, match=r"--sensitive lists \['sex'\] more than once"):
        load_input(path=tmp_path / "t.csv", label="risk", sensitive=["sex", "sex"])
    with pytest.raises(ValueError, match=r"--label and --sensitive name the same column"):
        load_input(path=tmp_path / "t.csv", label="risk", sensitive=["sex", "risk"])

