"""daskfair.metrics.audit: point estimates against fairlearn and scikit-learn, intervals
against fairlearn's bootstrap and closed forms, one pass, the same bits for any chunking."""

from __future__ import annotations

import collections
import math
from fractions import Fraction

import dask
import dask.array as da
import dask.dataframe as dd
import numpy as np
import pandas as pd
import pytest
from scipy import stats
from sklearn.metrics import precision_score, roc_auc_score

from daskfair.metrics import AUDIT_RATES, audit
from daskfair.metrics._audit_blocks import SCORE_BITS, score_bins
from daskfair.metrics._audit_stats import _placed, auc_from_histograms, holm, wilson

RATES = list(AUDIT_RATES)


def _data(n=3000, seed=0):
    rng = np.random.default_rng(seed)
    s = pd.DataFrame({"sex": rng.choice(["F", "M"], n),
                      "race": rng.choice(["a", "b", "c"], n, p=[0.6, 0.3, 0.1])})
    y = rng.integers(0, 2, n)
    p = (rng.random(n) < 0.3 + 0.2 * y + 0.05 * (s["sex"] == "M")).astype(int)
    score = rng.random(n) + 0.3 * y
    w = rng.uniform(0.5, 3, n)
    return s, y, p, score, w


def _fairlearn_frame(y, p, s, w=None, **kw):
    from fairlearn.metrics import (
        MetricFrame,
        count,
        false_positive_rate,
        selection_rate,
        true_positive_rate,
    )

    def error_rate(y_true, y_pred, sample_weight=None):
        return np.average(y_true != y_pred, weights=sample_weight)

    def precision(y_true, y_pred, sample_weight=None):
        return precision_score(y_true, y_pred, sample_weight=sample_weight,
                               zero_division=np.nan)

    metrics = {"selection_rate": selection_rate, "true_positive_rate": true_positive_rate,
               "false_positive_rate": false_positive_rate, "error_rate": error_rate,
               "precision": precision}
    params = {k: {"sample_weight": w} for k in metrics} if w is not None else None
    with_count = {"count": count, **metrics} if w is None else metrics
    return MetricFrame(metrics=with_count, y_true=y, y_pred=p, sensitive_features=s,
                       sample_params=params, **kw)


def test_point_estimates_equal_fairlearns_with_two_columns_and_weights():
    s, y, p, _, w = _data()
    keep = ~((s["sex"] == "F") & (s["race"] == "c")).to_numpy()  # an absent combination
    s, y, p, w = s[keep].reset_index(drop=True), y[keep], p[keep], w[keep]
    mf = _fairlearn_frame(y, p, s, w)
    a = audit(y, p, sensitive_features=s, sample_weight=w, n_boot=0)
    assert a.by_group.index.equals(mf.by_group.index)  # MultiIndex, absent combination too
    pd.testing.assert_frame_equal(a.by_group[RATES], mf.by_group[RATES], rtol=1e-12)
    pd.testing.assert_series_equal(a.overall[RATES], mf.overall[RATES], rtol=1e-12)
    for method in ("between_groups", "to_overall"):
        pd.testing.assert_series_equal(a.difference(method)[RATES],
                                       mf.difference(method)[RATES], rtol=1e-12)
        pd.testing.assert_series_equal(a.ratio(method)[RATES], mf.ratio(method)[RATES],
                                       rtol=1e-12)
    pd.testing.assert_series_equal(a.group_min()[RATES], mf.group_min()[RATES], rtol=1e-12)
    pd.testing.assert_series_equal(a.group_max()[RATES], mf.group_max()[RATES], rtol=1e-12)
    counts = _fairlearn_frame(y, p, s).by_group["count"]
    pd.testing.assert_series_equal(a.by_group["count"], counts)  # rows, not weights


def test_group_names_as_fairlearn_names_them():
    s, y, p, _, _ = _data(400)
    for given, name in ((s["sex"], "sex"), (s["sex"].to_numpy(), "sensitive_feature_0")):
        a = audit(y, p, sensitive_features=given, n_boot=0)
        assert a.by_group.index.name == name
        assert list(a.by_group.index) == ["F", "M"]
    a = audit(y, p, sensitive_features=s.to_numpy(), n_boot=0)
    assert list(a.by_group.index.names) == ["sensitive_feature_0", "sensitive_feature_1"]


