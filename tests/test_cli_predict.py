"""``daskfair predict`` and :func:`daskfair.predict_table`: a stored model predicts a table
of several partitions on a multi-process LocalCluster as it predicts in this process; bad
input is refused before any work, and an interrupted prediction leaves no output."""

import itertools
import json

import dask
import numpy as np
import pandas as pd
import pytest

import daskfair
from daskfair.cli import main
from daskfair.models import scoring
from daskfair.store import create_run, open_run

from .test_cli_jobs import _run, scheduler  # noqa: F401 - the module's cluster
from .test_tables import _table

pytestmark = pytest.mark.cluster


@pytest.fixture(scope="module")
def trained(scheduler, tmp_path_factory):  # noqa: F811
    """An fkr run on a table with text columns and an id, and the table."""
    root = tmp_path_factory.mktemp("trained")
    df = _table(1500).assign(id=np.arange(1500) * 7)
    df.to_csv(root / "train.csv", index=False)
    # one width: the model is these tests' input (the width's choice: test_fkr_widths.py)
    args = ["fkr", "--input", str(root / "train.csv"), "--label", "risk", "--sensitive", "sex",
            "--features", "age", "income", "purpose", "housing", "--n-landmarks", "60",
            "--gammas", "0.05", "--cv", "2", "--chunk-rows", "400", "--scheduler", scheduler,
            "--store", str(root / "m.zarr"), "--no-progress"]
    assert main(args) == 0
    return root, df


def test_predict_reproduces_the_training_runs_test_predictions(trained, scheduler, capsys):  # noqa: F811
    root, df = trained
    run = open_run(root / "m.zarr")
    rows = run.read_array("predictions/test_rows")
    test = df.iloc[rows]
    # the test rows as a Parquet folder of uneven partitions, one level the model never saw
    (root / "test").mkdir()
    cuts = [0, 100, 101, 250, len(test)]
    for i, (a, b) in enumerate(itertools.pairwise(cuts)):
        test.iloc[a:b].to_parquet(root / "test" / f"p{i}.parquet", index=False)
    code, out, err = _run(["predict", str(root / "m.zarr"), "--input", str(root / "test"),
                           "--output", str(root / "pred"), "--keep", "id", "--scheduler",
                           scheduler, "--no-progress"], capsys)
    assert code == 0, err
    assert f"{len(test):,} rows predicted in 4 partitions: id, prediction, decision, " \
           "probability" in out
    pred = pd.read_parquet(root / "pred")
    assert len(pred) == len(test) and len(list((root / "pred").glob("*.parquet"))) == 4
    np.testing.assert_array_equal(pred["id"], test["id"])
    classes = np.asarray(run.attrs["classes"])
    np.testing.assert_array_equal(pred["prediction"],
                                  classes[run.read_array("predictions/test").astype(int)])
    # the same bits as the loaded model in this process, and σ of the decision
    model = daskfair.load(root / "m.zarr")
    np.testing.assert_array_equal(pred["decision"], model.decision_function(test))
    np.testing.assert_allclose(pred["probability"], 1 / (1 + np.exp(-pred["decision"])),
                               rtol=1e-12)
    assert json.loads((root / "pred" / "_daskfair.json").read_text())["rows"] == len(test)


def test_unseen_levels_are_counted_on_the_client(trained, scheduler, capsys):  # noqa: F811
    root, df = trained
    new = df.drop(columns=["risk", "sex"]).iloc[:300].copy()
    new.loc[new.index[:7], "purpose"] = "yacht"
    new.loc[new.index[5:9], "housing"] = "castle"
    new.to_csv(root / "new.csv", index=False)
    code, out, err = _run(["predict", str(root / "m.zarr"), "--input", str(root / "new.csv"),
                           "--output", str(root / "new_pred"), "--scheduler", scheduler,
                           "--no-progress"], capsys)
    assert code == 0, err
    assert "7 rows have a level of 'purpose' the model never saw" in out
    assert "4 rows have a level of 'housing' the model never saw" in out
    report = json.loads((root / "new_pred" / "_daskfair.json").read_text())
    assert report["unseen"] == {"housing": 4, "purpose": 7}


