"""The Examples sections of the public docstrings run, and print what they say.

Every module the API reference documents (``docs/_ext/api_pages.py``), run by ``doctest``
as ``pytest --doctest-modules`` would, so a docstring cannot drift from the code it shows.
"""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "daskfair.metrics",
    "daskfair.datasets",
    "daskfair.kernels",
    "daskfair.nystroem",
    "daskfair.fkr.estimators",
    "daskfair.fkr.cv",
    "daskfair.safairkm.alternating",
    "daskfair.safairkm.estimator",
    "daskfair.safairkm.front",
    "daskfair.safairkm.vfairkm",
    "daskfair.ensemble.consensus",
    "daskfair.ensemble.estimator",
    "daskfair.store.run",
    "daskfair.tables.encoder",
]


def test_some_modules_have_examples():
    finder = doctest.DocTestFinder()
    found = sum(len(t.examples) for t in finder.find(importlib.import_module(MODULES[0])))
    assert found > 10


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    module = importlib.import_module(name)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    for test in doctest.DocTestFinder().find(module, name):
        if test.examples:
            runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples failed"