def test_roc_auc_per_group_equals_sklearns_within_its_bound():
    s, y, p, score, _ = _data()
    a = audit(y, p, sensitive_features=s, y_score=score, n_boot=0)
    bound = a.roc_auc_error_bound
    for g, rows in s.groupby(["sex", "race"]).groups.items():
        exact = roc_auc_score(y[rows], score[rows])
        assert abs(a.by_group.loc[g, "roc_auc"] - exact) <= bound[g] + 1e-15
    assert abs(a.overall["roc_auc"] - roc_auc_score(y, score)) < 1e-4


def test_auc_bound_holds_where_scores_share_a_bin():
    rng = np.random.default_rng(3)
    n = 2000
    y = rng.integers(0, 2, n)
    # differences of 1e-9 are below the bins' resolution: every pair shares a bin
    score = 0.5 + 1e-9 * (rng.random(n) + y)
    g = rng.choice(["a", "b"], n)
    a = audit(y, y, sensitive_features=g, y_score=score, n_boot=0)
    for group in ("a", "b"):
        exact = roc_auc_score(y[g == group], score[g == group])
        err = abs(a.by_group.loc[group, "roc_auc"] - exact)
        assert err > 0.1  # the binning loses the order here ...
        assert err <= a.roc_auc_error_bound[group]  # ... and the bound says so


@pytest.mark.parametrize("spread", [300, 2**18])  # bins looked up densely, or searched
def test_placed_counts_the_rows_below_and_in_each_bin(spread):
    rng = np.random.default_rng(spread)
    bins = np.unique(rng.integers(0, spread, 400))
    rows = rng.integers(1, 50, len(bins))
    at = np.unique(rng.integers(0, spread, 300))
    below, same = _placed(bins, rows, at)
    assert below.tolist() == [int(rows[bins < b].sum()) for b in at]
    assert same.tolist() == [int(rows[bins == b].sum()) for b in at]


def test_roc_auc_of_unbounded_scores_equals_sklearns_within_its_bound():
    rng = np.random.default_rng(8)
    n = 3000
    y = rng.integers(0, 2, n)
    score = rng.normal(y, 40.0)  # decision values: bins of the float32 order key
    g = rng.choice(["a", "b"], n)
    a = audit(y, y, sensitive_features=g, y_score=score, n_boot=0)
    for group in ("a", "b"):
        exact = roc_auc_score(y[g == group], score[g == group])
        assert abs(a.by_group.loc[group, "roc_auc"] - exact) <= (
            a.roc_auc_error_bound[group] + 1e-15)


def test_score_bins_keep_the_order():
    x = np.array([-np.inf, -1e30, -2.0, -1e-30, -0.0, 0.0, 1e-30, 0.5, 0.5 + 1e-4, 3.0, np.inf])
    b = score_bins(x)
    assert (np.diff(b) >= 0).all() and b.max() < 2**SCORE_BITS
    assert b[4] == b[5]  # -0.0 and 0.0 are one value


def test_delong_variance_against_the_pairwise_definition():
    rng = np.random.default_rng(1)
    # scores on a grid of 1/1000: equal scores share a bin, distinct ones never do
    neg = rng.integers(0, 700, 120) / 1000
    pos = rng.integers(200, 1000, 80) / 1000
    # independent reference: the placements of DeLong, DeLong & Clarke-Pearson (1988)
    cmp = (pos[:, None] > neg[None, :]) + 0.5 * (pos[:, None] == neg[None, :])
    auc = cmp.mean()
    v10, v01 = cmp.mean(axis=1), cmp.mean(axis=0)
    var = v10.var(ddof=1) / len(pos) + v01.var(ddof=1) / len(neg)
    ties = (pos[:, None] == neg[None, :]).mean() / 2

    def hist(x):
        bins, counts = np.unique(score_bins(x), return_counts=True)
        return bins, counts

    got, got_var, bound = auc_from_histograms(hist(neg), hist(pos))
    assert ties > 0 and bound == pytest.approx(ties, rel=1e-12)
    assert got == pytest.approx(auc, abs=1e-14)
    assert got_var == pytest.approx(var, rel=1e-12)


