"""docs/vocabulary.md against the code: every parameter of every public estimator and
function, and every command-line flag, is listed there; every renamed name still works and
warns once with its replacement."""

from __future__ import annotations

import argparse
import inspect
import re
import warnings
from pathlib import Path

import numpy as np
import pytest

import daskfair
from daskfair._deprecation import DEPRECATED
from daskfair.cli.parser import build_parser

PAGE = Path(__file__).resolve().parents[1] / "docs" / "vocabulary.md"


def _table(title: str) -> list[list[str]]:
    text = PAGE.read_text()
    section = text.split(f"## {title}\n", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| ")]
    return [[cell.strip() for cell in row.strip("|").split("|")] for row in rows[1:]]


def _names(cell: str) -> set[str]:
    return set(re.findall(r"`([^`=]+?)(?:=[^`]*)?`", cell))


PARAMETERS = set().union(*(_names(r[0]) for r in _table("Parameters")))
EXECUTION = set().union(
    *(_names(r[0]) for r in _table("Execution (never an algorithm parameter)")))
CLI_ONLY = set().union(*(_names(r[0]) for r in _table("Command line")))
RENAMED = {old: new for r in _table("Renamed") for old in _names(r[0])
           for new in sorted(_names(r[1]))[:1]}

ESTIMATORS = ["FairKernelRegressor", "FairKernelClassifier", "FairKernelRidge",
              "FairKernelClassifierCV", "FairKernelRegressorCV", "SAFairKMeans", "VFairKMeans",
              "FairClusteringEnsemble"]
FUNCTIONS = ["pareto_front", "vfairkm_front", "sa2gd", "sa2gd_front", "base_clusterings"]
# a function's data arguments are not parameters of the vocabulary
DATA = {"X", "y", "base_labels", "grad_a", "grad_b", "x0", "self"}


def test_the_page_parses():
    assert len(PARAMETERS) > 40 and len(CLI_ONLY) > 20 and len(RENAMED) > 25
    assert RENAMED["alpha"] == "relative_alpha" and RENAMED["--seed"] == "--random-state"


@pytest.mark.parametrize("name", ESTIMATORS)
def test_every_estimator_parameter_is_in_the_vocabulary(name):
    est = getattr(daskfair, name)
    params = est().get_params() if name != "SAFairKMeans" else est(n_clusters=2).get_params()
    for param, value in params.items():
        if isinstance(value, str) and value == DEPRECATED:
            assert param in RENAMED, f"{name}.{param} is deprecated but not in 'Renamed'"
        else:
            assert param in PARAMETERS, f"{name}.{param} is not on docs/vocabulary.md"


@pytest.mark.parametrize("name", FUNCTIONS)
def test_every_function_parameter_is_in_the_vocabulary(name):
    func = getattr(daskfair, name)
    for param in inspect.signature(func).parameters.values():
        if param.name in DATA or param.kind is param.VAR_KEYWORD:
            continue
        assert param.name in PARAMETERS | EXECUTION, (
            f"{name}({param.name}=...) is not on docs/vocabulary.md")


def _flags() -> dict[str, set[str]]:
    """Every long flag of every subcommand: visible and hidden (SUPPRESS) ones apart."""
    out = {"visible": set(), "hidden": set()}

    def walk(parser: argparse.ArgumentParser) -> None:
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for sub in action.choices.values():
                    walk(sub)
                continue
            kind = "hidden" if action.help == argparse.SUPPRESS else "visible"
            out[kind] |= {o for o in action.option_strings if o.startswith("--")}

    walk(build_parser())
    return out


def test_every_flag_spells_a_parameter_or_is_listed():
    flags = _flags()
    for flag in flags["visible"] - {"--help"}:
        as_param = flag[2:].replace("-", "_")
        assert as_param in PARAMETERS | EXECUTION or flag in CLI_ONLY, (
            f"{flag} is neither a library parameter with dashes nor on the page")
    # every hidden flag is an old name with its replacement visible
    assert flags["hidden"], "no renamed flag left: drop this assertion with the old names"
    for flag in flags["hidden"]:
        assert flag in RENAMED and RENAMED[flag] in flags["visible"], flag


@pytest.mark.parametrize("old", sorted(o for o in RENAMED if o.startswith("--")))
def test_an_old_flag_warns_and_sets_what_the_new_one_sets(old, capsys):
    new = RENAMED[old]
    parser = build_parser()
    command = next(c for c in ("fkr", "safairkm", "fce")
                   if old in _subflags(parser, c, hidden=True))
    value = {"--update-pairs": ["3,1"], "--fairness-weight": ["0.5"],
             "--constraints": ["equalized_odds"]}.get(new, ["3"])
    a = parser.parse_args([command, "--pool" if command == "fce" else "--dataset", "x",
                           old, *value])
    err = capsys.readouterr().err
    b = parser.parse_args([command, "--pool" if command == "fce" else "--dataset", "x",
                           new, *value])
    assert vars(a) == vars(b)
    assert f"'{old}' is renamed '{new}'" in err and err.count("renamed") == 1
    assert "renamed" not in capsys.readouterr().err


def _subflags(parser: argparse.ArgumentParser, command: str, hidden: bool) -> set[str]:
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return {o for a in sub.choices[command]._actions for o in a.option_strings
            if (a.help == argparse.SUPPRESS) == hidden}


FKR_OLD = [
    ("FairKernelRegressor", {"alpha": 1e-3}, {"relative_alpha": 1e-3}),
    ("FairKernelRegressor", {"n_components": 3}, {"n_fair_features": 3}),
    ("FairKernelClassifier", {"fairness": 1.0}, {"fairness_weight": 1.0}),
    ("FairKernelRidge", {"mu": 2.0}, {"fairness_weight": 2.0}),
    ("FairKernelRidge", {"alpha": 1e-3}, {"relative_alpha": 1e-3}),
    ("FairKernelClassifierCV", {"alphas": (1e-3,)}, {"relative_alphas": (1e-3,)}),
    ("FairKernelClassifierCV", {"n_components": (2,)}, {"fair_feature_counts": (2,)}),
    ("FairKernelRegressorCV", {"fairness": (1.0,)}, {"fairness_weights": (1.0,)}),
    ("FairKernelRegressorCV", {"gamma": 0.3}, {"gammas": 0.3}),
]


def _fkr_data(n=240):
    rng = np.random.default_rng(0)
    s = rng.integers(0, 2, n)
    X = rng.normal(size=(n, 3)) + s[:, None]
    y = (X[:, 0] + 0.5 * rng.normal(size=n) > 0.5).astype(int)
    return X, y, s


@pytest.mark.parametrize("name, old, new", FKR_OLD)
def test_an_old_fkr_name_warns_once_and_fits_the_same_model(name, old, new):
    X, y, s = _fkr_data()
    cls = getattr(daskfair, name)
    base = {"n_landmarks": 40, "random_state": 0}
    if "CV" in name:
        base.update(cv=3, strengths=(0.0, 1.0))
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        a = cls(**base, **old).fit(X, y, sensitive_features=s)
    messages = [str(w.message) for w in seen if issubclass(w.category, FutureWarning)]
    (key,), (replacement,) = old, new
    assert len(messages) == 1 and f"'{key}' is renamed '{replacement}'" in messages[0]
    assert seen[0].filename == __file__  # it points at the caller's line
    with warnings.catch_warnings():
        warnings.simplefilter("error", FutureWarning)
        b = cls(**base, **new).fit(X, y, sensitive_features=s)
    np.testing.assert_array_equal(a.dual_coef_, b.dual_coef_)
    np.testing.assert_array_equal(a.predict(X), b.predict(X))


def test_renamed_attributes_warn_and_convert():
    X, y, s = _fkr_data()
    cv = daskfair.FairKernelClassifierCV(cv=3, n_landmarks=40, strengths=(0.0, 1.0),
                                         random_state=0).fit(X, y, sensitive_features=s)
    with pytest.warns(FutureWarning, match="'best_error_' is renamed 'best_score_'"):
        assert cv.best_error_ == 1 - cv.best_score_
    est = daskfair.FairKernelRegressor(n_fair_features=2, n_landmarks=40,
                                       random_state=0).fit(X, y, sensitive_features=s)
    with pytest.warns(FutureWarning, match="'n_components_' is renamed 'n_fair_features_'"):
        assert est.n_components_ == 2


def test_an_old_and_a_new_name_together_are_refused():
    X, y, s = _fkr_data()
    with pytest.raises(ValueError, match="both 'alpha' \\(renamed\\) and 'relative_alpha'"):
        daskfair.FairKernelRegressor(alpha=1e-3, relative_alpha=1e-2).fit(
            X, y, sensitive_features=s)
    # the new name at its default: the old one is taken (with its warning)
    with pytest.warns(FutureWarning, match="'alpha' is renamed"):
        daskfair.FairKernelRegressor(alpha=1e-3, n_landmarks=40).fit(
            X, y, sensitive_features=s)
