"""Metrics against hand-computed cases, scikit-learn/scipy, and brute force."""

import itertools

import dask
import dask.array as da
import numpy as np
import pytest
import scipy.io
from sklearn.metrics import normalized_mutual_info_score

from daskfair.metrics import (
    REPORT_COLUMNS,
    balance,
    cce,
    clustering_accuracy,
    clustering_report,
    contingency,
    demographic_parity_difference,
    equalized_odds_difference,
    error_rate,
    fairness_cce,
    hypervolume_2d,
    kmeans_cost,
    mnce,
    nmi,
    normalized_entropy,
)

from ._counting import counted

# A toy clustering written out by hand: 8 rows, 2 classes, 3 clusters, 2 groups.
Y = np.array([0, 0, 0, 1, 1, 1, 1, 0])
L = np.array([0, 0, 1, 1, 2, 2, 2, 0])
G = np.array([0, 1, 0, 1, 0, 1, 1, 0])
# clusters: 0 = rows {0,1,7} (classes 0,0,0; groups 0,1,0), 1 = {2,3} (0,1; 0,1),
#           2 = {4,5,6} (1,1,1; 0,1,1)


def test_hand_computed_clustering_metrics():
    # ACC: cluster 0 -> class 0 (3 right), cluster 2 -> class 1 (3 right); cluster 1 unmatched
    assert clustering_accuracy(Y, L) == pytest.approx(6 / 8)
    # Bal: cluster 0 has groups (2, 1) -> 1/2; cluster 1 (1, 1) -> 1; cluster 2 (1, 2) -> 1/2
    assert balance(L, sensitive_features=G) == pytest.approx(0.5)
    # CCE: sizes (3, 2, 3)
    assert cce(L) == pytest.approx(2 / 3)
    assert cce(L, n_clusters=4) == 0.0  # an empty fourth cluster
    # NE with c = 3: p = (3/8, 2/8, 3/8)
    p = np.array([3, 2, 3]) / 8
    assert normalized_entropy(L) == pytest.approx(-(p * np.log(p)).sum() / np.log(3))
    # MNCE: H(G) with (4, 4) = log 2; least mixed clusters have (2, 1): H = H(2/3, 1/3)
    h = -(2 / 3 * np.log(2 / 3) + 1 / 3 * np.log(1 / 3))
    assert mnce(L, sensitive_features=G) == pytest.approx(h / np.log(2))
    # f_CCE with c = 3: |G_0| = |G_1| = 4, D = [[2, 1, 1], [1, 1, 2]] -> c·γ in {1.5, .75}
    assert fairness_cce(L, sensitive_features=G) == pytest.approx(min(0.75, 1 / 1.5))


def test_report_equals_the_single_metrics():
    rep = clustering_report(Y, L, sensitive_features=G, n_clusters=3)
    assert list(rep) == list(REPORT_COLUMNS)
    assert rep["ACC"] == clustering_accuracy(Y, L)
    assert rep["NMI"] == pytest.approx(nmi(Y, L))
    assert rep["Bal"] == balance(L, sensitive_features=G)
    assert rep["MNCE"] == pytest.approx(mnce(L, sensitive_features=G))
    assert rep["CCE"] == cce(L)
    assert rep["NE"] == pytest.approx(normalized_entropy(L, n_clusters=3))
    assert rep["f_CCE"] == fairness_cce(L, sensitive_features=G, n_clusters=3)


@pytest.mark.parametrize("seed", range(5))
def test_nmi_and_accuracy_against_sklearn_and_brute_force(seed):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 4, 60)
    lab = rng.integers(0, 4, 60)
    assert nmi(y, lab) == pytest.approx(
        normalized_mutual_info_score(y, lab, average_method="max"), abs=1e-12)
    brute = max(np.mean(np.asarray(perm)[lab] == y) for perm in itertools.permutations(range(4)))
    assert clustering_accuracy(y, lab) == pytest.approx(brute)
    assert nmi(np.zeros(5, int), np.zeros(5, int)) == 1.0


def test_statistical_disparity_and_error_by_hand():
    pred = np.array([1, 1, 0, 0, 1, 0, 0, 0])
    s = np.array([0, 0, 0, 0, 1, 1, 1, 1])
    assert demographic_parity_difference(None, pred, sensitive_features=s) == pytest.approx(
        0.5 - 0.25)
    s3 = np.array(["a", "a", "b", "b", "c", "c", "c", "c"])
    assert demographic_parity_difference(None, pred, sensitive_features=s3) == pytest.approx(
        1.0 - 0.0)
    labels = np.array(["yes", "no", "no", "yes"])
    assert demographic_parity_difference(None, labels, sensitive_features=[0, 0, 1, 1],
                                 pos_label="yes") == 0.0
    assert error_rate([1, 0, 1, 1], [1, 1, 1, 0]) == 0.5


