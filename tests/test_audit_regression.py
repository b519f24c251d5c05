"""audit(task="regression"): the groups' mean prediction, target, residual, absolute and
squared error with intervals, their gaps, and the distance between the groups' predictions,
from one pass; against fairlearn's MetricFrame, numpy and scipy on each group's rows."""

from __future__ import annotations

import collections
import itertools

import dask
import dask.array as da
import dask.dataframe as dd
import numpy as np
import pandas as pd
import pytest
from scipy import stats
from sklearn.linear_model import Ridge
from sklearn.metrics import mean_absolute_error, mean_squared_error

from daskfair.metrics import REGRESSION_METRICS, RegressionAudit, audit


def _mean_target(y_true, y_pred):
    return float(np.mean(y_true))


def _mean_residual(y_true, y_pred):
    return float(np.mean(np.asarray(y_true) - np.asarray(y_pred)))


def _metricframe(t, p, groups):
    from fairlearn.metrics import MetricFrame, count, mean_prediction

    return MetricFrame(metrics={"count": count, "mean_prediction": mean_prediction,
                                "mean_target": _mean_target, "mean_residual": _mean_residual,
                                "mean_absolute_error": mean_absolute_error,
                                "mean_squared_error": mean_squared_error},
                       y_true=t, y_pred=p, sensitive_features=groups)


def _data(n=12000, seed=0):
    rng = np.random.default_rng(seed)
    groups = pd.DataFrame({"sex": rng.choice(["F", "M"], n),
                           "region": rng.choice(["north", "south", "east"], n, p=[.5, .3, .2])})
    t = rng.gamma(2.0, 1500.0, n) + 400 * (groups["sex"] == "M")
    p = t + rng.normal(0, 250, n) - 120 * (groups["region"] == "east")
    return groups, t, p


def _close(ours, theirs, rtol=1e-9):
    np.testing.assert_allclose(np.asarray(ours, dtype=float), np.asarray(theirs, dtype=float),
                               rtol=rtol, atol=0)


def test_equals_fairlearns_metricframe_with_two_sensitive_columns():
    groups, t, p = _data()
    a = audit(t, p, sensitive_features=groups, task="regression")
    mf = _metricframe(t, p, groups)
    assert isinstance(a, RegressionAudit)
    assert a.metrics == ["count", *REGRESSION_METRICS]
    pd.testing.assert_index_equal(a.by_group.index, mf.by_group.index)
    _close(a.by_group[mf.by_group.columns], mf.by_group)
    _close(a.overall[mf.overall.index], mf.overall)
    for method in ("between_groups", "to_overall"):
        _close(a.difference(method), mf.difference(method).drop("count"))
    _close(a.group_min(), mf.group_min().drop("count"))
    _close(a.group_max(), mf.group_max().drop("count"))


def test_real_data_communities_and_crime_ridge_predictions(data_dir):
    # a ridge regression of violent crime per population, audited by whether half the
    # residents or more are Black, on the rows it was not fitted on
    from daskfair.datasets import load_dataset

    d = load_dataset("communities_crime", data_dir)
    X, y = d.X, d.y
    group = np.asarray(d.groups)[d.sensitive]
    fit = Ridge(alpha=1.0).fit(X[::2], y[::2])
    t, p, g = y[1::2], fit.predict(X[1::2]), group[1::2]
    a = audit(t, p, sensitive_features=g, task="regression")
    mf = _metricframe(t, p, g)
    _close(a.by_group[mf.by_group.columns], mf.by_group)
    _close(a.difference(), mf.difference().drop("count"))
    assert a.difference()["mean_prediction"] > 0.1  # the gap the fair regression closes


def _hall_reference(x, z):
    """Hall's (1992) interval of the mean of x, computed from the rows: his cubic
    transformation at the quantile corrected by the n⁻¹ Edgeworth term q₂."""
    n, m, s = len(x), x.mean(), x.std(ddof=1)
    g = np.mean((x - m) ** 3) / s**3
    k = np.mean((x - m) ** 4) / s**4 - 3
    q = z - z * (k * (z**2 - 3) / 12 - g**2 * (z**4 + 2 * z**2 - 3) / 18 - (z**2 + 3) / 4) / n

    def inverse(u):
        return 3 * np.sqrt(n) / g * (np.cbrt(1 + g * (u - g / (6 * np.sqrt(n))) / np.sqrt(n))
                                     - 1)

    return m - s / np.sqrt(n) * inverse(q), m - s / np.sqrt(n) * inverse(-q)


