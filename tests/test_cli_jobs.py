"""Every sub-command on small real data through a real multi-process LocalCluster.

The jobs run in this process (``daskfair.cli.main``) against a 2-process LocalCluster joined
with ``--scheduler``; each test checks the run store against values recomputed here.
"""

import logging

import distributed
import numpy as np
import pandas as pd
import pytest

from daskfair.cli import main
from daskfair.datasets import load_dataset, load_fce_pool, preprocess_safairkm
from daskfair.metrics import (
    REPORT_COLUMNS,
    balance,
    clustering_report,
    demographic_parity_difference,
    kmeans_cost,
)
from daskfair.store import open_run

pytestmark = pytest.mark.cluster


@pytest.fixture(scope="module")
def scheduler():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster:
        yield cluster.scheduler_address


def _run(args, capsys):
    code = main(args)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _fitted_in_python(store, X, y, s):
    """The run's pipeline, cloned and fitted here on the same training rows."""
    from sklearn.base import clone

    import daskfair

    return clone(daskfair.load(store)).fit(X, y, model__sensitive_features=s)


def test_fkr_job_store(scheduler, data_dir, tmp_path, capsys):
    store = tmp_path / "crime.zarr"
    code, out, err = _run(["fkr", "--dataset", "ffe_crime", "--split", "3",
                           "--n-fair-features", "2", "4", "--objective", "mean_discrepancy",
                           "--n-landmarks", "300", "--baselines", "--chunk-rows", "300",
                           "--kernel", "polynomial", "--degree", "4", "--coef0", "0.1",
                           "--scheduler", scheduler, "--data-dir", str(data_dir),
                           "--store", str(store), "--no-progress"], capsys)
    assert code == 0, err
    assert "Dask cluster: 2 workers" in out and "FKR-F2E (mean_discrepancy), k = 2" in out
    run = open_run(store)
    assert run.kind == "fkr" and run.params["n_fair_features"] == [2, 4]
    results = run.attrs["results"]
    assert [r["method"] for r in results] == [
        "FKR-F2E (mean_discrepancy), k = 2", "FKR-F2E (mean_discrepancy), k = 4",
        "FairKernelClassifierCV (no bound)", "constant"]
    assert [r["n_fair_features"] for r in results[:2]] == [2, 4]
    # independent checks on the authors' split 3
    d = load_dataset("ffe_crime", data_dir)
    train = d.splits[3]
    test = np.setdiff1d(np.arange(len(d.y)), train)
    np.testing.assert_array_equal(run.read_array("predictions/test_rows"), test)
    y = d.y.astype(int)
    const = np.bincount(y[train]).argmax()
    assert results[-1]["error"] == pytest.approx(np.mean(y[test] != const))
    assert results[-1]["disparity"] == 0.0
    # the stored predictions are the first model's and give its stored SD and error
    pred = run.read_array("predictions/test")
    assert results[0]["error"] == pytest.approx(np.mean(pred != y[test]))
    rates = [pred[d.sensitive[test] == g].mean() for g in np.unique(d.sensitive)]
    assert results[0]["disparity"] == pytest.approx(max(rates) - min(rates))
    # the same pipeline fitted here, in memory, on the training rows: the same labels
    # (the job fitted blocks of 300 rows on the cluster)
    model = _fitted_in_python(store, d.X[train], d.y[train], d.sensitive[train])
    np.testing.assert_array_equal(model.predict(d.X[test]) == model.classes_[1], pred == 1)
    assert list(model.named_steps) == ["scale", "model"]


