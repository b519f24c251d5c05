"""``daskfair audit``: a table of several partitions audited on a multi-process cluster as
the library audits it in this process; stored without loss; a stored model's decisions
audited in the same pass; the HTML report rendered by Chromium, names escaped."""

from __future__ import annotations

import re
import shutil
import subprocess

import numpy as np
import pandas as pd
import pytest

import daskfair
from daskfair.cli import main
from daskfair.cli.audit_job import read_audit
from daskfair.metrics import audit

from .test_cli_jobs import _run, scheduler  # noqa: F401 - the module's cluster
from .test_tables import _table

pytestmark = pytest.mark.cluster

EVIL = "<script>alert(1)</script>"


def _decisions(n=4000, seed=0):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"sex": rng.choice(["F", "M"], n),
                       "race": rng.choice(["a", "b", EVIL], n, p=[0.6, 0.35, 0.05]),
                       "hired": rng.integers(0, 2, n), "w": rng.uniform(0.5, 2, n)})
    df["score"] = rng.random(n) + 0.4 * df["hired"]
    df["offer"] = (df["score"] > 0.8).astype(int)
    df["proba"] = df["score"] / 1.4  # a probability, for calibration
    df.loc[rng.choice(n, 30, replace=False), "race"] = None
    return df


@pytest.fixture(scope="module")
def table(tmp_path_factory):
    root = tmp_path_factory.mktemp("audit")
    df = _decisions()
    (root / "t").mkdir()
    for i, lo in enumerate(range(0, len(df), 700)):  # six partitions
        df.iloc[lo:lo + 700].to_parquet(root / "t" / f"p{i}.parquet", index=False)
    return root, df


def test_cli_audit_equals_the_library_and_stores_it(table, scheduler, capsys):  # noqa: F811
    root, df = table
    code, out, err = _run(
        ["audit", "--input", str(root / "t"), "--label", "hired", "--prediction", "offer",
         "--score", "score", "--sensitive", "sex", "race", "--min-group-size", "150",
         "--metrics", "f1_score", "false_negative_rate",
         "--n-boot", "500", "--store", str(root / "a.zarr"), "--report",
         str(root / "a.html"), "--scheduler", scheduler, "--no-progress"], capsys)
    assert code == 0, err
    ours = audit(df["hired"], df["offer"], sensitive_features=df[["sex", "race"]],
                 y_score=df["score"], n_boot=500, min_group_size=150, random_state=0,
                 metrics=["f1_score", "false_negative_rate"])
    stored = read_audit(root / "a.zarr")
    assert stored.metrics[-3:] == ["f1_score", "false_negative_rate", "roc_auc"]
    pd.testing.assert_frame_equal(stored.by_group, ours.by_group, check_exact=True)
    for end in (0, 1):
        pd.testing.assert_frame_equal(stored.by_group_ci[end], ours.by_group_ci[end],
                                      check_exact=True)
    assert "Per group (95% intervals, bootstrap, 500 replicates)" in out
    assert f"Reference group: {', '.join(ours.reference_group)}" in out
    small = ours.suppressed
    assert ("F", "unknown") in small  # the missing race is a group of its own, counted
    line = next(x for x in out.splitlines() if x.startswith("Suppressed"))
    assert len(re.findall(r"\(\d[\d,]* rows\)", line)) == len(small)
    assert f"F, {EVIL} ({small[('F', EVIL)]} rows)" in line
    assert (root / "a.html").is_file()