def test_equalized_odds_difference_by_hand_and_on_dask():
    y = np.array([1, 1, 0, 0, 1, 1, 0, 0, 1, 0])
    pred = np.array([1, 0, 0, 1, 1, 1, 0, 0, 0, 1])
    s = np.array([0, 0, 0, 0, 1, 1, 1, 1, 2, 2])
    # TPR by group: 1/2, 2/2, 0/1 → gap 1; FPR: 1/2, 0/2, 1/1 → gap 1
    assert equalized_odds_difference(y, pred, sensitive_features=s) == pytest.approx(1.0)
    two = s < 2
    # groups 0, 1: TPR 1/2 vs 1, FPR 1/2 vs 0 → max gap 0.5
    assert equalized_odds_difference(y[two], pred[two], sensitive_features=s[two]) == \
        pytest.approx(0.5)
    d = equalized_odds_difference(da.from_array(y, chunks=3), da.from_array(pred, chunks=4),
                                  sensitive_features=da.from_array(s, chunks=5))
    assert d == pytest.approx(1.0)
    with pytest.raises(ValueError, match="has no rows with true label positive"):
        equalized_odds_difference([0, 0, 1, 1], [0, 1, 0, 1], sensitive_features=[0, 0, 1, 1])


def test_fairness_metrics_equal_fairlearns():
    metrics = pytest.importorskip("fairlearn.metrics")
    rng = np.random.default_rng(0)
    for n_groups in (2, 3, 5):
        s = rng.integers(0, n_groups, 2000)
        y = (rng.random(2000) < 0.3 + 0.1 * s / n_groups).astype(int)
        pred = (rng.random(2000) < 0.2 + 0.3 * y + 0.05 * s).astype(int)
        assert demographic_parity_difference(None, pred, sensitive_features=s) == pytest.approx(
            metrics.demographic_parity_difference(y, pred, sensitive_features=s), abs=1e-12)
        assert equalized_odds_difference(y, pred, sensitive_features=s) == pytest.approx(
            metrics.equalized_odds_difference(y, pred, sensitive_features=s), abs=1e-12)


@pytest.mark.usefixtures("several_blocks")
def test_kmeans_cost_against_direct_computation():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(500, 3)) * 10 + 50
    lab = rng.integers(0, 7, 500)
    direct = sum(((X[lab == k] - X[lab == k].mean(0)) ** 2).sum() for k in range(7)) / 500
    assert kmeans_cost(X, lab) == pytest.approx(direct, rel=1e-10)
    for chunks in (7, 50):
        assert kmeans_cost(da.from_array(X, chunks=(chunks, 3)),
                           da.from_array(lab, chunks=chunks)) == pytest.approx(direct, rel=1e-10)


@pytest.mark.usefixtures("several_blocks")
def test_dask_inputs_match_numpy():
    rng = np.random.default_rng(1)
    y, lab, g = rng.integers(0, 3, 200), rng.integers(0, 4, 200), rng.integers(0, 2, 200)
    ref = clustering_report(y, lab, sensitive_features=g, n_clusters=4)
    for chunks in (7, 50):
        d = [da.from_array(a, chunks=chunks) for a in (y, lab, g)]
        out = clustering_report(d[0], d[1], sensitive_features=d[2], n_clusters=4)
        for k in REPORT_COLUMNS:
            assert out[k] == pytest.approx(ref[k], abs=1e-14)
        assert balance(d[1], sensitive_features=d[2]) == balance(lab, sensitive_features=g)
        assert demographic_parity_difference(None, d[1] > 1, sensitive_features=d[2],
                                     pos_label=True) == pytest.approx(
            demographic_parity_difference(None, lab > 1, sensitive_features=g, pos_label=True))
        np.testing.assert_array_equal(contingency(d[0], d[1]), contingency(y, lab))


