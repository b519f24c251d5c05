"""audit(metrics=...): further metrics of each group's counts, by name or as functions of
arrays, reported, compared and bootstrapped as the rates are."""

from __future__ import annotations

import collections

import dask
import dask.dataframe as dd
import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import accuracy_score, balanced_accuracy_score, f1_score, recall_score

from daskfair.metrics import COUNT_METRICS, Audit, audit

from .test_audit import _data


def _sklearn(fn, **kw):
    def metric(y_true, y_pred, sample_weight=None):
        return fn(y_true, y_pred, sample_weight=sample_weight, **kw)
    return metric


def _references():
    from fairlearn.metrics import (
        false_negative_rate,
        true_negative_rate,
    )

    return {"false_negative_rate": false_negative_rate,
            "true_negative_rate": true_negative_rate,
            "accuracy_score": _sklearn(accuracy_score),
            "balanced_accuracy_score": _sklearn(balanced_accuracy_score),
            "f1_score": _sklearn(f1_score), "recall_score": _sklearn(recall_score)}


@pytest.mark.parametrize("weighted", [False, True])
def test_named_metrics_equal_fairlearns_metricframe(weighted):
    """fairlearn's and scikit-learn's own functions, group by group, with two sensitive
    columns (and with weights): by_group, overall, differences, ratios, extremes to 1e-12."""
    from fairlearn.metrics import MetricFrame

    s, y, p, _, w = _data(4000)
    w = w if weighted else None
    refs = _references()
    mf = MetricFrame(metrics=refs, y_true=y, y_pred=p, sensitive_features=s,
                     sample_params={k: {"sample_weight": w} for k in refs} if weighted
                     else None)
    a = audit(y, p, sensitive_features=s, sample_weight=w, n_boot=0, metrics=list(refs))
    names = list(refs)
    assert a.metrics[-len(names):] == names
    pd.testing.assert_frame_equal(a.by_group[names], mf.by_group[names], rtol=1e-12)
    pd.testing.assert_series_equal(a.overall[names], mf.overall[names], rtol=1e-12)
    for method in ("between_groups", "to_overall"):
        pd.testing.assert_series_equal(a.difference(method)[names],
                                       mf.difference(method)[names], rtol=1e-12)
        pd.testing.assert_series_equal(a.ratio(method)[names], mf.ratio(method)[names],
                                       rtol=1e-12)
    pd.testing.assert_series_equal(a.group_min()[names], mf.group_min()[names], rtol=1e-12)
    pd.testing.assert_series_equal(a.group_max()[names], mf.group_max()[names], rtol=1e-12)


def test_every_named_metric_is_its_definition_on_each_groups_rows():
    s, y, p, _, _ = _data(3000)
    a = audit(y, p, sensitive_features=s["race"], n_boot=0, metrics=list(COUNT_METRICS))
    for g in ("a", "b", "c"):
        rows = (s["race"] == g).to_numpy()
        tp = np.sum((y == 1) & (p == 1) & rows)
        fp = np.sum((y == 0) & (p == 1) & rows)
        fn = np.sum((y == 1) & (p == 0) & rows)
        tn = np.sum((y == 0) & (p == 0) & rows)
        expected = {"false_negative_rate": fn / (tp + fn), "true_negative_rate": tn / (tn + fp),
                    "negative_predictive_value": tn / (tn + fn),
                    "false_discovery_rate": fp / (tp + fp),
                    "false_omission_rate": fn / (tn + fn),
                    "accuracy_score": (tp + tn) / rows.sum(),
                    "balanced_accuracy_score": (tp / (tp + fn) + tn / (tn + fp)) / 2,
                    "f1_score": 2 * tp / (2 * tp + fp + fn), "recall_score": tp / (tp + fn),
                    "precision_score": tp / (tp + fp)}
        for name, value in expected.items():
            assert a.by_group.loc[g, name] == pytest.approx(value, rel=1e-12), name


