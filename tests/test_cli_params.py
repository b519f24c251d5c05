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