def test_hypervolume_by_hand_and_brute_force():
    # staircase: (1, .5), (2, .8); reference (3, 0): [1,2]×[0,.5] + [2,3]×[0,.8] = .5 + .8
    assert hypervolume_2d([1, 2], [0.5, 0.8], (3, 0)) == pytest.approx(1.3)
    # a dominated point and one outside the box add nothing
    assert hypervolume_2d([1, 2, 2.5, 4], [0.5, 0.8, 0.6, 0.9], (3, 0)) == pytest.approx(1.3)
    rng = np.random.default_rng(2)
    f1, f2 = rng.random(30), rng.random(30)
    # brute force: exact area on the grid of all coordinates
    xs = np.unique(np.append(f1, 1.0))
    ys = np.unique(np.append(f2, 0.0))
    area = 0.0
    for x0, x1 in itertools.pairwise(xs):
        for y0, y1 in itertools.pairwise(ys):
            if np.any((f1 <= x0) & (f2 >= y1)):
                area += (x1 - x0) * (y1 - y0)
    assert hypervolume_2d(f1, f2, (1.0, 0.0)) == pytest.approx(area, rel=1e-12)


def test_bad_inputs():
    with pytest.raises(ValueError, match="is empty"):
        cce(np.array([], dtype=int))
    with pytest.raises(ValueError, match="negative values"):
        clustering_accuracy([0, 1], [0, -1])
    with pytest.raises(ValueError, match="Inconsistent numbers of rows"):
        error_rate([0, 1], [0])
    # text against numbers, in memory or dask (numpy's own error before: found by fuzzing)
    for pred in (np.array([1, 0]), da.from_array(np.array([1, 0]), chunks=1)):
        with pytest.raises(TypeError, match=r"hold labels of different types \(<U3 and int64"):
            error_rate(np.array(["yes", "no"]), pred)
    assert error_rate(np.array(["yes", "no"]), np.array(["yes", "yes"])) == 0.5
    with pytest.raises(ValueError, match="1 distinct group"):
        balance([0, 1, 1], sensitive_features=[2, 2, 2])
    with pytest.raises(ValueError, match="contains NaN"):
        demographic_parity_difference(None, [0, 1, 1], sensitive_features=[0.0, np.nan, 1.0])
    with pytest.raises(ValueError, match="has 2 entries but X has 3 rows"):
        mnce([0, 1, 1], sensitive_features=[0, 1])
    with pytest.raises(ValueError, match=r"must lie in \[0, 1\]"):
        clustering_report([0, 1, 1], [0, 2, 1], sensitive_features=[0, 1, 0])
    with pytest.raises(ValueError, match="NaN or infinite"):
        kmeans_cost([[0.0], [np.nan]], [0, 1])
    with pytest.raises(ValueError, match="different lengths"):
        hypervolume_2d([1, 2], [0.5], (3, 0))


PAPER_KM = {  # the FCE paper's KM rows (means), data README
    "har": {"ACC": 0.579, "NMI": 0.571, "Bal": 0.000, "MNCE": 0.812, "CCE": 0.241, "NE": 0.940},
    "mnist_usps": {"ACC": 0.371, "NMI": 0.343, "CCE": 0.320, "NE": 0.966},
}


@pytest.mark.parametrize("pool", sorted(PAPER_KM))
def test_paper_km_rows_from_the_raw_pool_files(pool, data_dir):
    mat = scipy.io.loadmat(data_dir / "fce_pools" / f"bc_pool_{pool}.mat")
    y, g = mat["y"].ravel().astype(int) - 1, mat["g"].ravel().astype(int) - 1
    rows = [clustering_report(y, mat["bac_Y"][0, j].argmax(axis=1), sensitive_features=g)
            for j in range(mat["bac_Y"].shape[1])]
    for metric, printed in PAPER_KM[pool].items():
        assert np.mean([r[metric] for r in rows]) == pytest.approx(printed, abs=0.002)