def test_fkr_on_adult_as_users_hold_it(scheduler, data_dir, tmp_path, capsys):
    """UCI's two Adult files as CSV tables with text columns, the test file given with
    --test: the stored pipeline, cloned and fitted here on train.csv with pandas, predicts
    test.csv with the same labels and decision values as the job's."""
    names = ["age", "workclass", "fnlwgt", "education", "education_num", "marital_status",
             "occupation", "relationship", "race", "sex", "capital_gain", "capital_loss",
             "hours_per_week", "native_country", "income"]
    read = {"header": None, "names": names, "skipinitialspace": True}
    train = pd.read_csv(data_dir / "adult" / "adult.data", **read)
    test = pd.read_csv(data_dir / "adult" / "adult.test", skiprows=1, **read)
    test["income"] = test["income"].str.rstrip(".")  # the test file's labels end with "."
    train.to_csv(tmp_path / "train.csv", index=False)
    test.to_csv(tmp_path / "test.csv", index=False)
    store = tmp_path / "adult.zarr"
    code, out, err = _run(["fkr", "--input", str(tmp_path / "train.csv"), "--test",
                           str(tmp_path / "test.csv"), "--label", "income", "--sensitive",
                           "sex", "--n-landmarks", "200", "--cv", "3", "--scheduler",
                           scheduler, "--store", str(store), "--no-progress"], capsys)
    assert code == 0, err
    assert "16,281 test rows (test rows: " in out
    run = open_run(store)
    first = run.attrs["results"][0]
    lo, hi = first["disparity_interval"]
    assert lo <= first["disparity"] <= hi
    verdict = "consistent with the bound 0.01" if lo <= 0.01 else "above the bound 0.01"
    assert f"95% interval {lo:.4f} to {hi:.4f}: {verdict}" in out
    features = [c for c in names if c not in ("income", "sex")]
    model = _fitted_in_python(store, train[features], train["income"], train["sex"])
    stored = run.read_array("predictions/test")
    mine = model.predict(test[features])
    assert int(np.sum((mine == ">50K") != (stored == 1))) == 0
    import daskfair

    job_model = daskfair.load(store)
    np.testing.assert_allclose(model.decision_function(test[features]),
                               job_model.decision_function(test[features]), rtol=0, atol=1e-9)
    # the scores are the stored predictions' own
    y = test["income"].to_numpy() == ">50K"
    assert first["error"] == pytest.approx(np.mean((stored == 1) != y), abs=1e-15)
    rates = [stored[test["sex"] == g].mean() for g in ("Female", "Male")]
    assert first["disparity"] == pytest.approx(abs(rates[0] - rates[1]), abs=1e-15)


def test_fkr_disparity_bound_workflow(scheduler, data_dir, tmp_path, capsys):
    """The default `daskfair fkr`: selection under a bound, its frontier stored and plotted."""
    store = tmp_path / "credit.zarr"
    # one width: this test is the workflow's (the width's choice: test_fkr_widths.py)
    code, out, err = _run(["fkr", "--dataset", "ffe_credit", "--split", "1",
                           "--disparity-bound", "0.02", "--n-landmarks", "200", "--cv", "3",
                           "--gammas", "0.05",
                           "--scheduler", scheduler, "--data-dir", str(data_dir),
                           "--store", str(store), "--no-progress"], capsys)
    assert code == 0, err
    assert "FairKernelClassifierCV (<= 0.02)" in out and "chosen from" in out
    assert "n_landmarks 200" in out  # the rank given, in the summary line
    run = open_run(store)
    sel = run.attrs["selection"]
    assert sel["best_params"]["n_landmarks"] == 200
    assert sel["validation_disparity"] <= 0.02 and sel["disparity_bound"] == 0.02
    results = run.attrs["results"]
    assert results[0]["validation_disparity"] == sel["validation_disparity"]
    # the stored test predictions give the stored test SD and error
    d = load_dataset("ffe_credit", data_dir)
    test = run.read_array("predictions/test_rows")
    pred = run.read_array("predictions/test")
    y = d.y.astype(int)
    assert results[0]["error"] == pytest.approx(np.mean(pred != y[test]))
    assert results[0]["disparity"] == pytest.approx(demographic_parity_difference(None,
        pred, sensitive_features=d.sensitive[test]))
    # the frontier: every candidate, the chosen one within the bound with its margin
    disparity, error = run.read_array("frontier/disparity"), run.read_array("frontier/error")
    upper = run.read_array("frontier/disparity_upper")
    sem = run.read_array("frontier/disparity_sem")
    assert len(disparity) == len(error) == len(upper) > sel["n_candidates"]
    from .test_fkr_cv import _two_group_upper

    np.testing.assert_allclose(upper, _two_group_upper(disparity, sem, 0.9), rtol=1e-12)
    chosen = [r for r in sel["front"] if r["selected"]]
    assert len(chosen) == 1 and chosen[0]["disparity_upper"] <= 0.02
    assert chosen[0]["error"] == pytest.approx(error[upper <= 0.02].min())
    lo, hi = sel["validation_disparity_interval"]
    assert sel["disparity_confidence"] == 0.9 and hi == chosen[0]["disparity_upper"]
    assert f"validation disparity {sel['validation_disparity']:.4f} (the population's at most " \
           f"{hi:.4f} at 90%; interval from {lo:.4f})" in out
    assert main(["plot", str(store)]) == 0 and store.with_suffix(".png").exists()