def test_weights_are_summed_exactly(several_blocks):
    rng = np.random.default_rng(2)
    n = 5000
    w = np.where(rng.random(n) < 0.5, 1e8, 1e-8) * rng.uniform(1, 2, n)
    g, y, p = rng.choice(["a", "b"], n), rng.integers(0, 2, n), rng.integers(0, 2, n)
    a = audit(y, p, sensitive_features=g, sample_weight=w, n_boot=0)
    for group in ("a", "b"):
        m = g == group
        num = sum((Fraction(x) for x in w[m & (p == 1)]), Fraction(0))
        den = sum((Fraction(x) for x in w[m]), Fraction(0))
        assert a.by_group.loc[group, "selection_rate"] == pytest.approx(float(num / den),
                                                                         rel=1e-15)
    # the naive sum in another order differs; the audit does not
    shuffled = rng.permutation(n)
    b = audit(y[shuffled], p[shuffled], sensitive_features=g[shuffled],
              sample_weight=w[shuffled], n_boot=0)
    pd.testing.assert_frame_equal(a.by_group, b.by_group, check_exact=True)


def test_bootstrap_intervals_match_fairlearns():
    s, y, p, _, _ = _data(800, seed=4)
    s = s["sex"]
    from fairlearn.metrics import MetricFrame, selection_rate, true_positive_rate

    mf = MetricFrame(metrics={"selection_rate": selection_rate,
                              "true_positive_rate": true_positive_rate},
                     y_true=y, y_pred=p, sensitive_features=s, n_boot=1000,
                     ci_quantiles=[0.025, 0.975], random_state=0)
    a = audit(y, p, sensitive_features=s, n_boot=1000, random_state=0)
    cols = ["selection_rate", "true_positive_rate"]
    # the extremes' intervals are simultaneous, not percentiles (see the coverage test)
    pairs = [(a.by_group_ci, mf.by_group_ci), (a.overall_ci, mf.overall_ci)]
    for ours, theirs in pairs:
        width = theirs[1][cols] - theirs[0][cols]
        for end in (0, 1):
            gap = (ours[end][cols] - theirs[end][cols]).abs()
            assert (gap <= width / 10).all().all(), (ours[end][cols], theirs[end][cols])


def test_wilson_and_holm_against_references():
    k, n = np.array([0, 3, 40, 97]), np.array([10, 50, 100, 100])
    lo, hi = wilson(k, n, 0.9)
    for i in range(len(k)):
        ref = stats.binomtest(int(k[i]), int(n[i])).proportion_ci(0.9, method="wilson")
        assert (lo[i], hi[i]) == pytest.approx((ref.low, ref.high), abs=1e-12)
    # all or none of the rows: the interval reaches exactly 1 or 0 (rounding once left
    # 1 - 1e-16, so a rate of exactly 1 fell outside its own interval)
    n = np.arange(1, 100, dtype=np.float64)
    assert (wilson(n, n, 0.95)[1] == 1.0).all() and (wilson(0 * n, n, 0.95)[0] == 0.0).all()
    # Holm by hand: sorted .01 .02 .03 .04 times 4 3 2 1, running maximum
    assert holm(np.array([0.03, 0.01, np.nan, 0.04, 0.02])) == pytest.approx(
        [0.06, 0.04, np.nan, 0.06, 0.06], nan_ok=True)


def test_tests_find_a_real_gap_and_not_noise():
    rng = np.random.default_rng(5)
    n = 20000
    g = rng.choice(["a", "b", "c"], n)
    y = rng.integers(0, 2, n)
    p = (rng.random(n) < np.where(g == "c", 0.5, 0.4)).astype(int)
    t = audit(y, p, sensitive_features=g, n_boot=0, reference_group="a").tests()
    assert bool(t.loc[("selection_rate", "c"), "significant"])
    assert not bool(t.loc[("selection_rate", "b"), "significant"])
    assert (t["p_holm"] >= t["p_value"]).all()


