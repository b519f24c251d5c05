"""Hostile arrays on every public entry point, drawn by hypothesis.

``tests/test_fuzz.py`` runs this file in a child process with ``NUMBA_BOUNDSCHECK=1``: an
index a kernel was handed unchecked raises IndexError there instead of reading or writing
outside an array, and a signal ends the child, which the test reports.

Each entry point is called on inputs drawn from every dtype a user may hold (bool, int8 to
uint64, float16 to float64, object, text, categoricals, Arrow), every awkward shape (0 rows,
1 row, 1 column, K > n, a length that does not match), NaN, ±inf, huge, negative and sparse
values, constant columns, as numpy, pandas or dask (5-row blocks, or unknown chunk sizes).
An example passes when it ends in a result or in a ValueError or TypeError with a message;
anything else (another exception, an empty message, over a minute) is a failure, shrunk by
hypothesis to a small input.

``python tests/fuzz_entry_points.py [--examples N] [--entry NAME ...] [--seed S]`` prints
one JSON object: ``boundscheck`` (numba's switch, and whether a kernel handed a label out of
range raised IndexError), and per entry point the examples run, their outcomes, the distinct
error messages (numbers masked) and the failures, each with its falsifying input.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import re
import signal
import sys
import tempfile
import time
import traceback
import warnings
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import dask
import dask.array as da
import hypothesis
import numpy as np
import pandas as pd
import pyarrow as pa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

#: The packages whose errors speak to the user: daskfair's own checks and scikit-learn's
#: validation (a message from inside numpy, SciPy, pandas or dask is a failure).
RAISED_BY = ("daskfair", "sklearn")

#: Messages of numpy's and Python's own errors, raised from compiled code (their last frame
#: is the daskfair line that called it): each is a check daskfair lacks.
RAW = re.compile(r"ufunc|__array_ufunc__|casting rule|must not contain infs|could not convert"
                 r"|unhashable type|object is not|not supported between instances"
                 r"|unsupported operand|out of bounds|invalid literal|cannot convert")

#: Seconds one example may take.
EXAMPLE_SECONDS = 60

NUMERIC = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
           "float16", "float32", "float64")
ROWS = (0, 1, 2, 3, 7, 16, 16, 40, 40, 40)


# -- columns -------------------------------------------------------------------------------------

def _numeric_values(draw: Any, n: int, dtype: str) -> np.ndarray:
    """``n`` values of ``dtype`` from one of the value profiles."""
    profile = draw(st.sampled_from(("small", "constant", "wide", "nan", "inf", "huge",
                                    "negative", "sparse")))
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    if dtype == "bool":
        return (rng.random(n) < 0.5) if profile != "constant" else np.ones(n, bool)
    info = np.iinfo(dtype) if dtype[0] in "iu" else np.finfo(dtype)
    values = rng.normal(size=n) * 3
    if profile == "constant":
        values = np.full(n, 2.0)
    elif profile == "wide":
        values = rng.uniform(float(info.min) / 4, float(info.max) / 4, n)
    elif profile == "huge":
        values = np.where(rng.random(n) < 0.5, float(info.max), float(info.min))
    elif profile == "negative":
        values = -np.abs(values) - 1
    elif profile == "sparse":
        values = rng.choice([0.0, 1e9, -1e9, 2.0**62], n)
    if dtype[0] in "iu":
        values = np.clip(np.round(values), float(info.min), float(info.max))
        # clip in float64 may round past the type's end: take the integers exactly
        out = np.empty(n, dtype)
        for i, v in enumerate(values):
            out[i] = max(int(info.min), min(int(info.max), int(v)))
        return out
    out = values.astype(dtype)
    if profile in ("nan", "inf") and n:
        hit = rng.random(n) < 0.3
        hit[rng.integers(n)] = True
        out[hit] = np.nan if profile == "nan" else np.inf * rng.choice([-1, 1])
    return out


@st.composite
def numeric_column(draw: Any, n: int) -> np.ndarray:
    return _numeric_values(draw, n, draw(st.sampled_from(NUMERIC)))


@st.composite
def any_column(draw: Any, n: int) -> Any:
    """A column as a user may hold it: numeric, object, text, categorical or Arrow."""
    kind = draw(st.sampled_from(("numeric", "numeric", "numeric", "object", "text",
                                 "category", "arrow-float", "arrow-text")))
    if kind == "numeric":
        return draw(numeric_column(n))
    words = draw(st.lists(st.sampled_from(("a", "b", "ü", "", " ", "x" * 40, "1", "None")),
                          min_size=n, max_size=n))
    if kind == "object":
        mixed = [w if i % 3 else (i if i % 2 else None) for i, w in enumerate(words)]
        return np.array(mixed, dtype=object)
    if kind == "text":
        return np.array(words, dtype=str)
    if kind == "category":
        return pd.Series(words, dtype="category")
    if kind == "arrow-float":
        values = draw(numeric_column(n)).astype(np.float64)
        mask = np.isnan(values)
        return pd.Series(pa.array(values, mask=mask), dtype=pd.ArrowDtype(pa.float64()))
    missing = draw(st.booleans())
    return pd.Series(pa.array([None if missing and i == 0 else w
                               for i, w in enumerate(words)], pa.string()),
                     dtype=pd.ArrowDtype(pa.string()))


def hostile(draw: Any) -> bool:
    """Whether this part of an example is hostile (else it is clean: the other parts are
    then what reaches the kernels)."""
    return draw(st.integers(0, 9)) < 4


@st.composite
def features(draw: Any) -> Any:
    """X: a 2-D numpy array of one dtype, or a DataFrame of mixed columns."""
    n = draw(st.sampled_from(ROWS))
    if not hostile(draw):
        rng = np.random.default_rng(draw(st.integers(0, 2**16)))
        return rng.normal(size=(n, draw(st.sampled_from((1, 2, 4)))))
    d = draw(st.sampled_from((0, 1, 2, 4)))
    if draw(st.booleans()):
        dtype = draw(st.sampled_from(NUMERIC))
        cols = [_numeric_values(draw, n, dtype) for _ in range(d)]
        return np.column_stack(cols) if cols else np.empty((n, 0), dtype)
    return pd.DataFrame({f"c{j}": np.asarray(draw(any_column(n))) if j % 2 else
                         draw(any_column(n)) for j in range(d)}, index=range(n))


@st.composite
def groups(draw: Any, n: int) -> Any:
    """Sensitive features: one, two or three groups of any type, missing values, or a
    length that does not match the rows."""
    if not hostile(draw):
        rng = np.random.default_rng(draw(st.integers(0, 2**16)))
        names = draw(st.sampled_from(((0, 1), ("men", "women"), (0, 1, 2))))
        out = np.array([names[i % len(names)] for i in range(n)])
        return out[rng.permutation(n)]
    length = n + draw(st.sampled_from((0, 0, 0, 0, -1, 1))) if n else n
    length = max(length, 0)
    kind = draw(st.sampled_from(("two", "two", "three", "one", "column")))
    if kind == "column":
        return draw(any_column(length))
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    codes = rng.integers(0, {"one": 1, "two": 2, "three": 3}[kind], length)
    values = draw(st.sampled_from((
        (0, 1, 2), ("men", "women", "other"), (True, False, True), (-5, 2**62, 7),
        (0.5, np.nan, 1.5), ("a", None, "c"))))
    out = np.array([values[c] for c in codes], dtype=object)
    as_type = draw(st.sampled_from(("object", "native", "category", "arrow")))
    if as_type == "native":
        with contextlib.suppress(TypeError, ValueError):
            return np.array(out.tolist())
    if as_type == "category":
        return pd.Series(out, dtype="category")
    if as_type == "arrow":
        with contextlib.suppress(pa.ArrowException):
            return pd.Series(pa.array(out.tolist()), dtype=pd.ArrowDtype(pa.array(
                out.tolist()).type))
    return out


@st.composite
def labels(draw: Any, n: int, columns: int | None = None) -> np.ndarray:
    """Cluster labels: 0..c-1, with -1, huge or sparse ids, floats, NaN, bools; 2-D when
    ``columns`` is given (base clusterings)."""
    r = 1 if columns is None else columns
    profile = draw(st.sampled_from(("dense", "noise", "huge", "sparse", "float", "nan",
                                    "bool", "uint64", "one")))
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    c = draw(st.integers(1, 6))
    base = rng.integers(0, c, (n, r))
    if profile == "noise":
        base = np.where(rng.random((n, r)) < 0.3, -1, base)
    elif profile == "huge":
        base = np.choose(base % 2, [np.zeros_like(base), np.full_like(base, 10**9)])
        base[: n // 3] = np.iinfo(np.int64).max
    elif profile == "sparse":
        base = base * 1_000_003 - 7
    elif profile == "one":
        base = np.zeros((n, r), np.int64)
    out: np.ndarray = base
    if profile == "float":
        out = base.astype(np.float64) + 0.5 * draw(st.sampled_from((0, 1)))
    elif profile == "nan":
        out = base.astype(np.float64)
        if n:
            out[rng.integers(n)] = np.nan
    elif profile == "bool":
        out = base % 2 == 0
    elif profile == "uint64":
        out = base.astype(np.uint64) * np.uint64(2**62)
    return out if columns is not None else out[:, 0]


@st.composite
def binary(draw: Any, n: int) -> Any:
    """Outcomes of a classifier: two values of any type, one, three, or missing ones."""
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    if not hostile(draw):
        return rng.integers(0, 2, n)
    values = draw(st.sampled_from(((0, 1), ("no", "yes"), (False, True), (-1, 1),
                                   (0.0, np.nan), (0, 1, 2), (1,), ("a", 1))))
    out = np.array([values[i] for i in rng.integers(0, len(values), n)], dtype=object)
    with contextlib.suppress(TypeError, ValueError):
        if draw(st.booleans()):
            return np.array(out.tolist())
    return out


class Backend:
    """How an example's arrays are given: as they are, or as dask arrays / DataFrames of 5-row
    blocks, or with unknown chunk sizes; one kind for the whole example, but sometimes one
    input of another kind."""

    def __init__(self, draw: Any) -> None:
        self.draw = draw
        self.kind = draw(st.sampled_from(("as is", "as is", "dask", "unknown")))

    def __call__(self, x: Any) -> Any:
        kind = self.kind if self.draw(st.integers(0, 9)) else self.draw(
            st.sampled_from(("as is", "dask", "unknown")))
        return _backend(x, kind)


def _backend(x: Any, kind: str) -> Any:
    if kind == "as is":
        return x
    if isinstance(x, pd.DataFrame | pd.Series):
        import dask.dataframe as dd

        return dd.from_pandas(x, chunksize=5)
    a = np.asarray(x)
    if a.dtype == object or a.dtype.kind in "US":
        return x
    out = da.from_array(a, chunks=(5, *a.shape[1:]))
    if kind == "unknown" and a.shape[0]:
        keep = da.ones(a.shape[0], chunks=5, dtype=bool)
        out = out[keep]
    return out


# -- entry points --------------------------------------------------------------------------------

ENTRIES: dict[str, Callable[[Any], Any]] = {}


def entry(name: str) -> Callable[[Callable[[Any], Any]], Callable[[Any], Any]]:
    def register(fn: Callable[[Any], Any]) -> Callable[[Any], Any]:
        ENTRIES[name] = fn
        return fn
    return register


def _fkr(cls_name: str, params: dict[str, Any], classify: bool) -> Callable[[Any], Any]:
    def call(draw: Any) -> Any:
        import daskfair

        B = Backend(draw)
        X = draw(features())
        n = len(X)
        y = draw(binary(n)) if classify else draw(numeric_column(n))
        s = draw(groups(n))
        extra = draw(st.sampled_from(({}, {"n_fair_features": n + 1}, {"kernel": "poly"},
                                      {"gamma": 1e300})))
        cls = getattr(daskfair, cls_name)
        extra = {k: v for k, v in extra.items() if k in cls().get_params()}
        est = cls(**{**params, **extra})
        est.fit(B(X), B(y), sensitive_features=B(s))
        return est.predict(X)
    return call


_SMALL_FKR = {"n_fair_features": 2, "n_landmarks": 20, "random_state": 0}
_SMALL_CV = {"cv": 2, "relative_alphas": (1e-3,), "strengths": (0.0, 1.0),
             "fair_feature_counts": (2,), "fairness_weights": (None,), "n_landmarks": 20,
             "random_state": 0}
for _name, _params, _classify in (
        ("FairKernelRegressor", _SMALL_FKR, False),
        ("FairKernelClassifier", _SMALL_FKR, True),
        ("FairKernelRidge", {"fairness_weight": 1.0, "n_landmarks": 20, "random_state": 0},
         False),
        ("FairKernelClassifierCV", _SMALL_CV, True),
        ("FairKernelRegressorCV", _SMALL_CV, False)):
    entry(f"{_name}.fit")(_fkr(_name, _params, _classify))


def _rows_and_groups(draw: Any) -> tuple[Backend, Any, Any]:
    """An example's backend, features and groups (the clustering entry points' input)."""
    X = draw(features())
    return Backend(draw), X, draw(groups(len(X)))


def _k(draw: Any, n: int) -> int:
    return draw(st.sampled_from((2, 2, 3, n, n + 1, 1)))


@entry("SAFairKMeans.fit")
def _safairkm(draw: Any) -> Any:
    from daskfair import SAFairKMeans

    B, X, s = _rows_and_groups(draw)
    est = SAFairKMeans(_k(draw, len(X)), max_iter=5, random_state=0)
    return est.fit(B(X), sensitive_features=B(s)).predict(X)


@entry("VFairKMeans.fit")
def _vfairkm(draw: Any) -> Any:
    from daskfair import VFairKMeans

    B, X, s = _rows_and_groups(draw)
    est = VFairKMeans(_k(draw, len(X)), fairness_weight=draw(st.sampled_from((0.0, 10.0))),
                      max_iter=5, random_state=0)
    return est.fit(B(X), sensitive_features=B(s)).labels_


@entry("pareto_front")
def _front(draw: Any) -> Any:
    from daskfair import pareto_front

    B, X, s = _rows_and_groups(draw)
    return pareto_front(B(X), sensitive_features=B(s),
                        n_clusters=_k(draw, len(X)), n_init=2, max_iter=3, budget=20,
                        random_state=0).cost


@entry("vfairkm_front")
def _vfront(draw: Any) -> Any:
    from daskfair import vfairkm_front

    B, X, s = _rows_and_groups(draw)
    return vfairkm_front(B(X), sensitive_features=B(s),
                         n_clusters=_k(draw, len(X)), fairness_weights=(0.0, 5.0),
                         max_iter=3, random_state=0).cost


@entry("FairClusteringEnsemble.fit")
def _fce(draw: Any) -> Any:
    from daskfair import FairClusteringEnsemble

    B = Backend(draw)
    n = draw(st.sampled_from(ROWS))
    base = draw(labels(n, draw(st.sampled_from((0, 1, 3)))))
    s = draw(groups(n))
    c = draw(st.sampled_from(("auto", 2, 3, n + 1)))
    est = FairClusteringEnsemble(c, max_iter=3, random_state=0)
    return est.fit(B(base), sensitive_features=B(s)).labels_


@entry("base_clusterings")
def _base(draw: Any) -> Any:
    from daskfair import base_clusterings

    B = Backend(draw)
    X = draw(features())
    return np.asarray(base_clusterings(B(X), n_clusters=_k(draw, len(X)),
                                       n_runs=2, random_state=0))


@entry("classification metrics")
def _classification(draw: Any) -> Any:
    from daskfair import metrics

    B = Backend(draw)
    n = draw(st.sampled_from(ROWS))
    y, p, s = draw(binary(n)), draw(binary(n)), draw(groups(n))
    name = draw(st.sampled_from(("demographic_parity_difference", "equalized_odds_difference",
                                 "group_report", "error_rate")))
    f = getattr(metrics, name)
    args = (B(y), B(p))
    if name == "error_rate":
        return f(*args)
    pos = draw(st.sampled_from(({}, {"pos_label": "yes"}, {"pos_label": True})))
    return f(*args, sensitive_features=B(s), **pos)


@entry("regression_report")
def _regression(draw: Any) -> Any:
    from daskfair.metrics import regression_report

    B = Backend(draw)
    n = draw(st.sampled_from(ROWS))
    y, p, s = draw(numeric_column(n)), draw(numeric_column(n)), draw(groups(n))
    return regression_report(B(y), B(p),
                             sensitive_features=B(s))


@entry("clustering metrics")
def _clustering(draw: Any) -> Any:
    from daskfair import metrics

    B = Backend(draw)
    X = draw(features())
    n = len(X)
    lab, s = draw(labels(n)), draw(groups(n))
    c = draw(st.sampled_from(({}, {"n_clusters": 2}, {"n_clusters": n + 1})))
    name = draw(st.sampled_from(("balance", "kmeans_cost", "normalized_entropy",
                                 "clustering_report")))
    if name == "balance":
        return metrics.balance(B(lab), sensitive_features=B(s), **c)
    if name == "kmeans_cost":
        return metrics.kmeans_cost(B(X), B(lab))
    if name == "normalized_entropy":
        return metrics.normalized_entropy(B(lab), **c)
    return metrics.clustering_report(draw(labels(n)), B(lab),
                                     sensitive_features=B(s), **c)


@entry("audit")
def _audit(draw: Any) -> Any:
    from daskfair.metrics import audit

    B = Backend(draw)
    n = draw(st.sampled_from(ROWS))
    y, p, s = draw(binary(n)), draw(binary(n)), draw(groups(n))
    extra = draw(st.sampled_from(({}, {"y_score": "scores"}, {"sample_weight": "weights"},
                                  {"reference_group": "men"}, {"min_group_size": 3})))
    if "y_score" in extra:
        extra["y_score"] = B(draw(numeric_column(n)))
    if "sample_weight" in extra:
        extra["sample_weight"] = B(draw(numeric_column(n)))
    return audit(B(y), B(p), sensitive_features=B(s),
                 n_boot=20, random_state=0, **extra).overall


_SAVED: dict[str, Path] = {}


def _saved(kind: str) -> Path:
    """A model of ``kind`` fitted on clean data and saved once per process."""
    if kind not in _SAVED:
        import daskfair
        from daskfair import make_fair_blobs

        X, _, s = make_fair_blobs(n_samples=60, n_features=4, random_state=0)
        if kind == "fkr":
            y = X[:, 0] + s
            model = daskfair.FairKernelRegressor(**_SMALL_FKR).fit(X, y, sensitive_features=s)
        else:
            model = daskfair.SAFairKMeans(3, max_iter=5, random_state=0).fit(
                X, sensitive_features=s)
        path = Path(tempfile.mkdtemp(prefix="daskfair-fuzz-")) / f"{kind}.zarr"
        daskfair.save(model, path)
        _SAVED[kind] = path
    return _SAVED[kind]


@entry("load(...).predict")
def _predict(draw: Any) -> Any:
    import daskfair

    B = Backend(draw)
    model = daskfair.load(_saved(draw(st.sampled_from(("fkr", "safairkm")))))
    return model.predict(B(draw(features())))


# -- running -------------------------------------------------------------------------------------

class _TooLong(Exception):
    pass


@contextlib.contextmanager
def _limit(seconds: int) -> Iterator[None]:
    def stop(signum: int, frame: Any) -> None:
        raise _TooLong(f"took longer than {seconds} s")

    previous = signal.signal(signal.SIGALRM, stop)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def _masked(message: str) -> str:
    """A message with its numbers and quoted values masked: one entry per kind of error."""
    first = message.strip().splitlines()[0] if message.strip() else ""
    first = re.sub(r"'[^']*'|\"[^\"]*\"", "'…'", first)
    return re.sub(r"-?\d[\d_,.e+-]*", "#", first)[:160]


class Outcomes:
    """What one entry point's examples ended in."""

    def __init__(self, show: str | None = None) -> None:
        self.kinds: Counter[str] = Counter()
        self.messages: Counter[str] = Counter()
        self.show = show

    def record(self, call: Callable[[], Any]) -> None:
        try:
            with _limit(EXAMPLE_SECONDS), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                result = call()
                if hasattr(result, "compute"):
                    result = result.compute()
        except (ValueError, TypeError) as exc:
            message = str(exc).strip()
            if not message:
                raise AssertionError(f"{type(exc).__name__} without a message") from exc
            where = traceback.extract_tb(exc.__traceback__)[-1].filename
            if not any(part in Path(where).parts for part in RAISED_BY):
                raise AssertionError(f"{type(exc).__name__} raised inside {where}, not by "
                                     "daskfair's checks") from exc
            if RAW.search(message):
                raise AssertionError(f"{type(exc).__name__} from inside numpy: "
                                     f"{message[:200]}") from exc
            if self.show and re.search(self.show, message):
                traceback.print_exception(exc, file=sys.stderr)
            self.kinds[type(exc).__name__] += 1
            self.messages[f"{type(exc).__name__}: {_masked(message)}"] += 1
            return
        self.kinds["result"] += 1