def test_safairkm_job_merges_small_groups_as_the_estimators_do(tmp_path, capsys):
    """--min-group-size/--small-groups are pareto_front's and vfairkm_front's own: the job's
    fronts are theirs on the table's rows, and its best balance counts the merged groups."""
    from daskfair.safairkm import pareto_front, vfairkm_front
    from daskfair.scaling import ColumnScaler

    rng = np.random.default_rng(4)
    n = 300
    group = rng.choice(["a", "b"], n)
    group[:7], group[7:12] = "c", "d"  # 7 and 5 rows: merged into "other" (12 rows)
    X = rng.normal(size=(n, 3)) + (group == "a")[:, None]
    pd.DataFrame(X, columns=["x", "y", "z"]).assign(g=group).to_csv(tmp_path / "t.csv",
                                                                     index=False)
    flags = ["safairkm", "--input", str(tmp_path / "t.csv"), "--sensitive", "g",
             "--n-clusters", "3", "--n-init", "3", "--max-iter", "6",
             "--vfairkm-fairness-weights", "0", "50", "--min-group-size", "10"]
    code, _, err = _run([*flags, "--store", str(tmp_path / "no.zarr")], capsys)
    assert code == 2 and "--sensitive has 2 group(s) with fewer than --min-group-size" in err
    code, out, err = _run([*flags, "--small-groups", "merge", "--store",
                           str(tmp_path / "m.zarr")], capsys)
    assert code == 0, err
    assert "merged into 'other': c (7 rows), d (5 rows)" in out
    run = open_run(tmp_path / "m.zarr")
    sizes = [(group == "a").sum(), (group == "b").sum(), 12]
    assert run.attrs["best_balance"] == pytest.approx(min(sizes) / max(sizes))
    Xs = ColumnScaler("standard", unit_rows=True).fit_transform(X)
    with pytest.warns(UserWarning, match="merged into the group 'other'"):
        front = pareto_front(Xs, sensitive_features=group, n_clusters=3, n_init=3,
                             max_iter=6, random_state=0, min_group_size=10,
                             small_groups="merge")
    np.testing.assert_array_equal(run.read_array("cost"), front.cost)
    np.testing.assert_array_equal(run.read_array("balance"), front.balance)
    with pytest.warns(UserWarning, match="merged into the group 'other'"):
        base = vfairkm_front(Xs, sensitive_features=group, n_clusters=3,
                             fairness_weights=[0, 50], random_state=0, min_group_size=10,
                             small_groups="merge")
    np.testing.assert_array_equal(run.read_array("vfairkm/balance"), base.balance)