def test_cli_audit_of_a_stored_models_decisions(scheduler, tmp_path, capsys):  # noqa: F811
    df = _table(1500)
    df.to_csv(tmp_path / "train.csv", index=False)
    # one width: the model is this test's input (the width's choice: test_fkr_widths.py)
    assert main(["fkr", "--input", str(tmp_path / "train.csv"), "--label", "risk",
                 "--sensitive", "sex", "--features", "age", "income", "purpose", "housing",
                 "--n-landmarks", "60", "--gammas", "0.05", "--cv", "2", "--scheduler",
                 scheduler, "--store", str(tmp_path / "m.zarr"), "--no-progress"]) == 0
    capsys.readouterr()
    code, _, err = _run(
        ["audit", "--input", str(tmp_path / "train.csv"), "--model", str(tmp_path / "m.zarr"),
         "--label", "risk", "--pos-label", "good", "--sensitive", "sex", "--n-boot", "200",
         "--store", str(tmp_path / "a.zarr"), "--scheduler", scheduler, "--no-progress"],
        capsys)
    assert code == 0, err
    model = daskfair.load(tmp_path / "m.zarr")
    ref = audit(df["risk"], model.predict(df), y_score=model.predict_proba(df)[:, 1],
                sensitive_features=df["sex"], pos_label="good", n_boot=200, random_state=0)
    got = read_audit(tmp_path / "a.zarr")
    pd.testing.assert_frame_equal(got.by_group, ref.by_group, rtol=1e-12)
    assert "roc_auc" in got.metrics


@pytest.mark.parametrize("args, message", [
    (["--prediction", "nope"], "has no column(s) ['nope']"),
    ([], "give the decisions: --prediction COLUMN, or --model STORE"),
    (["--prediction", "offer", "--reference-group", "F"], "one value per --sensitive"),
    (["--prediction", "offer", "--pos-label", "yes"], "--pos-label 'yes': the column holds"),
    (["--prediction", "offer", "--n-boot", "-3"], "--n-boot must be"),
    (["--prediction", "offer", "--metrics", "f2"], "unknown metric 'f2'; the named ones are"),
    (["--prediction", "offer", "--calibration"], "--calibration needs scores: give --score"),
    (["--prediction", "offer", "--score", "proba", "--calibration", "--n-bins", "0"],
     "--n-bins must be an integer"),
])
def test_cli_audit_refuses_bad_flags(table, tmp_path, capsys, args, message):
    root, _ = table
    code, _, err = _run(["audit", "--input", str(root / "t"), "--label", "hired",
                         "--sensitive", "sex", "race", "--store", str(tmp_path / "x.zarr"),
                         "--workers", "1", "--no-progress", *args], capsys)
    assert code == 2 and message in err, err
    assert not (tmp_path / "x.zarr").exists()  # refused before the run starts


def _chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if path := shutil.which(name):
            return path
    pytest.skip("no Chromium on PATH: the report check needs one")


def test_report_renders_in_chromium_with_names_escaped(tmp_path):
    df = _decisions(3000, seed=1)
    a = audit(df["hired"], df["offer"], sensitive_features=df[["sex", "race"]],
              y_score=df["proba"], n_boot=200, min_group_size=100, random_state=0)
    from daskfair.metrics.report import audit_html

    page = tmp_path / "r.html"
    page.write_text(audit_html(a, {"input": f"/data/{EVIL}.parquet"}, calibration=True))
    dom = subprocess.run(
        [_chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--dump-dom",
         page.as_uri()], capture_output=True, text=True, timeout=120).stdout
    assert "<table id=\"groups\">" in dom
    present = int(a.by_group["count"].notna().sum())
    groups_table = dom.split('id="groups"')[1].split("</table>")[0]
    assert groups_table.count("<tr data-group") == present
    # the hostile name is text everywhere: no script element, and the text is escaped
    assert "<script" not in dom.lower()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in dom
    assert not re.search(r"<(link|img|iframe|object)\b", dom)  # nothing loaded from anywhere
    assert "Content-Security-Policy" in page.read_text()
    compared = int(a.by_group["selection_rate"].notna().sum())
    assert dom.count("<tr data-calibration") == compared
    assert dom.count('aria-label="reliability of ') == compared
    assert dom.count("<tr data-scoring") == compared