def test_a_function_of_ones_own_is_bootstrapped_as_the_rates_are():
    """A function that restates a built-in rate gets the built-in's values and intervals bit
    for bit: it is evaluated on the same replicates."""
    s, y, p, _, _ = _data(3000)

    def tpr(tp, fp, fn, tn):
        return tp / (tp + fn)

    a = audit(y, p, sensitive_features=s, n_boot=400, random_state=3,
              metrics={"mine": tpr, "youden": lambda tp, fp, fn, tn:
                       tp / (tp + fn) - fp / (fp + tn)})
    plain = audit(y, p, sensitive_features=s, n_boot=400, random_state=3)
    np.testing.assert_array_equal(a.by_group["mine"], a.by_group["true_positive_rate"])
    for end in (0, 1):
        np.testing.assert_array_equal(a.by_group_ci[end]["mine"],
                                      a.by_group_ci[end]["true_positive_rate"])
        np.testing.assert_array_equal(a.difference_ci()[end]["mine"],
                                      a.difference_ci()[end]["true_positive_rate"])
        # the built-ins' intervals do not move when metrics are added
        np.testing.assert_array_equal(a.by_group_ci[end][plain.metrics].to_numpy(),
                                      plain.by_group_ci[end].to_numpy())
    youden = a.by_group["true_positive_rate"] - a.by_group["false_positive_rate"]
    np.testing.assert_allclose(a.by_group["youden"], youden, rtol=1e-12)
    assert a.by_group_wilson_ci[0]["mine"].isna().all()  # not a proportion of rows
    assert "mine" not in a.tests().index.get_level_values("metric")


def test_metrics_cost_no_pass_and_the_same_bits_for_any_partitioning():
    s, y, p, _, _ = _data(1200)
    frame = pd.DataFrame({"sex": s["sex"], "y": y, "p": p})
    reads = collections.Counter()

    def read(i):
        reads[i] += 1
        return frame.iloc[i * 100:(i + 1) * 100]

    d = dd.from_map(read, list(range(12)), meta=frame.iloc[:0])
    reads.clear()
    with dask.config.set(scheduler="sync"):
        a = audit(d["y"], d["p"], sensitive_features=d["sex"], n_boot=200, random_state=0,
                  metrics=["f1_score", "false_negative_rate"])
    assert dict(reads) == {i: 1 for i in range(12)}
    b = audit(y, p, sensitive_features=s["sex"], n_boot=200, random_state=0,
              metrics=["f1_score", "false_negative_rate"])
    for end in (0, 1):
        pd.testing.assert_frame_equal(a.by_group_ci[end], b.by_group_ci[end], check_exact=True)


def test_named_metrics_are_stored_and_functions_refused():
    s, y, p, _, _ = _data(800)
    a = audit(y, p, sensitive_features=s["sex"], n_boot=100, random_state=1,
              metrics=["f1_score"])
    back = Audit.from_state(*a.to_state())
    pd.testing.assert_frame_equal(back.by_group_ci[1], a.by_group_ci[1], check_exact=True)

    def mine(tp, fp, fn, tn):
        return tp / (tp + fp + fn)

    own = audit(y, p, sensitive_features=s["sex"], n_boot=0, metrics=[mine])
    with pytest.raises(ValueError, match=r"metrics of your own functions \(\['mine'\]\) "
                                         r"cannot be stored"):
        own.to_state()


@pytest.mark.parametrize(("metrics", "error", "message"), [
    ("f2_score", ValueError, r"unknown metric 'f2_score'; the named ones are \["),
    (["selection_rate"], ValueError, "'selection_rate' is reported by every audit already"),
    ([lambda tp, fp, fn, tn: tp], ValueError, r"name each function of your own \('<lambda>'"),
    ({"total": lambda tp, fp, fn, tn: float(np.sum(tp))}, ValueError,
     r"total returned shape \(\) for counts of shape \(2, 3\)"),
    ({"bad": lambda tp, fp, fn, tn: [float(t) for t in tp]}, ValueError,
     r"bad failed on arrays of counts \(TypeError"),
    ({"f1_score": "f1_score", "f1": "f1_score", "x": "recall_score"}, None, None),
    ({"a": "f1_score", "count": "recall_score"}, ValueError, "'count' names two metrics"),
    ([3], TypeError, "3 is neither a metric's name nor a function"),
])
def test_bad_metrics_say_what_to_do(metrics, error, message):
    s, y, p, _, _ = _data(300)
    if error is None:
        a = audit(y, p, sensitive_features=s["sex"], n_boot=0, metrics=metrics)
        assert a.metrics[-3:] == ["f1_score", "f1", "x"]
        return
    with pytest.raises(error, match=message):
        audit(y, p, sensitive_features=s["sex"], n_boot=0, metrics=metrics)
