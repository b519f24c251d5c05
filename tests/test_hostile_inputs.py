"""The hostile input catalogue (tests/hostile_inputs.py) as tests, and fuzzing of the inputs.

* every catalogue case, on each backend it applies to: the exception type and message, or a
  result of the right length with finite values (the same as with integer group codes);
* docs/hostile_inputs.md is the catalogue rendered (one table row per case);
* hypothesis fuzzes shapes, dtypes and group layouts of the public estimators and
  ``clustering_report``: every call returns a sound result or raises one of the documented
  errors with a message; a hang (20 s) fails. ``pytest -s`` prints how many examples ran.

DASKFAIR_FUZZ_EXAMPLES sets the examples per fuzz test (default 150); DASKFAIR_FUZZ_RANDOM=1
draws new examples instead of the fixed (derandomized) sequence; DASKFAIR_FUZZ_VERBOSE=1
prints every error message met.
"""

from __future__ import annotations

import contextlib
import faulthandler
import os
import re
import signal
import time
import warnings
from collections import Counter
from dataclasses import replace
from typing import Any

import dask
import dask.array as da
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import daskfair
from daskfair import (
    FairClusteringEnsemble,
    FairKernelClassifier,
    FairKernelRegressor,
    SAFairKMeans,
)
from daskfair.cli.inputs import JobData
from daskfair.metrics import REPORT_COLUMNS, clustering_report, kmeans_cost

from .hostile_inputs import CASES, DOC, ENTRY_POINTS, NEEDS_CLIENT, render_doc, run_case

# the attacks that could hang or exhaust memory run guarded, in test_hostile_stores.py
PARAMS = [pytest.param(c, b, id=f"{c.id}/{b}") for c in CASES for b in c.backends
          if not c.guarded]
ITEMS = {  # the list: every item has cases
    "NaN/inf", "empty arrays", "one row", "one group", "group of one row",
    "groups as strings/floats/booleans", "labels out of range", "mismatched lengths",
    "unknown chunk sizes", "non-numeric columns", "K > n", "k > rank",
    "zarr store from another version", "half-written store", "path without write permission",
    "corrupt store", "store in use",  # issue 27
}


class Hang(Exception):
    """A call that did not return in time."""


@contextlib.contextmanager
def time_limit(seconds: int = 20):
    """Fail a call that takes longer than ``seconds`` (SIGALRM; a stuck compiled loop that
    never returns to Python is ended by faulthandler after 3 × ``seconds``)."""

    def alarm(signum: int, frame: Any) -> None:
        raise Hang(f"no answer after {seconds} s")

    previous = signal.signal(signal.SIGALRM, alarm)
    signal.alarm(seconds)
    faulthandler.dump_traceback_later(3 * seconds, exit=True)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
        faulthandler.cancel_dump_traceback_later()


def test_time_limit_fails_a_hang():
    with pytest.raises(Hang, match="no answer after 1 s"), time_limit(1):
        time.sleep(5)


# -- the catalogue ------------------------------------------------------------------------------

def _finite(a: Any) -> bool:
    a = np.asarray(a)
    return a.dtype.kind not in "fc" or bool(np.isfinite(a).all())


def check_result(result: Any, n: int) -> None:
    """A working call: the right number of rows, finite numbers."""
    if isinstance(result, tuple):  # pareto_front: cost, balance, labels
        cost, balance, labels = result
        assert labels.shape == (len(cost), n) and len(balance) == len(cost) >= 1
        assert _finite(cost) and _finite(balance)
    elif isinstance(result, dict):
        assert all(np.isfinite(v) for v in result.values()), result
    elif isinstance(result, JobData):
        assert len(result.X) == len(result.sensitive) == n
    elif isinstance(result, np.ndarray):
        assert result.shape[0] == n, result.shape
        assert _finite(result)
    else:
        assert np.isfinite(float(result))


def assert_same(a: Any, b: Any) -> None:
    if isinstance(a, tuple):
        assert len(a) == len(b)
        for x, y in zip(a, b, strict=True):
            assert_same(x, y)
    elif isinstance(a, dict):
        assert a.keys() == b.keys()
        for k in a:
            assert_same(a[k], b[k])
    else:
        np.testing.assert_allclose(np.asarray(a, dtype=np.float64),
                                   np.asarray(b, dtype=np.float64), rtol=1e-12, atol=1e-12)


