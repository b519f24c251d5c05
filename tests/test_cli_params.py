"""cli/params.py: flags to parameters, and library errors worded as the flags."""

from __future__ import annotations

import pytest

from daskfair.cli.params import as_flags, params_for, stored_params
from daskfair.cli.parser import build_parser, subparser


@pytest.mark.parametrize("message, worded", [
    ("min_group_size must be an integer >= 1, got 0.",
     "--min-group-size must be an integer >= 1, got 0."),
    ("merge them with small_groups='merge', lower min_group_size, or drop them",
     "merge them with --small-groups merge, lower --min-group-size, or drop them"),
    ("or a lower min_group_size.", "or a lower --min-group-size."),
    ("continue it with resume=True, or pass overwrite=True to replace it.",
     "continue it with --resume, or pass --overwrite to replace it."),
    ("break the lock with daskfair.store.break_lock(path), then resume=True.",
     "break the lock with --break-lock, then --resume."),
    ("give only n_clusters=... .", "give only --n-clusters ... ."),
    ("choose another path for store=.", "choose another path for --store."),
    # a word, a path, a quoted column name and a dotted name stay as they are
    ("the kernel of the store", "the kernel of the store"),
    ("cannot write /data/max_iter.zarr", "cannot write /data/max_iter.zarr"),
    ("no column 'small_groups'", "no column 'small_groups'"),
    ("self.n_clusters", "self.n_clusters"),
])
def test_library_errors_are_worded_as_the_flags(message, worded):
    assert as_flags(message, subparser(build_parser(), "safairkm")) == worded


def test_a_target_gets_the_flags_its_signature_names():
    from daskfair import FairClusteringEnsemble

    args = build_parser().parse_args(["fce", "--pool", "har", "--n-clusters", "4",
                                      "--consensus-weight", "0.01"])
    params = params_for(args, FairClusteringEnsemble, skip=("min_group_size",))
    assert params["n_clusters"] == 4 and params["consensus_weight"] == 0.01
    assert "min_group_size" not in params and "store" not in params
    assert "store" not in stored_params(args) and stored_params(args)["pool"] == "har"


def test_a_parameter_check_message_opens_with_the_flag():
    parser = subparser(build_parser(), "fkr")
    assert as_flags("cv must be an integer from 2 to 50, got 1.", parser) == (
        "--cv must be an integer from 2 to 50, got 1.")
    assert as_flags("kernel must be one of ('rbf',), got 'x'.", parser) == (
        "--kernel must be one of ('rbf',), got 'x'.")
    # a message that does not open with a check keeps its words
    assert as_flags("cv folds need two groups", parser) == "cv folds need two groups"


@pytest.mark.parametrize("args, message", [
    (["fkr", "--label", "y", "--n-fair-features", "5", "--relative-alpha", "nan"],
     "--relative-alpha must be a finite number >= 0, got nan."),
    (["fkr", "--label", "y", "--relative-alpha", "0.1"],
     "--relative-alpha applies to FKR-F²E (--n-fair-features ...); the CV selection"),
    (["fkr", "--label", "y", "--fairness-weight", "0.5"],
     "--fairness-weight applies to FKR-F²E (--n-fair-features ...)"),
    (["fkr", "--label", "y", "--n-fair-features", "5", "--fairness-weight", "inf"],
     "--fairness-weight must be None or a finite number >= 0, got inf."),
    (["fkr", "--label", "y", "--test-size", "1.5"],
     "--test-size must be a finite number in (0, 1), got 1.5."),
    (["fkr", "--label", "y", "--disparity-confidence", "2"],
     "--disparity-confidence must be None or a finite number in [0.5, 1), got 2.0."),
    (["fkr", "--label", "y", "--cv", "1"], "--cv must be an integer from 2 to 50"),
    (["fkr", "--label", "y", "--task", "regression", "--n-landmarks", "0"],
     "--n-landmarks must be 'auto' or an integer >= 1, got 0."),
    (["safairkm", "--n-clusters", "1"], "--n-clusters must be an integer >= 2"),
    (["safairkm", "--rows", "0"], "--rows must be None or an integer >= 1, got 0."),
    (["safairkm", "--vfairkm-fairness-weights", "-1"],
     "--vfairkm-fairness-weights must be a non-empty list of values, each a finite number"),
    (["fce", "--n-clusters", "3", "--n-runs", "0"], "--n-runs must be an integer >= 1, got 0."),
    (["fce", "--tol", "-1"], "--tol must be a finite number >= 0, got -1.0."),
    (["fce"], "clustering features needs --n-clusters C (or --base-n-clusters C)"),
])
def test_a_job_refuses_its_parameters_before_a_cluster_or_the_data(args, message, tmp_path,
                                                                   capsys):
    from daskfair.cli import main

    # the scheduler does not exist and neither does the input: either reached first would
    # fail with another message
    missing = ["--input", str(tmp_path / "none.csv"), "--sensitive", "s",
               "--scheduler", "tcp://127.0.0.1:9", "--store", str(tmp_path / "x.zarr")]
    assert main([*args, *missing]) == 2
    err = capsys.readouterr().err
    assert message in err, err
    assert not (tmp_path / "x.zarr").exists()


@pytest.mark.parametrize("args", [["fkr", "--test-siz", "0.3"], ["fkr", "--disparity", "0.1"],
                                  ["audit", "--conf", "0.9", "--input", "a.csv", "--label",
                                   "y", "--sensitive", "s"]])
def test_no_flag_stands_for_another(args, capsys):
    """Parsing without abbreviations: a prefix of a flag is an unknown flag, not that flag."""
    from daskfair.cli import main

    with pytest.raises(SystemExit) as exit_:
        main(args)
    assert exit_.value.code == 2
    assert f"unrecognized arguments: {args[1]}" in capsys.readouterr().err