def test_small_groups_are_suppressed_and_named():
    s, y, p, _, _ = _data(3000)
    a = audit(y, p, sensitive_features=s, n_boot=200, min_group_size=200, random_state=0)
    small = a.suppressed
    assert small and all(n < 200 for n in small.values())
    for g, n in small.items():
        assert a.by_group.loc[g, "count"] == n
        assert a.by_group.loc[g, RATES].isna().all()
        assert a.by_group_ci[0].loc[g, RATES].isna().all()
    big = a.by_group.drop(index=list(small))
    assert a.difference()["selection_rate"] == pytest.approx(
        big["selection_rate"].max() - big["selection_rate"].min())


def test_missing_sensitive_values_are_the_group_unknown():
    s = pd.Series(["a", None, "b", "a", np.nan, "b"], name="g")
    a = audit([1, 0, 1, 0, 1, 1], [1, 1, 0, 0, 1, 0], sensitive_features=s, n_boot=0)
    assert list(a.by_group.index) == ["a", "b", "unknown"]
    assert a.by_group.loc["unknown", "count"] == 2
    assert a.by_group.loc["unknown", "selection_rate"] == 1.0


def _chunkings(s, y, p, w):
    frame = pd.DataFrame({"sex": s["sex"], "race": s["race"], "y": y, "p": p, "w": w})
    for parts in (1, 3, 7):
        d = dd.from_pandas(frame, npartitions=parts, sort=False)
        yield dict(y_true=d["y"], y_pred=d["p"], sensitive_features=d[["sex", "race"]],
                   sample_weight=d["w"])
    for rows in (100, 333):
        yield dict(y_true=da.from_array(y, chunks=rows), y_pred=da.from_array(p, chunks=rows),
                   sensitive_features=[da.from_array(s[c].to_numpy(), chunks=rows)
                                       for c in ("sex", "race")],
                   sample_weight=da.from_array(w, chunks=rows))


def test_same_intervals_for_any_chunking_and_workers(client, several_blocks):
    s, y, p, _, w = _data(1000)
    ref = audit(y, p, sensitive_features=[s["sex"], s["race"]], sample_weight=w, n_boot=300,
                random_state=7)
    results = []
    with dask.config.set(scheduler="sync"):  # one worker
        results += [audit(**kw, n_boot=300, random_state=7) for kw in _chunkings(s, y, p, w)]
    results += [audit(**kw, n_boot=300, random_state=7) for kw in _chunkings(s, y, p, w)]
    def same(a, b):  # bit for bit (arrays have no column names to compare)
        assert list(a.index) == list(b.index)
        np.testing.assert_array_equal(a.to_numpy(), b.to_numpy())

    assert len(results) == 10
    for r in results:
        same(r.by_group, ref.by_group)
        for end in (0, 1):
            same(r.by_group_ci[end], ref.by_group_ci[end])
            same(r.difference_ci()[end], ref.difference_ci()[end])
            same(r.ratio_to_reference_ci()[end], ref.ratio_to_reference_ci()[end])


def test_one_pass_over_the_partitions():
    s, y, p, score, _ = _data(1200)
    frame = pd.DataFrame({"sex": s["sex"], "race": s["race"], "y": y, "p": p, "score": score})
    reads = collections.Counter()

    def read(i):
        reads[i] += 1
        return frame.iloc[i * 100:(i + 1) * 100]

    d = dd.from_map(read, list(range(12)), meta=frame.iloc[:0])
    reads.clear()
    with dask.config.set(scheduler="sync"):
        a = audit(d["y"], d["p"], sensitive_features=d[["sex", "race"]], y_score=d["score"],
                  n_boot=100, random_state=0)
    assert dict(reads) == {i: 1 for i in range(12)}
    b = audit(y, p, sensitive_features=s, y_score=score, n_boot=100, random_state=0)
    pd.testing.assert_frame_equal(a.by_group_ci[0], b.by_group_ci[0], check_exact=True)