def test_reads_of_dask_inputs_are_what_the_docstrings_say():
    """Every metric reads each input once: the pass that counts also lists the groups and
    finds the labels' ranges (kmeans_cost reads X's first block once more, for the shift)."""
    import collections

    import daskfair.metrics as m

    rng = np.random.default_rng(0)
    n = 64 * 10
    X = rng.normal(size=(n, 3))
    y, lab = rng.integers(0, 3, n), rng.integers(0, 3, n)
    s, pred = np.where(rng.integers(0, 2, n) == 1, "f", "m"), rng.integers(0, 2, n)

    def reads(fn, **arrays):
        counts = collections.Counter()
        with dask.config.set({"daskfair.block-rows": 64, "scheduler": "sync"}):
            fn(*[counted(v, counts, k) for k, v in arrays.items()])
        assert {b for (_, b) in counts} == set(range(10))
        return {k: sorted({c for (name, _), c in counts.items() if name == k}) for k in arrays}

    once = {"y": [1], "lab": [1], "s": [1]}
    assert reads(lambda a, b, g: m.clustering_report(a, b, sensitive_features=g),
                 y=y, lab=lab, s=s) == once
    assert reads(lambda a, b, g: m.equalized_odds_difference(a, b, sensitive_features=g),
                 y=y % 2, lab=pred, s=s) == once
    assert reads(lambda b, g: m.demographic_parity_difference(None, b, sensitive_features=g),
                 lab=pred, s=s) == {"lab": [1], "s": [1]}
    for fn in (m.balance, m.mnce, m.fairness_cce):
        assert reads(lambda b, g, fn=fn: fn(b, sensitive_features=g),
                     lab=lab, s=s) == {"lab": [1], "s": [1]}
    for fn in (m.cce, m.normalized_entropy):
        assert reads(fn, lab=lab) == {"lab": [1]}
    assert reads(m.error_rate, y=y, lab=lab) == {"y": [1], "lab": [1]}
    for fn in (m.contingency, m.nmi, m.clustering_accuracy):
        assert reads(fn, y=y, lab=lab) == {"y": [1], "lab": [1]}
    assert reads(m.kmeans_cost, X=X, lab=lab) == {"X": [1, 2], "lab": [1]}
    yf, pf = rng.normal(size=n), rng.normal(size=n)
    assert reads(lambda a, b, g: m.regression_report(a, b, sensitive_features=g),
                 y=yf, lab=pf, s=s) == once


def test_regression_report_equals_a_pandas_reference_over_several_blocks():
    import pandas as pd

    from daskfair.metrics import mean_prediction_gap, regression_report

    rng = np.random.default_rng(4)
    n = 1000
    s = rng.choice(["a", "b", "c"], n)
    y = rng.normal(size=n)
    pred = y + 0.3 * rng.normal(size=n) + np.where(s == "b", 0.2, 0.0)
    means = pd.Series(pred).groupby(s).mean()
    want_gap = means.max() - means.min()
    want_rmse = np.sqrt(((pred - y) ** 2).mean())
    with dask.config.set({"daskfair.block-rows": 64}):
        for args in ((y, pred, s), (da.from_array(y, chunks=97), da.from_array(pred, chunks=97),
                                    da.from_array(s, chunks=97))):
            got = regression_report(args[0], args[1], sensitive_features=args[2])
            assert got["mean_prediction_gap"] == pytest.approx(want_gap, rel=1e-12)
            assert got["rmse"] == pytest.approx(want_rmse, rel=1e-12)
    assert mean_prediction_gap(pred, sensitive_features=s) == pytest.approx(want_gap, rel=1e-12)
    with pytest.raises(ValueError, match="NaN or infinite"):
        regression_report(y, np.r_[pred[:-1], np.nan], sensitive_features=s)


def test_one_pos_label_rule_for_every_metric_and_the_audit():
    """Labels of two values and a pos_label that is neither are refused alike by every
    metric and the audit (fairlearn's demographic_parity_difference gives 0.0); one value
    present is accepted whatever pos_label is (no row predicted favourable: every rate 0)."""
    from daskfair.metrics import (
        audit,
        demographic_parity_difference,
        equalized_odds_difference,
        group_report,
    )

    y = np.array(["yes", "no", "yes", "no"] * 5)
    s = np.array([0, 0, 1, 1] * 5)
    calls = {
        "dpd": lambda **kw: demographic_parity_difference(None, y, sensitive_features=s, **kw),
        "eod": lambda **kw: equalized_odds_difference(y, y, sensitive_features=s, **kw),
        "report": lambda **kw: group_report(y, y, sensitive_features=s, **kw),
        "audit": lambda **kw: audit(y, y, sensitive_features=s, n_boot=0, **kw),
    }
    for call in calls.values():
        with pytest.raises(ValueError, match=r"pos_label=1 is not among the values of "
                                             r"y_(true and y_)?pred \(\['no', 'yes'\]\)"):
            call()
        call(pos_label="yes")  # the favourable value: accepted
    none = np.zeros(20, dtype=int)
    assert demographic_parity_difference(None, none, sensitive_features=s) == 0.0
    with pytest.raises(ValueError, match=r"y_pred holds more than two values"):
        demographic_parity_difference(None, np.arange(20) % 3, sensitive_features=s)
    with pytest.raises(ValueError, match=r"y_true and y_pred hold together more than two"):
        group_report(np.arange(20) % 2, np.arange(20) % 2 + 1, sensitive_features=s)
    with pytest.raises(ValueError, match=r"y_pred holds missing values"):
        demographic_parity_difference(None, np.r_[np.nan, np.ones(19)], sensitive_features=s)
