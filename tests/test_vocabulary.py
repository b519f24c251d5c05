"""docs/vocabulary.md against the code: one name per concept, from the flag to the stored key.

Every parameter of every public estimator, method and function, every ``dest`` of the
command line's parser and every key a run stores is a name of the page; each name is on one
row (one meaning); every name of the page is used; a flag that sets a library parameter is
that parameter with dashes.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import inspect
import re
import sys
from pathlib import Path

import numpy as np
import pytest
from sklearn.base import BaseEstimator

import daskfair
from daskfair.cli.params import stored_params
from daskfair.cli.parser import build_parser, subparser

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "vocabulary.md"
sys.path.insert(0, str(ROOT / "docs" / "_ext"))
from api_pages import MODULES  # noqa: E402

LIBRARY_SECTIONS = ("Parameters", "Execution", "Data",
                    "Data sets, tables, stores and clusters")


def _rows(title: str) -> list[list[str]]:
    section = PAGE.read_text().split(f"\n## {title}\n", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| ")]
    return [[cell.strip() for cell in row.strip("|").split("|")] for row in rows[1:]]


def _names(cell: str) -> list[str]:
    return re.findall(r"`([^`]+)`", cell)


LIBRARY = {title: [n for row in _rows(title) for n in _names(row[0])]
           for title in LIBRARY_SECTIONS}
NAMES = {n for names in LIBRARY.values() for n in names}
CLI_ONLY = {dest: flag for row in _rows("Command line")
            for flag, dest in zip(_names(row[0]), _names(row[1]), strict=True)}
STORED = {n for row in _rows("Stored keys") for n in _names(row[0])}


def _public_callables():
    """(label, callable) of every public function, estimator and estimator method."""
    seen = set()
    for module in ["daskfair", *(m for m, _ in MODULES)]:
        mod = importlib.import_module(module)
        for name in mod.__all__:
            obj = getattr(mod, name)
            if id(obj) in seen or not getattr(obj, "__module__", "").startswith("daskfair"):
                continue
            seen.add(id(obj))
            if inspect.isclass(obj):
                if dataclasses.is_dataclass(obj):
                    continue  # records the library makes, not calls a user makes
                if issubclass(obj, BaseEstimator):
                    yield f"{name}()", obj
                for meth, f in inspect.getmembers(obj, inspect.isfunction):
                    if not meth.startswith("_") and f.__module__.startswith("daskfair"):
                        yield f"{name}.{meth}", f
            elif callable(obj):
                yield name, obj


def _parameters(f) -> list[str]:
    return [p for p, par in inspect.signature(f).parameters.items()
            if p not in ("self", "cls") and par.kind not in (par.VAR_KEYWORD, par.VAR_POSITIONAL)]


PUBLIC = list(_public_callables())
USED = {p for _, f in PUBLIC for p in _parameters(f)}


def _dests() -> dict[str, argparse.Action]:
    parser = build_parser()
    out = {}
    for command in ("demo", "fkr", "safairkm", "fce", "predict", "audit", "show", "plot",
                    "datasets"):
        for action in subparser(parser, command)._actions:
            if action.option_strings and action.dest != "help":
                out[action.dest] = action
    for action in parser._actions:
        if action.option_strings and action.dest not in ("help",):
            out[action.dest] = action
    return out


DESTS = _dests()


def test_the_page_parses_and_has_no_renamed_section():
    assert len(NAMES) > 100 and len(CLI_ONLY) > 20 and len(STORED) >= 5
    assert "Renamed" not in PAGE.read_text() and "deprecated" not in PAGE.read_text()


def test_every_name_is_on_one_row():
    every = [n for names in LIBRARY.values() for n in names] + list(CLI_ONLY) + list(STORED)
    twice = sorted({n for n in every if every.count(n) > 1})
    assert not twice, f"names on two rows (two meanings?): {twice}"


@pytest.mark.parametrize("label, f", PUBLIC, ids=[label for label, _ in PUBLIC])
def test_every_public_parameter_is_in_the_vocabulary(label, f):
    missing = [p for p in _parameters(f) if p not in NAMES]
    assert not missing, f"{label} takes {missing}, which docs/vocabulary.md does not list"


@pytest.mark.parametrize("name", ["FairKernelRegressor", "FairKernelClassifier",
                                  "FairKernelRidge", "FairKernelClassifierCV",
                                  "FairKernelRegressorCV", "SAFairKMeans", "VFairKMeans",
                                  "FairClusteringEnsemble", "TableEncoder"])
def test_every_get_params_key_is_a_parameter(name):
    params = getattr(daskfair, name)().get_params()
    assert set(params) <= set(LIBRARY["Parameters"]), set(params) - set(LIBRARY["Parameters"])


def test_every_name_of_the_page_is_used():
    unused = NAMES - USED - STORED - set(CLI_ONLY) - set(DESTS)
    assert not unused, f"docs/vocabulary.md lists names nothing takes: {sorted(unused)}"
    assert set(CLI_ONLY) <= set(DESTS), set(CLI_ONLY) - set(DESTS)


def test_every_flag_is_a_parameter_with_dashes_or_listed():
    for dest, action in DESTS.items():
        flag = max(action.option_strings, key=len)
        if dest in CLI_ONLY:
            assert flag == CLI_ONLY[dest] or flag in CLI_ONLY.values(), (dest, flag)
        else:
            assert dest in NAMES, f"{flag} sets {dest!r}: not a library name nor listed"
            assert flag == "--" + dest.replace("_", "-"), (flag, dest)


@pytest.mark.parametrize("argv", [
    ["fkr", "--dataset", "adult"],
    ["safairkm", "--dataset", "safairkm_adult"],
    ["fce", "--pool", "har"],
])
def test_every_key_the_command_line_stores_is_a_name(argv):
    keys = set(stored_params(build_parser().parse_args(argv)))
    assert keys <= NAMES | set(CLI_ONLY), keys - NAMES - set(CLI_ONLY)


def test_every_key_the_methods_store_is_a_name(tmp_path):
    from daskfair import FairClusteringEnsemble, make_fair_blobs, open_run, pareto_front

    X, s, _ = (np.asarray(a) for a in make_fair_blobs(60, n_clusters=2, random_state=0))
    pareto_front(X, sensitive_features=s, n_clusters=2, n_init=2, max_iter=2,
                 random_state=0, store=str(tmp_path / "front.zarr"))
    base = np.column_stack([np.arange(60) % 2, (np.arange(60) // 2) % 2])
    FairClusteringEnsemble(2, random_state=0, max_iter=2).fit(
        base, sensitive_features=s, store=str(tmp_path / "fce.zarr"))
    for store in ("front.zarr", "fce.zarr"):
        keys = set(open_run(tmp_path / store).params)
        assert keys <= NAMES | STORED, (store, keys - NAMES - STORED)


def test_every_result_key_of_the_fkr_job_is_a_name():
    """The keys of the ``fkr`` job's results and selection (test_cli_jobs.py runs the job;
    here the keys its code writes, read from its source)."""
    source = (ROOT / "daskfair" / "cli" / "fkr_job.py").read_text()
    written = set(re.findall(r'"(validation_\w+|disparity|error)"', source))
    assert written and written <= STORED | NAMES, written - STORED - NAMES
