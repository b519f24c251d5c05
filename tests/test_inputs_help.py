"""Job inputs in every supported format give the same data; every sub-command's help."""

import numpy as np
import pandas as pd
import pytest
import zarr

from daskfair.cli import build_parser, main
from daskfair.cli.inputs import load_input, to_dask


@pytest.fixture
def frame():
    rng = np.random.default_rng(0)
    n = 50
    return pd.DataFrame({"a": rng.normal(size=n), "b": rng.integers(0, 5, n).astype(float),
                         "s": rng.integers(0, 2, n), "y": rng.integers(0, 2, n)})


def test_csv_parquet_and_zarr_inputs_agree(frame, tmp_path):
    frame.to_csv(tmp_path / "d.csv", index=False)
    frame.to_csv(tmp_path / "d.tsv", index=False, sep="\t")
    frame.to_parquet(tmp_path / "d.parquet")
    zarr.create_array(str(tmp_path / "d.zarr"), data=frame.to_numpy(np.float64),
                      chunks=(16, 4))
    want = frame[["a", "b"]].to_numpy()
    for name in ("d.csv", "d.tsv", "d.parquet"):
        got = load_input(path=tmp_path / name, label="y", sensitive="s", need_label=True)
        np.testing.assert_array_equal(got.X, want)
        np.testing.assert_array_equal(got.y, frame["y"])
        np.testing.assert_array_equal(got.sensitive, frame["s"])
        assert got.feature_names == ["a", "b"]
    z = load_input(path=tmp_path / "d.zarr", label="3", sensitive="2")
    np.testing.assert_array_equal(z.X.compute(), want)  # lazy: read block by block
    np.testing.assert_array_equal(z.y.compute(), frame["y"])
    picked = load_input(path=tmp_path / "d.csv", sensitive="s", features=["b"])
    assert picked.y is None and picked.X.shape == (50, 1)


def test_to_dask_blocks_hold_the_data(frame):
    x = frame.to_numpy(np.float64)
    d = to_dask(x, 16)
    assert d.chunks[0] == (16, 16, 16, 2)
    np.testing.assert_array_equal(d.compute(), x)


@pytest.mark.parametrize("command", ["demo", "fkr", "safairkm", "fce", "show", "plot",
                                     "datasets"])
def test_every_sub_command_has_help_with_an_example(command, capsys):
    with pytest.raises(SystemExit) as exit_:
        main([command, "--help"])
    assert exit_.value.code == 0
    text = capsys.readouterr().out
    assert "example:" in text and f"daskfair {command}" in text.split("example:")[1]


def test_job_commands_share_the_cluster_and_run_options():
    parser = build_parser()
    for command in ("fkr", "safairkm", "fce"):
        args = parser.parse_args([command, "--dataset", "adult"])
        for option in ("scheduler", "workers", "jobqueue", "jobs", "random_state", "store",
                       "no_progress", "overwrite"):
            assert hasattr(args, option), (command, option)
        assert args.store == f"daskfair-{command}.zarr"
    assert not hasattr(parser.parse_args(["fkr", "--dataset", "x"]), "resume")
    assert parser.parse_args(["fce", "--pool", "har", "--resume"]).resume


def _credit_like(n=240):
    # a table as users bring it: text categories next to numbers, text groups and labels
    rng = np.random.default_rng(1)
    purpose = rng.choice(["car", "tv", "education"], n)
    return pd.DataFrame({
        "age": rng.integers(19, 75, n), "purpose": purpose,
        "housing": rng.choice(["own", "rent"], n), "sex": rng.choice(["female", "male"], n),
        "risk": np.where(rng.random(n) < 0.3 + 0.3 * (purpose == "car"), "bad", "good")})


def test_text_feature_columns_are_one_hot_encoded(tmp_path):
    df = _credit_like()
    df.to_csv(tmp_path / "credit.csv", index=False)
    d = load_input(path=tmp_path / "credit.csv", label="risk", sensitive="sex",
                   need_label=True)
    assert d.feature_names == ["age", "housing=own", "housing=rent", "purpose=car",
                               "purpose=education", "purpose=tv"] or d.feature_names == [
        "age", "purpose=car", "purpose=education", "purpose=tv", "housing=own",
        "housing=rent"]
    names = d.feature_names
    for level in ("car", "education", "tv"):
        np.testing.assert_array_equal(d.X[:, names.index(f"purpose={level}")],
                                      (df["purpose"] == level).astype(float))
    np.testing.assert_array_equal(d.X[:, names.index("age")], df["age"])
    assert d.description["encoded"] == {"purpose": 3, "housing": 2}
    with pytest.raises(ValueError, match=r"\['purpose', 'housing'\] .* not numeric.*--no-encode"):
        load_input(path=tmp_path / "credit.csv", label="risk", sensitive="sex", encode=False)