def test_intervals_are_halls_intervals_of_each_groups_means():
    groups, t, p = _data(3000, seed=1)
    a = audit(t, p, sensitive_features=groups["region"], task="regression", confidence=0.9)
    lo, hi = a.by_group_ci
    z = stats.norm.ppf(0.95)
    r = t - p
    per_row = {"mean_prediction": p, "mean_target": t, "mean_residual": r,
               "mean_absolute_error": np.abs(r), "mean_squared_error": r**2}
    for g in ("north", "south", "east"):
        m = (groups["region"] == g).to_numpy()
        for metric, x in per_row.items():
            want = _hall_reference(x[m], z)
            assert (lo.loc[g, metric], hi.loc[g, metric]) == pytest.approx(want, rel=1e-9)
    olo, ohi = a.overall_ci
    assert (olo["mean_squared_error"], ohi["mean_squared_error"]) == pytest.approx(
        _hall_reference(r**2, z), rel=1e-9)


def test_shapes_within_the_powers_rounding_are_not_used():
    # far from 0, the skewness and kurtosis of these predictions are within the rounding of
    # their cubes and fourth powers: the interval is symmetric, widened by q₂'s last term
    rng = np.random.default_rng(8)
    p = np.r_[1e6 + rng.normal(0, 1, 500), 1e6 - rng.normal(0, 1, 500)]
    g = np.tile(["a", "b"], 500)
    lo, hi = audit(p + 1, p, sensitive_features=g, task="regression").by_group_ci
    z = stats.norm.ppf(0.975)
    for k in "ab":
        x = p[g == k]
        half = z * (1 + (z**2 + 3) / (4 * len(x))) * x.std(ddof=1) / np.sqrt(len(x))
        assert (lo.loc[k, "mean_prediction"], hi.loc[k, "mean_prediction"]) == pytest.approx(
            (x.mean() - half, x.mean() + half), rel=1e-12)


def test_variances_are_exact_where_the_mean_dwarfs_the_spread():
    # prices near 1e9 that differ by units: the raw moments cancel in float, not as integers
    rng = np.random.default_rng(2)
    t = 1e9 + rng.normal(0, 1, 4000)
    p = 1e9 + rng.normal(0, 2, 4000)
    g = np.repeat(["a", "b"], 2000)
    lo, hi = audit(t, p, sensitive_features=g, task="regression").by_group_ci
    z = stats.norm.ppf(0.975)
    for k, m in (("a", g == "a"), ("b", g == "b")):
        se = p[m].std(ddof=1) / np.sqrt(m.sum())
        q = z * (1 + (z**2 + 3) / (4 * m.sum()))  # the shapes are within rounding: 0
        assert (hi.loc[k, "mean_prediction"] - lo.loc[k, "mean_prediction"]) / 2 == \
            pytest.approx(q * se, rel=1e-6)


def test_largest_gap_interval_holds_every_pairs_interval():
    groups, t, p = _data(6000, seed=3)
    a = audit(t, p, sensitive_features=groups["region"], task="regression")
    lower, upper = a.difference_ci()
    gap = a.difference()
    assert (lower <= gap).all() and (gap <= upper).all()
    # by hand: Bonferroni over the three pairs, normal intervals of the differences
    z = stats.norm.ppf(1 - 0.05 / 6)
    v = a.by_group["mean_prediction"]
    se = pd.Series({k: p[(groups["region"] == k).to_numpy()].std(ddof=1)
                    / np.sqrt((groups["region"] == k).sum()) for k in v.index})
    ends = []
    for i, j in itertools.combinations(v.index, 2):
        d, h = v[i] - v[j], z * np.hypot(se[i], se[j])
        ends.append(max(abs(d - h), abs(d + h)))
    assert upper["mean_prediction"] == pytest.approx(max(ends), rel=1e-12)


