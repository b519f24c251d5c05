import os
import subprocess
import sys

import numpy as np
import pytest

from daskfair.cli import main
from daskfair.cli.labelings import audit_labelings, subset_summary
from daskfair.cli.paper.fkr_paper import CV_METHOD
from daskfair.datasets import load_fce_pool
from daskfair.metrics import REPORT_COLUMNS, clustering_report
from daskfair.store import open_run

# The FCE paper's printed "KM" rows (data README), means only.
PAPER_KM = {
    "har": {"ACC": 0.579, "NMI": 0.571, "Bal": 0.000, "MNCE": 0.812, "CCE": 0.241, "NE": 0.940},
    "mnist_usps": {"ACC": 0.371, "NMI": 0.343, "CCE": 0.320, "NE": 0.966},
}


def test_subset_summary_by_hand():
    reports = np.arange(8.0).reshape(4, 2)  # subsets {0,1}, {2,3}: means [1, 2] and [5, 6]
    mean, std = subset_summary(reports, n_subsets=2)
    np.testing.assert_allclose(mean, [3.0, 4.0])
    np.testing.assert_allclose(std, [np.sqrt(8.0), np.sqrt(8.0)])  # sample std of {1, 5}
    with pytest.raises(ValueError, match="cannot be split into 3 equal subsets"):
        subset_summary(reports, n_subsets=3)


@pytest.mark.parametrize("pool", ["har", "mnist_usps"])
def test_audit_reproduces_the_paper_km_rows(client, data_dir, pool):
    base, y, groups = load_fce_pool(pool, data_dir)
    reports = audit_labelings(base, y, sensitive_features=groups, client=client)
    assert reports.shape == (100, len(REPORT_COLUMNS))
    mean, _ = subset_summary(reports)
    ours = dict(zip(REPORT_COLUMNS, mean, strict=True))
    for metric, printed in PAPER_KM[pool].items():
        assert abs(ours[metric] - printed) <= 0.002, (metric, ours[metric], printed)
    # each task computed exactly the report of its own column
    for j in (0, 57, 99):
        direct = clustering_report(y, base[:, j], sensitive_features=groups,
                                   n_clusters=len(np.unique(y)))
        np.testing.assert_allclose(reports[j], [direct[c] for c in REPORT_COLUMNS])


def test_audit_progress_bar_only_on_a_terminal(client, capsys, monkeypatch):
    rng = np.random.default_rng(0)
    base, y, groups = rng.integers(0, 3, (60, 4)), rng.integers(0, 3, 60), np.arange(60) % 2
    audit_labelings(base, y, sensitive_features=groups, client=client, progress=True)
    assert "Completed" not in capsys.readouterr().out  # captured output is not a terminal
    monkeypatch.setattr("sys.stdout.isatty", lambda: True)
    audit_labelings(base, y, sensitive_features=groups, client=client, progress=True)
    assert "Completed" in capsys.readouterr().out


def test_audit_bad_input(client):
    with pytest.raises(ValueError, match="must be 2-D"):
        audit_labelings(np.zeros(5, int), np.zeros(5, int), sensitive_features=[0, 1] * 2 + [0],
                        client=client)
    with pytest.raises(ValueError, match="Inconsistent numbers of rows"):
        audit_labelings(np.zeros((5, 3), int), np.zeros(4, int),
                        sensitive_features=[0, 1, 0, 1, 0], client=client)
    with pytest.raises(ValueError, match="1 distinct group"):
        audit_labelings(np.zeros((5, 3), int), np.zeros(5, int), sensitive_features=[0] * 5,
                        client=client)