def test_bad_input_is_refused_before_any_work(trained, scheduler, capsys):  # noqa: F811
    root, df = trained
    df.drop(columns=["purpose"]).to_csv(root / "no_purpose.csv", index=False)
    df.assign(age=df["age"].astype(str) + " years").to_csv(root / "text_age.csv",
                                                           index=False)
    (root / "foreign").mkdir()
    (root / "foreign" / "notes.txt").write_text("mine")
    fce = create_run(root / "fce.zarr", kind="fce")
    fce.mark_complete()
    common = ["--scheduler", scheduler, "--no-progress"]
    cases = [
        ([str(root / "m.zarr"), "--input", str(root / "no_purpose.csv"), "--output",
          str(root / "o1")], "has no column(s) ['purpose']"),
        ([str(root / "m.zarr"), "--input", str(root / "text_age.csv"), "--output",
          str(root / "o2")], "column 'age' holds text in the table"),
        ([str(root / "m.zarr"), "--input", str(root / "train.csv"), "--output",
          str(root / "o3"), "--keep", "nope"], "has no column(s) ['nope']"),
        ([str(root / "m.zarr"), "--input", str(root / "train.csv"), "--output",
          str(root / "foreign")], "is not a predictions folder daskfair wrote"),
        ([str(root / "fce.zarr"), "--input", str(root / "train.csv"), "--output",
          str(root / "o4")], "'fce' run, which has no model for new rows"),
        ([str(root / "m.zarr"), "--input", str(root / "train.csv"), "--output",
          str(root / "o5"), "--front-point", "0"], "--front-point and --balance are for"),
    ]
    for args, message in cases:
        code, _, err = _run(["predict", *args, *common], capsys)
        assert code == 2, (args, err)
        assert message in err, (args, err)
    assert not any((root / f"o{i}").exists() for i in range(1, 6))
    assert (root / "foreign" / "notes.txt").read_text() == "mine"
    # predictions daskfair wrote are replaced with --overwrite only
    args = ["predict", str(root / "m.zarr"), "--input", str(root / "train.csv"), "--output",
            str(root / "twice"), *common]
    assert _run(args, capsys)[0] == 0
    code, _, err = _run(args, capsys)
    assert code == 2 and "--overwrite" in err
    assert _run([*args, "--overwrite"], capsys)[0] == 0


def test_a_failed_or_interrupted_prediction_leaves_no_output(trained, monkeypatch, tmp_path):
    root, df = trained
    model = daskfair.load(root / "m.zarr")
    table = df.drop(columns=["risk", "sex"])
    parts = [table.iloc[i:i + 300] for i in range(0, 1500, 300)]
    for i, p in enumerate(parts):
        p.to_parquet(tmp_path / f"p{i}.parquet", index=False)
    real = scoring._write_part

    def stop_at_the_third(part, scorer, keep, folder, i):
        if i == 2:
            raise KeyboardInterrupt
        return real(part, scorer, keep, folder, i)

    monkeypatch.setattr(scoring, "_write_part", stop_at_the_third)
    out = tmp_path / "out"
    with dask.config.set(scheduler="synchronous"), pytest.raises(KeyboardInterrupt):
        daskfair.predict_table(model, str(tmp_path / "p*.parquet"), out)
    assert not out.exists() and not list(tmp_path.glob(".out.partial-*"))
    monkeypatch.setattr(scoring, "_write_part", real)
    # a bad value in a later partition fails on the worker: no output either
    table.iloc[1200:1201].assign(age=np.nan).to_parquet(tmp_path / "p4.parquet", index=False)
    with dask.config.set(scheduler="synchronous"), \
            pytest.raises(ValueError, match="missing values"):
        daskfair.predict_table(model, str(tmp_path / "p*.parquet"), out)
    assert not out.exists() and not list(tmp_path.glob(".out.partial-*"))


def test_predict_a_point_of_a_safairkm_front(scheduler, tmp_path, capsys):  # noqa: F811
    df = _table(500).drop(columns=["risk"]).assign(id=np.arange(500))
    df.to_csv(tmp_path / "people.csv", index=False)
    code, _, err = _run(["safairkm", "--input", str(tmp_path / "people.csv"), "--sensitive",
                         "sex", "--features", "age", "income", "purpose", "housing",
                         "--n-clusters", "3", "--n-init", "4", "--max-iter", "6",
                         "--vfairkm-fairness-weights", "0", "--store",
                         str(tmp_path / "front.zarr"), "--no-progress"], capsys)
    assert code == 0, err
    front = daskfair.ParetoFront.from_store(tmp_path / "front.zarr")
    target = float(np.median(front.balance))
    i = int(np.argmin(np.abs(front.balance - target)))
    for flag, value in (("--front-point", str(i)), ("--balance", str(target))):
        out = tmp_path / f"c{flag}"
        code, _, err = _run(["predict", str(tmp_path / "front.zarr"), flag, value, "--input",
                             str(tmp_path / "people.csv"), "--output", str(out), "--keep",
                             "id", "--scheduler", scheduler, "--no-progress"], capsys)
        assert code == 0, err
        pred = pd.read_parquet(out)
        model = daskfair.load(tmp_path / "front.zarr", front_point=i)
        assert [n for n, _ in model.steps] == ["encode", "scale", "model"]
        np.testing.assert_array_equal(pred["cluster"], model.predict(df))
    # the rows of the front are its own: their nearest centers are the point's clusters
    # where the swaps left them (most rows)
    assert (pred["cluster"].to_numpy() == front.labels[i]).mean() > 0.5
    code, _, err = _run(["predict", str(tmp_path / "front.zarr"), "--input",
                         str(tmp_path / "people.csv"), "--output", str(tmp_path / "x"),
                         "--scheduler", scheduler], capsys)
    assert code == 2 and "choose one with --front-point" in err