def test_coverage_of_group_rates_and_differences_to_the_reference():
    rng = np.random.default_rng(11)
    sizes = np.array([50, 150, 400, 800, 1500, 3000])
    rate = np.array([0.3, 0.45, 0.5, 0.35, 0.6, 0.4])
    g = np.repeat(np.arange(6), sizes)
    covered = np.zeros((2, 6))
    runs = 300
    for _ in range(runs):
        p = (rng.random(len(g)) < rate[g]).astype(int)
        a = audit(p, p, sensitive_features=g, n_boot=400, reference_group=5,
                  random_state=int(rng.integers(2**31)))
        lo, hi = (x["selection_rate"].to_numpy() for x in a.by_group_ci)
        covered[0] += (lo <= rate) & (rate <= hi)
        lo, hi = (x["selection_rate"].to_numpy() for x in a.difference_to_reference_ci())
        truth = rate - rate[5]
        covered[1] += (lo <= truth) & (truth <= hi)
    share = covered / runs
    # 300 data sets: the standard error of a 95% coverage is 1.3 points
    assert (share[0] > 0.9).all() and (share[0] < 0.99).all(), share
    assert (share[1, :5] > 0.9).all() and (share[1, :5] < 0.99).all(), share


def test_the_largest_gaps_interval_covers_nearly_equal_groups():
    # a percentile interval of the largest gap covers the truth in about 0% of these data
    # sets (every replicate's largest gap of six noisy rates exceeds the true 0.03)
    rng = np.random.default_rng(12)
    sizes = np.array([50, 150, 400, 800, 1500, 3000])
    rate = np.array([0.4, 0.42, 0.4, 0.41, 0.4, 0.43])
    g = np.repeat(np.arange(6), sizes)
    hits, percentile_hits = np.zeros(4), 0
    runs = 200
    for _ in range(runs):
        p = (rng.random(len(g)) < rate[g]).astype(int)
        a = audit(p, p, sensitive_features=g, n_boot=500, random_state=int(rng.integers(2**31)))
        for k, (ends, truth) in enumerate([
                (a.difference_ci(), rate.max() - rate.min()),
                (a.ratio_ci(), rate.min() / rate.max()),
                (a.group_min_ci(), rate.min()), (a.group_max_ci(), rate.max())]):
            hits[k] += ends[0]["selection_rate"] <= truth <= ends[1]["selection_rate"]
        boot = a._difference(*a._boot, "between_groups")[:, 0]
        lo, hi = np.quantile(boot, [0.025, 0.975])
        percentile_hits += lo <= rate.max() - rate.min() <= hi
    assert (hits / runs >= 0.93).all(), hits / runs
    assert percentile_hits / runs < 0.1  # what the simultaneous intervals are for


@pytest.mark.parametrize("kwargs, message", [
    (dict(y_true=[1, np.nan, 0, 1]), "y_true holds missing values"),
    (dict(y_pred=[0, 1, 2, 1]), "more than two values"),
    (dict(sensitive_features=["a"] * 4), "1 group"),
    (dict(pos_label="yes"), "pos_label='yes' is not among the values of y_true and y_pred"),
    (dict(n_boot=-1), "n_boot must be"),
    (dict(confidence=95), "confidence must be a finite number in \\(0, 1\\)"),
    (dict(min_group_size=0), "min_group_size must be"),
    (dict(sample_weight=[1, -1, 1, 1]), "weights must be 0 or between"),
    (dict(y_score=[0.1, np.inf, 0.3, 0.2]), "y_score holds NaN or infinite"),
    (dict(y_score=[0.1, 0.2, 0.3, 0.2], sample_weight=[1, 1, 1, 1]), "roc_auc with"),
    (dict(reference_group="z"), "reference_group='z' is not a group"),
    (dict(y_true=[1, 0, 1]), "one value per row"),
    (dict(sensitive_features=["a", 1, "b", 2]), "cannot be sorted"),
])
def test_bad_inputs_say_what_to_do(kwargs, message):
    args = dict(y_true=[1, 0, 1, 0], y_pred=[1, 1, 0, 0], sensitive_features=["a", "a", "b", "b"])
    args.update(kwargs)
    with pytest.raises((ValueError, TypeError), match=message):
        audit(**args)


def test_intervals_need_the_bootstrap():
    a = audit([1, 0, 1, 0], [1, 1, 0, 0], sensitive_features=["a", "a", "b", "b"], n_boot=0)
    with pytest.raises(ValueError, match="n_boot"):
        _ = a.by_group_ci
    assert not math.isnan(a.by_group_wilson_ci[0].loc["a", "precision"])