def test_cli_audit_with_weights_and_a_reference_group(table, scheduler, capsys):  # noqa: F811
    root, df = table
    code, out, err = _run(
        ["audit", "--input", str(root / "t"), "--label", "hired", "--prediction", "offer",
         "--sensitive", "sex", "--weight", "w", "--reference-group", "M", "--n-boot", "200",
         "--store", str(root / "w.zarr"), "--scheduler", scheduler, "--no-progress"], capsys)
    assert code == 0, err
    ours = audit(df["hired"], df["offer"], sensitive_features=df["sex"], sample_weight=df["w"],
                 reference_group="M", n_boot=200, random_state=0)
    stored = read_audit(root / "w.zarr")
    assert stored.reference_group == "M" and "Reference group: M" in out
    pd.testing.assert_frame_equal(stored.by_group, ours.by_group, check_exact=True)
    pd.testing.assert_frame_equal(stored.difference_to_reference_ci()[1],
                                  ours.difference_to_reference_ci()[1], check_exact=True)


def test_cli_audit_within_control_levels(table, scheduler, capsys):  # noqa: F811
    """--control race: the groups of sex compared within each race, equal to the library's
    LevelAudit, stored and read back bit for bit; the report has a part per level (the
    level's name escaped)."""
    from daskfair.metrics import LevelAudit

    root, df = table
    code, out, err = _run(
        ["audit", "--input", str(root / "t"), "--label", "hired", "--prediction", "offer",
         "--sensitive", "sex", "--control", "race", "--n-boot", "300",
         "--store", str(root / "c.zarr"), "--report", str(root / "c.html"),
         "--scheduler", scheduler, "--no-progress"], capsys)
    assert code == 0, err
    ours = audit(df["hired"], df["offer"], sensitive_features=df["sex"],
                 control_features=df[["race"]], n_boot=300, random_state=0)
    stored = read_audit(root / "c.zarr")
    assert isinstance(stored, LevelAudit) and list(stored.levels) == list(ours.levels)
    pd.testing.assert_frame_equal(stored.by_group, ours.by_group, check_exact=True)
    for end in (0, 1):
        pd.testing.assert_frame_equal(stored.difference_ci()[end], ours.difference_ci()[end],
                                      check_exact=True)
    assert "== race a ==" in out and "== race unknown ==" in out
    page = (root / "c.html").read_text()
    assert page.count("<h2>race ") == len(ours.levels)
    assert EVIL not in page and "&lt;script&gt;" in page


def test_cli_audit_scoring_rate_and_calibration(table, scheduler, capsys):  # noqa: F811
    """--score with --calibration: the text has the library's scoring rates and expected
    calibration errors; the report a scoring table, a calibration table and a reliability
    plot per compared group."""
    root, df = table
    code, out, err = _run(
        ["audit", "--input", str(root / "t"), "--label", "hired", "--prediction", "offer",
         "--score", "proba", "--sensitive", "sex", "race", "--min-group-size", "150",
         "--calibration", "--n-bins", "8", "--strategy", "quantile", "--n-boot", "0",
         "--store", str(root / "k.zarr"), "--report", str(root / "k.html"),
         "--scheduler", scheduler, "--no-progress"], capsys)
    assert code == 0, err
    ours = audit(df["hired"], df["offer"], sensitive_features=df[["sex", "race"]],
                 y_score=df["proba"], n_boot=0, min_group_size=150)
    ece = ours.calibration(8, "quantile").ece
    rates = ours.scoring_rate()
    text = out.split("Expected calibration error (8 quantile bins):")[1]
    for g in ece.index:
        name = ", ".join(g)
        assert f"  {name:<20} {ece.loc[g, 'ece']:.3f} [{ece.loc[g, 'lower']:.3f}, " in text
        assert f"impact ratio {rates.loc[g, 'impact_ratio']:.3f}" in out
    page = (root / "k.html").read_text()
    assert page.count("<tr data-calibration>") == len(ece)
    assert page.count("aria-label='reliability of ") == len(ece)
    assert page.count("<tr data-scoring>") == len(rates)
    assert EVIL not in page