def test_demo_command_writes_the_store(data_dir, tmp_path, capsys, monkeypatch):
    # on the 2-process LocalCluster it starts, as a user runs it (an in-process cluster
    # would run FKR's passes in threads of this process, sharing one GIL: 4x slower)
    monkeypatch.delenv("DASK_SCHEDULER_ADDRESS", raising=False)
    store = tmp_path / "demo.zarr"
    code = main(["demo", "--workers", "2", "--pools", "yale", "jaffe", "--fce-pools", "yale",
                 "--store", str(store), "--no-progress", "--no-safairkm", "--data-dir",
                 str(data_dir)])
    out = capsys.readouterr().out
    assert code == 0
    assert "Dask dashboard:" in out and "KM Yale" in out and "KM JAFFE" in out
    assert "FKR-F2E (paper)" in out and "constant" in out and "FCE Yale" in out
    run = open_run(store)
    assert run.kind == "demo" and run.is_complete
    assert set(run.attrs["km_table"]) == {"yale", "jaffe"}
    reports = run.read_array("km/yale/reports")
    assert reports.shape == (100, 7) and np.isfinite(reports).all()
    mean = run.attrs["km_table"]["yale"]["ACC"][0]
    assert mean == pytest.approx(reports[:, 0].mean())
    fce = run.attrs["fce_table"]["yale"]
    assert set(fce) == set(REPORT_COLUMNS) and 0 <= fce["Bal"][0] <= 1
    fkr = run.attrs["fkr_table"]
    # the constant predictor has SD 0 and the majority-class error (data README: 0.229)
    assert fkr["constant"]["disparity"] == 0.0
    assert abs(fkr["constant"]["error"] - 0.229) < 0.01
    # the claim of docs/getting_started.md (what the demo prints): the seed's paper
    # objective is exactly the constant predictor here
    assert fkr["FKR-F2E (paper)"] == fkr["constant"]
    # the disparity-bound workflow beats the constant and is fairer than kernel ridge (its
    # bound on the population's disparity leaves little room at .01 on 2,454 minority rows)
    cv = fkr[CV_METHOD]
    assert cv["error"] < fkr["constant"]["error"] - 0.005
    assert cv["disparity"] < fkr["kernel ridge"]["disparity"]


def test_demo_safairkm_section(client, data_dir):
    from daskfair.cli.demo import format_safairkm_table, safairkm_section
    from daskfair.datasets import load_dataset, preprocess_safairkm
    from daskfair.metrics import hypervolume_2d

    rows = safairkm_section(client, data_dir=data_dir, max_iter=15,
                            fairness_weights=(0.0, 400.0))
    d = load_dataset("safairkm_adult", data_dir)
    _, s = preprocess_safairkm(d.X, d.sensitive)
    assert rows["reference"]["best_balance"] == pytest.approx(
        np.bincount(s).min() / np.bincount(s).max())
    ref = (rows["reference"]["cost"], 0.0)
    for name in ("SAfairKM", "VfairKM"):
        r = rows[name]
        assert r["points"] == len(r["cost"]) >= 1
        assert np.all(np.diff(r["cost"]) > 0) and np.all(np.diff(r["balance"]) > 0)
        assert r["hypervolume"] == pytest.approx(hypervolume_2d(r["cost"], r["balance"], ref))
        assert max(r["balance"]) <= rows["reference"]["best_balance"] + 1e-12
    table = format_safairkm_table(rows)
    assert "SAfairKM" in table and "VfairKM" in table


def test_cli_errors(client, capsys):
    assert main(["demo", "--pools", "nope", "--no-fkr"]) == 2
    assert "unknown pool(s) ['nope']" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["demo", "--workers", "x"])


def test_datasets_command(data_dir, capsys):
    assert main(["datasets", "--data-dir", str(data_dir)]) == 0
    out = capsys.readouterr().out
    assert "adult" in out and "har" in out


@pytest.mark.cluster
def test_console_script_on_a_process_cluster(data_dir, tmp_path):
    """`daskfair demo` end to end in a fresh process, on a 2-process LocalCluster it starts."""
    store = tmp_path / "km.zarr"
    env = {**os.environ, "DASKFAIR_DATA": str(data_dir)}
    env.pop("DASK_SCHEDULER_ADDRESS", None)
    proc = subprocess.run(
        [sys.executable, "-m", "daskfair.cli", "demo", "--workers", "2", "--pools", "yale",
         "--fce-pools", "--no-fkr", "--no-safairkm", "--no-progress", "--store", str(store)],
        capture_output=True, text=True, timeout=300, env=env, cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "Dask cluster: 2 workers" in proc.stdout and "KM Yale" in proc.stdout
    assert open_run(store).is_complete
