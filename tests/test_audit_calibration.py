"""Audit.calibration and Audit.scoring_rate: calibration within groups and New York City
Local Law 144's scoring rate, from the score histograms of the audit's one pass, against
scikit-learn's calibration_curve and numpy on each group's rows."""

from __future__ import annotations

import dask.array as da
import numpy as np
import pandas as pd
import pytest
from sklearn.calibration import calibration_curve

from daskfair.metrics import Audit, audit
from daskfair.metrics._audit_blocks import UNIT_BINS

BOUND = 0.5 / UNIT_BINS  # a bin's mean score is within this of the exact mean


def _reference(y, s, n_bins, strategy):
    """calibration_curve with each occupied bin's rows (scikit-learn's binning rule)."""
    prob_true, prob_pred = calibration_curve(y, s, n_bins=n_bins, strategy=strategy)
    edges = (np.linspace(0, 1, n_bins + 1) if strategy == "uniform"
             else np.percentile(s, np.linspace(0, 100, n_bins + 1)))
    rows = np.bincount(np.searchsorted(edges[1:-1], s), minlength=n_bins)
    return prob_true, prob_pred, rows[rows > 0]


def _labels(s, g, groups, rng):
    slope = np.select([g == groups[0], g == groups[1]], [1.0, 0.7], 1.2)
    return (rng.random(len(s)) < np.clip(slope * (s - 0.5) + 0.5, 0, 1)).astype(int)


def _centred(n, seed, groups=("a", "b", "c")):
    """Scores at unit-bin centres (so every row of a unit bin has one score), labels with a
    different calibration per group."""
    rng = np.random.default_rng(seed)
    g = rng.choice(np.array(groups), n)
    s = (rng.integers(0, UNIT_BINS, n) + 0.5) / UNIT_BINS
    return _labels(s, g, groups, rng), s, g


def _check_groups(c, y, s, g, n_bins, strategy, mean_atol):
    for k in np.unique(g):
        prob_true, prob_pred, rows = _reference(y[g == k], s[g == k], n_bins, strategy)
        got = c.by_bin.loc[k]
        np.testing.assert_array_equal(got["count"], rows)
        np.testing.assert_allclose(got["positive_rate"], prob_true, rtol=0, atol=1e-12)
        np.testing.assert_allclose(got["mean_score"], prob_pred, rtol=0, atol=mean_atol)
        ece = np.sum(rows / rows.sum() * np.abs(prob_true - prob_pred))
        assert c.ece.loc[k, "ece"] == pytest.approx(ece, abs=mean_atol + 1e-12)
        assert c.ece.loc[k, "lower"] <= c.ece.loc[k, "ece"] <= c.ece.loc[k, "upper"]
    prob_true, prob_pred, rows = _reference(y, s, n_bins, strategy)
    np.testing.assert_allclose(c.overall_by_bin["positive_rate"], prob_true, atol=1e-12)
    np.testing.assert_array_equal(c.overall_by_bin["count"], rows)


@pytest.mark.parametrize("n_bins", [5, 10, 20, 100])
def test_uniform_bins_are_calibration_curves_for_any_scores(n_bins):
    # n_bins divides UNIT_BINS: every edge k / n_bins is a unit boundary, so any score, one
    # equal to an edge too, falls in calibration_curve's bin (whose edges, numpy.linspace's,
    # are k / n_bins or one float above it: a score between the two is the one exception)
    rng = np.random.default_rng(n_bins)
    n = 12000
    g = rng.choice(np.array(["a", "b", "c"]), n)
    s = rng.random(n)
    k = rng.integers(0, n_bins + 1, 600)
    s[:600] = k / n_bins  # on the edges, 0 and 1 included
    s[600:1200] = np.nextafter(np.linspace(0, 1, n_bins + 1)[k], 2.0).clip(0, 1)  # above
    y = _labels(s, g, ("a", "b", "c"), rng)
    a = audit(da.from_array(y, chunks=1000), da.from_array((s > .5).astype(int), chunks=1000),
              y_score=da.from_array(s, chunks=1000),
              sensitive_features=da.from_array(g, chunks=1000), n_boot=0)
    c = a.calibration(n_bins)
    assert (c.n_bins, c.strategy) == (n_bins, "uniform")
    _check_groups(c, y, s, g, n_bins, "uniform", BOUND * (1 + 1e-9))


@pytest.mark.parametrize("n_bins", [5, 7, 10])
def test_quantile_bins_are_calibration_curves_for_scores_one_per_unit_bin(n_bins):
    # each group's quantiles are its own scores' order statistics: when every row of a unit
    # bin has one score, the bins are calibration_curve's
    y, s, g = _centred(9000, n_bins)
    a = audit(da.from_array(y, chunks=1000), da.from_array(y, chunks=1000),
              y_score=da.from_array(s, chunks=1000),
              sensitive_features=da.from_array(g, chunks=1000), n_boot=0)
    _check_groups(a.calibration(n_bins, "quantile"), y, s, g, n_bins, "quantile", 1e-12)