def test_cli_regression_audit_equals_the_library_and_stores_it(
        table, scheduler, tmp_path, capsys):  # noqa: F811
    """--task regression: a table's amounts and predictions audited by group on the cluster,
    equal to the library's RegressionAudit, stored and read back bit for bit; the report has
    the groups, the comparisons and the distances between predictions, names escaped."""
    from daskfair.metrics import RegressionAudit

    df = table[1]
    rng = np.random.default_rng(4)
    df = df.assign(amount=rng.gamma(2.0, 500.0, len(df)))
    df["predicted"] = df["amount"] * rng.lognormal(0, 0.2, len(df)) + 30 * (df["sex"] == "M")
    (tmp_path / "t").mkdir()
    for i, lo in enumerate(range(0, len(df), 900)):
        df.iloc[lo:lo + 900].to_parquet(tmp_path / "t" / f"p{i}.parquet", index=False)
    code, out, err = _run(
        ["audit", "--input", str(tmp_path / "t"), "--task", "regression", "--label", "amount",
         "--prediction", "predicted", "--sensitive", "sex", "race", "--min-group-size", "150",
         "--store", str(tmp_path / "r.zarr"), "--report", str(tmp_path / "r.html"),
         "--scheduler", scheduler, "--no-progress"], capsys)
    assert code == 0, err
    ours = audit(df["amount"], df["predicted"], sensitive_features=df[["sex", "race"]],
                 min_group_size=150, task="regression")
    stored = read_audit(tmp_path / "r.zarr")
    assert isinstance(stored, RegressionAudit)
    pd.testing.assert_frame_equal(stored.by_group, ours.by_group, check_exact=True)
    pd.testing.assert_frame_equal(stored.by_group_ci[0], ours.by_group_ci[0], check_exact=True)
    gap, (lo, hi) = ours.difference(), ours.difference_ci()
    assert (f"  mean_prediction      {gap['mean_prediction']:.3f} "
            f"[{lo['mean_prediction']:.3f}, {hi['mean_prediction']:.3f}]") in out
    assert "Kolmogorov-Smirnov" in out
    page = (tmp_path / "r.html").read_text()
    present = int((ours.by_group["count"].notna()).sum())
    assert page.count("<tr data-group>") == present
    assert page.count("<tr data-ks>") == len(ours.prediction_ks())
    assert EVIL not in page and "&lt;script&gt;" in page
    code, out, err = _run(
        ["audit", "--input", str(tmp_path / "t"), "--task", "regression", "--label", "amount",
         "--prediction", "predicted", "--sensitive", "sex", "--control", "race",
         "--store", str(tmp_path / "c.zarr"), "--report", str(tmp_path / "c.html"),
         "--scheduler", scheduler, "--no-progress"], capsys)
    assert code == 0, err
    levels = audit(df["amount"], df["predicted"], sensitive_features=df["sex"],
                   control_features=df[["race"]], task="regression")
    stored = read_audit(tmp_path / "c.zarr")
    pd.testing.assert_frame_equal(stored.by_group, levels.by_group, check_exact=True)
    assert out.count("Largest gap between groups:") == len(levels.levels)
    assert (tmp_path / "c.html").read_text().count("<table id='ks'>") == len(levels.levels)


def test_cli_regression_audit_refuses_classification_flags(table, tmp_path, capsys):
    root, _ = table
    code, _, err = _run(["audit", "--input", str(root / "t"), "--task", "regression",
                         "--label", "score", "--prediction", "proba", "--score", "score",
                         "--sensitive", "sex", "--store", str(tmp_path / "x.zarr"),
                         "--workers", "1", "--no-progress"], capsys)
    assert code == 2 and "--task regression takes no --score" in err, err
    assert not (tmp_path / "x.zarr").exists()