def test_prediction_ks_holds_scipys_distance():
    groups, t, p = _data(8000, seed=4)
    p = p - 3000  # negative and positive predictions
    a = audit(t, p, sensitive_features=groups["region"], task="regression")
    ks = a.prediction_ks()
    assert len(ks) == 3
    for (x, y), row in ks.iterrows():
        m, n = (groups["region"] == x).to_numpy(), (groups["region"] == y).to_numpy()
        exact = stats.ks_2samp(p[m], p[n]).statistic
        assert row["ks"] - 1e-12 <= exact <= row["ks_upper"] + 1e-12
        assert row["ks_upper"] - row["ks"] < 0.01


def test_same_bits_for_any_chunking_and_one_pass():
    groups, t, p = _data(5000, seed=5)
    ref = audit(t, p, sensitive_features=groups["sex"].to_numpy(), task="regression")
    for chunks in (5000, 777, 64):
        a = audit(da.from_array(t, chunks=chunks), da.from_array(p, chunks=chunks),
                  sensitive_features=da.from_array(groups["sex"].to_numpy(), chunks=chunks),
                  task="regression")
        pd.testing.assert_frame_equal(a.by_group, ref.by_group, check_exact=True)
        pd.testing.assert_frame_equal(a.by_group_ci[1], ref.by_group_ci[1], check_exact=True)
        pd.testing.assert_frame_equal(a.prediction_ks(), ref.prediction_ks(), check_exact=True)
    frame = groups.assign(t=t, p=p)
    reads = collections.Counter()

    def read(i):
        reads[i] += 1
        return frame.iloc[i * 500:(i + 1) * 500]

    d = dd.from_map(read, list(range(10)), meta=frame.iloc[:0])
    reads.clear()
    with dask.config.set(scheduler="sync"):
        a = audit(d["t"], d["p"], sensitive_features=d["sex"], task="regression")
    assert dict(reads) == {i: 1 for i in range(10)}
    pd.testing.assert_frame_equal(a.by_group.rename_axis("sensitive_feature_0"), ref.by_group,
                                  check_exact=True)


def test_tests_find_a_real_gap_and_the_reference_group():
    groups, t, p = _data(9000, seed=6)
    a = audit(t, p, sensitive_features=groups["region"], task="regression",
              reference_group="north")
    tests = a.tests()
    assert tests.loc[("mean_residual", "east"), "significant"]  # predictions 120 lower
    assert not tests.loc[("mean_residual", "south"), "significant"]
    lo, hi = a.difference_to_reference_ci()
    d = a.difference_to_reference()
    assert (d.loc["north"] == 0).all() and (lo.loc["east"] <= d.loc["east"]).all()
    assert (d.loc["east"] <= hi.loc["east"]).all()


def test_min_group_size_suppresses_and_state_round_trips():
    groups, t, p = _data(4000, seed=7)
    g = groups["region"].where(np.arange(4000) > 30, "tiny")
    a = audit(t, p, sensitive_features=g, task="regression", min_group_size=50)
    assert a.suppressed == {"tiny": 31}
    assert a.by_group.loc["tiny", "count"] == 31 and np.isnan(a.by_group.loc["tiny"]).sum() == 5
    assert "tiny" not in {x for pair in a.prediction_ks().index for x in pair}
    arrays, attrs = a.to_state()
    back = RegressionAudit.from_state(arrays, attrs)
    pd.testing.assert_frame_equal(back.by_group, a.by_group, check_exact=True)
    pd.testing.assert_frame_equal(back.prediction_ks(), a.prediction_ks(), check_exact=True)


def test_a_window_too_narrow_for_a_term_widens_to_every_exponent(monkeypatch):
    # the kernel refuses a term outside the accumulator it was given, never writes past it
    import daskfair.metrics._regression_blocks as blocks

    groups, t, p = _data(3000, seed=9)
    ref = audit(t, p, sensitive_features=groups["sex"], task="regression")
    monkeypatch.setattr(blocks, "_window", lambda t, p, s: (0, 3))
    narrow = audit(t, p, sensitive_features=groups["sex"], task="regression")
    pd.testing.assert_frame_equal(narrow.by_group, ref.by_group, check_exact=True)
    pd.testing.assert_frame_equal(narrow.by_group_ci[1], ref.by_group_ci[1], check_exact=True)