def canary() -> dict[str, Any]:
    """Whether bounds checks are compiled in: a kernel handed a label past K."""
    import numba

    from daskfair.safairkm._block_functions import init_state

    try:
        init_state(np.zeros((2, 1)), np.zeros(2, np.int64), np.array([0, 9]), 2, 1)
        raised = False
    except IndexError:
        raised = True
    return {"config": bool(numba.config.BOUNDSCHECK), "kernel_raised": raised}


def fuzz(name: str, examples: int, seed: int | None, show: str | None = None
         ) -> dict[str, Any]:
    outcomes = Outcomes(show)
    make = ENTRIES[name]

    @settings(max_examples=examples, deadline=None, database=None, print_blob=True,
              derandomize=seed is None, suppress_health_check=list(HealthCheck))
    @given(st.data())
    def run(data: Any) -> None:
        outcomes.record(lambda: make(data.draw))

    if seed is not None:
        run = hypothesis.seed(seed)(run)
    print(f"[fuzz] {name}", file=sys.stderr, flush=True)
    t0 = time.perf_counter()
    failure = None
    try:
        run()
    except Exception as exc:  # the shrunk failing example: reported, not raised
        failure = "".join(traceback.format_exception(exc))[-6000:]
    return {"examples": sum(outcomes.kinds.values()), "outcomes": dict(outcomes.kinds),
            "messages": dict(outcomes.messages.most_common()), "failure": failure,
            "seconds": round(time.perf_counter() - t0, 1)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=25)
    parser.add_argument("--entry", nargs="+", choices=sorted(ENTRIES))
    parser.add_argument("--seed", type=int)
    parser.add_argument("--show", metavar="REGEX",
                        help="print the traceback of every error whose message matches")
    args = parser.parse_args(argv)
    with dask.config.set(scheduler="synchronous"):
        report = {"boundscheck": canary(),
                  "entries": {name: fuzz(name, args.examples, args.seed, args.show)
                              for name in args.entry or ENTRIES}}
    print(json.dumps(report))
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    sys.exit(main())