def test_calibration_of_continuous_scores_keeps_its_stated_edges_and_bound():
    rng = np.random.default_rng(3)
    n = 20000
    g = rng.choice(["x", "y"], n)
    s = rng.beta(2, 3, n)
    y = (rng.random(n) < s).astype(int)
    c = audit(y, y, y_score=s, sensitive_features=g, n_boot=0).calibration(7, "quantile")
    for k in "xy":
        m = g == k
        table = c.by_bin.loc[k]
        for _, row in table.iterrows():
            inside = m & (s >= row["lower_edge"]) & (s < row["upper_edge"])
            assert inside.sum() == row["count"]
            assert y[inside].mean() == pytest.approx(row["positive_rate"], abs=1e-12)
            assert abs(s[inside].mean() - row["mean_score"]) <= BOUND
        # every edge lies within one unit bin above the order statistic where numpy's
        # quantile lies (the next row is above that quantile)
        ranks = (m.sum() - 1) * np.arange(1, 7) // 7
        edges = np.sort(s[m])[ranks]
        upper = table["upper_edge"].to_numpy()[:-1]
        assert np.all((upper > edges) & (upper <= edges + 1 / UNIT_BINS))


def _compas(data_dir):
    frame = pd.read_csv(data_dir / "compas/compas-scores-two-years.csv",
                        usecols=["race", "decile_score", "two_year_recid"])
    return (frame["two_year_recid"].to_numpy(), frame["decile_score"].to_numpy() / 10,
            frame["race"].to_numpy())


@pytest.mark.parametrize("strategy", ["uniform", "quantile"])
def test_calibration_on_compas_decile_scores_equals_calibration_curve(data_dir, strategy):
    # the risk scores sit on the uniform edges (0.1, 0.2, ...): a score equal to an edge
    # falls in the lower bin, as calibration_curve puts it
    y, s, race = _compas(data_dir)
    c = audit(y, (s >= .5).astype(int), y_score=s, sensitive_features=race, n_boot=0,
              min_group_size=300).calibration(10, strategy)
    assert set(c.ece.index) == {"African-American", "Caucasian", "Hispanic", "Other"}
    for k in c.ece.index:
        prob_true, prob_pred, rows = _reference(y[race == k], s[race == k], 10, strategy)
        got = c.by_bin.loc[k]
        np.testing.assert_array_equal(got["count"], rows)
        np.testing.assert_allclose(got["positive_rate"], prob_true, rtol=0, atol=1e-12)
        np.testing.assert_allclose(got["mean_score"], prob_pred, rtol=0,
                                   atol=BOUND * (1 + 1e-9))


def test_scoring_rate_on_compas_equals_numpy(data_dir):
    y, s, race = _compas(data_dir)
    a = audit(y, (s >= .5).astype(int), y_score=s, sensitive_features=race, n_boot=0,
              min_group_size=300, reference_group="Caucasian")
    got = a.scoring_rate()
    above = s > np.median(s)  # every row of the median's bin holds the median itself
    exact = pd.Series({k: above[race == k].mean() for k in got.index})
    np.testing.assert_allclose(got["scoring_rate"], exact, rtol=0, atol=1e-15)
    np.testing.assert_allclose(got["impact_ratio"], exact / exact.max(), rtol=1e-15)
    np.testing.assert_allclose(got["ratio_to_reference"], exact / exact["Caucasian"],
                               rtol=1e-15)
    assert (got["lower"] < got["scoring_rate"]).all()
    assert (got["scoring_rate"] < got["upper"]).all()


@pytest.mark.parametrize("n", [4001, 4000])
def test_scoring_rate_holds_the_exact_rate_within_its_bound(n):
    rng = np.random.default_rng(n)
    g = rng.choice(["p", "q"], n)
    s = rng.normal(0.3 * (g == "p"), 2.0, n)  # most scores outside [0, 1]: coarser bins
    got = audit(np.ones(n, int), np.ones(n, int), y_score=s, sensitive_features=g,
                n_boot=0).scoring_rate()
    above = s > np.median(s)
    for k in "pq":
        exact = above[g == k].mean()
        rate, bound = got.loc[k, "scoring_rate"], got.loc[k, "error_bound"]
        assert rate - 1e-15 <= exact <= rate + bound + 1e-15
        assert bound < 0.01


def test_scoring_rate_is_exact_when_the_two_middle_scores_lie_in_different_bins():
    s = np.array([0.1, 0.2, 0.3, 0.7, 0.8, 0.9, 0.25, 0.75])  # median 0.5, between bins
    g = np.array(list("aabbabab"))
    got = audit(np.ones(8, int), np.ones(8, int), y_score=s, sensitive_features=g,
                n_boot=0).scoring_rate()
    assert got["error_bound"].tolist() == [0.0, 0.0]
    assert got["scoring_rate"].tolist() == [(s[g == k] > 0.5).mean() for k in "ab"]


