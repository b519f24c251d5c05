"""The Examples sections of the public docstrings run, and print what they say.

Every module the API reference documents (``docs/_ext/api_pages.py``), run by ``doctest``
as ``pytest --doctest-modules`` would, so a docstring cannot drift from the code it shows.
The examples that load a real data set run where the data are (as the tests that need them).
"""

from __future__ import annotations

import doctest
import importlib
import os
from pathlib import Path

import pytest

DATA = Path(os.environ.get("DASKFAIR_DATA",
                           Path(__file__).resolve().parents[2] / "shared" / "data"))
LOADERS = ("load_dataset(", "load_fce_pool(")

MODULES = [
    "daskfair.metrics.clustering",
    "daskfair.metrics.fairness",
    "daskfair.datasets.loaders",
    "daskfair.datasets.pools",
    "daskfair.datasets.synthetic",
    "daskfair.kernels",
    "daskfair.nystroem",
    "daskfair.fkr.estimators",
    "daskfair.fkr.fkrr",
    "daskfair.fkr.cv",
    "daskfair.safairkm.alternating",
    "daskfair.safairkm.estimator",
    "daskfair.safairkm.front",
    "daskfair.safairkm.pareto",
    "daskfair.safairkm.vfairkm",
    "daskfair.ensemble.base",
    "daskfair.ensemble.consensus",
    "daskfair.ensemble.estimator",
    "daskfair.ensemble.selection",
    "daskfair.store.access",
    "daskfair.store.run",
    "daskfair.tables.encoder",
    "daskfair.tables.read",
]


def test_some_modules_have_examples():
    finder = doctest.DocTestFinder()
    found = sum(len(t.examples) for name in MODULES[:2]  # the metrics
                for t in finder.find(importlib.import_module(name)))
    assert found > 10


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    module = importlib.import_module(name)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    have_data = (DATA / "SHA256SUMS").exists()
    for test in doctest.DocTestFinder().find(module, name):
        needs_data = any(loader in e.source for e in test.examples for loader in LOADERS)
        if test.examples and (have_data or not needs_data):
            runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples failed"
