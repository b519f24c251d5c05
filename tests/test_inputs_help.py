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
        for option in ("scheduler", "workers", "jobqueue", "jobs", "seed", "store",
                       "no_progress", "overwrite"):
            assert hasattr(args, option), (command, option)
        assert args.store == f"daskfair-{command}.zarr"
    assert not hasattr(parser.parse_args(["fkr", "--dataset", "x"]), "resume")
    assert parser.parse_args(["fce", "--pool", "har", "--resume"]).resume