def test_calibration_and_scoring_rate_are_the_same_bits_for_any_chunking():
    y, s, g = _centred(5000, 7)
    s = s ** 1.3  # scores off the centres
    results = []
    for chunks in (5000, 640, 999):
        a = audit(da.from_array(y, chunks=chunks), da.from_array(y, chunks=chunks),
                  y_score=da.from_array(s, chunks=chunks),
                  sensitive_features=da.from_array(g, chunks=chunks), n_boot=0)
        results.append((a.calibration(8, "quantile"), a.scoring_rate()))
    for c, r in results[1:]:
        pd.testing.assert_frame_equal(c.by_bin, results[0][0].by_bin, check_exact=True)
        pd.testing.assert_frame_equal(c.ece, results[0][0].ece, check_exact=True)
        pd.testing.assert_frame_equal(r, results[0][1], check_exact=True)


def test_ece_interval_covers_a_calibrated_score():
    # a well calibrated score has ECE 0: its interval starts at 0 in most samples, where a
    # percentile bootstrap of the ECE never would
    rng = np.random.default_rng(11)
    covered = 0
    for _ in range(40):
        s = rng.random(3000)
        y = (rng.random(3000) < s).astype(int)
        g = rng.choice(["a", "b"], 3000)
        e = audit(y, y, y_score=s, sensitive_features=g, n_boot=0).calibration().ece
        covered += int((e["lower"] == 0).sum())
    assert covered >= 0.9 * 80


def test_level_calibration_is_the_calibration_of_the_levels_rows():
    y, s, g = _centred(6000, 5)
    region = np.where(np.arange(6000) % 3 == 0, "north", "south")
    levels = audit(y, y, y_score=s, sensitive_features=g, control_features=region, n_boot=0)
    for r in ("north", "south"):
        m = region == r
        alone = audit(y[m], y[m], y_score=s[m], sensitive_features=g[m], n_boot=0)
        pd.testing.assert_frame_equal(levels.levels[r].calibration().by_bin,
                                      alone.calibration().by_bin, check_exact=True)
        pd.testing.assert_frame_equal(levels.levels[r].scoring_rate(), alone.scoring_rate(),
                                      check_exact=True)


def test_stored_audit_calibrates_as_the_original_and_refuses_tampered_histograms():
    y, s, g = _centred(3000, 2)
    a = audit(y, y, y_score=s, sensitive_features=g, n_boot=0, random_state=0)
    arrays, attrs = a.to_state()
    back = Audit.from_state(arrays, attrs)
    pd.testing.assert_frame_equal(back.calibration().by_bin, a.calibration().by_bin,
                                  check_exact=True)
    for name, change in [("score_rows", lambda x: x + 1), ("score_bins", lambda x: x[::-1]),
                         ("score_owner", lambda x: x + 10**6)]:
        bad = dict(arrays, **{name: change(arrays[name].copy())})
        with pytest.raises(ValueError, match="histograms do not hold the rows"):
            Audit.from_state(bad, attrs)


def test_calibration_and_scoring_rate_say_what_they_need():
    y = np.array([0, 1, 0, 1])
    g = np.array(["a", "a", "b", "b"])
    plain = audit(y, y, sensitive_features=g, n_boot=0)
    with pytest.raises(ValueError, match="calibration needs scores"):
        plain.calibration()
    with pytest.raises(ValueError, match="scoring rate needs scores"):
        plain.scoring_rate()
    wide = audit(y, y, y_score=np.array([-1.0, 0.5, 0.2, 3.0]), sensitive_features=g,
                 n_boot=0)
    with pytest.raises(ValueError, match=r"outside \[0, 1\]"):
        wide.calibration()
    with pytest.raises(ValueError, match="n_bins must be an integer"):
        wide.calibration(0)
    with pytest.raises(ValueError, match="strategy must be one of"):
        wide.calibration(10, "kmeans")


def test_level_audit_stacks_each_levels_calibration_scoring_rate_and_intervals():
    y, s, g = _centred(6000, 6)
    region = np.where(np.arange(6000) % 4 == 0, "north", "south")
    levels = audit(y, (s > 0.5).astype(int), y_score=s, sensitive_features=g,
                   control_features=region, n_boot=200, random_state=0)
    c = levels.calibration(8, "quantile")
    rates = levels.scoring_rate()
    for r in ("north", "south"):
        one = levels.levels[r]
        pd.testing.assert_frame_equal(c.by_bin.loc[r], one.calibration(8, "quantile").by_bin)
        pd.testing.assert_frame_equal(c.ece.loc[r], one.calibration(8, "quantile").ece)
        assert c.overall_ece.loc[r, "ece"] == one.calibration(8, "quantile").overall_ece["ece"]
        pd.testing.assert_frame_equal(rates.loc[r], one.scoring_rate())
        for end in (0, 1):
            pd.testing.assert_frame_equal(levels.difference_to_reference_ci()[end].loc[r],
                                          one.difference_to_reference_ci()[end])
            pd.testing.assert_frame_equal(levels.ratio_to_reference_ci()[end].loc[r],
                                          one.ratio_to_reference_ci()[end])
            pd.testing.assert_frame_equal(levels.by_group_wilson_ci[end].loc[r],
                                          one.by_group_wilson_ci[end])