class KnownDefect(Exception):
    """A defect case still behaves as the catalogue says it does today."""


def outcome(call: Any) -> tuple[BaseException | None, Any, list[warnings.WarningMessage]]:
    """(exception or None, result, warnings) of ``call()``."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            return None, call(), caught
        except Exception as exc:
            return exc, None, caught


def describe(exc: BaseException | None, result: Any) -> str:
    return f"{type(exc).__name__}: {exc}" if exc is not None else f"returns {result!r}"


@pytest.mark.parametrize(("case", "backend"), PARAMS)
def test_catalogue(case, backend, request):
    """The exception type and message, or a sound result (equal to ``same_as``'s).

    A defect case is a strict xfail: it fails with KnownDefect while the behaviour is the
    one recorded (``now``), passes (XPASS: update the catalogue) once fixed, and fails
    outright if the behaviour changed to something else.
    """
    expect = case.expected(backend)
    if expect.defect:
        request.applymarker(pytest.mark.xfail(strict=True, raises=KnownDefect,
                                              reason=expect.defect))
    client = None
    if case.entry in NEEDS_CLIENT and (expect.error is None or case.client):
        client = request.getfixturevalue("client")  # in-process, 2 worker threads
    scheduler = dask.config.set(scheduler="synchronous") if client is None else (
        contextlib.nullcontext())
    with scheduler, time_limit():
        exc, result, caught = outcome(lambda: run_case(case, backend, client))
        reference = None
        if case.same_as is not None and exc is None:
            reference = run_case(replace(case, build=case.same_as), backend, client)
    what = describe(exc, result)
    if expect.error is not None:
        ok = type(exc) is expect.error and re.search(expect.match, str(exc)) is not None
        problem = f"expected {expect.error.__name__} matching {expect.match!r}, got {what}"
    else:
        ok = exc is None
        problem = f"expected a result, got {what}"
    if expect.defect:
        if not ok and re.search(expect.now, what):
            raise KnownDefect(what)
        assert ok, f"the behaviour changed: {problem}"
        return
    assert ok, problem
    if expect.error is None:
        if expect.warns is not None:
            assert any(issubclass(w.category, expect.warns) for w in caught), caught
        check_result(result, case.n_out)
        if reference is not None:
            assert_same(result, reference)


def test_catalogue_is_well_formed():
    ids = [c.id for c in CASES]
    assert len(ids) == len(set(ids)), [i for i in ids if ids.count(i) > 1]
    assert {c.entry for c in CASES} <= ENTRY_POINTS.keys()
    assert ITEMS <= {c.item for c in CASES}, ITEMS - {c.item for c in CASES}
    for c in CASES:
        assert c.says and c.input and set(c.backends) <= {"numpy", "dask", "unknown", "file"}
        for b in c.backends:
            e = c.expected(b)
            assert bool(e.defect) == bool(e.now), (c.id, b)
            assert (e.error is None) != bool(e.match), (c.id, b)


def test_doc_is_the_catalogue():
    """docs/hostile_inputs.md is generated from the catalogue: one table row per case."""
    text = DOC.read_text()
    rows = [line for line in text.splitlines() if line.startswith("| `")]
    assert [r.split("`")[1] for r in rows] == [c.id for c in CASES]
    assert text == render_doc(), "run `python tests/hostile_inputs.py` to rewrite the doc"


@pytest.mark.parametrize("entry", ["pareto_front", "vfairkm_front", "base_clusterings"])
def test_bad_input_is_refused_before_a_cluster_starts(entry, monkeypatch):
    """Without ``client=``, bad input must fail before get_client starts a LocalCluster."""

    def no_cluster(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("get_client was called: a cluster would start for bad input")

    monkeypatch.setattr("daskfair.runtime.clients.get_client", no_cluster)
    X = np.ones((12, 2))
    X[3, 1] = np.nan
    s = np.arange(12) % 2
    call = {
        "pareto_front": lambda: daskfair.pareto_front(X, sensitive_features=s, n_clusters=2),
        "vfairkm_front": lambda: daskfair.vfairkm_front(X, sensitive_features=s, n_clusters=2,
                                                        fairness_weights=[0.0]),
        "base_clusterings": lambda: daskfair.base_clusterings(X, n_clusters=2),
    }[entry]
    with pytest.raises(ValueError, match="X contains NaN"):
        call()


# -- fuzzing -----------------------------------------------------------------------------------

EXAMPLES: Counter[str] = Counter()
N_EXAMPLES = int(os.environ.get("DASKFAIR_FUZZ_EXAMPLES", "150"))
FUZZ = settings(
    max_examples=N_EXAMPLES, deadline=None, database=None,
    derandomize=not os.environ.get("DASKFAIR_FUZZ_RANDOM"),
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@pytest.fixture(scope="module", autouse=True)
def _report_examples():
    yield
    for test in sorted({k.split(":")[0] for k in EXAMPLES}):
        outcomes = ", ".join(f"{k.split(':', 1)[1]} {v}" for k, v in sorted(EXAMPLES.items())
                             if k.startswith(f"{test}:") and k != f"{test}:examples")
        print(f"\n{test}: {EXAMPLES[f'{test}:examples']} examples ({outcomes})", end="")


def documented(exc: BaseException) -> bool:
    """ValueError, TypeError, or daskfair's own subclasses of them (StoreError, ...)."""
    return type(exc) in (ValueError, TypeError) or (
        isinstance(exc, ValueError | TypeError) and type(exc).__module__.startswith("daskfair"))


def attempt(test: str, call: Any) -> Any:
    """Run ``call``: its result, or None after a documented error with a message."""
    EXAMPLES[f"{test}:examples"] += 1
    try:
        with time_limit(), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = call()
    except Exception as exc:
        if not documented(exc):
            raise
        assert str(exc).strip(), f"{type(exc).__name__} without a message"
        EXAMPLES[f"{test}:raised {type(exc).__name__}"] += 1
        if os.environ.get("DASKFAIR_FUZZ_VERBOSE"):
            print(f"\n  {test}: {type(exc).__name__}: {str(exc)[:110]}", end="")
        return None
    EXAMPLES[f"{test}:returned"] += 1
    return out


def _computed(x: Any) -> np.ndarray:
    return np.asarray(x.compute() if isinstance(x, da.Array) else x)


def faults(*names: str) -> st.SearchStrategy[str | None]:
    """No fault in half of the examples, else one of ``names``."""
    return st.sampled_from([None] * len(names) + list(names))


@st.composite
def features(draw, n: int, fault: str | None) -> np.ndarray:
    """X of n rows, 1-4 columns of one of six dtypes, with ``fault`` ("nan", "inf",
    "no-columns", "strings") if given."""
    d = 0 if fault == "no-columns" else draw(st.integers(1, 4))
    kind = draw(st.sampled_from(["float64", "float64", "float32", "int64", "bool", "object"]))
    if fault in ("nan", "inf"):
        kind = "float64"
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    X = rng.normal(scale=draw(st.sampled_from([1.0, 1e-6, 1e4])), size=(n, d))
    X += draw(st.sampled_from([0.0, 0.0, 0.0, 1e6]))  # data far from the origin
    if n and draw(st.integers(0, 3)) == 0:  # repeated rows: low rank, ties
        X = X[rng.integers(0, min(n, draw(st.integers(1, 3))), size=n)]
    if fault in ("nan", "inf") and X.size:
        X.flat[draw(st.integers(0, X.size - 1))] = np.nan if fault == "nan" else np.inf
    if fault == "strings":
        X = X.astype(object)
        if X.size:
            X.flat[0] = "a string"
        return X
    if kind == "int64":
        return np.round(X * 3).astype(np.int64)
    if kind == "bool":
        return X > 0
    return X.astype(object if kind == "object" else kind)  # object: numbers, as from pandas


@st.composite
def groups(draw, n: int, fault: str | None, max_groups: int = 3) -> np.ndarray:
    """Group of every row: 2..max_groups groups (one for "one-group", one more for
    "too-many-groups"), sometimes one of a single row, as int/str/float/bool/object values."""
    J = {"one-group": 1, "too-many-groups": max_groups + 1}.get(
        fault, draw(st.integers(2, max_groups)))
    codes = np.array(draw(st.lists(st.integers(0, J - 1), min_size=n, max_size=n)), dtype=int)
    codes[:J] = np.arange(J)[:n]
    if n > J and draw(st.booleans()):  # the last group has exactly one row
        codes[codes == J - 1] = 0
        codes[draw(st.integers(0, n - 1))] = J - 1
    if fault == "short-groups" and n:
        codes = codes[:-1]
    if fault == "nan-groups" and n:
        return np.where(np.arange(len(codes)) == draw(st.integers(0, n - 1)), np.nan, codes)
    if fault == "mixed-groups":
        return np.array(["g0", 1, "g2", 3, 4][:J], dtype=object)[codes]
    kind = draw(st.sampled_from(["int", "str", "float", "bool", "object"]))
    if kind == "str":
        return np.array(["g0", "g1", "g2", "g3"])[codes]
    if kind == "object":
        return np.array(["g0", "g1", "g2", "g3"], dtype=object)[codes]
    if kind == "float":
        return codes * 0.5 - 0.25
    if kind == "bool" and J <= 2:
        return codes == 1
    return codes


@st.composite
def maybe_dask(draw, *arrays: np.ndarray) -> list[Any]:
    """The arrays as they are (3 of 4 examples) or as dask arrays of 1-10 row blocks."""
    if draw(st.integers(0, 3)):
        return list(arrays)
    rows = draw(st.integers(1, 10))
    return [da.from_array(a, chunks=(rows, *a.shape[1:])) for a in arrays]


FKR_FAULTS = ("nan", "inf", "no-columns", "strings", "tiny", "nan-y", "short-y", "one-group",
              "too-many-groups", "nan-groups", "mixed-groups", "short-groups", "k-above-rank")


@st.composite
def fkr_inputs(draw, classifier: bool) -> dict[str, Any]:
    fault = draw(faults(*FKR_FAULTS, *(("one-class", "three-classes") if classifier else ())))
    n = draw(st.integers(0, 1)) if fault == "tiny" else draw(st.integers(2, 40))
    X = draw(features(n, fault))
    s = draw(groups(n, fault, max_groups=2))
    rng = np.random.default_rng(n)
    if classifier:
        k = {"one-class": 1, "three-classes": 3}.get(fault, 2)
        y = np.arange(n) % k
        rng.shuffle(y)
        y = np.array(draw(st.sampled_from([[0, 1, 2], ["no", "yes", "maybe"],
                                           [False, True, True]])))[y]
        if fault == "nan-y" and n:
            y = np.where(np.arange(n) == 0, np.nan, (y == y[0]).astype(float))
    else:
        y = rng.normal(size=n)
        if fault == "nan-y" and n:
            y[0] = np.nan
    if fault == "short-y" and n:
        y = y[:-1]
    X, y, s = draw(maybe_dask(X, y, s))
    k = n + 1 if fault == "k-above-rank" else draw(
        st.one_of(st.none(), st.integers(1, 3), st.integers(1, max(n, 1))))
    params = {
        "kernel": draw(st.sampled_from(["rbf", "linear", "polynomial", "sigmoid"])),
        "n_fair_features": k,
        "objective": draw(st.sampled_from(["paper", "mean_discrepancy"])),
        "approximation": draw(st.sampled_from(["nystroem", "exact"])),
        "n_landmarks": draw(st.integers(1, 45)),
        "relative_alpha": draw(st.sampled_from([0.0, 1e-3, 1.0])),
        "random_state": 0,
    }
    return {"X": X, "y": y, "s": s, "n": n, "params": params}


def _fit_fkr(cls: type, inputs: dict[str, Any]) -> Any:
    est = cls(**inputs["params"]).fit(inputs["X"], inputs["y"],
                                      sensitive_features=inputs["s"])
    # the fair features (the classifier is not a transformer: its projection directly)
    Z = est.feature_map_.project(est._check_X(inputs["X"]), est.projection_)
    return est, _computed(est.predict(inputs["X"])), _computed(Z)


@FUZZ
@given(inputs=fkr_inputs(classifier=False))
def test_fuzz_fair_kernel_regressor(inputs):
    with dask.config.set(scheduler="synchronous"):
        out = attempt("FairKernelRegressor", lambda: _fit_fkr(FairKernelRegressor, inputs))
    if out is not None:
        est, pred, Z = out
        assert pred.shape == (inputs["n"],) and np.isfinite(pred).all()
        assert Z.shape == (inputs["n"], est.n_fair_features_) and np.isfinite(Z).all()


@FUZZ
@given(inputs=fkr_inputs(classifier=True))
def test_fuzz_fair_kernel_classifier(inputs):
    with dask.config.set(scheduler="synchronous"):
        out = attempt("FairKernelClassifier", lambda: _fit_fkr(FairKernelClassifier, inputs))
    if out is not None:
        est, pred, Z = out
        assert pred.shape == (inputs["n"],) and set(pred.tolist()) <= set(est.classes_.tolist())
        assert Z.shape == (inputs["n"], est.n_fair_features_) and np.isfinite(Z).all()


CLUSTER_FAULTS = ("nan", "inf", "no-columns", "strings", "tiny", "one-group", "nan-groups",
                  "mixed-groups", "short-groups", "K-above-n", "K-one")


@st.composite
def safairkm_inputs(draw) -> dict[str, Any]:
    fault = draw(faults(*CLUSTER_FAULTS))
    n = draw(st.integers(0, 1)) if fault == "tiny" else draw(st.integers(2, 40))
    X, s = draw(features(n, fault)), draw(groups(n, fault))
    X, s = draw(maybe_dask(X, s))
    K = {"K-above-n": n + 1, "K-one": 1}.get(fault, draw(
        st.sampled_from(sorted({2, min(3, n), min(5, n), max(n - 1, 2), n}))))
    params = {
        "n_clusters": K,
        "max_iter": draw(st.integers(1, 3)),
        "n_kmeans_updates": draw(st.integers(0, 25)),
        "n_swap_updates": draw(st.integers(1, 4)),
        "target": draw(st.sampled_from(["local", "global"])),
        "init": draw(st.sampled_from(["k-means++", "random"])),
        "random_state": draw(st.integers(0, 3)),
    }
    return {"X": X, "s": s, "params": params}


@FUZZ
@given(inputs=safairkm_inputs())
def test_fuzz_safairkmeans(inputs):
    def fit() -> SAFairKMeans:
        return SAFairKMeans(**inputs["params"]).fit(inputs["X"],
                                                    sensitive_features=inputs["s"])

    with dask.config.set(scheduler="synchronous"):
        est = attempt("SAFairKMeans", fit)
    if est is not None:
        X = _computed(inputs["X"]).astype(np.float64)
        K = inputs["params"]["n_clusters"]
        assert est.labels_.shape == (len(X),)
        assert np.bincount(est.labels_, minlength=K).min() >= 1  # no cluster is ever emptied
        assert est.labels_.max() < K and est.cluster_centers_.shape == (K, X.shape[1])
        assert np.isfinite(est.cluster_centers_).all() and 0 <= est.balance_ <= 1
        # both sides are Σ‖x‖² − Σ‖Σx‖²/n_k: equal up to rounding of the squared norms
        scale = 1e-9 * max(1.0, float(np.mean(X**2)))
        assert est.cost_ == pytest.approx(kmeans_cost(X, est.labels_), rel=1e-6, abs=scale)
        assert np.isfinite(est.history_).all()


FCE_FAULTS = ("negative", "nan", "fraction", "bool", "str", "no-labelings", "tiny",
              "one-group", "nan-groups", "short-groups", "c-above-n")


@st.composite
def fce_inputs(draw) -> dict[str, Any]:
    fault = draw(faults(*FCE_FAULTS))
    n = draw(st.integers(0, 1)) if fault == "tiny" else draw(st.integers(2, 40))
    m = 0 if fault == "no-labelings" else draw(st.integers(1, 4))
    cols = [np.array(draw(st.lists(st.integers(0, c - 1), min_size=n, max_size=n)), dtype=int)
            for c in draw(st.lists(st.integers(1, 5), min_size=m, max_size=m))]
    base = np.stack(cols, axis=1) if cols else np.zeros((n, 0), dtype=int)
    if fault == "negative" and base.size:
        base.flat[0] = -1
    elif fault in ("nan", "fraction") and base.size:
        base = base.astype(np.float64)
        base.flat[draw(st.integers(0, base.size - 1))] = np.nan if fault == "nan" else 0.5
    elif fault == "bool":
        base = base > 0
    elif fault == "str":
        base = base.astype(str)
    elif draw(st.booleans()):
        base = base.astype(np.float64)  # integral floats are labels too
    s = draw(groups(n, fault))
    base, s = draw(maybe_dask(base, s))
    c = n + 1 if fault == "c-above-n" else draw(
        st.one_of(st.just("auto"), st.integers(1, max(1, min(n, 5))), st.just(max(n, 1))))
    params = {
        "n_clusters": c,
        "fairness_weight": draw(st.sampled_from(["auto", 0.0, 1.0])),
        "alignment": draw(st.sampled_from(["rotation", "hungarian"])),
        "max_iter": draw(st.integers(1, 3)),
        "random_state": 0,
    }
    return {"base": base, "s": s, "n": n, "params": params}


@FUZZ
@given(inputs=fce_inputs())
def test_fuzz_fair_clustering_ensemble(inputs):
    def fit() -> Any:
        est = FairClusteringEnsemble(**inputs["params"])
        est.fit(inputs["base"], sensitive_features=inputs["s"])
        return est, _computed(est.labels_)

    with dask.config.set(scheduler="synchronous"):
        out = attempt("FairClusteringEnsemble", fit)
    if out is not None:
        est, labels = out
        c, n = est.n_clusters_, inputs["n"]
        assert labels.shape == (n,) and labels.min() >= 0 and labels.max() < c
        assert np.isfinite(est.weights_).all() and np.isfinite(est.objective_).all()
        assert est.group_counts_.shape == (len(est.groups_), c)
        np.testing.assert_array_equal(est.group_counts_.sum(axis=0),
                                      np.bincount(labels, minlength=c))


REPORT_FAULTS = ("nan-labels", "negative", "str-labels", "labels-above", "tiny", "one-group",
                 "nan-groups", "mixed-groups", "short-labels", "short-groups", "n-clusters-0")


@st.composite
def report_inputs(draw) -> dict[str, Any]:
    fault = draw(faults(*REPORT_FAULTS))
    n = draw(st.integers(0, 1)) if fault == "tiny" else draw(st.integers(2, 40))
    k = draw(st.integers(1, 4))
    c = 0 if fault == "n-clusters-0" else draw(st.one_of(st.none(), st.integers(1, 6)))
    top = (c or k) + (fault == "labels-above")
    y = np.array(draw(st.lists(st.integers(0, k - 1), min_size=n, max_size=n)), dtype=int)
    lab = np.array(draw(st.lists(st.integers(0, top - 1), min_size=n, max_size=n)),
                   dtype=int)
    if fault == "labels-above" and n:
        lab[0] = top - 1
    if n and fault in ("nan-labels", "negative"):
        lab = lab.astype(float) if fault == "nan-labels" else lab
        lab[0] = np.nan if fault == "nan-labels" else -1
    elif fault == "str-labels":
        lab = lab.astype(str)
    elif draw(st.booleans()):
        lab = lab.astype(float)
    if fault == "short-labels" and n:
        lab = lab[:-1]
    s = draw(groups(n, fault))
    y, lab, s = draw(maybe_dask(y, lab, s))
    return {"y": y, "labels": lab, "s": s, "n_clusters": c}


@FUZZ
@given(inputs=report_inputs())
def test_fuzz_clustering_report(inputs):
    def report() -> dict[str, float]:
        return clustering_report(inputs["y"], inputs["labels"], sensitive_features=inputs["s"],
                                 n_clusters=inputs["n_clusters"])

    with dask.config.set(scheduler="synchronous"):
        out = attempt("clustering_report", report)
    if out is not None:
        assert tuple(out) == REPORT_COLUMNS
        for name, value in out.items():
            assert isinstance(value, float) and 0.0 <= value <= 1.0 + 1e-12, (name, value)


def test_public_names_are_covered():
    """Every public estimator and function with data inputs is in the catalogue."""
    covered = {c.entry.split(".")[0] for c in CASES}
    for name in ("FairKernelRegressor", "FairKernelClassifier", "FairKernelRidge",
                 "SAFairKMeans", "pareto_front", "FairClusteringEnsemble", "base_clusterings",
                 "clustering_report"):
        assert name in covered and hasattr(daskfair, name)