def test_safairkm_job_store_and_plot(scheduler, data_dir, tmp_path, capsys):
    store = tmp_path / "front.zarr"
    code, out, err = _run(["safairkm", "--dataset", "safairkm_adult", "--rows", "600",
                           "--n-clusters", "3", "--n-init", "4", "--max-iter", "12",
                           "--vfairkm-fairness-weights", "0", "100", "--scheduler", scheduler,
                           "--data-dir", str(data_dir), "--store", str(store)], capsys)
    assert code == 0, err
    assert "12/12 iterations" in out and "SAfairKM" in out and "VfairKM" in out
    run = open_run(store)
    cost, bal, labels = (run.read_array(k) for k in ("cost", "balance", "labels"))
    assert np.all(np.diff(cost) > 0) and np.all(np.diff(bal) > 0)
    assert labels.shape == (len(cost), 600) and run.attrs["n_iter_done"] == 12
    d = load_dataset("safairkm_adult", data_dir)
    X, s = preprocess_safairkm(d.X, d.sensitive, n_samples=600, random_state=0)
    for i in (0, len(cost) // 2, len(cost) - 1):  # every point re-scored from its labels
        assert kmeans_cost(X, labels[i]) == pytest.approx(cost[i], rel=1e-9)
        assert balance(labels[i], sensitive_features=s) == pytest.approx(bal[i], rel=1e-12)
    vf = run.attrs["fronts"]["VfairKM"]
    np.testing.assert_array_equal(run.read_array("vfairkm/cost"), vf["cost"])
    assert set(vf["fairness_weight"]) <= {0.0, 100.0}
    assert run.attrs["best_balance"] == pytest.approx(np.bincount(s).min() / np.bincount(s).max())
    # without a cluster option the same job runs in this process, with the same front
    here = tmp_path / "here.zarr"
    code, out, err = _run(["safairkm", "--dataset", "safairkm_adult", "--rows", "600",
                           "--n-clusters", "3", "--n-init", "4", "--max-iter", "12",
                           "--vfairkm-fairness-weights", "0", "100", "--data-dir",
                           str(data_dir), "--store", str(here)], capsys)
    assert code == 0, err
    assert "running in this process on" in out and "Dask cluster:" not in out
    for key in ("cost", "balance", "labels", "vfairkm/cost"):
        np.testing.assert_array_equal(open_run(here).read_array(key), run.read_array(key))
    code, out, _ = _run(["plot", str(store)], capsys)
    png = tmp_path / "front.png"
    assert code == 0 and f"wrote {png}" in out
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_fce_job_on_a_pool_and_show(scheduler, data_dir, tmp_path, capsys):
    store = tmp_path / "yale.zarr"
    code, out, err = _run(["fce", "--pool", "yale", "--n-runs", "6", "--n-clusters", "15",
                           "--chunk-rows", "50", "--scheduler", scheduler, "--data-dir",
                           str(data_dir), "--store", str(store), "--no-progress"], capsys)
    assert code == 0, err
    assert "FCE consensus, c = 15" in out
    run = open_run(store)
    base, y, groups = load_fce_pool("yale", data_dir)
    labels = run.read_array("labels")
    report = run.attrs["report"]
    direct = clustering_report(y, labels, sensitive_features=groups, n_clusters=15)
    for c in REPORT_COLUMNS:
        assert report["consensus"][c] == pytest.approx(direct[c])
    base_rows = np.array([[clustering_report(y, base[:, j], sensitive_features=groups,
                                             n_clusters=15)[c] for c in REPORT_COLUMNS]
                          for j in range(6)])
    np.testing.assert_allclose([report["base_mean"][c] for c in REPORT_COLUMNS],
                               base_rows.mean(axis=0))
    code, out, _ = _run(["show", str(store)], capsys)
    assert code == 0
    assert "kind:      fce" in out and "status:    complete" in out
    assert "labels" in out and "(165,) int32" in out and "pool                   yale" in out
    code, _, _ = _run(["plot", str(store), "-o", str(tmp_path / "bars.png")], capsys)
    assert code == 0 and (tmp_path / "bars.png").stat().st_size > 1000


def test_fce_job_with_a_consensus_coarser_than_the_pool(scheduler, data_dir, tmp_path,
                                                        capsys):
    """D&S's base clusterings have 19 clusters: with --n-clusters 7 each is scored with its own
    19 (it failed with "labels must lie in [0, 6]" after the whole consensus had run)."""
    store = tmp_path / "ds.zarr"
    code, _, err = _run(["fce", "--pool", "ds", "--n-runs", "3", "--n-clusters", "7",
                         "--max-iter", "2", "--scheduler", scheduler, "--data-dir",
                         str(data_dir), "--store", str(store), "--no-progress"], capsys)
    assert code == 0, err
    report = open_run(store).attrs["report"]
    base, y, groups = load_fce_pool("ds", data_dir)
    own = [int(base[:, j].max()) + 1 for j in range(3)]
    assert own == [19, 19, 19]
    base_rows = np.array([[clustering_report(y, base[:, j], sensitive_features=groups,
                                             n_clusters=own[j])[c] for c in REPORT_COLUMNS]
                          for j in range(3)])
    np.testing.assert_allclose([report["base_mean"][c] for c in REPORT_COLUMNS],
                               base_rows.mean(axis=0))


def test_fce_job_with_several_sensitive_columns(scheduler, tmp_path, capsys):
    """--sensitive sex band: the groups are the (sex, band) pairs, named as fairlearn does."""
    rng = np.random.default_rng(1)
    n = 600
    sex, band = rng.choice(["f", "m"], n), rng.choice(["old", "young"], n)
    X = rng.normal(size=(n, 3)) + (sex == "f")[:, None]
    pd.DataFrame(X, columns=["a", "b", "c"]).assign(sex=sex, band=band).to_csv(
        tmp_path / "d.csv", index=False)
    store = tmp_path / "two.zarr"
    code, _, err = _run(["fce", "--input", str(tmp_path / "d.csv"), "--sensitive", "sex",
                         "band", "--n-clusters", "3", "--n-runs", "3", "--scheduler",
                         scheduler, "--store", str(store), "--no-progress"], capsys)
    assert code == 0, err
    run = open_run(store)
    assert run.params["sensitive"] == ["sex", "band"]
    assert run.attrs["encoder"]["columns"] == ["a", "b", "c"]
    groups = np.array([f"{a},{b}" for a, b in zip(sex, band, strict=True)])
    assert run.attrs["report"]["consensus"]["Bal"] == pytest.approx(
        balance(run.read_array("labels"), sensitive_features=groups))
    # --min-group-size merges the smallest pairs for every report of the job
    sizes = pd.Series(groups).value_counts().sort_values()
    least = int(sizes.iloc[1]) + 1
    small = set(sizes.index[:2])
    code, out, err = _run(["fce", "--input", str(tmp_path / "d.csv"), "--sensitive", "sex",
                           "band", "--min-group-size", str(least), "--small-groups", "merge",
                           "--n-clusters", "3", "--n-runs", "3", "--scheduler", scheduler,
                           "--store", str(tmp_path / "merged.zarr"), "--no-progress"], capsys)
    assert code == 0, err
    listed = ", ".join(f"{g} ({sizes[g]:,} rows)" for g in sorted(small))
    assert f"merged into 'other': {listed}" in out
    run = open_run(tmp_path / "merged.zarr")
    merged = np.where(np.isin(groups, list(small)), "other", groups)
    assert run.attrs["report"]["consensus"]["Bal"] == pytest.approx(
        balance(run.read_array("labels"), sensitive_features=merged))


def test_fce_job_reports_count_the_groups_the_ensemble_merged(tmp_path):
    """Groups in memory (a pool's, a data set's): the consensus is the one
    FairClusteringEnsemble(min_group_size, small_groups='merge') fits, and the report's
    balance counts its merged groups."""
    from daskfair import FairClusteringEnsemble
    from daskfair.cli.fce_job import fce_job
    from daskfair.store import create_run

    rng = np.random.default_rng(5)
    n = 400
    s = rng.choice([10, 20], n)
    s[:9], s[9:15] = 30, 40  # 9 and 6 rows: merged into "other" (15 rows)
    base = np.column_stack([rng.integers(0, 3, n) for _ in range(4)])
    y = rng.integers(0, 2, n)
    params = {"n_clusters": 3, "max_iter": 5, "random_state": 0, "min_group_size": 12,
              "small_groups": "merge"}
    lines = []
    run = create_run(tmp_path / "p.zarr", kind="fce")
    summary = fce_job(None, run=run, client=None, params=params, pool=(base, y, s),
                      base_params={"n_runs": 4}, chunk_rows=150, echo=lines.append)
    run.mark_complete()
    run.close()
    assert "4 groups; merged into 'other': 30 (9 rows), 40 (6 rows)" in lines
    with pytest.warns(UserWarning, match="merged into the group 'other'"):
        fce = FairClusteringEnsemble(**params).fit(base, sensitive_features=s)
    labels = open_run(tmp_path / "p.zarr").read_array("labels")
    np.testing.assert_array_equal(labels, fce.labels_)
    merged = np.where(s >= 30, 0, s)
    assert summary["consensus"]["Bal"] == pytest.approx(
        balance(labels, sensitive_features=merged), rel=1e-12)
    assert summary["consensus"]["Bal"] != pytest.approx(balance(labels, sensitive_features=s))


def test_fce_job_on_clusterings_a_user_holds(scheduler, tmp_path, capsys):
    """--base-labels: a table whose columns are earlier clusterings, numbered as other tools
    number them (-1 for noise, ids of 10**9); the job's consensus is that of
    FairClusteringEnsemble fitted here on the same columns."""
    from daskfair import FairClusteringEnsemble

    rng = np.random.default_rng(0)
    n = 600
    sex = rng.choice(["F", "M"], n)
    x = rng.normal(size=n) + (sex == "F")
    runs = {}
    for j in range(5):
        cuts = (x + rng.normal(scale=0.5, size=n) > np.quantile(x, [0.33, 0.66])[:, None])
        runs[f"run{j}"] = np.array([-1, 7, 10**9])[cuts.sum(0)] if j % 2 else cuts.sum(0)
    table = pd.DataFrame({"sex": sex, **runs})
    table.to_csv(tmp_path / "runs.csv", index=False)
    store = tmp_path / "mine.zarr"
    code, out, err = _run(["fce", "--input", str(tmp_path / "runs.csv"), "--base-labels",
                           *runs, "--sensitive", "sex", "--n-clusters", "3", "--chunk-rows",
                           "250", "--scheduler", scheduler, "--store", str(store),
                           "--no-progress"], capsys)
    assert code == 0, err
    assert "5 base clusterings read from the table, of 3, 3, 3, 3, 3 clusters" in out
    run = open_run(store)
    ids = table[list(runs)].to_numpy()
    renumbered = np.column_stack([np.unique(c, return_inverse=True)[1] for c in ids.T])
    np.testing.assert_array_equal(run.read_array("base_labels"), renumbered)
    fce = FairClusteringEnsemble(n_clusters=3, random_state=0).fit(ids, sensitive_features=sex)
    np.testing.assert_array_equal(run.read_array("labels"), fce.labels_)
    assert run.attrs["report"]["consensus"]["Bal"] == pytest.approx(
        balance(fce.labels_, sensitive_features=sex))
    code, _, err = _run(["fce", "--input", str(tmp_path / "runs.csv"), "--base-labels",
                         "run0", "--features", "run1", "--sensitive", "sex", "--scheduler",
                         scheduler, "--store", str(tmp_path / "x.zarr"), "--no-progress"],
                        capsys)
    assert code == 2 and "--base-labels names columns of the --input table" in err


def test_fce_job_from_a_csv_file(scheduler, tmp_path, capsys):
    rng = np.random.default_rng(0)
    n = 900
    s = rng.choice(["f", "m"], n)
    centers = rng.normal(scale=4, size=(3, 3))
    k = rng.integers(0, 3, n)
    X = centers[k] + rng.normal(size=(n, 3)) + (s == "f")[:, None] * 1.5
    df = pd.DataFrame(X, columns=["a", "b", "c"]).assign(sex=s, kind=k)
    df.to_csv(tmp_path / "d.csv", index=False)
    store = tmp_path / "csv.zarr"
    # the scheduler runs in this process: collect its warnings (a reused key for other data
    # gives "Detected different `run_spec`")
    records = []
    handler = logging.Handler(logging.WARNING)
    handler.emit = records.append
    logging.getLogger("distributed.scheduler").addHandler(handler)
    try:
        code, _, err = _run(["fce", "--input", str(tmp_path / "d.csv"), "--sensitive", "sex",
                             "--label", "kind", "--n-clusters", "3", "--n-runs", "4",
                             "--methods", "kmeans", "spectral", "--chunk-rows", "250",
                             "--scheduler", scheduler, "--store", str(store),
                             "--no-progress"], capsys)
    finally:
        logging.getLogger("distributed.scheduler").removeHandler(handler)
    assert code == 0, err
    assert not [r for r in records if "run_spec" in r.getMessage()]
    run = open_run(store)
    base = run.read_array("base_labels")
    assert base.shape == (n, 4) and base.max() == 2 and run.attrs["base_done"] is True
    # the table's encoding is stored with every job's run, FCE's too
    assert run.attrs["encoder"]["columns"] == ["a", "b", "c"]
    labels = run.read_array("labels")
    assert run.attrs["report"]["consensus"]["Bal"] == pytest.approx(
        balance(labels, sensitive_features=s))
    # without --label the report has no ACC/NMI
    code, _, err = _run(["fce", "--input", str(tmp_path / "d.csv"), "--sensitive", "sex",
                         "--features", "a", "b", "c", "--n-clusters", "3", "--n-runs", "2",
                         "--scheduler", scheduler, "--store", str(tmp_path / "nolabel.zarr"),
                         "--no-progress"], capsys)
    assert code == 0, err
    assert set(open_run(tmp_path / "nolabel.zarr").attrs["report"]["consensus"]) == {
        "Bal", "MNCE", "CCE", "NE", "f_CCE"}


def test_job_input_errors(scheduler, tmp_path, capsys):
    df = pd.DataFrame({"a": [1.0, 2.0, np.nan, 4.0], "w": list("xyzw"), "s": [0, 1, 0, 1],
                       "y": [0, 1, 1, 0]})
    df.to_csv(tmp_path / "bad.csv", index=False)
    common = ["--scheduler", scheduler, "--store", str(tmp_path / "x.zarr")]
    cases = [
        (["fkr", "--input", str(tmp_path / "bad.csv"), "--sensitive", "s", "--label", "y",
          "--no-encode", "--features", "w"], "not numeric"),
        (["fkr", "--input", str(tmp_path / "bad.csv"), "--sensitive", "s", "--label", "y",
          "--features", "a"], "missing values {'a': 1}"),
        (["fkr", "--input", str(tmp_path / "bad.csv"), "--sensitive", "sex", "--label", "y"],
         "has no column 'sex'"),
        (["fkr", "--input", str(tmp_path / "bad.csv"), "--sensitive", "s"],
         "name its label column"),
        (["fkr", "--dataset", "adult", "--input", str(tmp_path / "bad.csv")],
         "exactly one of --dataset"),
        (["safairkm", "--input", str(tmp_path / "nope.csv"), "--sensitive", "s"],
         "does not exist"),
        (["safairkm", "--dataset", "adult", "--label", "y"], "applies to --input files"),
        (["fce", "--pool", "yale", "--resume"], "nothing to resume"),
        (["fce", "--pool", "yale", "--dataset", "adult"], "either --pool or features"),
    ]
    for args, message in cases:
        code, _, err = _run(args + common, capsys)
        assert code == 2, args
        assert message in err, (args, err)
    assert not (tmp_path / "x.zarr").exists()  # no store is left by a refused job


def test_fkr_on_a_table_with_text_columns(scheduler, tmp_path, capsys):
    from .test_inputs_help import _credit_like

    _credit_like().to_csv(tmp_path / "credit.csv", index=False)
    code, out, err = _run(["fkr", "--input", str(tmp_path / "credit.csv"), "--label", "risk",
                           "--sensitive", "sex", "--n-landmarks", "50", "--cv", "3",
                           "--scheduler", scheduler, "--store", str(tmp_path / "c.zarr"),
                           "--no-progress"], capsys)
    assert code == 0, err
    assert "240 rows in 1 partitions, 6 feature columns" in out
    assert "one-hot encoded purpose (3 levels), housing (2 levels)" in out
    # the encoder is stored with the run's model: new rows are encoded as the training rows
    import daskfair
    from daskfair.tables import TableEncoder

    enc = daskfair.load(tmp_path / "c.zarr")["encode"]
    new = _credit_like(5).drop(columns=["sex", "risk"])
    new.loc[0, "purpose"] = "boat"  # a level the run never saw: an all-zero row for it
    with pytest.warns(UserWarning, match=r"not seen when the encoder was fitted.*'purpose': 1"):
        X = enc.transform(new)
    fitted = TableEncoder().fit(_credit_like().drop(columns=["sex", "risk"]))
    names = list(enc.get_feature_names_out())
    assert names == list(fitted.get_feature_names_out())
    np.testing.assert_array_equal(X[1:], fitted.transform(new.iloc[1:]))
    assert X[0, [names.index(f"purpose={v}") for v in ("car", "education", "tv")]].sum() == 0


def test_fkr_on_a_parquet_directory_and_a_csv_glob_of_one_table(scheduler, tmp_path, capsys):
    """The same rows as a Parquet directory (uneven part files, one empty) and as a glob of
    gzipped CSV files give the same run: the split hashes the row number, the encoding and
    the scaling come from the table's pass, whatever its partitions."""
    from .test_tables import _table

    df = _table(1200)
    parts = [df.iloc[a:b] for a, b in ((0, 350), (350, 350), (350, 900), (900, 1200))]
    (tmp_path / "pq").mkdir()
    for i, part in enumerate(parts):
        part.to_parquet(tmp_path / "pq" / f"part.{i}.parquet", index=False)
    for i, (a, b) in enumerate(((0, 500), (500, 1200))):
        df.iloc[a:b].to_csv(tmp_path / f"t-{i}.csv.gz", index=False)
    runs = {}
    # one width: the partitions are this test's subject (the width search's own chunking
    # test: test_fkr_widths.py)
    for name, source in (("pq", tmp_path / "pq"), ("csv", str(tmp_path / "t-*.csv.gz"))):
        code, out, err = _run(["fkr", "--input", str(source), "--label", "risk", "--sensitive",
                               "sex", "--n-landmarks", "80", "--gammas", "0.05", "--cv", "3",
                               "--chunk-rows", "256", "--scheduler", scheduler, "--store",
                               str(tmp_path / f"{name}.zarr"), "--no-progress"], capsys)
        assert code == 0, err
        assert "1,200 rows" in out and "train_test_split(test_size=0.25, random_state=0)" in out
        runs[name] = open_run(tmp_path / f"{name}.zarr")
    a, b = runs["pq"], runs["csv"]
    for key in ("predictions/test", "predictions/test_rows"):
        np.testing.assert_array_equal(a.read_array(key), b.read_array(key), err_msg=key)
    # the same model, encoder and scaling: the same bits on the same rows
    import daskfair

    model_a, model_b = daskfair.load(a.path), daskfair.load(b.path)
    rows = df.drop(columns=["sex", "risk"])
    np.testing.assert_array_equal(model_a.decision_function(rows),
                                  model_b.decision_function(rows))
    assert model_a["encode"].to_dict() == model_b["encode"].to_dict()
    strip = [{k: v for k, v in r.items() if k != "seconds"} for r in a.attrs["results"]]
    assert strip == [{k: v for k, v in r.items() if k != "seconds"}
                     for r in b.attrs["results"]]
    # the test rows are about a quarter of every group and class
    test = a.read_array("predictions/test_rows")
    shares = df.iloc[test].groupby(["sex", "risk"]).size() / df.groupby(["sex", "risk"]).size()
    assert shares.between(0.18, 0.32).all(), shares
    # and the scores are those of the stored predictions
    pred, y = a.read_array("predictions/test"), (df["risk"].iloc[test] == "good").to_numpy()
    assert a.attrs["results"][0]["error"] == pytest.approx(np.mean(pred != y))
