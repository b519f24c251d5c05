"""audit(control_features=...): the groups compared within each control level, as
fairlearn's MetricFrame compares them, from the same one pass."""

from __future__ import annotations

import collections

import dask
import dask.dataframe as dd
import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import roc_auc_score

from daskfair.metrics import AUDIT_RATES, LevelAudit, audit

RATES = list(AUDIT_RATES)


def _data(n=6000, seed=0):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"sex": rng.choice(["F", "M"], n),
                       "race": rng.choice(["a", "b"], n, p=[0.7, 0.3]),
                       "region": rng.choice(["north", "south", "east"], n),
                       "year": rng.choice([2020, 2021], n)})
    y = rng.integers(0, 2, n)
    p = (rng.random(n) < 0.3 + 0.2 * y + 0.1 * (df["sex"] == "M")).astype(int)
    score = rng.random(n) + 0.3 * y
    w = rng.uniform(0.5, 3, n)
    return df, y, p, score, w


@pytest.mark.parametrize("weighted", [False, True])
def test_levels_equal_fairlearns_metricframe_with_control_features(weighted):
    from .test_audit import _fairlearn_frame

    df, y, p, _, w = _data()
    w = w if weighted else None
    s, c = df[["sex", "race"]], df[["region", "year"]]
    mf = _fairlearn_frame(y, p, s, w, control_features=c)
    a = audit(y, p, sensitive_features=s, control_features=c, sample_weight=w, n_boot=0)
    assert isinstance(a, LevelAudit)
    assert a.by_group.index.names == mf.by_group.index.names == ["region", "year", "sex",
                                                                  "race"]
    pd.testing.assert_frame_equal(a.by_group[RATES], mf.by_group[RATES], rtol=1e-12)
    pd.testing.assert_frame_equal(a.overall[RATES], mf.overall[RATES], rtol=1e-12)
    for method in ("between_groups", "to_overall"):
        pd.testing.assert_frame_equal(a.difference(method)[RATES], mf.difference(method)[RATES],
                                      rtol=1e-12)
        pd.testing.assert_frame_equal(a.ratio(method)[RATES], mf.ratio(method)[RATES],
                                      rtol=1e-12)
    pd.testing.assert_frame_equal(a.group_min()[RATES], mf.group_min()[RATES], rtol=1e-12)
    pd.testing.assert_frame_equal(a.group_max()[RATES], mf.group_max()[RATES], rtol=1e-12)


def test_each_level_is_the_audit_of_its_rows():
    """A level's metrics, intervals and tests are those of an audit of its rows alone, with
    the level's seed; the ROC AUC of each (level, group) is scikit-learn's within its bound."""
    df, y, p, score, _ = _data()
    a = audit(y, p, sensitive_features=df["sex"], control_features=df["region"],
              y_score=score, n_boot=300, random_state=5, metrics=["f1_score"])
    assert list(a.levels) == ["east", "north", "south"]
    for key, level in a.levels.items():
        rows = (df["region"] == key).to_numpy()
        alone = audit(y[rows], p[rows], sensitive_features=df["sex"][rows],
                      y_score=score[rows], n_boot=300, random_state=level.random_state,
                      metrics=["f1_score"])
        pd.testing.assert_frame_equal(level.by_group, alone.by_group, check_exact=True)
        pd.testing.assert_series_equal(level.overall, alone.overall, check_exact=True)
        for end in (0, 1):
            pd.testing.assert_frame_equal(level.by_group_ci[end], alone.by_group_ci[end],
                                          check_exact=True)
            pd.testing.assert_series_equal(a.difference_ci()[end].loc[key],
                                           alone.difference_ci()[end], check_names=False,
                                           check_exact=True)
        pd.testing.assert_frame_equal(level.tests(), alone.tests(), check_exact=True)
        bound = level.roc_auc_error_bound
        for g in ("F", "M"):
            both = rows & (df["sex"] == g).to_numpy()
            exact = roc_auc_score(y[both], score[both])
            assert abs(level.by_group.loc[g, "roc_auc"] - exact) <= bound[g] + 1e-12
    seeds = {level.random_state for level in a.levels.values()}
    assert len(seeds) == 3  # each level its own stream


def test_still_one_pass_and_the_same_bits_for_any_partitioning():
    df, y, p, score, _ = _data(1200)
    frame = df.assign(y=y, p=p, score=score / score.max())  # probabilities: calibration
    reads = collections.Counter()

    def read(i):
        reads[i] += 1
        return frame.iloc[i * 100:(i + 1) * 100]

    d = dd.from_map(read, list(range(12)), meta=frame.iloc[:0])
    reads.clear()
    with dask.config.set(scheduler="sync"):
        a = audit(d["y"], d["p"], sensitive_features=d["sex"], control_features=d["region"],
                  y_score=d["score"], n_boot=100, random_state=0,
                  metrics=["f1_score", "true_negative_rate"])
        for level in a.levels.values():  # all from the pass's tables: no row read again
            level.calibration(10, "quantile")
            level.scoring_rate()
    assert dict(reads) == {i: 1 for i in range(12)}
    b = audit(y, p, sensitive_features=df["sex"], control_features=df["region"],
              y_score=frame["score"], n_boot=100, random_state=0,
              metrics=["f1_score", "true_negative_rate"])
    for end in (0, 1):
        pd.testing.assert_frame_equal(a.by_group_ci[end], b.by_group_ci[end], check_exact=True)
        pd.testing.assert_frame_equal(a.difference_ci()[end], b.difference_ci()[end],
                                      check_exact=True)


def test_a_level_that_cannot_be_compared_is_named():
    df, y, p, _, _ = _data(600)
    df.loc[df["region"] == "east", "sex"] = "F"  # one group in the east
    with pytest.raises(ValueError, match=r"control level 'east': 1 group\(s\) have at least"):
        audit(y, p, sensitive_features=df["sex"], control_features=df["region"], n_boot=0)
    with pytest.raises(ValueError, match=r"control_features and sensitive_features both name "
                                         r"\['sex'\]"):
        audit(y, p, sensitive_features=df["sex"], control_features=df[["sex"]], n_boot=0)
    plain = audit(y, p, sensitive_features=df["sex"].to_numpy(),
                  control_features=df["year"].to_numpy(), n_boot=0)
    assert plain.by_group.index.names == ["control_feature_0", "sensitive_feature_0"]