@pytest.mark.parametrize("kw, message", [
    (dict(y_score=np.ones(4)), r"task='regression' takes no y_score"),
    (dict(metrics=["f1_score"]), r"task='regression' takes no metrics"),
    (dict(sample_weight=np.ones(4)), r"takes no sample_weight"),
    (dict(task="ranking"), r"task must be one of \('classification', 'regression'\)"),
    (dict(y_true=[1.0, np.nan, 2.0, 3.0]), r"y_true or y_pred holds NaN or infinite values"),
    (dict(y_pred=[1.0, 2.0, 1e40, 3.0]), r"eighth power overflows"),
])
def test_regression_refuses_what_it_cannot_audit(kw, message):
    args = dict(y_true=[1.0, 2.0, 3.0, 4.0], y_pred=[1.5, 2.5, 2.0, 4.0],
                sensitive_features=["a", "a", "b", "b"], task="regression") | kw
    with pytest.raises(ValueError, match=message):
        audit(**args)


def test_a_continuous_target_without_the_task_says_which_to_use():
    with pytest.raises(ValueError, match=r"audit\(\.\.\., task='regression'\)"):
        audit([1.0, 2.5, 3.0, 4.0], [1.0, 2.0, 3.0, 4.0], sensitive_features=[0, 0, 1, 1])


def test_within_control_levels_equals_metricframe_and_round_trips():
    from fairlearn.metrics import MetricFrame, count, mean_prediction

    from daskfair.metrics import LevelAudit

    groups, t, p = _data(9000, seed=10)
    a = audit(t, p, sensitive_features=groups["sex"], control_features=groups["region"],
              task="regression")
    assert isinstance(a, LevelAudit) and set(a.levels) == {"east", "north", "south"}
    mf = MetricFrame(metrics={"count": count, "mean_prediction": mean_prediction,
                              "mean_absolute_error": mean_absolute_error,
                              "mean_squared_error": mean_squared_error},
                     y_true=t, y_pred=p, sensitive_features=groups["sex"],
                     control_features=groups["region"])
    _close(a.by_group[mf.by_group.columns], mf.by_group)
    _close(a.difference()[["mean_prediction", "mean_absolute_error", "mean_squared_error"]],
           mf.difference()[["mean_prediction", "mean_absolute_error", "mean_squared_error"]])
    for r in ("east", "north", "south"):
        m = (groups["region"] == r).to_numpy()
        alone = audit(t[m], p[m], sensitive_features=groups["sex"][m], task="regression")
        pd.testing.assert_frame_equal(a.levels[r].by_group_ci[1], alone.by_group_ci[1],
                                      check_exact=True)
    lo, hi = a.difference_ci()
    assert (lo["mean_prediction"] <= a.difference()["mean_prediction"]).all()
    arrays, attrs = a.to_state()
    back = LevelAudit.from_state(arrays, attrs)
    pd.testing.assert_frame_equal(back.by_group, a.by_group, check_exact=True)
    pd.testing.assert_frame_equal(back.difference_ci()[1], hi, check_exact=True)


def test_error_intervals_never_go_below_zero():
    # three rows: Hall's interval of the squared error would start below 0
    a = audit([1.0, 2.0, 3.0, 4.0, 5.0], [1.0, 1.0, 1.0, 1.0, 1.0],
              sensitive_features=["a", "a", "a", "b", "b"], task="regression")
    lo, hi = a.by_group_ci
    assert lo.loc["a", "mean_squared_error"] == 0.0 < hi.loc["a", "mean_squared_error"]
    assert (lo[["mean_absolute_error", "mean_squared_error"]] >= 0).all().all()


def test_prediction_ks_treats_both_zeros_as_one_value():
    # group a's zeros are all -0.0 and b's all 0.0: apart, they would make a gap of 0.5
    p = np.array([-0.0, -0.0, 1.0, 2.0, 0.0, 0.0, 0.5, 3.0])
    g = np.array(list("aaaabbbb"))
    ks = audit(p + 1, p, sensitive_features=g, task="regression").prediction_ks()
    exact = stats.ks_2samp(p[g == "a"], p[g == "b"]).statistic
    assert ks["ks"].iloc[0] <= exact + 1e-12 <= ks["ks_upper"].iloc[0] + 2e-12
