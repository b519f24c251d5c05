"""The hostile input catalogue: every bad input tried on daskfair's public entry points.

Each :class:`Case` names an entry point (a key of :data:`ENTRY_POINTS`), a function that builds
its keyword arguments from small numpy arrays (wrapped by the backend: numpy, dask, or dask
with unknown chunk sizes), the exception it must raise and a regex its message must match, and
what the message tells the user to do. Some inputs are not errors (groups given as strings,
floats or booleans; a group of one row): those cases must work, and give the same result as the
reference input of ``same_as`` (integer group codes).

A case marked with a ``defect`` states the behaviour it should have; it fails today and the
fix belongs in the module the defect names (``tests/test_hostile_inputs.py`` runs it as a
strict xfail, so the fix shows up as an XPASS to be recorded here).

``python tests/hostile_inputs.py`` rewrites ``docs/hostile_inputs.md`` from this catalogue;
``tests/test_hostile_inputs.py`` checks that the two agree.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import shutil
import stat
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import dask.array as da
import numpy as np
import pandas as pd
import scipy.sparse

import daskfair.metrics as metrics
from daskfair import (
    FairClusteringEnsemble,
    FairKernelClassifier,
    FairKernelClassifierCV,
    FairKernelRegressor,
    FairKernelRegressorCV,
    FairKernelRidge,
    SAFairKMeans,
    base_clusterings,
    load,
    make_fair_blobs,
    make_fair_regression,
    pareto_front,
)
from daskfair.cli.inputs import load_input
from daskfair.models import UnsafeModelError
from daskfair.store import (
    STORE_FORMAT,
    CorruptStoreError,
    IncompleteRunError,
    StoreError,
    StoreLockedError,
    break_lock,
    create_run,
    open_run,
    resume_run,
)
from daskfair.store.lease import LEASE_NAME

__all__ = ["BACKENDS", "CASES", "ENTRY_POINTS", "Case", "Context", "Expect", "render_doc",
           "run_case"]

DOC = Path(__file__).resolve().parents[1] / "docs" / "hostile_inputs.md"

#: numpy arrays; dask arrays of 5-row blocks; the same with unknown chunk sizes (a boolean row
#: selection, as ``x[x[:, 0] > -1e9]`` makes); "file" for cases whose input is a path.
BACKENDS = ("numpy", "dask", "unknown", "file")
ARRAYS = ("numpy", "dask", "unknown")
N = 12  # rows of the standard inputs


@dataclass(frozen=True)
class Expect:
    """What a call must do: raise ``error`` with a message matching ``match``, or work."""

    error: type[BaseException] | None = None
    match: str = ""
    warns: type[Warning] | None = None  # a working call must warn with this category
    defect: str = ""  # not so today: what is wrong and where the fix belongs
    now: str = ""  # with a defect: regex on what happens today ("Type: message" or "returns x")


UNKNOWN = Expect(ValueError, r"unknown chunk sizes.*compute_chunk_sizes")


@dataclass(frozen=True)
class Case:
    """One hostile input.

    Attributes
    ----------
    id : str
        Unique, used as the pytest id.
    entry : str
        Key of :data:`ENTRY_POINTS` (the public function or method called).
    item : str
        The kind of bad input (the issue's list).
    input : str
        The bad input in words.
    build : callable
        ``build(ctx) -> dict`` of keyword arguments for the entry point; array arguments go
        through ``ctx.w`` (the backend).
    expect : Expect
        With numpy inputs (and files).
    says : str
        What the message tells the user to do (for works-cases: what happens).
    dask, unknown : Expect, optional
        With dask inputs of known / unknown chunk sizes, when different from ``expect`` / the
        unknown-chunk-sizes error.
    backends : tuple of str
    same_as : callable, optional
        For a case that works: the builder of a reference input with the same expected result.
    client : bool
        Needs a real Dask client although it fails (it fails after tasks were submitted).
    n_out : int
        Rows of the result of a case that works.
    guarded : bool
        An attack that could hang or exhaust memory: run in a forked child with 1 GiB more
        memory at most and a time limit (tests/test_hostile_stores.py), not in this process.
    """

    id: str
    entry: str
    item: str
    input: str
    build: Callable[[Context], dict[str, Any]]
    expect: Expect
    says: str
    dask: Expect | None = None
    unknown: Expect | None = None
    backends: tuple[str, ...] = ARRAYS
    same_as: Callable[[Context], dict[str, Any]] | None = None
    client: bool = False
    n_out: int = N
    guarded: bool = False

    def expected(self, backend: str) -> Expect:
        if backend == "dask" and self.dask is not None:
            return self.dask
        if backend == "unknown":
            return self.unknown or UNKNOWN
        return self.expect


# -- backends and the context a builder gets --------------------------------------------------

def _to_dask(a: Any) -> Any:
    if isinstance(a, np.ndarray) and a.ndim >= 1:
        return da.from_array(a, chunks=(5, *a.shape[1:]))
    return a


def _to_unknown(a: Any) -> Any:
    d = _to_dask(a)
    if isinstance(d, da.Array):
        return d[da.ones(d.shape[0], dtype=bool, chunks=d.chunks[0])]
    return d


_WRAP = {"numpy": lambda a: a, "file": lambda a: a, "dask": _to_dask, "unknown": _to_unknown}


@dataclass
class Context:
    """What a builder gets: the backend's array wrapper ``w`` and a scratch directory."""

    backend: str
    tmp: Path
    _public: list[Path] = field(default_factory=list)

    def w(self, a: Any) -> Any:
        return _WRAP[self.backend](a)

    def unknown(self, a: Any) -> Any:
        """``a`` as a dask array with unknown chunk sizes, whatever the backend."""
        return _to_unknown(a.compute() if isinstance(a, da.Array) else a)

    def public_dir(self) -> Path:
        """A fresh directory every user may enter (for the permission cases run as root)."""
        p = Path(tempfile.mkdtemp(prefix="daskfair-hostile-"))
        p.chmod(0o755)
        self._public.append(p)
        return p

    def cleanup(self) -> None:
        for p in self._public:
            for sub in (p, *p.rglob("*")):
                with contextlib.suppress(OSError):
                    sub.chmod(sub.stat().st_mode | stat.S_IRWXU)
            shutil.rmtree(p, ignore_errors=True)


@contextlib.contextmanager
def _unprivileged() -> Iterator[None]:
    """Run as nobody when running as root (root ignores permission bits)."""
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        yield
        return
    os.seteuid(65534)
    try:
        yield
    finally:
        os.seteuid(0)


# -- standard inputs ---------------------------------------------------------------------------

def _data() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(0)
    X = rng.normal(size=(N, 3))
    return {
        "X": X,
        "y": X @ np.array([1.0, -1.0, 0.5]) + 0.1 * rng.normal(size=N),
        "yc": np.array([0, 0, 1, 1] * 3),  # both classes in both groups
        "s": np.arange(N) % 2,
        "base": np.stack([np.arange(N) % 3, (np.arange(N) // 4) % 3,
                          rng.integers(0, 3, N)], axis=1),
        "y_true": np.arange(N) % 3,
        "labels": (np.arange(N) // 3) % 3,
    }


D = _data()


def _nan(a: np.ndarray, value: float = np.nan) -> np.ndarray:
    a = a.astype(np.float64)
    a.flat[5] = value
    return a


def _groups(kind: str) -> np.ndarray:
    s = D["s"]
    return {
        "int": s,
        "str": np.where(s == 1, "woman", "man"),  # sorted: "man" < "woman", as 0 < 1
        "float": s * 2.5 - 1.0,
        "bool": s.astype(bool),
        "object": np.where(s == 1, "woman", "man").astype(object),
        "one": np.zeros(N, dtype=np.int64),
        "three": np.arange(N) % 3,
        "single": (np.arange(N) == 4).astype(np.int64),  # group 1 has one row
        "nan": _nan(s),
        "none": np.array(["a", None] * (N // 2), dtype=object),
        "mixed": np.array(["a", 1] * (N // 2), dtype=object),
        "2d": np.stack([s, s], axis=1),
        # two columns: the pairs (0, 1) and (1, 1) have 2 rows each, (0, 0) and (1, 0) 4
        "2d-small": np.stack([s, (np.arange(N) < 4).astype(np.int64)], axis=1),
        # the same groups with the two small pairs merged, as small_groups="merge" names them
        "2d-merged": np.where(np.arange(N) < 4, "other", np.char.add(s.astype(str), ",0")
                              ).astype(object),
        "short": s[:-1],
    }[kind]


FKR_PARAMS = {"n_fair_features": 2, "random_state": 0}
CV_PARAMS = {"cv": 3, "relative_alphas": (1e-3,), "strengths": (0.0, 1.0),
             "fair_feature_counts": (2,),
             "fairness_weights": (None,), "random_state": 0}
ESTIMATORS = {
    "FairKernelRegressor": (FairKernelRegressor, FKR_PARAMS),
    "FairKernelClassifier": (FairKernelClassifier, FKR_PARAMS),
    "FairKernelRidge": (FairKernelRidge, {"fairness_weight": 1.0, "random_state": 0}),
    "FairKernelClassifierCV": (FairKernelClassifierCV, CV_PARAMS),
    "FairKernelRegressorCV": (FairKernelRegressorCV, CV_PARAMS),
}


def _fkr(cls: str, ctx: Context, *, X: Any = None, y: Any = None, s: Any = None,
         **params: Any) -> dict[str, Any]:
    y0 = D["yc"] if cls.startswith("FairKernelClassifier") else D["y"]
    return {"X": ctx.w(D["X"] if X is None else X), "y": ctx.w(y0 if y is None else y),
            "sensitive_features": ctx.w(D["s"] if s is None else s), **params}


def _xs(ctx: Context, *, X: Any = None, s: Any = None, **params: Any) -> dict[str, Any]:
    return {"X": ctx.w(D["X"] if X is None else X),
            "sensitive_features": ctx.w(D["s"] if s is None else s), **params}


def _fce(ctx: Context, *, base: Any = None, s: Any = None, **params: Any) -> dict[str, Any]:
    return {"base_labels": ctx.w(D["base"] if base is None else base),
            "sensitive_features": ctx.w(D["s"] if s is None else s), **params}


def _report(ctx: Context, *, y: Any = None, labels: Any = None, s: Any = None,
            **params: Any) -> dict[str, Any]:
    return {"y_true": ctx.w(D["y_true"] if y is None else y),
            "labels": ctx.w(D["labels"] if labels is None else labels),
            "sensitive_features": ctx.w(D["s"] if s is None else s), **params}


# -- entry points: each computes its result (lazy dask errors surface) -------------------------

def _np(x: Any) -> Any:
    return np.asarray(x.compute()) if isinstance(x, da.Array) else x


class NoClient:
    """Stands in for a Dask client in cases that must fail before any task is submitted
    (it answers questions about the workers: there are none)."""

    def scheduler_info(self, **_: Any) -> dict[str, Any]:
        return {"workers": {}}

    def __getattr__(self, name: str) -> Any:
        raise AssertionError(f"the input was accepted: client.{name} was called")


def _fkr_fit(name: str) -> Callable[..., Any]:
    cls, defaults = ESTIMATORS[name]

    def fit(*, X: Any, y: Any, sensitive_features: Any, **params: Any) -> np.ndarray:
        est = cls(**{**defaults, **params}).fit(X, y, sensitive_features=sensitive_features)
        out = est.decision_function(X) if hasattr(est, "decision_function") else est.predict(X)
        return _np(out)

    return fit


def _fkr_predict(*, X: Any, **params: Any) -> np.ndarray:
    est = FairKernelRegressor(**FKR_PARAMS, **params).fit(
        D["X"], D["y"], sensitive_features=D["s"])
    return _np(est.predict(X))


SA_PARAMS = {"max_iter": 5, "random_state": 0}


def _sa_fit(*, X: Any, sensitive_features: Any, n_clusters: Any = 3,
            **params: Any) -> np.ndarray:
    est = SAFairKMeans(n_clusters, **{**SA_PARAMS, **params})
    return est.fit(X, sensitive_features=sensitive_features).labels_


def _sa_predict(*, X: Any) -> np.ndarray:
    est = SAFairKMeans(3, **SA_PARAMS).fit(D["X"], sensitive_features=D["s"])
    return _np(est.predict(X))


def _calibrate(*, n_bins: Any = 10, strategy: Any = "uniform", **kw: Any) -> Any:
    return metrics.audit(**kw).calibration(n_bins, strategy).ece["ece"].to_numpy()


def _front(*, X: Any, sensitive_features: Any, client: Any, n_clusters: Any = 3,
           **params: Any) -> tuple[np.ndarray, ...]:
    params = {"n_init": 4, "max_iter": 3, "random_state": 0, **params}
    f = pareto_front(X, sensitive_features=sensitive_features, n_clusters=n_clusters,
                     client=client, **params)
    return f.cost, f.balance, f.labels


def _fce_fit(*, base_labels: Any, sensitive_features: Any, n_clusters: Any = 3,
             store: Any = None, resume: bool = False, unprivileged: bool = False,
             **params: Any) -> np.ndarray:
    params = {"max_iter": 3, "random_state": 0, **params}
    est = FairClusteringEnsemble(n_clusters, **params)
    with _unprivileged() if unprivileged else contextlib.nullcontext():
        est.fit(base_labels, sensitive_features=sensitive_features, store=store, resume=resume)
    return _np(est.labels_)


def _base(*, X: Any, client: Any, n_clusters: Any = 3, **params: Any) -> np.ndarray:
    params = {"n_runs": 2, "random_state": 0, **params}
    return _np(base_clusterings(X, n_clusters=n_clusters, client=client, **params))


def _metric(name: str) -> Callable[..., Any]:
    f = getattr(metrics, name)

    def call(**kwargs: Any) -> Any:
        return f(*kwargs.pop("args", ()), **kwargs)

    return call


def _create_run(*, path: Path, unprivileged: bool = False, **kwargs: Any) -> Any:
    with _unprivileged() if unprivileged else contextlib.nullcontext():
        return create_run(path, kind="fce", **kwargs)


def _read_array(*, path: Path) -> Any:
    return open_run(path).read_array("x")


def _open_run(*, path: Path, unprivileged: bool = False) -> Any:
    with _unprivileged() if unprivileged else contextlib.nullcontext():
        return open_run(path)


def _write_array(*, path: Path, data: Any) -> Any:
    return create_run(path, kind="fce").write_array("x", data)


ENTRY_POINTS: dict[str, Callable[..., Any]] = {
    **{f"{name}.fit": _fkr_fit(name) for name in ESTIMATORS},
    "FairKernelRegressor.predict": _fkr_predict,
    "SAFairKMeans.fit": _sa_fit,
    "SAFairKMeans.predict": _sa_predict,
    "pareto_front": _front,
    "FairClusteringEnsemble.fit": _fce_fit,
    "base_clusterings": _base,
    **{name: _metric(name) for name in (
        "clustering_report", "balance", "demographic_parity_difference", "kmeans_cost",
        "error_rate", "normalized_entropy")},
    "audit": lambda **kw: metrics.audit(**kw).overall.to_dict(),
    "Audit.calibration": _calibrate,
    "create_run": _create_run,
    "open_run": _open_run,
    "resume_run": lambda **kw: resume_run(**kw),
    "break_lock": lambda **kw: break_lock(**kw),
    "Run.read_array": _read_array,
    "Run.write_array": _write_array,
    "load_input": lambda **kw: load_input(**kw),
    "load": lambda **kw: load(**kw),
}

NEEDS_CLIENT = {"pareto_front", "base_clusterings"}


def run_case(case: Case, backend: str, client: Any = None) -> Any:
    """Build the case's input for ``backend`` and call its entry point; return the result.

    ``client`` is the Dask client for the entry points that need one; a case expected to fail
    before submitting any task gets a :class:`NoClient` instead (a builder that sets
    ``client`` itself keeps its own: None is this process's threads).
    """
    ctx = Context(backend, Path(tempfile.mkdtemp(prefix="daskfair-case-")))
    try:
        kwargs = case.build(ctx)
        if case.entry in NEEDS_CLIENT and "client" not in kwargs:
            failing = case.expected(backend).error is not None and not case.client
            kwargs["client"] = NoClient() if failing or client is None else client
        return ENTRY_POINTS[case.entry](**kwargs)
    finally:
        ctx.cleanup()
        shutil.rmtree(ctx.tmp, ignore_errors=True)


# -- the catalogue -------------------------------------------------------------------------------

CASES: list[Case] = []


def case(id: str, entry: str, item: str, input: str, build: Callable[[Context], dict],
         expect: Expect, says: str, **kw: Any) -> None:
    CASES.append(Case(id, entry, item, input, build, expect, says, **kw))


def err(error: type[BaseException], match: str, defect: str = "", now: str = "") -> Expect:
    return Expect(error, match, defect=defect, now=now)


WORKS = Expect()
#: An attack that could crash, hang or exhaust memory: run in a guarded child, once.
GUARDED = {"backends": ("file",), "guarded": True}
NAN_X = err(ValueError, r"X contains NaN or infinite values.*Drop or impute")
GROUPS_MISSING = err(ValueError, r"sensitive_features contains NaN or other missing values")
ONE_GROUP = err(ValueError, r"sensitive_features has 1 distinct group.*at least 2 are needed")
MIXED = err(TypeError, r"sensitive_features mixes values that cannot be sorted.*one type")
SHORT_GROUPS = err(ValueError, r"sensitive_features has 11 entries but X has 12 rows")
NOT_NUMERIC = err(TypeError, r"X must be numeric.*daskfair.TableEncoder")
NO_COLUMNS = err(ValueError, r"X has no columns")
GROUP_SAYS = "works: strings, floats and booleans are groups like integer codes (same result)"


def _run(c: Context, name: str = "run.zarr", *, complete: bool = True, **attrs: Any) -> Path:
    path = c.tmp / name
    run = create_run(path, kind="fce", params={"n_clusters": 3})
    if complete:
        run.mark_complete()
    run.close()
    if attrs:  # after the marker, which writes the format
        info = {**run.info, **attrs}
        run.group.attrs["daskfair"] = info
    return path


def _zarr_group(c: Context, zarr_format: int = 3) -> Path:
    import zarr

    path = c.tmp / "plain.zarr"
    zarr.open_group(store=str(path), mode="w", zarr_format=zarr_format).attrs["note"] = "x"
    return path


def _truncated(c: Context) -> Path:
    path = _run(c)
    meta = path / "zarr.json"
    meta.write_text(meta.read_text()[:40])
    return path


def _array_store(c: Context) -> Path:
    import zarr

    path = c.tmp / "array.zarr"
    zarr.create_array(store=str(path), shape=(3,), dtype="f8")
    return path


def _no_permission(c: Context) -> Path:
    d = c.public_dir() / "readonly"
    d.mkdir()
    d.chmod(0o555)
    return d / "run.zarr"


def _unreadable(c: Context) -> Path:
    path = c.public_dir() / "run.zarr"
    create_run(path, kind="fce").mark_complete()
    path.chmod(0o000)
    return path


def _damaged(c: Context, how: str) -> Path:
    import zarr

    path = c.tmp / "run.zarr"
    run = create_run(path, kind="fce", params={"n_clusters": 3})
    run.write_array("x", np.arange(30.0), chunks=(10,))
    if how == "forge":
        run.close()
        group = zarr.open_group(str(path), mode="r+")
        group.attrs["daskfair"] = {**group.attrs["daskfair"], "status": "complete"}
        return path
    run.mark_complete()
    chunk = path / "x" / "c" / "1"
    data = chunk.read_bytes()
    chunk.write_bytes(data[:-5] if how == "truncate" else data[:-1] + bytes([data[-1] ^ 1]))
    return path


def _model_store(c: Context, how: str) -> Path:
    """A store that daskfair.load must refuse, ``how`` says why."""
    from daskfair.models import save, write_model

    X, y, s = (np.asarray(a) for a in make_fair_regression(60, 3, random_state=0))
    model = FairKernelRegressor(n_landmarks=10, random_state=0).fit(X, y, sensitive_features=s)
    path = c.tmp / "model.zarr"
    if how == "flip":
        save(model, path)
        chunk = next(p for p in (path / "model" / "dual_coef_").rglob("*")
                     if p.is_file() and p.name != "zarr.json")
        data = chunk.read_bytes()
        chunk.write_bytes(data[:-1] + bytes([data[-1] ^ 1]))
        return path
    kind = "safairkm" if how == "front" else "model"
    run = create_run(path, kind=kind)
    if how == "names-code":
        run.set_attrs(model={"~": "estimator", "class": "os.system",
                             "params": {"~": "dict", "items": []},
                             "state": {"~": "dict", "items": []}})
    elif how == "pickle":
        run.set_attrs(model={"~": "pickle", "data": "gASVAAAA"})
    elif how == "missing":
        write_model(run, model)
        run.group.__delitem__("model/coef_")
    elif how == "front":
        for name, values in (("cost", [1.0, 2.0, 3.0]), ("balance", [0.1, 0.5, 0.9]),
                             ("labels", np.zeros((3, 4), dtype=np.int64)),
                             ("centers", np.zeros((3, 2, 1)))):
            run.write_array(name, np.asarray(values))
    run.mark_complete()
    return path


def _foreign(c: Context) -> Path:
    folder = c.tmp / "project"
    folder.mkdir()
    (folder / "thesis.tex").write_text("years of work")
    return folder


def _locked(c: Context, *, alive: bool) -> Path:
    import json
    import socket
    import subprocess
    import sys

    path = c.tmp / "run.zarr"
    create_run(path, kind="fce", params={"n_clusters": 3}).close()
    if alive:
        pid = os.getpid()
    else:
        gone = subprocess.Popen([sys.executable, "-c", "pass"])
        gone.wait()
        pid = gone.pid
    (path / LEASE_NAME).write_text(json.dumps(
        {"run_id": "other", "host": socket.gethostname(), "pid": pid, "started": "earlier",
         "command": "daskfair fce --pool har"}))
    return path


def _file(c: Context, name: str, text: str | bytes) -> Path:
    path = c.tmp / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text)
    return path


FUTURE = STORE_FORMAT + 1
OTHER_FORMAT = err(StoreError, rf"written in daskfair store format {FUTURE} .*this version reads "
                               rf"format {STORE_FORMAT} only.*Rerun the job with this version")
EARLIER = STORE_FORMAT - 1
NO_WRITE = err(PermissionError, r"(no write permission|cannot write the run store).*writable")

FKC_NAN_Y = ("regression.py FairKernelClassifier.fit: for dask y the NaN is counted as a third "
             "class ('got 3 class(es) ([0.0, 1.0, nan])'); check pd.isna(classes) after "
             "da.unique")

# FKR-F²E: the kernel estimators share the input checks
for name, p in (("FairKernelRegressor", "fkr"), ("FairKernelClassifier", "fkc"),
                ("FairKernelRidge", "fkrr"), ("FairKernelClassifierCV", "fkccv"),
                ("FairKernelRegressorCV", "fkrcv")):
    fit = f"{name}.fit"

    def b(ctx: Context, _n: str = name, **kw: Any) -> dict[str, Any]:
        return _fkr(_n, ctx, **kw)

    y_key = "yc" if p in ("fkc", "fkccv") else "y"
    case(f"{p}-nan-X", fit, "NaN/inf", "X with one NaN", lambda c, b=b: b(c, X=_nan(D["X"])),
         NAN_X, "drop or impute the rows")
    case(f"{p}-inf-X", fit, "NaN/inf", "X with one +inf",
         lambda c, b=b: b(c, X=_nan(D["X"], np.inf)), NAN_X, "drop or impute the rows")
    if p in ("fkc", "fkccv"):
        case(f"{p}-nan-y", fit, "NaN/inf", "class labels y with one NaN",
             lambda c, b=b: b(c, y=_nan(D["yc"])),
             err(ValueError, r"y contains missing values.*needs a class"),
             "every training row needs a class",
             dask=err(ValueError, r"y contains missing values"))
    else:
        case(f"{p}-nan-y", fit, "NaN/inf", "target y with one NaN",
             lambda c, b=b: b(c, y=_nan(D["y"])),
             err(ValueError, r"y contains NaN or infinite values.*Drop or impute"),
             "drop or impute the rows")
    case(f"{p}-nan-groups", fit, "NaN/inf", "float groups with one NaN",
         lambda c, b=b: b(c, s=_groups("nan")), GROUPS_MISSING, "every row needs a group")
    case(f"{p}-none-groups", fit, "NaN/inf", "object groups with None",
         lambda c, b=b: b(c, s=_groups("none")), GROUPS_MISSING, "every row needs a group")
    empty = err(ValueError, r"X has 0 rows.*at least 2 are needed")
    one_row = err(ValueError, r"X has 1 rows.*at least 2 are needed")
    case(f"{p}-empty", fit, "empty arrays", "0 rows",
         lambda c, b=b, k=y_key: b(c, X=D["X"][:0], y=D[k][:0], s=D["s"][:0]),
         empty, "give at least 2 rows")
    case(f"{p}-no-columns", fit, "empty arrays", "X of shape (12, 0)",
         lambda c, b=b: b(c, X=D["X"][:, :0]), NO_COLUMNS, "give at least one feature")
    case(f"{p}-one-row", fit, "one row", "1 row",
         lambda c, b=b, k=y_key: b(c, X=D["X"][:1], y=D[k][:1], s=D["s"][:1]),
         one_row, "give at least 2 rows (of two classes)")
    case(f"{p}-one-group", fit, "one group", "every row in group 0",
         lambda c, b=b: b(c, s=_groups("one")), ONE_GROUP,
         "fairness needs at least two groups")
    case(f"{p}-three-groups", fit, "one group", "three groups",
         lambda c, b=b: b(c, s=_groups("three")), WORKS,
         "works: every group's mean is matched (any number of groups)")
    if p.endswith("cv"):
        case(f"{p}-group-of-one-row", fit, "group of one row", "group 1 has a single row",
             lambda c, b=b: b(c, s=_groups("single")),
             err(ValueError, r"group 1 has no rows in the training rows of fold \d \(it has 1 "
                             r"rows in all\).*fewer folds"),
             "use fewer folds or merge the small groups")
    else:
        case(f"{p}-group-of-one-row", fit, "group of one row", "group 1 has a single row",
             lambda c, b=b: b(c, s=_groups("single")), WORKS,
             "works: a group of one row is a group (its mean is that row)")
    for kind in ("str", "float", "bool"):
        case(f"{p}-groups-{kind}", fit, "groups as strings/floats/booleans",
             f"groups as {kind} values", lambda c, b=b, k=kind: b(c, s=_groups(k)), WORKS,
             GROUP_SAYS, same_as=lambda c, b=b: b(c))
    case(f"{p}-groups-mixed-types", fit, "groups as strings/floats/booleans",
         "object groups mixing strings and integers",
         lambda c, b=b: b(c, s=_groups("mixed")), MIXED, "give every group as one type")
    case(f"{p}-groups-2d", fit, "groups as strings/floats/booleans",
         "groups of shape (12, 2): two sensitive columns",
         lambda c, b=b: b(c, s=_groups("2d")), WORKS,
         "works: every combination of the columns' values is a group (here the same two)",
         same_as=lambda c, b=b: b(c))
    case(f"{p}-small-groups", fit, "one group",
         "two sensitive columns, two pairs of 2 rows, min_group_size=3",
         lambda c, b=b: b(c, s=_groups("2d-small"), min_group_size=3),
         err(ValueError, r"2 group\(s\) with fewer than min_group_size=3 rows: '0,1' "
                         r"\(2 rows\), '1,1' \(2 rows\)\. Merge them.*small_groups='merge'"),
         "merge them with small_groups='merge', lower min_group_size, or drop the rows")
    if not p.endswith("cv"):  # 4 merged rows: too few for 3 folds
        case(f"{p}-small-groups-merged", fit, "one group",
             "the same, with small_groups='merge'",
             lambda c, b=b: b(c, s=_groups("2d-small"), min_group_size=3,
                              small_groups="merge"), Expect(warns=UserWarning),
             "works: the small pairs become the group 'other' (a warning names them)",
             same_as=lambda c, b=b: b(c, s=_groups("2d-merged")))
    bad_size = err(ValueError, r"min_group_size must be an integer >= 1.*got 0")
    case(f"{p}-min-group-size-zero", fit, "one group", "min_group_size=0",
         lambda c, b=b: b(c, min_group_size=0), bad_size,
         "give an integer >= 1 (1 keeps every group)", unknown=bad_size)
    case(f"{p}-short-y", fit, "mismatched lengths", "y one row shorter than X",
         lambda c, b=b, k=y_key: b(c, y=D[k][:-1]),
         err(ValueError, r"Inconsistent numbers of rows: X has 12, y has 11"),
         "give X and y the same rows")
    case(f"{p}-short-groups", fit, "mismatched lengths", "groups one row shorter than X",
         lambda c, b=b: b(c, s=_groups("short")), SHORT_GROUPS, "give one group per row")
    for arg, name_ in (("X", "X"), ("y", "y"), ("s", "sensitive_features")):
        case(f"{p}-unknown-chunks-{arg}", fit, "unknown chunk sizes",
             f"{name_} a dask array with unknown chunk sizes, the rest numpy",
             lambda c, b=b, a=arg, k=y_key: b(c, **{a: c.unknown(
                 {"X": D["X"], "y": D[k], "s": D["s"]}[a])}),
             err(ValueError, rf"{name_} is a dask array with unknown chunk sizes.*"
                             r"compute_chunk_sizes"),
             "call compute_chunk_sizes() first", backends=("numpy",))
    case(f"{p}-strings-X", fit, "non-numeric columns", "X of strings",
         lambda c, b=b: b(c, X=D["X"].astype(str)), NOT_NUMERIC,
         "encode text columns (daskfair.TableEncoder)", unknown=NOT_NUMERIC)
    case(f"{p}-dataframe-text-column", fit, "non-numeric columns",
         "a pandas DataFrame with a text column",
         lambda c, b=b: b(c, X=pd.DataFrame({"a": D["X"][:, 0], "b": ["x", "y"] * (N // 2)})),
         NOT_NUMERIC, "encode text columns (daskfair.TableEncoder)", backends=("numpy",))
    case(f"{p}-nullable-dataframe", fit, "NaN/inf",
         "a pandas DataFrame with a nullable Int64 column holding pd.NA",
         lambda c, b=b: b(c, X=pd.DataFrame({"a": pd.array([1, None] * (N // 2), dtype="Int64"),
                                             "b": D["X"][:, 0]})),
         err(ValueError, r"X contains missing values \(None or pd.NA\).*Drop or impute"),
         "drop or impute the rows", backends=("numpy",))
    case(f"{p}-complex-X", fit, "non-numeric columns", "complex X",
         lambda c, b=b: b(c, X=D["X"] + 1j), err(ValueError, r"X is complex"),
         "give real numbers", unknown=err(ValueError, r"X is complex"))
    case(f"{p}-sparse-X", fit, "non-numeric columns", "scipy.sparse X",
         lambda c, b=b: b(c, X=scipy.sparse.csr_matrix(D["X"])),
         err(TypeError, r"X is a sparse matrix.*toarray"), "convert with X.toarray()",
         backends=("numpy",))
    case(f"{p}-none-X", fit, "empty arrays", "X is None", lambda c, b=b: b(c, X=None) | {
         "X": None}, err(TypeError, r"X is None"), "pass an array", backends=("numpy",))

for p, cls in (("fkr", "FairKernelRegressor"), ("fkc", "FairKernelClassifier")):
    fit = f"{cls}.fit"
    case(f"{p}-k-above-rank", fit, "k > rank", "n_fair_features=50 with 12 rows, "
         "objective='paper'",
         lambda c, n=cls: _fkr(n, c, n_fair_features=50, objective="paper"),
         err(ValueError, r"n_fair_features=50 is larger than the rank of the kernel feature map "
                         r"\(12\).*Use at most 12"), "use at most r components")
case("fkr-k-above-rank-mean-discrepancy", "FairKernelRegressor.fit", "k > rank",
     "n_fair_features=12 with 12 rows, objective='mean_discrepancy' (the default)",
     lambda c: _fkr("FairKernelRegressor", c, n_fair_features=12,
                    objective="mean_discrepancy"),
     err(ValueError, r"n_fair_features=12 is larger than the rank of the feature map minus the "
                     r"constrained directions \(11\)"), "use at most r - 1 components")
case("fkr-three-groups-paper", "FairKernelRegressor.fit", "one group",
     "three groups, objective='paper'",
     lambda c: _fkr("FairKernelRegressor", c, s=_groups("three"), objective="paper"),
     err(ValueError, r"defined for two groups, got 3.*objective='mean_discrepancy'"),
     "use the mean-discrepancy objective (any number of groups)")
case("fkr-k-zero", "FairKernelRegressor.fit", "parameter out of range", "n_fair_features=0",
     lambda c: _fkr("FairKernelRegressor", c, n_fair_features=0),
     err(ValueError, r"n_fair_features must be None or an integer >= 1, got 0"), "use k >= 1",
     unknown=err(ValueError, r"n_fair_features must be None or an integer >= 1, got 0"))
case("fkr-default-k-rank-one", "FairKernelRegressor.fit", "k > rank",
     "one feature, linear kernel (rank 1), objective='mean_discrepancy', default n_fair_features",
     lambda c: _fkr("FairKernelRegressor", c, X=D["X"][:, :1], kernel="linear",
                    n_fair_features=None, objective="mean_discrepancy"),
     err(ValueError, r"rank"),
     "use a kernel of higher rank or objective='paper'")
case("fkr-object-X", "FairKernelRegressor.fit", "non-numeric columns",
     "X as an object array of numbers (as from a mixed pandas frame)",
     lambda c: _fkr("FairKernelRegressor", c, X=D["X"].astype(object)), WORKS,
     "works: numbers in an object array are numbers (same result as float64)",
     same_as=lambda c: _fkr("FairKernelRegressor", c))
case("fkr-constant-X", "FairKernelRegressor.fit", "k > rank",
     "constant X (rbf kernel of rank 1), n_fair_features=2",
     lambda c: _fkr("FairKernelRegressor", c, X=np.ones((N, 3))),
     err(ValueError, r"n_fair_features=2 is larger than the rank of the feature map minus the "
                     r"constrained directions \(1\)"),
     "use fewer fair features or a kernel of higher rank")
case("fkr-zero-X-linear", "FairKernelRegressor.fit", "k > rank",
     "X all zeros with the linear kernel (rank 0)",
     lambda c: _fkr("FairKernelRegressor", c, X=np.zeros((N, 3)), kernel="linear"),
     err(ValueError, r"no positive eigenvalue.*check the kernel parameters and the feature "
                     r"scaling"), "check the kernel parameters and the scaling")
case("fkr-huge-X", "FairKernelRegressor.fit", "NaN/inf",
     "finite X of magnitude 1e300 (its kernel overflows)",
     lambda c: _fkr("FairKernelRegressor", c, X=D["X"] * 1e300),
     err(ValueError, r"kernel.*(finite|overflow|scal)"),
     "scale the features", unknown=UNKNOWN)
case("fkc-three-classes", "FairKernelClassifier.fit", "labels out of range",
     "y with three classes", lambda c: _fkr("FairKernelClassifier", c, y=np.arange(N) % 3),
     err(ValueError, r"exactly two classes in y, got 3 class\(es\).*Use FairKernelRegressor"),
     "use FairKernelRegressor for more classes")
case("fkc-one-class", "FairKernelClassifier.fit", "labels out of range", "y with one class",
     lambda c: _fkr("FairKernelClassifier", c, y=np.zeros(N)),
     err(ValueError, r"exactly two classes in y, got 1 class"), "give two classes")
case("fkc-classes-str", "FairKernelClassifier.fit", "labels out of range",
     "class labels as strings", lambda c: _fkr("FairKernelClassifier", c,
                                               y=np.where(D["yc"] == 1, "yes", "no")),
     WORKS, "works: any two class labels (classes_[1] is the positive one)",
     same_as=lambda c: _fkr("FairKernelClassifier", c))
case("fkrr-negative-mu", "FairKernelRidge.fit", "parameter out of range",
     "fairness_weight=-1",
     lambda c: _fkr("FairKernelRidge", c, fairness_weight=-1.0),
     err(ValueError, r"fairness_weight must be a finite number >= 0"),
     "use fairness_weight >= 0",
     unknown=err(ValueError, r"fairness_weight must be a finite number >= 0"))
PREDICT = "FairKernelRegressor.predict"
case("fkr-predict-wrong-features", PREDICT, "mismatched lengths", "X with 2 of 3 features",
     lambda c: {"X": c.w(D["X"][:, :2])},
     err(ValueError, r"X has 2 features, but FairKernelRegressor is expecting 3"),
     "give the training features", unknown=UNKNOWN)
case("fkr-predict-nan", PREDICT, "NaN/inf", "X with one NaN", lambda c: {"X": c.w(_nan(D["X"]))},
     NAN_X, "drop or impute the rows")
case("fkr-predict-empty", PREDICT, "empty arrays", "0 rows",
     lambda c: {"X": c.w(D["X"][:0])}, err(ValueError, r"X has 0 rows.*at least 1"),
     "give at least one row")

# SAfairKM: one trade-off point
SA = "SAFairKMeans.fit"
case("sa-nan-X", SA, "NaN/inf", "X with one NaN", lambda c: _xs(c, X=_nan(D["X"])), NAN_X,
     "drop or impute the rows")
case("sa-inf-X", SA, "NaN/inf", "X with one -inf", lambda c: _xs(c, X=_nan(D["X"], -np.inf)),
     NAN_X, "drop or impute the rows")
case("sa-nan-groups", SA, "NaN/inf", "float groups with one NaN",
     lambda c: _xs(c, s=_groups("nan")), GROUPS_MISSING, "every row needs a group")
case("sa-empty", SA, "empty arrays", "0 rows",
     lambda c: _xs(c, X=D["X"][:0], s=D["s"][:0]),
     err(ValueError, r"X has 0 rows.*at least 2 are needed"), "give at least 2 rows")
case("sa-no-columns", SA, "empty arrays", "X of shape (12, 0)",
     lambda c: _xs(c, X=D["X"][:, :0]), NO_COLUMNS, "give at least one feature")
case("sa-one-row", SA, "one row", "1 row, n_clusters=2",
     lambda c: _xs(c, X=D["X"][:1], s=D["s"][:1], n_clusters=2),
     err(ValueError, r"X has 1 rows.*at least 2 are needed"), "give at least 2 rows")
case("sa-two-rows", SA, "one row", "2 rows of two groups, n_clusters=2",
     lambda c: _xs(c, X=D["X"][:2], s=D["s"][:2], n_clusters=2), WORKS,
     "works: the smallest problem", n_out=2)
case("sa-one-group", SA, "one group", "every row in group 0",
     lambda c: _xs(c, s=_groups("one")), ONE_GROUP, "fairness needs at least two groups")
case("sa-three-groups", SA, "one group", "three groups", lambda c: _xs(c, s=_groups("three")),
     WORKS, "works: any number of groups >= 2")
SMALL_PAIRS = err(ValueError, r"2 group\(s\) with fewer than min_group_size=3 rows: '0,1' "
                              r"\(2 rows\), '1,1' \(2 rows\)")
case("sa-small-groups", SA, "one group",
     "two sensitive columns, two pairs of 2 rows, min_group_size=3",
     lambda c: _xs(c, s=_groups("2d-small"), min_group_size=3), SMALL_PAIRS,
     "merge them with small_groups='merge', lower min_group_size, or drop the rows")
case("sa-small-groups-merged", SA, "one group", "the same, with small_groups='merge'",
     lambda c: _xs(c, s=_groups("2d-small"), min_group_size=3, small_groups="merge"),
     Expect(warns=UserWarning),
     "works: the small pairs become the group 'other' (a warning names them)",
     same_as=lambda c: _xs(c, s=_groups("2d-merged")))
case("sa-group-of-one-row", SA, "group of one row", "group 1 has a single row, K=3",
     lambda c: _xs(c, s=_groups("single")), Expect(warns=UserWarning),
     "works, with a UserWarning: a group smaller than K makes every balance 0 "
     "(merge small groups or lower n_clusters)")
for kind in ("str", "float", "bool"):
    case(f"sa-groups-{kind}", SA, "groups as strings/floats/booleans", f"groups as {kind} values",
         lambda c, k=kind: _xs(c, s=_groups(k)), WORKS, GROUP_SAYS, same_as=_xs)
case("sa-groups-mixed-types", SA, "groups as strings/floats/booleans",
     "object groups mixing strings and integers", lambda c: _xs(c, s=_groups("mixed")), MIXED,
     "give every group as one type")
case("sa-short-groups", SA, "mismatched lengths", "groups one row shorter than X",
     lambda c: _xs(c, s=_groups("short")), SHORT_GROUPS, "give one group per row")
for arg, name_ in (("X", "X"), ("s", "sensitive_features")):
    case(f"sa-unknown-chunks-{arg}", SA, "unknown chunk sizes",
         f"{name_} a dask array with unknown chunk sizes",
         lambda c, a=arg: _xs(c, **{a: c.unknown(D[a])}),
         err(ValueError, rf"{name_} is a dask array with unknown chunk sizes.*"
                         r"compute_chunk_sizes"), "call compute_chunk_sizes() first",
         backends=("numpy",))
case("sa-strings-X", SA, "non-numeric columns", "X of strings",
     lambda c: _xs(c, X=D["X"].astype(str)), NOT_NUMERIC,
     "encode text columns (daskfair.TableEncoder)", unknown=NOT_NUMERIC)
case("sa-K-above-n", SA, "K > n", "n_clusters=13 with 12 rows",
     lambda c: _xs(c, n_clusters=13),
     err(ValueError, r"n_clusters=13 is larger than the number of samples \(12\); use fewer "
                     r"clusters or more data"), "use fewer clusters or more data")
case("sa-K-equals-n", SA, "K > n", "n_clusters=12 with 12 rows",
     lambda c: _xs(c, n_clusters=12), WORKS, "works: one row per cluster")
K_ONE = err(ValueError, r"n_clusters must be an integer >= 2 \(a balance trade-off needs "
                       r"two clusters\), got 1")
case("sa-K-one", SA, "K > n", "n_clusters=1", lambda c: _xs(c, n_clusters=1), K_ONE,
     "use K >= 2", unknown=K_ONE)
K_FLOAT = err(TypeError, r"n_clusters must be an integer >= 2 .*, got 3\.0")
case("sa-K-float", SA, "K > n", "n_clusters=3.0", lambda c: _xs(c, n_clusters=3.0), K_FLOAT,
     "give an integer", unknown=K_FLOAT)
INIT_BAD = [
    ("out-of-range", "init labels 0..3 with K=3", np.arange(N) % 4,
     err(ValueError, r"init must lie in \[0, 2\], found values in \[\d, 3\]")),
    ("negative", "init labels -1..1", np.arange(N) % 3 - 1,
     err(ValueError, r"init must lie in \[0, 2\], found values in \[-1, 1\]")),
    ("fractional", "init labels 0.5, 1.5, ...", np.arange(N) % 3 + 0.5,
     err(ValueError, r"init must be integer cluster indices, got non-integer floats")),
    ("nan", "init labels with a NaN", _nan(np.arange(N) % 3),
     err(ValueError, r"init contains NaN or infinite values.*Drop or relabel")),
    ("short", "init one row shorter", np.arange(N - 1) % 3,
     err(ValueError, r"init has 11 entries but 12 were expected")),
    ("empty-cluster", "init leaving cluster 2 empty", np.arange(N) % 2,
     err(ValueError, r"init leaves a cluster empty")),
    ("strings", "init labels as strings", np.array(["a", "b", "c"] * 4),
     err(TypeError, r"init must be integers")),
]
for tag, text, init, expect in INIT_BAD:
    case(f"sa-init-{tag}", SA, "labels out of range", text,
         lambda c, i=init: _xs(c, init=c.w(i)), expect, "give K labels 0..K-1, each used")
SAP = "SAFairKMeans.predict"
case("sa-predict-wrong-features", SAP, "mismatched lengths", "X with 2 of 3 features",
     lambda c: {"X": c.w(D["X"][:, :2])},
     err(ValueError, r"X has 2 features, but SAFairKMeans is expecting 3"),
     "give the training features")
case("sa-predict-nan", SAP, "NaN/inf", "X with one NaN", lambda c: {"X": c.w(_nan(D["X"]))},
     NAN_X, "drop or impute the rows")

# SAfairKM Pareto front: the same checks before any task runs
FR = "pareto_front"
case("front-nan-X", FR, "NaN/inf", "X with one NaN", lambda c: _xs(c, X=_nan(D["X"])), NAN_X,
     "drop or impute the rows")
case("front-empty", FR, "empty arrays", "0 rows",
     lambda c: _xs(c, X=D["X"][:0], s=D["s"][:0]),
     err(ValueError, r"X has 0 rows.*at least 2 are needed"), "give at least 2 rows")
case("front-one-row", FR, "one row", "1 row",
     lambda c: _xs(c, X=D["X"][:1], s=D["s"][:1], n_clusters=2),
     err(ValueError, r"X has 1 rows.*at least 2 are needed"), "give at least 2 rows")
case("front-one-group", FR, "one group", "every row in group 0",
     lambda c: _xs(c, s=_groups("one")), ONE_GROUP, "fairness needs at least two groups")
case("front-group-of-one-row", FR, "group of one row", "group 1 has a single row, K=3",
     lambda c: _xs(c, s=_groups("single")), Expect(warns=UserWarning),
     "works, with a UserWarning: every balance is 0, the front is one point")
for kind in ("str", "bool"):
    case(f"front-groups-{kind}", FR, "groups as strings/floats/booleans",
         f"groups as {kind} values", lambda c, k=kind: _xs(c, s=_groups(k)), WORKS, GROUP_SAYS,
         same_as=_xs)
case("front-short-groups", FR, "mismatched lengths", "groups one row shorter than X",
     lambda c: _xs(c, s=_groups("short")), SHORT_GROUPS, "give one group per row")
case("front-strings-X", FR, "non-numeric columns", "X of strings",
     lambda c: _xs(c, X=D["X"].astype(str)), NOT_NUMERIC,
     "encode text columns (daskfair.TableEncoder)", unknown=NOT_NUMERIC)
case("front-K-above-n", FR, "K > n", "n_clusters=13 with 12 rows",
     lambda c: _xs(c, n_clusters=13),
     err(ValueError, r"n_clusters=13 is larger than the number of samples \(12\)"),
     "use fewer clusters or more data")
case("front-K-one", FR, "K > n", "n_clusters=1", lambda c: _xs(c, n_clusters=1), K_ONE,
     "use K >= 2", unknown=K_ONE)
case("front-bad-pairs", FR, "parameter out of range", "update_pairs=[(0, 0)]",
     lambda c: _xs(c, update_pairs=[(0, 0)]),
     err(ValueError, r"update_pairs must be a non-empty list of \(n_kmeans_updates, "
                      r"n_swap_updates\) pairs of integers >= 0, not both 0"),
     "give pairs (n_a, n_b) with n_a + n_b > 0",
     unknown=err(ValueError, r"update_pairs must be a non-empty list"))
case("front-no-iterations", FR, "parameter out of range", "max_iter=0",
     lambda c: _xs(c, max_iter=0), err(ValueError, r"max_iter must be an integer >= 1, got 0"),
     "use max_iter >= 1", unknown=err(ValueError, r"max_iter must be an integer >= 1"))
case("front-resume-without-store", FR, "half-written store", "resume=True without store",
     lambda c: _xs(c, resume=True),
     err(ValueError, r"resume=True needs the store of the interrupted run"),
     "pass the store to resume", unknown=err(ValueError, r"resume=True needs the store"))

# FCE: base labelings are the input
FCE = "FairClusteringEnsemble.fit"
case("fce-nan-labels", FCE, "NaN/inf", "base labels with one NaN",
     lambda c: _fce(c, base=_nan(D["base"])),
     err(ValueError, r"base_labels contains NaN"),
     "drop or relabel the rows")
case("fce-inf-labels", FCE, "NaN/inf", "base labels with one +inf",
     lambda c: _fce(c, base=_nan(D["base"], np.inf)),
     err(ValueError, r"base_labels contains (NaN|inf)"),
     "drop or relabel the rows")
FCE_UNKNOWN = err(ValueError, r"base_labels is a dask array with unknown chunk sizes")
case("fce-negative-labels", FCE, "labels out of range", "base labels -1..1 (-1: DBSCAN's noise)",
     lambda c: _fce(c, base=D["base"] - 1), WORKS,
     "works: every distinct value is a cluster, -1 included (the same result as 0..2)",
     same_as=_fce)
case("fce-fractional-labels", FCE, "labels out of range", "base labels 0.5, 1.5, ...",
     lambda c: _fce(c, base=D["base"] + 0.5),
     err(ValueError, r"base_labels must be integer cluster ids, got fractions"),
     "use integer cluster ids")
case("fce-huge-label", FCE, "labels out of range",
     "one base label 10**12 (ids as another tool numbered them)",
     lambda c: _fce(c, base=np.c_[D["base"], np.r_[10**12, np.zeros(N - 1, int)]]), WORKS,
     "works: each labeling's ids are renumbered in increasing order (the same result as 0, 1)",
     same_as=lambda c: _fce(c, base=np.c_[D["base"], np.r_[1, np.zeros(N - 1, int)]]))
case("fce-sparse-ids", FCE, "labels out of range", "base labels 0, 10**9, 2·10**9 (sparse ids)",
     lambda c: _fce(c, base=D["base"] * 10**9), WORKS,
     "works: memory follows the distinct ids, not the largest (the same result as 0..2)",
     same_as=_fce)
case("fce-last-row-id", FCE, "labels out of range", "base labels 0 and n - 1 only",
     lambda c: _fce(c, base=np.where(D["base"] > 0, N - 1, 0)), WORKS,
     "works: the same result as labels 0 and 1",
     same_as=lambda c: _fce(c, base=(D["base"] > 0).astype(int)))
case("fce-empty", FCE, "empty arrays", "0 rows", lambda c: _fce(c, base=D["base"][:0],
                                                             s=D["s"][:0]),
     err(ValueError, r"base_labels is empty \(shape \(0, 3\)\)"), "give labelings")
case("fce-no-labelings", FCE, "empty arrays", "base labels of shape (12, 0)",
     lambda c: _fce(c, base=D["base"][:, :0]),
     err(ValueError, r"base_labels is empty \(shape \(12, 0\)\)"), "give labelings")
case("fce-one-row", FCE, "one row", "1 row, n_clusters=1",
     lambda c: _fce(c, base=D["base"][:1], s=D["s"][:1], n_clusters=1), ONE_GROUP,
     "fairness needs at least two groups (so two rows)")
case("fce-two-rows", FCE, "one row", "2 rows of two groups, n_clusters=2",
     lambda c: _fce(c, base=D["base"][:2], s=D["s"][:2], n_clusters=2), WORKS,
     "works: the smallest problem", n_out=2)
case("fce-one-group", FCE, "one group", "every row in group 0",
     lambda c: _fce(c, s=_groups("one")), ONE_GROUP, "fairness needs at least two groups")
case("fce-group-of-one-row", FCE, "group of one row", "group 1 has a single row",
     lambda c: _fce(c, s=_groups("single")), WORKS, "works")
case("fce-small-groups", FCE, "one group",
     "two sensitive columns, two pairs of 2 rows, min_group_size=3",
     lambda c: _fce(c, s=_groups("2d-small"), min_group_size=3), SMALL_PAIRS,
     "merge them with small_groups='merge', lower min_group_size, or drop the rows")
case("fce-small-groups-merged", FCE, "one group", "the same, with small_groups='merge'",
     lambda c: _fce(c, s=_groups("2d-small"), min_group_size=3, small_groups="merge"),
     Expect(warns=UserWarning),
     "works: the small pairs become the group 'other' (a warning names them)",
     same_as=lambda c: _fce(c, s=_groups("2d-merged")))
for kind in ("str", "float", "bool"):
    case(f"fce-groups-{kind}", FCE, "groups as strings/floats/booleans",
         f"groups as {kind} values", lambda c, k=kind: _fce(c, s=_groups(k)), WORKS, GROUP_SAYS,
         same_as=_fce)
case("fce-groups-mixed-types", FCE, "groups as strings/floats/booleans",
     "object groups mixing strings and integers", lambda c: _fce(c, s=_groups("mixed")),
     MIXED, "give every group as one type")
case("fce-short-groups", FCE, "mismatched lengths", "groups one row shorter",
     lambda c: _fce(c, s=_groups("short")), SHORT_GROUPS, "give one group per row")
case("fce-unequal-labelings", FCE, "mismatched lengths",
     "a list of two labelings of 12 and 11 rows",
     lambda c: _fce(c, base=[c.w(D["base"][:, 0]), c.w(D["base"][:-1, 1])]),
     err(ValueError, r"base labelings have different lengths \[11, 12\]"),
     "label the same rows in every labeling", unknown=err(
         ValueError, r"base labelings have different lengths"))
case("fce-unknown-chunks", FCE, "unknown chunk sizes",
     "base labels a dask array with unknown chunk sizes, groups numpy",
     lambda c: _fce(c, base=c.unknown(D["base"])), FCE_UNKNOWN,
     "call compute_chunk_sizes() first", backends=("numpy",))
case("fce-unknown-chunks-groups", FCE, "unknown chunk sizes",
     "groups a dask array with unknown chunk sizes",
     lambda c: _fce(c, s=c.unknown(D["s"])),
     err(ValueError, r"sensitive_features is a dask array with unknown chunk sizes"),
     "call compute_chunk_sizes() first", backends=("numpy",))
case("fce-strings-labels", FCE, "non-numeric columns", "base labels as strings",
     lambda c: _fce(c, base=D["base"].astype(str)),
     err(TypeError, r"base_labels must be integers, got dtype <U"), "give integer labels")
case("fce-bool-labels", FCE, "non-numeric columns", "base labels as booleans",
     lambda c: _fce(c, base=D["base"] > 0, n_clusters=2),
     err(TypeError, r"base_labels must be integers, got dtype bool"),
     "give integer labels (base.astype(int))")
case("fce-1d-labels", FCE, "mismatched lengths", "one labeling as a 1-D array",
     lambda c: _fce(c, base=D["base"][:, 0]),
     err(ValueError, r"base_labels must be 2-D \(n_samples, n_labelings\)"),
     "pass an (n, m) array (base[:, None] for one labeling)",
     unknown=err(ValueError, r"base_labels must be 2-D"))
case("fce-c-above-n", FCE, "K > n", "n_clusters=13 with 12 rows",
     lambda c: _fce(c, n_clusters=13),
     err(ValueError, r"n_clusters=13 is larger than the number of samples \(12\)"),
     "use fewer clusters or more data")
case("fce-c-equals-n", FCE, "K > n", "n_clusters=12 with 12 rows",
     lambda c: _fce(c, n_clusters=12), WORKS, "works: one row per cluster")
case("fce-c-zero", FCE, "K > n", "n_clusters=0", lambda c: _fce(c, n_clusters=0),
     err(ValueError, r"n_clusters must be 'auto' or an integer >= 1, got 0"), "use c >= 1",
     unknown=err(ValueError, r"n_clusters must be 'auto' or an integer >= 1, got 0"))
case("fce-c-float", FCE, "K > n", "n_clusters=3.0", lambda c: _fce(c, n_clusters=3.0),
     err(TypeError, r"n_clusters must be 'auto' or an integer >= 1, got 3\.0"),
     "give an integer",
     unknown=err(TypeError, r"n_clusters must be 'auto' or an integer >= 1, got 3\.0"))
case("fce-auto-c-one-cluster", FCE, "K > n",
     "n_clusters=\"auto\" and one labeling with every row in one cluster",
     lambda c: _fce(c, base=np.zeros((N, 1), dtype=np.int64), n_clusters="auto"),
     err(ValueError, r"n_clusters"),
     "give n_clusters")
case("fce-auto-c-four-rows", FCE, "K > n",
     "n_clusters=\"auto\" (silhouette search) on 4 rows",
     lambda c: _fce(c, base=D["base"][:4], s=D["s"][:4], n_clusters="auto"), WORKS,
     "the candidates are capped below the rows of the silhouette sample", n_out=4)

case("fce-store-exists", FCE, "half-written store", "store= a path that holds a run",
     lambda c: _fce(c, store=_run(c)),
     err(FileExistsError, r"already exists.*overwrite=True"),
     "choose another path, delete it, or pass overwrite=True", backends=("numpy",))
case("fce-resume-finished", FCE, "half-written store", "resume=True on a finished run",
     lambda c: _fce(c, store=_run(c), resume=True),
     err(ValueError, r"holds a finished run; there is nothing to resume"),
     "read it with open_run, or start a new store", backends=("numpy",))
case("fce-resume-other-format", FCE, "zarr store from another version",
     "resume=True on a run of a future store format (3)",
     lambda c: _fce(c, store=_run(c, format=FUTURE, complete=False), resume=True), OTHER_FORMAT,
     "rerun with this version", backends=("numpy",))
case("fce-store-no-permission", FCE, "path without write permission",
     "store= in a read-only directory (run as nobody when root)",
     lambda c: _fce(c, store=_no_permission(c), unprivileged=True), NO_WRITE,
     "choose a --store path in a writable directory", backends=("numpy",))
case("front-store-exists", FR, "half-written store", "store= a path that holds a run",
     lambda c: _xs(c, store=_run(c)), err(FileExistsError, r"already exists.*overwrite=True"),
     "choose another path, delete it, or pass overwrite=True", backends=("numpy",), client=True)
case("front-resume-other-kind", FR, "half-written store",
     "resume=True on an interrupted FCE run",
     lambda c: _xs(c, store=_run(c, complete=False), resume=True),
     err(ValueError, r"holds a 'fce' run, not a 'safairkm' run"), "resume the right kind",
     backends=("numpy",), client=True)

# base clusterings: every check before the first task
BC = "base_clusterings"
case("base-nan-X", BC, "NaN/inf", "X with one NaN", lambda c: {"X": c.w(_nan(D["X"]))}, NAN_X,
     "drop or impute the rows")
case("base-empty", BC, "empty arrays", "0 rows", lambda c: {"X": c.w(D["X"][:0])},
     err(ValueError, r"X has 0 rows.*at least 2"), "give at least 2 rows")
case("base-one-row", BC, "one row", "1 row", lambda c: {"X": c.w(D["X"][:1]), "n_clusters": 1},
     err(ValueError, r"X has 1 rows.*at least 2"), "give at least 2 rows")
case("base-no-columns", BC, "empty arrays", "X of shape (12, 0)",
     lambda c: {"X": c.w(D["X"][:, :0])}, NO_COLUMNS, "give at least one feature")
case("base-strings-X", BC, "non-numeric columns", "X of strings",
     lambda c: {"X": c.w(D["X"].astype(str))}, NOT_NUMERIC,
     "encode text columns (daskfair.TableEncoder)", unknown=NOT_NUMERIC)
case("base-K-above-n", BC, "K > n", "n_clusters=13 with 12 rows",
     lambda c: {"X": c.w(D["X"]), "n_clusters": 13},
     err(ValueError, r"n_clusters=13 is larger than the number of samples \(12\)"),
     "use fewer clusters or more data")
case("base-K-zero", BC, "K > n", "n_clusters=0", lambda c: {"X": c.w(D["X"]), "n_clusters": 0},
     err(ValueError, r"n_clusters must be an integer >= 1, got 0"), "use n_clusters >= 1",
     unknown=err(ValueError, r"n_clusters must be an integer >= 1, got 0"))
case("base-unknown-method", BC, "parameter out of range", "methods=('dbscan',)",
     lambda c: {"X": c.w(D["X"]), "methods": ("dbscan",)},
     err(ValueError, r"methods must be a non-empty list of values, each one of \('kmeans', "),
     "choose one of BASE_METHODS",
     unknown=err(ValueError, r"methods must be a non-empty list of values"))
case("base-no-runs", BC, "parameter out of range", "n_runs=0",
     lambda c: {"X": c.w(D["X"]), "n_runs": 0},
     err(ValueError, r"n_runs must be an integer >= 1, got 0"), "use n_runs >= 1",
     unknown=err(ValueError, r"n_runs must be an integer >= 1, got 0"))
case("base-K-equals-n", BC, "K > n", "n_clusters=12 with 12 rows, all four methods",
     lambda c: {"X": c.w(D["X"]), "n_clusters": 12, "n_runs": 4,
                "methods": ("kmeans", "minibatch", "spectral", "agglomerative")},
     WORKS, "works: one row per cluster")
case("base-constant-X-spectral", BC, "k > rank", "constant X with methods=('spectral',)",
     lambda c: {"X": c.w(np.ones((N, 3))), "methods": ("spectral",)}, WORKS,
     "works: every row in one cluster (the Nyström map has rank 1)")

# metrics: clustering_report runs every check of the others
REP = "clustering_report"
case("report-nan-labels", REP, "NaN/inf", "cluster labels with one NaN",
     lambda c: _report(c, labels=_nan(D["labels"])),
     err(ValueError, r"labels contains NaN or infinite values.*Drop or relabel"),
     "drop or relabel the rows")
case("report-inf-labels", REP, "NaN/inf", "cluster labels with one +inf",
     lambda c: _report(c, labels=_nan(D["labels"], np.inf)),
     err(ValueError, r"labels contains NaN or infinite values"), "drop or relabel the rows")
case("report-nan-groups", REP, "NaN/inf", "float groups with one NaN",
     lambda c: _report(c, s=_groups("nan")), GROUPS_MISSING, "every row needs a group")
case("report-none-groups", REP, "NaN/inf", "object groups with None",
     lambda c: _report(c, s=_groups("none")), GROUPS_MISSING, "every row needs a group")
case("report-negative-labels", REP, "labels out of range", "cluster labels -1..1",
     lambda c: _report(c, labels=D["labels"] - 1),
     err(ValueError, r"labels has negative values \(-1\).*return_inverse"),
     "encode with numpy.unique(..., return_inverse=True)")
case("report-labels-above-classes", REP, "labels out of range",
     "cluster labels 3..5 with 3 classes (c = number of classes)",
     lambda c: _report(c, labels=D["labels"] + 3),
     err(ValueError, r"labels must lie in \[0, 2\], found values in \[[345], [345]\]"),
     "give n_clusters, or labels below the number of classes")
case("report-labels-above-n-clusters", REP, "labels out of range",
     "cluster labels 0..2 with n_clusters=2", lambda c: _report(c, n_clusters=2),
     err(ValueError, r"labels must lie in \[0, 1\], found values in \[0, 2\]"),
     "give n_clusters above the largest label")
case("report-n-clusters-zero", REP, "labels out of range", "n_clusters=0",
     lambda c: _report(c, n_clusters=0),
     err(ValueError, r"n_clusters must be an integer >= 1, got 0"),
     "use n_clusters >= 1")
case("report-n-clusters-bool", REP, "labels out of range", "n_clusters=True",
     lambda c: _report(c, n_clusters=True),
     err(TypeError, r"n_clusters must be an integer >= 1, got True"), "give an integer")
case("report-huge-class-label", REP, "labels out of range",
     "one class label 10**9 (ids instead of classes)",
     lambda c: _report(c, y=np.r_[10**9, D["y_true"][1:]]),
     err(ValueError, r"y_true.*(re-?encode|return_inverse|larger than)"),
     "re-encode the labels 0..c-1")
case("report-empty", REP, "empty arrays", "0 rows",
     lambda c: _report(c, y=D["y_true"][:0], labels=D["labels"][:0], s=D["s"][:0]),
     err(ValueError, r"y_true is empty; metrics need at least one row"), "give rows")
case("report-one-row", REP, "one row", "1 row", lambda c: _report(
     c, y=D["y_true"][:1], labels=D["labels"][:1], s=D["s"][:1]), ONE_GROUP,
     "fairness metrics need two groups (so two rows)")
case("report-one-group", REP, "one group", "every row in group 0",
     lambda c: _report(c, s=_groups("one")), ONE_GROUP, "fairness needs at least two groups")
case("report-group-of-one-row", REP, "group of one row", "group 1 has a single row",
     lambda c: _report(c, s=_groups("single")), WORKS,
     "works: Bal, MNCE and f_CCE are 0 where a cluster misses the group")
for kind in ("str", "float", "bool", "object"):
    case(f"report-groups-{kind}", REP, "groups as strings/floats/booleans",
         f"groups as {kind} values", lambda c, k=kind: _report(c, s=_groups(k)), WORKS,
         GROUP_SAYS, same_as=_report)
case("report-groups-mixed-types", REP, "groups as strings/floats/booleans",
     "object groups mixing strings and integers", lambda c: _report(c, s=_groups("mixed")),
     MIXED, "give every group as one type")
case("report-short-labels", REP, "mismatched lengths", "labels one row shorter than y_true",
     lambda c: _report(c, labels=D["labels"][:-1]),
     err(ValueError, r"labels has 11 entries but 12 were expected"), "give one label per row")
case("report-short-groups", REP, "mismatched lengths", "groups one row shorter",
     lambda c: _report(c, s=_groups("short")), SHORT_GROUPS, "give one group per row")
for arg, name_ in (("y", "y_true"), ("labels", "labels"), ("s", "sensitive_features")):
    case(f"report-unknown-chunks-{arg}", REP, "unknown chunk sizes",
         f"{name_} a dask array with unknown chunk sizes, the rest numpy",
         lambda c, a=arg: _report(c, **{a: c.unknown(
             {"y": D["y_true"], "labels": D["labels"], "s": D["s"]}[a])}),
         err(ValueError, rf"{name_} (is a dask array with unknown chunk sizes|has 12 entries "
                         r"but X has an unknown number of rows)"),
         "call compute_chunk_sizes() first", backends=("numpy",))
case("report-strings-labels", REP, "non-numeric columns", "cluster labels as strings",
     lambda c: _report(c, labels=D["labels"].astype(str)),
     err(TypeError, r"labels must be integers, got dtype <U"),
     "encode them with numpy.unique(..., return_inverse=True)")
case("report-2d-labels", REP, "mismatched lengths", "labels of shape (12, 2)",
     lambda c: _report(c, labels=np.c_[D["labels"], D["labels"]]),
     err(ValueError, r"labels must be 1-D, got shape"), "give one label per row")
case("balance-group-of-one-row", "balance", "group of one row", "group 1 has a single row",
     lambda c: {"labels": c.w(D["labels"]), "sensitive_features": c.w(_groups("single"))},
     WORKS, "works: 0, a cluster misses group 1")
case("dpd-one-group", "demographic_parity_difference", "one group", "every row in group 0",
     lambda c: {"y_true": None, "y_pred": c.w(D["yc"]),
                "sensitive_features": c.w(_groups("one"))}, ONE_GROUP,
     "fairness needs at least two groups")
case("dpd-groups-str", "demographic_parity_difference", "groups as strings/floats/booleans",
     "groups as strings", lambda c: {"y_true": None, "y_pred": c.w(D["yc"]),
                                     "sensitive_features": c.w(_groups("str"))},
     WORKS, GROUP_SAYS, same_as=lambda c: {"y_true": None, "y_pred": c.w(D["yc"]),
                                           "sensitive_features": c.w(D["s"])})
case("dpd-2d-predictions", "demographic_parity_difference", "mismatched lengths",
     "predictions of shape (12, 2)",
     lambda c: {"y_true": None, "y_pred": c.w(np.c_[D["yc"], D["yc"]]),
                "sensitive_features": c.w(D["s"])},
     err(ValueError, r"y_pred must be a non-empty 1-D array"), "give one prediction per row",
     unknown=err(ValueError, r"y_pred must be a non-empty 1-D array"))
case("dpd-short-groups", "demographic_parity_difference", "mismatched lengths",
     "groups one row shorter",
     lambda c: {"y_true": None, "y_pred": c.w(D["yc"]),
                "sensitive_features": c.w(_groups("short"))},
     SHORT_GROUPS, "give one group per row",
     unknown=err(ValueError, r"y_pred.*unknown|unknown chunk sizes"))
case("kmeans-cost-nan-X", "kmeans_cost", "NaN/inf", "X with one NaN",
     lambda c: {"X": c.w(_nan(D["X"])), "labels": c.w(D["labels"])}, NAN_X,
     "drop or impute the rows")
case("kmeans-cost-short-labels", "kmeans_cost", "mismatched lengths",
     "labels one row shorter than X",
     lambda c: {"X": c.w(D["X"]), "labels": c.w(D["labels"][:-1])},
     err(ValueError, r"labels has 11 entries but 12 were expected"), "give one label per row")
case("error-rate-short", "error_rate", "mismatched lengths", "y_pred one row shorter",
     lambda c: {"args": (c.w(D["yc"]), c.w(D["yc"][:-1]))},
     err(ValueError, r"Inconsistent numbers of rows: y_true has 12, y_pred has 11"),
     "give the same rows", unknown=err(ValueError, r"y_true is a dask array with unknown chunk"))
case("error-rate-empty", "error_rate", "empty arrays", "0 rows",
     lambda c: {"args": (c.w(D["yc"][:0]), c.w(D["yc"][:0]))},
     err(ValueError, r"y_true is empty"), "give rows",
     unknown=err(ValueError, r"y_true is a dask array with unknown chunk"))
case("error-rate-2d", "error_rate", "mismatched lengths", "two (12, 2) arrays",
     lambda c: {"args": (c.w(np.zeros((N, 2))), c.w(np.ones((N, 2))))},
     err(ValueError, r"y_true and y_pred must be 1-D"),
     "give one label per row", unknown=err(ValueError, r"y_true and y_pred must be 1-D"))
case("ne-n-clusters-zero", "normalized_entropy", "labels out of range", "n_clusters=0",
     lambda c: {"labels": c.w(D["labels"]), "n_clusters": 0},
     err(ValueError, r"n_clusters must be an integer >= 1"),
     "use n_clusters >= 1",
     unknown=err(ValueError, r"labels is a dask array with unknown chunk"))
case("ne-n-clusters-below-labels", "normalized_entropy", "labels out of range",
     "3 distinct labels with n_clusters=2",
     lambda c: {"labels": c.w(D["labels"]), "n_clusters": 2},
     err(ValueError, r"labels must lie in \[0, 1\]"),
     "give n_clusters above the largest label",
     unknown=err(ValueError, r"labels is a dask array with unknown chunk"))
case("error-rate-unknown-chunks", "error_rate", "unknown chunk sizes",
     "both inputs dask arrays with unknown chunk sizes",
     lambda c: {"args": (c.unknown(D["yc"]), c.unknown(D["yc"]))},
     err(ValueError, r"y_true is a dask array with unknown chunk sizes"),
     "call compute_chunk_sizes() first", backends=("numpy",))

# run stores
STORE_FILE = {"backends": ("file",)}
case("store-other-format", "open_run", "zarr store from another version",
     "a run written in a future store format (5)",
     lambda c: {"path": _run(c, format=FUTURE)}, OTHER_FORMAT,
     "rerun with this version, or read it with the version that wrote it", **STORE_FILE)
case("store-other-format-resume", "resume_run", "zarr store from another version",
     "resume a run written in a future store format (5)",
     lambda c: {"path": _run(c, format=FUTURE, complete=False), "kind": "fce",
                "params": {"n_clusters": 3}}, OTHER_FORMAT,
     "rerun with this version", **STORE_FILE)
case("store-earlier-format", "open_run", "zarr store from another version",
     "a run of format 3 (its model as loose arrays, before saved models)",
     lambda c: {"path": _run(c, format=EARLIER)},
     err(StoreError, rf"format {EARLIER} .*reads format {STORE_FORMAT} only"),
     "rerun with this version, or read it with the version that wrote it", **STORE_FILE)
case("store-format-not-int", "open_run", "zarr store from another version",
     "a run whose format marker is the string '1'", lambda c: {"path": _run(c, format="1")},
     err(StoreError, r"format '1'"),
     "rerun the job", **STORE_FILE)
case("store-zarr-v2-group", "open_run", "zarr store from another version",
     "a zarr format 2 group (zarr-python 2) without the daskfair marker",
     lambda c: {"path": _zarr_group(c, 2)},
     err(StoreError, r"is a zarr group but not a daskfair run"), "open a daskfair run",
     **STORE_FILE)
case("store-plain-zarr-group", "open_run", "zarr store from another version",
     "a zarr group written by something else", lambda c: {"path": _zarr_group(c)},
     err(StoreError, r"is a zarr group but not a daskfair run"), "open a daskfair run",
     **STORE_FILE)
case("store-zarr-array", "open_run", "zarr store from another version",
     "a zarr array instead of a group", lambda c: {"path": _array_store(c)},
     err(StoreError, r"not a readable zarr group.*rerun the job"), "rerun the job",
     **STORE_FILE)
case("store-half-written", "open_run", "half-written store",
     "a run without its completion marker (crashed)",
     lambda c: {"path": _run(c, complete=False)},
     err(IncompleteRunError, r"did not finish.*resume it \(resume=True\).*or delete it"),
     "resume it, or delete it and run again", **STORE_FILE)
case("store-truncated-metadata", "open_run", "half-written store",
     "zarr.json cut off after 40 bytes", lambda c: {"path": _truncated(c)},
     err(StoreError, r"not a readable zarr group \(JSONDecodeError.*corrupt.*rerun the job"),
     "rerun the job to recreate it", **STORE_FILE)
case("store-empty-directory", "open_run", "half-written store", "an empty directory",
     lambda c: {"path": (c.tmp / "empty.zarr").mkdir() or c.tmp / "empty.zarr"},
     err(StoreError, r"not a readable zarr group"), "rerun the job", **STORE_FILE)
case("store-is-a-file", "open_run", "half-written store", "a text file named run.zarr",
     lambda c: {"path": _file(c, "run.zarr", "hello")},
     err(StoreError, r"not a readable zarr group"), "rerun the job", **STORE_FILE)
case("store-missing", "open_run", "half-written store", "a path that does not exist",
     lambda c: {"path": c.tmp / "nope.zarr"},
     err(StoreError, r"no run store at .*does not exist"), "check the path", **STORE_FILE)
case("store-resume-missing", "resume_run", "half-written store",
     "resume a path that does not exist",
     lambda c: {"path": c.tmp / "nope.zarr", "kind": "fce", "params": {}},
     err(StoreError, r"nothing to resume.*Run with resume=False"), "run with resume=False",
     **STORE_FILE)
case("store-resume-other-kind", "resume_run", "half-written store",
     "resume an FCE run as SAfairKM",
     lambda c: {"path": _run(c, complete=False), "kind": "safairkm",
                "params": {"n_clusters": 3}},
     err(ValueError, r"holds a 'fce' run, not a 'safairkm' run"), "resume the right kind",
     **STORE_FILE)
case("store-resume-other-params", "resume_run", "half-written store",
     "resume with other parameters",
     lambda c: {"path": _run(c, complete=False), "kind": "fce", "params": {"n_clusters": 4}},
     err(ValueError, r"parameters differ from the stored run \(\['n_clusters'\]\)"),
     "resume with the same parameters, or start a new store", **STORE_FILE)
case("store-resume-finished", "resume_run", "half-written store", "resume a finished run",
     lambda c: {"path": _run(c), "kind": "fce", "params": {"n_clusters": 3}},
     err(ValueError, r"holds a finished run; there is nothing to resume"),
     "read it with open_run, or start a new store", **STORE_FILE)
case("store-exists", "create_run", "path without write permission",
     "create a run where one exists", lambda c: {"path": _run(c)},
     err(FileExistsError, r"already exists.*overwrite=True"),
     "choose another path, delete it, or pass overwrite=True", **STORE_FILE)
case("store-no-write-permission", "create_run", "path without write permission",
     "create a run in a read-only directory (run as nobody when root)",
     lambda c: {"path": _no_permission(c), "unprivileged": True},
     NO_WRITE, "choose a --store path in a writable directory", **STORE_FILE)
case("store-no-read-permission", "open_run", "path without write permission",
     "open a run in a directory without read permission (run as nobody when root)",
     lambda c: {"path": _unreadable(c), "unprivileged": True},
     err(StoreError, r"[Pp]ermission denied(?!.*corrupt)"),
     "fix the permissions", **STORE_FILE)
case("store-parent-is-a-file", "create_run", "path without write permission",
     "create a run inside a regular file's path",
     lambda c: {"path": _file(c, "file.txt", "x") / "run.zarr"},
     err(ValueError, r"not a directory"),
     "choose a --store path in a directory", **STORE_FILE)
case("store-write-unknown-chunks", "Run.write_array", "unknown chunk sizes",
     "write a dask array with unknown chunk sizes",
     lambda c: {"path": c.tmp / "w.zarr", "data": c.unknown(np.arange(10.0))},
     err(ValueError, r"unknown chunk sizes; call compute_chunk_sizes"),
     "call compute_chunk_sizes() first", **STORE_FILE)
case("store-write-strings", "Run.write_array", "non-numeric columns", "write an array of strings",
     lambda c: {"path": c.tmp / "w.zarr", "data": np.array(["a", "b"])},
     err(TypeError, r"store 'x' as an attribute: arrays must be numeric"),
     "store text as an attribute", **STORE_FILE)

# run stores: damaged after they finished, or in use (issue 27)
case("store-truncated-chunk", "open_run", "corrupt store",
     "a finished run with one chunk of an array cut short",
     lambda c: {"path": _damaged(c, "truncate")},
     err(CorruptStoreError, r"is corrupt: array 'x' \(its file c/\d\) has .* bytes where .* were "
                            r"written \(a chunk is truncated.*rerun the job with "
                            r"overwrite=True"),
     "restore it from a backup, or rerun the job", **STORE_FILE)
case("store-altered-chunk", "Run.read_array", "corrupt store",
     "a finished run with one byte of a chunk changed (same size)",
     lambda c: {"path": _damaged(c, "flip")},
     err(CorruptStoreError, r"array 'x' \(its file c/\d\) has other contents than were "
                            r"written"),
     "restore it from a backup, or rerun the job", **STORE_FILE)
case("store-forged-marker", "open_run", "corrupt store",
     "an unfinished run whose status was edited to 'complete'",
     lambda c: {"path": _damaged(c, "forge")},
     err(CorruptStoreError, r"marked complete but has no record of its files"),
     "rerun the job", **STORE_FILE)
case("store-foreign-folder", "create_run", "store in use",
     "overwrite=True on a folder holding a user's file",
     lambda c: {"path": _foreign(c), "overwrite": True},
     err(FileExistsError, r"not a daskfair run store \(it holds 1 entry: thesis.tex\).*never "
                          r"deletes"),
     "choose another --store path; nothing in it is touched", **STORE_FILE)
case("store-lock-live", "create_run", "store in use",
     "overwrite=True on a run whose lock a live process holds",
     lambda c: {"path": _locked(c, alive=True), "overwrite": True},
     err(StoreLockedError, r"being written by another run \(host .*process \d+ is running\).*"
                           r"wait for that run to finish, or choose another path for store="),
     "wait for that run, or choose another store", **STORE_FILE)
case("store-lock-dead", "resume_run", "store in use",
     "resume a run whose lock a process that died (SIGKILL) left",
     lambda c: {"path": _locked(c, alive=False), "kind": "fce", "params": {"n_clusters": 3}},
     err(StoreLockedError, r"locked by a run that is no longer running.*is no longer running"
                           r".*daskfair.store.break_lock"),
     "break the lock (--break-lock), then resume", **STORE_FILE)
case("store-break-live-lock", "break_lock", "store in use",
     "break_lock on a lock a live process holds",
     lambda c: {"path": _locked(c, alive=True)},
     err(StoreLockedError, r"not breaking the lock.*holder is alive"),
     "wait for that run to finish, or stop it first", **STORE_FILE)

# audits (issue 38): refused before any interval is drawn, never a partial table


def _audit(c: Context, *, y: Any = None, p: Any = None, s: Any = None,
           **params: Any) -> dict[str, Any]:
    return {"y_true": c.w(D["yc"] if y is None else y),
            "y_pred": c.w(D["yc"][::-1].copy() if p is None else p),
            "sensitive_features": c.w(D["s"] if s is None else s), "n_boot": 50, **params}


case("audit-works", "audit", "plain input", "two groups, binary labels and decisions",
     lambda c: _audit(c), WORKS, "works")


def bad_arrow_strings(n: int = N) -> pd.Series:
    """Text groups whose Arrow offsets decrease (pyarrow's from_buffers checks sizes only)."""
    import pyarrow as pa

    offsets = np.arange(n + 1, dtype=np.int32)
    offsets[5], offsets[6] = n - 1, 6
    arr = pa.Array.from_buffers(pa.string(), n, [None, pa.py_buffer(offsets.tobytes()),
                                                 pa.py_buffer(b"ab" * (n // 2))])
    return pd.Series(pd.arrays.ArrowStringArray(pa.chunked_array([arr])))


BAD_ARROW = err(ValueError, r"sensitive_features is a malformed Arrow array \(its offsets "
                            r"decrease or leave its data buffer\).*Rebuild the column")
case("audit-malformed-arrow", "audit", "non-numeric columns",
     "an Arrow text column of groups whose offsets decrease",
     lambda c: {**_audit(c), "sensitive_features": bad_arrow_strings()}, BAD_ARROW,
     "rebuild the column (pyarrow.array(values.to_pylist()))", **GUARDED)
case("fkr-malformed-arrow", "FairKernelRegressor.fit", "non-numeric columns",
     "an Arrow text column of groups whose offsets decrease",
     lambda c: {**_fkr("FairKernelRegressor", c), "sensitive_features": bad_arrow_strings()},
     BAD_ARROW, "rebuild the column (pyarrow.array(values.to_pylist()))", **GUARDED)
# -- damaged checkpoints: checked before a kernel indexes with them (in this process: the
# stopped run is written first; tests/test_hostile_stores.py resumes each in a guarded child)

class _Stop(Exception):
    pass


def damaged_front(tmp: Path, how: str) -> tuple[np.ndarray, dict[str, Any], str]:
    """A SAfairKM front stopped at its second checkpoint, one of whose label vectors is then
    damaged ``how`` ("label": a label 250 with K = 3, "short": a row fewer, "counts": a count
    changed); X, the arguments that resume it, and the damaged group's name."""
    import zarr

    X, s, _ = (np.asarray(a) for a in make_fair_blobs(300, n_clusters=3, random_state=0))
    kw = {"sensitive_features": s, "n_clusters": 3, "n_init": 4, "max_iter": 6,
          "checkpoint_every": 2, "random_state": 0, "store": tmp / "f.zarr"}

    def stop(t: int, cost: Any, balance: Any) -> None:
        if t >= 4:
            raise _Stop

    with contextlib.suppress(_Stop):
        pareto_front(X, callback=stop, client=None, **kw)
    name = f"{open_run(tmp / 'f.zarr', allow_incomplete=True).checkpoint['group']}/b0"
    group = zarr.open_group(str(tmp / "f.zarr"), mode="r+")
    labels, counts = group[f"{name}/labels"][...], group[f"{name}/counts"][...]
    if how == "label":
        labels[0, 7] = 250
    elif how == "counts":
        counts[0, 0, 0] += 1
    elif how == "short":
        labels = labels[:, :-1]
    group.create_array(f"{name}/labels", data=labels, overwrite=True)
    group.create_array(f"{name}/counts", data=counts, overwrite=True)
    return X, {**kw, "resume": True}, name


def stopped_consensus(tmp: Path) -> tuple[np.ndarray, np.ndarray, Path]:
    """An FCE consensus of 400 rows stopped after its third iteration: base labels, groups
    and its store."""
    rng = np.random.default_rng(0)
    base, groups = rng.integers(0, 3, (400, 4)), rng.integers(0, 2, 400)

    def stop(state: Any) -> None:
        if state.n_iter == 3:
            raise _Stop

    with contextlib.suppress(_Stop):
        FairClusteringEnsemble(3, random_state=0, tol=0.0, max_iter=6).fit(
            base, sensitive_features=groups, store=tmp / "c.zarr", callback=stop)
    return base, groups, tmp / "c.zarr"


def _damaged_consensus(c: Context) -> dict[str, Any]:
    import zarr

    base, groups, store = stopped_consensus(c.tmp)
    name = open_run(store, allow_incomplete=True).checkpoint["group"]
    group = zarr.open_group(str(store), mode="r+")
    labels = group[f"{name}/labels"][...]
    group.create_array(f"{name}/labels", overwrite=True,
                       data=np.where(np.arange(400) == 5, 250, labels).astype(labels.dtype))
    return {"base_labels": base, "sensitive_features": groups, "store": store, "resume": True,
            "tol": 0.0, "max_iter": 6}


def _damaged_front_case(c: Context) -> dict[str, Any]:
    X, kw, _ = damaged_front(c.tmp, "label")
    return {"X": X, **kw, "client": None}


_CHECKPOINT = ("start the run again (overwrite=True): the checkpoint cannot be trusted; "
               "the error names it")
case("front-damaged-checkpoint", FR, "half-written store",
     "resume=True from a checkpoint whose labels hold 250 with K = 3",
     _damaged_front_case,
     err(CorruptStoreError, r"the checkpoint checkpoint_\d+/b0 in .*f.zarr is malformed "
                            r"\(ValueError: its labels are not \d+ label vectors of 300 rows "
                            r"in clusters 0 to 2"),
     _CHECKPOINT, backends=("file",))
case("fce-damaged-checkpoint", FCE, "half-written store",
     "resume=True from a checkpoint whose labels hold 250 with c = 3",
     _damaged_consensus,
     err(CorruptStoreError, r"the checkpoint checkpoint_\d+ in .*c.zarr is malformed "
                            r"\(ValueError: its labels are not 400 cluster numbers 0 to 2"),
     _CHECKPOINT, backends=("file",))

# -- parameters: one table per estimator, checked before the data ----------------------------

case("fkrr-inf-mu", "FairKernelRidge.fit", "parameter out of range", "fairness_weight=inf",
     lambda c: _fkr("FairKernelRidge", c, fairness_weight=np.inf),
     err(ValueError, r"fairness_weight must be a finite number >= 0, got inf\."),
     "use a finite fairness_weight >= 0",
     unknown=err(ValueError, r"fairness_weight must be a finite number >= 0, got inf"))
case("fkrr-text-mu", "FairKernelRidge.fit", "parameter out of range", "fairness_weight='abc'",
     lambda c: _fkr("FairKernelRidge", c, fairness_weight="abc"),
     err(TypeError, r"fairness_weight must be a finite number >= 0, got 'abc'\."),
     "give a number", unknown=err(TypeError, r"fairness_weight must be a finite number"))
case("fkr-inf-alpha", "FairKernelRegressor.fit", "parameter out of range",
     "relative_alpha=inf", lambda c: _fkr("FairKernelRegressor", c, relative_alpha=np.inf),
     err(ValueError, r"relative_alpha must be a finite number >= 0, got inf\."),
     "use a finite relative_alpha >= 0",
     unknown=err(ValueError, r"relative_alpha must be a finite number >= 0, got inf"))
case("fkr-bool-alpha", "FairKernelRegressor.fit", "parameter out of range",
     "relative_alpha=True (a bool is not a number)",
     lambda c: _fkr("FairKernelRegressor", c, relative_alpha=True),
     err(TypeError, r"relative_alpha must be a finite number >= 0, got True\."),
     "give a number", unknown=err(TypeError, r"relative_alpha must be a finite number"))
case("fkr-huge-y", "FairKernelRegressor.fit", "NaN/inf", "y of about 1e300 (Σ y² overflows)",
     lambda c: _fkr("FairKernelRegressor", c, y=D["y"] * 1e300),
     err(ValueError, r"y is too large for its sums over the rows.*rescale y"),
     "rescale y (divide it by its standard deviation)")
case("front-huge-update-pairs", FR, "parameter out of range",
     "update_pairs=[(10**12, 1)] (terabytes of logged moves)",
     lambda c: _xs(c, update_pairs=[(10**12, 1)]),
     err(ValueError, r"ask for 1,000,000,000,002 moves per member and iteration.*at most "
                     r"1,000 are allowed"), "lower q or the pairs")
case("dpd-yes-no-default-pos-label", "demographic_parity_difference", "labels out of range",
     "predictions 'yes'/'no' with the default pos_label=1",
     lambda c: {"y_true": None, "y_pred": c.w(np.where(D["yc"] == 1, "yes", "no")),
                "sensitive_features": c.w(D["s"])},
     err(ValueError, r"pos_label=1 is not among the values of y_pred \(\['no', 'yes'\]\)"),
     "give the favourable outcome's value as pos_label (as audit asks)")
case("error-rate-text-against-numbers", "error_rate", "labels out of range",
     "true labels 'yes'/'no', predictions 0/1",
     lambda c: {"args": (c.w(np.where(D["yc"] == 1, "yes", "no")), c.w(D["yc"]))},
     err(TypeError, r"y_true and y_pred hold labels of different types \(<U3 and int64\)"),
     "give both as one type")
case("fce-groups-dask-labels-numpy", FCE, "mismatched lengths",
     "base labels in memory, groups as a dask array",
     lambda c: _fce(c) | {"sensitive_features": da.from_array(D["s"], chunks=5)},
     WORKS, "works: the same labels as with both in memory", same_as=lambda c: _fce(c),
     backends=("numpy",))

case("audit-metric-reduces", "audit", "parameter out of range",
     "metrics={'total': a function that sums the counts to one number}",
     lambda c: _audit(c, metrics={"total": lambda tp, fp, fn, tn: float(np.sum(tp))}),
     err(ValueError, r"metrics: total returned shape \(\) for counts of shape \(2, 3\)"),
     "combine the counts element by element (every replicate at once)", backends=("numpy",))
case("audit-metric-unnamed", "audit", "parameter out of range",
     "metrics=[a lambda]",
     lambda c: _audit(c, metrics=[lambda tp, fp, fn, tn: tp / (tp + fn)]),
     err(ValueError, r"name each function of your own \('<lambda>' is not a name\)"),
     "def the function, or give a dict {name: function}", backends=("numpy",))
case("audit-control-same-column", "audit", "parameter out of range",
     "control_features and sensitive_features the same named column",
     lambda c: _audit(c, s=pd.Series(D["s"], name="g"),
                      control_features=pd.Series(D["s"], name="g")),
     err(ValueError, r"control_features and sensitive_features both name \['g'\]"),
     "a column is one or the other", backends=("numpy",))
case("audit-one-group", "audit", "one group", "every row in group 0",
     lambda c: _audit(c, s=_groups("one")),
     err(ValueError, r"1 group\(s\) have at least min_group_size=1 rows.*compares two or more"),
     "an audit compares groups: give a sensitive column with two or more")
case("audit-nan-label", "audit", "NaN/inf", "a NaN true label",
     lambda c: _audit(c, y=_nan(D["yc"])),
     err(ValueError, r"y_true holds missing values.*Drop those rows or fill them"),
     "drop or fill the rows first")
case("audit-three-decisions", "audit", "more than two classes", "decisions 0, 1 and 2",
     lambda c: _audit(c, p=np.arange(N) % 3),
     err(ValueError, r"y_pred holds more than two values.*map them to two values"),
     "an audit compares binary decisions")
case("audit-short-groups", "audit", "mismatched lengths", "groups one row shorter",
     lambda c: _audit(c, s=_groups("short")),
     err(ValueError, r"every input needs one value per row"),
     "give one group per row",
     unknown=err(ValueError, r"unknown chunk sizes"))
case("audit-all-suppressed", "audit", "K > n", "min_group_size larger than every group",
     lambda c: _audit(c, min_group_size=100),
     err(ValueError, r"0 group\(s\) have at least min_group_size=100 rows \(of 2 present\)"),
     "lower min_group_size: no group would be reported")
case("audit-absent-reference", "audit", "absent group", "reference_group names no group",
     lambda c: _audit(c, reference_group=7),
     err(ValueError, r"reference_group=7 is not a group; the groups are \[0, 1\]"),
     "name one of the groups")

_AMOUNTS = np.linspace(10.0, 120.0, N)
case("audit-regression-works", "audit", "plain input", "task='regression': amounts and "
     "their predictions, two groups",
     lambda c: _audit(c, y=c.w(_AMOUNTS), p=c.w(_AMOUNTS[::-1].copy()), n_boot=0,
                      task="regression"), WORKS, "works")
case("audit-regression-nan", "audit", "NaN/inf", "task='regression' with a NaN prediction",
     lambda c: _audit(c, y=c.w(_AMOUNTS), p=_nan(_AMOUNTS), n_boot=0, task="regression"),
     err(ValueError, r"y_true or y_pred holds NaN or infinite values"),
     "drop those rows")
case("audit-regression-score", "audit", "parameter out of range",
     "task='regression' with y_score",
     lambda c: _audit(c, y=c.w(_AMOUNTS), p=c.w(_AMOUNTS), n_boot=0, task="regression",
                      y_score=c.w(_AMOUNTS)),
     err(ValueError, r"task='regression' takes no y_score"),
     "leave out what a regression audit does not use", backends=("numpy",))
case("audit-regression-one-group", "audit", "one group",
     "task='regression', every row in group 0",
     lambda c: _audit(c, y=c.w(_AMOUNTS), p=c.w(_AMOUNTS), s=_groups("one"), n_boot=0,
                      task="regression"),
     err(ValueError, r"1 group\(s\) have at least min_group_size=1 rows.*compares two or more"),
     "give a sensitive column with two or more groups")
case("audit-continuous-target", "audit", "more than two classes",
     "amounts audited as binary decisions (no task)",
     lambda c: _audit(c, y=c.w(_AMOUNTS), p=c.w(_AMOUNTS)),
     err(ValueError, r"y_true holds more than two values.*task='regression'"),
     "say task='regression' for numbers")

_UNIT_SCORES = np.linspace(0.05, 0.95, N)
case("audit-calibration-works", "Audit.calibration", "plain input",
     "scores in [0, 1], two groups", lambda c: _audit(c, y_score=c.w(_UNIT_SCORES)), WORKS,
     "works: one expected calibration error per group", n_out=2)
case("audit-calibration-no-scores", "Audit.calibration", "parameter out of range",
     "calibration of an audit without y_score", lambda c: _audit(c),
     err(ValueError, r"calibration needs scores: call audit\(\.\.\., y_score=\.\.\.\)"),
     "audit with y_score")
case("audit-calibration-outside", "Audit.calibration", "parameter out of range",
     "scores of 0 to 3.3 (not probabilities)",
     lambda c: _audit(c, y_score=c.w(np.arange(N) * 0.3)),
     err(ValueError, r"calibration needs probabilities: some scores lie outside \[0, 1\]"),
     "audit y_score=predict_proba(...)[:, 1], or scores mapped to [0, 1]")
case("audit-calibration-zero-bins", "Audit.calibration", "parameter out of range",
     "n_bins=0", lambda c: _audit(c, y_score=c.w(_UNIT_SCORES), n_bins=0),
     err(ValueError, r"n_bins must be an integer from 1 to 25200"), "give 1 to 25200 bins",
     backends=("numpy",))
case("audit-calibration-strategy", "Audit.calibration", "parameter out of range",
     "strategy='kmeans'", lambda c: _audit(c, y_score=c.w(_UNIT_SCORES), strategy="kmeans"),
     err(ValueError, r"strategy must be one of \('uniform', 'quantile'\)"),
     "'uniform' or 'quantile'", backends=("numpy",))

# saved models: daskfair.load never runs what a store names (issue 37)
MODEL_FILE = {"backends": ("file",)}
case("model-names-code", "load", "store that names code",
     "a complete, consistent store whose model names os.system as its class",
     lambda c: {"path": _model_store(c, "names-code")},
     err(UnsafeModelError, r"names 'os.system', which is not a class daskfair saves.*refused "
                           r"unread"),
     "load only what daskfair.save wrote; nothing is imported or run", **MODEL_FILE)
case("model-pickle-node", "load", "store that names code",
     "a store whose model is a pickle in a node of its own kind",
     lambda c: {"path": _model_store(c, "pickle")},
     err(UnsafeModelError, r"node of unknown kind 'pickle'"),
     "load only what daskfair.save wrote", **MODEL_FILE)
case("model-altered-array", "load", "corrupt store",
     "a saved model with one byte of its dual coefficients changed",
     lambda c: {"path": _model_store(c, "flip")},
     err(CorruptStoreError, r"array 'model/dual_coef_' \(its file c/0\) has other contents"),
     "restore it from a backup, or save the model again", **MODEL_FILE)
case("model-missing-array", "load", "half-written store",
     "a store whose model refers to an array it never held",
     lambda c: {"path": _model_store(c, "missing")},
     err(StoreError, r"refers to the array 'model/coef_', which the store does not hold"),
     "save the model again", **MODEL_FILE)
case("model-absent", "load", "store without a model",
     "a finished run of kind model with no model in it",
     lambda c: {"path": _model_store(c, "absent")},
     err(StoreError, r"holds a model run with no model in it"), "save the model again",
     **MODEL_FILE)
case("model-other-kind", "load", "store without a model",
     "an FCE run (a clustering of its own rows, no model for new ones)",
     lambda c: {"path": _run(c)},
     err(StoreError, r"holds a 'fce' run, which has no model for new rows"),
     "load a saved model or an fkr/safairkm run", **MODEL_FILE)
case("model-front-no-point", "load", "store without a model",
     "a SAfairKM front loaded without choosing a point",
     lambda c: {"path": _model_store(c, "front")},
     err(ValueError, r"front has 3 points .*choose one with front_point="),
     "choose a point with front_point= or balance=", **MODEL_FILE)

# load: a store crafted by an attacker, who may rewrite the manifest (a checksum, not a
# signature); each runs in a forked child with 1 GiB more memory at most (test_hostile_stores)

@functools.cache
def saved_pipeline() -> Path:
    """A saved Pipeline(TableEncoder, ColumnScaler, FairKernelClassifier) to tamper with
    (built once per process)."""
    from sklearn.pipeline import Pipeline

    from daskfair import FairKernelClassifier, save
    from daskfair.scaling import ColumnScaler
    from daskfair.tables import TableEncoder

    rng = np.random.default_rng(0)
    df = pd.DataFrame({"age": rng.uniform(18, 80, 300), "job": rng.choice(["a", "b"], 300),
                       "sex": rng.choice(["F", "M"], 300), "y": rng.integers(0, 2, 300)})
    enc = TableEncoder().fit(df[["age", "job"]])
    Z = enc.transform(df[["age", "job"]])
    scale = ColumnScaler().fit(Z)
    clf = FairKernelClassifier(kernel="polynomial", n_landmarks=30, random_state=0)
    clf.fit(scale.transform(Z), df["y"], sensitive_features=df["sex"])
    path = Path(tempfile.mkdtemp(prefix="daskfair-saved-")) / "m.zarr"
    save(Pipeline([("encode", enc), ("scale", scale), ("model", clf)]), path)
    return path


#: The classifier inside the stored Pipeline's tree, and its arrays' folder.
CLASSIFIER = ("params", "steps", 2, 1)
ARRAYS_OF = "model/params/steps/2/1"


def resign(path: Path, meta: dict | None = None) -> None:
    """Write the store's root metadata ``meta`` with its manifest recomputed: what an attacker
    who edits a store can do."""
    from daskfair.store.integrity import build_manifest

    meta = json.loads((path / "zarr.json").read_text()) if meta is None else meta
    attrs = meta["attributes"]
    attrs["daskfair"] = {k: v for k, v in attrs["daskfair"].items() if k != "manifest"}
    (path / "zarr.json").write_text(json.dumps(meta))
    attrs["daskfair"]["manifest"] = build_manifest(path, attrs)
    (path / "zarr.json").write_text(json.dumps(meta))


def tree_node(tree: Any, *keys: Any) -> Any:
    """The node of a stored model's tree reached by names and positions."""
    for key in keys:
        kind = tree.get("~") if isinstance(tree, dict) else None
        if kind == "dict":
            tree = dict(tree["items"])[key]
        elif kind == "tuple":
            tree = tree["items"][key]
        elif kind == "dataclass" and key == "fields":
            tree = tree["fields"]
        else:
            tree = tree[key]
    return tree


def _with_node(path: Path, keys: tuple, value: Any) -> None:
    """Set the entry ``keys[-1]`` of the dict node at ``keys[:-1]``, then re-sign."""
    meta = json.loads((path / "zarr.json").read_text())
    items = tree_node(meta["attributes"]["model"], *keys[:-1])["items"]
    for pair in items:
        if pair[0] == keys[-1]:
            pair[1] = value
            break
    else:
        items.append([keys[-1], value])
    resign(path, meta)


def _with_array(path: Path, name: str, data: Any, **options: Any) -> None:
    import zarr

    zarr.open_group(str(path), mode="r+").create_array(
        f"{ARRAYS_OF}/{name}", data=data, overwrite=True,
        config={"write_empty_chunks": True}, **options)
    resign(path)


def _link(path: Path, name: str, target: Any) -> None:
    where = path / ARRAYS_OF / name
    if where.is_dir():
        shutil.rmtree(where)
    else:
        where.unlink()
    if target == "fifo":
        os.mkfifo(where)
    else:
        where.symlink_to(target, target_is_directory=Path(target).is_dir())


def _marker(path: Path, **values: Any) -> None:
    meta = json.loads((path / "zarr.json").read_text())
    meta["attributes"]["daskfair"].update(values)
    (path / "zarr.json").write_text(json.dumps(meta))


def _attacked(c: Context, how: str) -> dict[str, Any]:
    """The ``load`` arguments for a copy of :func:`saved_pipeline` attacked ``how``."""
    path = c.tmp / "m.zarr"
    shutil.copytree(saved_pipeline(), path)
    m = 30  # the landmarks of saved_pipeline()
    node, array = ATTACK_NODES.get(how), ATTACK_ARRAYS.get(how)
    if node is not None:
        _with_node(path, *node)
    elif array is not None:
        values = array(m)
        _with_array(path, "dual_coef_", values, compressors=None, chunks=values.shape)
    elif how == "memory":
        (path / "cache" / "joblib").mkdir(parents=True)
        (path / "cache" / "joblib" / "output.pkl").write_bytes(b"\x80\x04cos\nsystem\n.")
        _with_node(path, ("params", "memory"), str(path / "cache"))
    elif how == "dev-zero":
        _link(path, "dual_coef_/c/0", "/dev/zero")
    elif how == "fifo":
        _link(path, "dual_coef_/c/0", "fifo")
    elif how in ("linked-folder", "other-store"):
        other = c.tmp / "other.zarr"
        shutil.copytree(saved_pipeline(), other)
        target = (other / "model" if how == "linked-folder" else other / ARRAYS_OF / "coef_")
        _link(path, "dual_coef_/c" if how == "linked-folder" else "coef_", target)
    elif how == "compressed":
        _with_array(path, "dual_coef_", np.zeros(12_500_000), chunks=(12_500_000,))
    elif how == "chunks":
        _with_array(path, "dual_coef_", np.ones(m), compressors=None, chunks=(m,))
        meta_path = path / ARRAYS_OF / "dual_coef_" / "zarr.json"
        meta = json.loads(meta_path.read_text())
        meta["shape"], meta["chunk_grid"]["configuration"]["chunk_shape"] = [10**6], [1]
        meta_path.write_text(json.dumps(meta))
        resign(path)
    elif how == "created":
        _marker(path, created="1999-01-01T00:00:00+00:00")
    elif how == "digest":
        published = open_run(path).digest
        _marker(path, created="1999-01-01T00:00:00+00:00")
        resign(path)
        return {"path": path, "digest": published}
    else:
        _marker(path, **MARKERS[how])
    return {"path": path}


ATTACK_NODES = {
    "seed-pool": ((*CLASSIFIER, "params", "random_state"), {
        "~": "seed_sequence", "entropy": 1, "spawn_key": {"~": "tuple", "items": []},
        "pool_size": 10**8, "n_children_spawned": 0}),
    "wide-text": ((*CLASSIFIER, "state", "merged_groups_"), {
        "~": "values", "dtype": "<U200000000", "shape": [1], "items": ["x"]}),
    "deep": ((*CLASSIFIER, "state", "merged_groups_"), json.loads("[" * 600 + "]" * 600)),
    "timezone": ((*CLASSIFIER, "state", "merged_groups_"), {
        "~": "frame", "columns": ["a"], "dtypes": ["datetime64[ns, /etc/passwd]"],
        "index": [], "data": [[]]}),
    "degree": ((*CLASSIFIER, "params", "degree"), 10**9),
    "threshold-param": ((*CLASSIFIER, "params", "threshold"), {"~": "float", "value": "inf"}),
    "threshold": ((*CLASSIFIER, "state", "threshold_"), {"~": "float", "value": "inf"}),
    "gamma": ((*CLASSIFIER, "state", "feature_map_", "fields", "params"), {
        "~": "dict", "items": [["kernel", "rbf"], ["gamma", -0.5], ["degree", 3],
                               ["coef0", 1.0]]}),
    "attribute": ((*CLASSIFIER, "state", "predict"), 1),
}
ATTACK_ARRAYS = {
    "nan": lambda m: np.full(m, np.nan),
    "complex": lambda m: np.ones(m, complex),
    "length": lambda m: np.ones(m + 1),
}
MARKERS = {"status": {"status": "complete (verified)"}, "kind": {"kind": "\x1b]0;x\x07"},
           "versions": {"versions": {"daskfair": "1" * 1000}}}

for _id, _how, _input, _expect, _says in [
    ("model-pipeline-memory", "memory",
     "a Pipeline whose memory is a folder of the store holding a pickle (manifest rewritten)",
     err(UnsafeModelError, r"memory is .*cache.*daskfair saves Pipelines without it"),
     "load only what daskfair.save wrote: a stored Pipeline never caches"),
    ("model-chunk-dev-zero", "dev-zero", "a chunk replaced by a link to /dev/zero",
     err(CorruptStoreError, r"c/0 is a symbolic link; daskfair reads only plain files"),
     "a store holds plain files only: restore it from a backup"),
    ("model-chunk-fifo", "fifo", "a chunk replaced by a FIFO",
     err(CorruptStoreError, r"c/0 is a FIFO \(named pipe\)"),
     "a store holds plain files only: restore it from a backup"),
    ("model-chunks-linked-out", "linked-folder",
     "an array's chunk folder a link to a folder outside the store",
     err(CorruptStoreError, r"dual_coef_/c is a symbolic link"),
     "a store holds plain files only: restore it from a backup"),
    ("model-array-of-another-store", "other-store",
     "an array replaced by a link to another store's array",
     err(CorruptStoreError, r"coef_ is a symbolic link"),
     "a store holds plain files only: restore it from a backup"),
    ("model-seed-pool", "seed-pool", "a 127-byte seed sequence node of pool size 10⁸",
     err(UnsafeModelError, r"seed sequence of pool size 100000000"),
     "load only what daskfair.save wrote"),
    ("model-compressed-bomb", "compressed",
     "100 MB of zeros as a 4 KB zstd chunk of the dual coefficients",
     err(CorruptStoreError, r"dual_coef_.* is compressed, which daskfair never writes there"),
     "load only what daskfair.save wrote (a model's arrays are stored uncompressed)"),
    ("model-million-chunks", "chunks", "an array's metadata declaring 10⁶ chunks of one entry",
     err(CorruptStoreError, r"declares 1,000,000 chunks and has 1 chunk files"),
     "restore it from a backup"),
    ("model-wide-text", "wide-text", "a 1-item text node of dtype <U200000000 (800 MB)",
     err(UnsafeModelError, r"dtype <U200000000 hold at most 1 characters"),
     "load only what daskfair.save wrote"),
    ("model-deep-nesting", "deep", "a node nested 600 deep",
     err(UnsafeModelError, r"nests deeper than 64 levels"), "load only what daskfair.save wrote"),
    ("model-timezone-dtype", "timezone",
     "a table node whose column dtype names a file as its timezone",
     err(UnsafeModelError, r"table columns of dtypes"), "load only what daskfair.save wrote"),
    ("model-nan-coefficients", "nan", "dual coefficients all NaN (manifest rewritten)",
     err(UnsafeModelError, r"dual_coef_ holds NaN or infinite values"),
     "load only what daskfair.save wrote"),
    ("model-complex-coefficients", "complex", "complex dual coefficients",
     err(CorruptStoreError, r"data type 'complex128'"), "load only what daskfair.save wrote"),
    ("model-wrong-length", "length", "one dual coefficient more than the landmarks",
     err(UnsafeModelError, r"dual_coef_ \(axis 0\) has 31 where m = 30"),
     "load only what daskfair.save wrote"),
    ("model-inf-threshold", "threshold", "an infinite threshold_",
     err(UnsafeModelError, r"threshold_ is inf, not a finite number"),
     "load only what daskfair.save wrote"),
    ("model-inf-threshold-parameter", "threshold-param", "an infinite threshold parameter",
     err(UnsafeModelError, r"threshold must be 'auto' or a finite number"),
     "load only what daskfair.save wrote"),
    ("model-negative-gamma", "gamma", "the feature map's rbf gamma negative",
     err(UnsafeModelError, r"gamma must be positive for the rbf kernel"),
     "load only what daskfair.save wrote"),
    ("model-huge-degree", "degree", "a polynomial degree of 10⁹",
     err(UnsafeModelError, r"degree must be an integer from 1 to 100"),
     "load only what daskfair.save wrote"),
    ("model-unknown-attribute", "attribute", "an attribute a fitted classifier never has",
     err(UnsafeModelError, r"attributes \['predict'\] that a fitted FairKernelClassifier"),
     "load only what daskfair.save wrote"),
    ("model-forged-time", "created", "the marker's start time edited (manifest kept)",
     err(CorruptStoreError, r"its attributes \(parameters, results or its marker\) were "
                            r"changed"), "restore it from a backup"),
    ("model-forged-and-resigned", "digest",
     "the start time edited and the manifest rewritten, loaded with the published digest",
     err(StoreError, r"has the digest [0-9a-f]{64}, not '[0-9a-f]{64}': it is not the model "
                     r"its sender published"),
     "ask the sender for the model again: only the published digest tells a forgery"),
    ("store-marker-status", "status", "the marker's status 'complete (verified)'",
     err(StoreError, r"malformed daskfair marker \(its status"), "rerun the job"),
    ("store-marker-kind", "kind", "the marker's kind an escape sequence",
     err(StoreError, r"malformed daskfair marker \(its kind"), "rerun the job"),
    ("store-marker-versions", "versions", "a package version of 1,000 characters",
     err(StoreError, r"malformed daskfair marker \(its package versions"), "rerun the job"),
]:
    case(_id, "load", "store crafted by an attacker", _input,
         lambda c, how=_how: _attacked(c, how), _expect, _says, **GUARDED)


def _bomb(c: Context) -> dict[str, Any]:
    run = create_run(c.tmp / "r.zarr", kind="t")  # numpy: no thread pool in a forked child
    run.write_array("x", np.zeros(300_000_000, dtype=np.uint8), chunks=(100_000_000,))
    run.mark_complete()
    return {"path": c.tmp / "r.zarr"}


case("store-decompression-bomb", "Run.read_array", "store crafted by an attacker",
     "a run's array of 300 MB of zeros in 20 KB of zstd chunks",
     _bomb, err(CorruptStoreError, r"declares 300,000,000 bytes, more than this store may "
                                   r"decode"), "restore it from a backup", **GUARDED)


def _lease_link(c: Context) -> dict[str, Any]:
    path = _run(c)
    (path / LEASE_NAME).symlink_to("/dev/zero")
    return {"path": path}


case("store-lease-dev-zero", "open_run", "store crafted by an attacker",
     "the lease file a link to /dev/zero",
     _lease_link, err(CorruptStoreError, r"daskfair-lock.json is a symbolic link"),
     "a store holds plain files only: restore it from a backup", **GUARDED)

# load_input: the command line's --input


def _csv(c: Context, text: str, name: str = "t.csv", **kw: Any) -> dict[str, Any]:
    return {"path": _file(c, name, text), "label": "y", "sensitive": "s", **kw}


def _parquet_parts(c: Context, texts: list[str]) -> Path:
    import io

    folder = c.tmp / "table"
    folder.mkdir()
    first = pd.read_csv(io.StringIO(texts[0]))
    for i, text in enumerate(texts):
        frame = pd.read_csv(io.StringIO(text)).astype(first.dtypes.to_dict())  # one schema
        frame.to_parquet(folder / f"part.{i}.parquet")
    return folder


def _zarr_input(c: Context, shape: tuple[int, ...] = (5, 3), **kw: Any) -> dict[str, Any]:
    import zarr

    path = c.tmp / "x.zarr"
    z = zarr.create_array(store=str(path), shape=shape, dtype="f8")
    z[...] = np.arange(float(np.prod(shape))).reshape(shape)
    return {"path": path, **kw}


GOOD_CSV = "a,b,s,y\n1,2,m,0\n3,4,f,1\n"
LI = "load_input"
INPUT_FILE = {"backends": ("file",)}
case("input-missing-file", LI, "half-written store", "a path that does not exist",
     lambda c: {"path": c.tmp / "nope.csv", "sensitive": "s"},
     err(FileNotFoundError, r"input .*nope.csv does not exist"), "check the path", **INPUT_FILE)
case("input-unknown-suffix", LI, "non-numeric columns", "a .json file",
     lambda c: _csv(c, "{}", "x.json"),
     err(ValueError, r"cannot tell the format.*use a .csv, .tsv, .parquet"),
     "use a .csv, .tsv, .parquet file or a zarr array", **INPUT_FILE)
case("input-empty-file", LI, "empty arrays", "a CSV file of 0 bytes", lambda c: _csv(c, ""),
     err(ValueError, r"t.csv is empty: a table needs a header line and rows"),
     "give a header line and rows", **INPUT_FILE)
case("input-header-only", LI, "empty arrays", "a CSV with a header and no rows",
     lambda c: _csv(c, "a,b,s,y\n"), err(ValueError, r"holds no rows"), "give rows",
     **INPUT_FILE)
case("input-one-row", LI, "one row", "a CSV with one row",
     lambda c: _csv(c, "a,b,s,y\n1,2,m,0\n"),
     err(ValueError, r"the sensitive column 's' has 1 group \(m\); at least 2 groups"),
     "give more rows: one row is one group", **INPUT_FILE)
case("input-ragged-csv", LI, "non-numeric columns", "a CSV line with 5 fields under 4 names",
     lambda c: _csv(c, GOOD_CSV + "5,6,m,1,9\n"),
     err(ValueError, r"not a readable comma-separated table \(ParserError.*Every line needs "
                     r"the same fields"), "give every line the header's fields", **INPUT_FILE)
case("input-binary-csv", LI, "non-numeric columns", "binary bytes in a .csv file",
     lambda c: {"path": _file(c, "t.csv", b"\xff\xfe\x00garbage\x00\x01"), "sensitive": "s"},
     err(ValueError, r"not a readable comma-separated table \(UnicodeDecodeError.*UTF-8"),
     "save the table as UTF-8 text", **INPUT_FILE)
case("input-bad-parquet", LI, "non-numeric columns", "a text file named .parquet",
     lambda c: _csv(c, "not parquet", "t.parquet"),
     err(ValueError, r"not a readable Parquet file or dataset \(ArrowInvalid: .*magic bytes"),
     "check the file",
     **INPUT_FILE)
case("input-no-sensitive", LI, "one group", "a table without --sensitive",
     lambda c: _csv(c, GOOD_CSV, sensitive=None),
     err(ValueError, r"is a table: name its sensitive column with --sensitive COLUMN"),
     "name the column with --sensitive", **INPUT_FILE)
case("input-unknown-column", LI, "mismatched lengths", "--sensitive sex (no such column)",
     lambda c: _csv(c, GOOD_CSV, sensitive="sex"),
     err(ValueError, r"has no column 'sex' \(--sensitive\); its columns are"),
     "use one of the listed columns", **INPUT_FILE)
case("input-non-numeric-feature", LI, "non-numeric columns",
     "a text feature column with --no-encode (without it the column is one-hot encoded)",
     lambda c: _csv(c, "a,b,s,y\n1,x,m,0\n3,4,f,1\n", encode=False),
     err(ValueError, r"feature columns \['b'\] .* are not numeric.*--no-encode.*--features"),
     "let it be one-hot encoded, encode it, or leave it out with --features", **INPUT_FILE)
case("input-missing-values", LI, "NaN/inf", "an empty cell",
     lambda c: _csv(c, "a,b,s,y\n1,,m,0\n3,4,f,1\n"),
     err(ValueError, r"numeric column\(s\) with missing values \{'b': 1\} \(column: rows\)\. "
                     r"Drop or impute those rows, or .*numeric_missing='indicator'"),
     "drop or impute those rows, or --numeric-missing indicator", **INPUT_FILE)
case("input-inf", LI, "NaN/inf", "a cell 'inf'",
     lambda c: _csv(c, "a,b,s,y\n1,inf,m,0\n3,4,f,1\n"),
     err(ValueError, r"with infinite values \{'b': 1\} \(column: rows\); drop or clip"),
     "drop or clip those rows", **INPUT_FILE)
case("input-label-is-sensitive", LI, "mismatched lengths", "--label s --sensitive s",
     lambda c: _csv(c, GOOD_CSV, label="s"),
     err(ValueError, r"--label and --sensitive name the same column \('s'\)"),
     "give the groups a column of their own", **INPUT_FILE)
case("input-features-overlap", LI, "mismatched lengths", "--features a s",
     lambda c: _csv(c, GOOD_CSV, features=["a", "s"]),
     err(ValueError, r"--features must not include the label or sensitive column \(\['s'\]\)"),
     "leave the label and groups out of --features", **INPUT_FILE)
case("input-features-twice", LI, "mismatched lengths", "--features a a",
     lambda c: _csv(c, GOOD_CSV, features=["a", "a"]),
     err(ValueError, r"--features lists \['a'\] more than once"), "name each column once",
     **INPUT_FILE)
case("input-groups-strings", LI, "groups as strings/floats/booleans",
     "a table whose group column holds strings", lambda c: _csv(c, GOOD_CSV), WORKS,
     "works: the groups are passed on as they are", n_out=2, **INPUT_FILE)
case("input-empty-partition", LI, "empty arrays",
     "a Parquet directory one of whose part files holds no rows",
     lambda c: {"path": _parquet_parts(c, [GOOD_CSV, "a,b,s,y\n"]), "label": "y",
                "sensitive": "s"}, WORKS,
     "works: the empty part gives no rows (and no block)", n_out=2, **INPUT_FILE)
case("input-id-column", LI, "non-numeric columns",
     "a text column with 100,000 distinct values (an ID)",
     lambda c: _csv(c, "id,a,s,y\n" + "".join(f"c{i},{i},{'mf'[i % 2]},{i % 2}\n"
                                              for i in range(100_000))),
     err(ValueError, r"more than max_levels=1,000 distinct values: 'id' \(at least 100,000\)"
                     r".*leave it out of features=, or raise max_levels="),
     "leave it out with --features, or raise --max-levels", **INPUT_FILE)
case("input-mixed-types", LI, "non-numeric columns",
     "a CSV column of numbers in its first 300,000 rows and text after",
     lambda c: _csv(c, "a,b,s,y\n" + "".join(f"{i},{i % 7},{'mf'[i % 2]},{i % 2}\n"
                                            for i in range(300_000)) + "5,x,f,1\n"),
     err(ValueError, r"column\(s\) \['b'\] of .* hold numbers in some rows and text in "
                     r"others.*one type"), "make the column one type", **INPUT_FILE)
case("input-label-three-values", LI, "labels out of range",
     "a label with three values for a binary task (task='classification')",
     lambda c: _csv(c, "a,b,s,y\n1,2,m,x\n3,4,f,y\n5,6,m,z\n", need_label=True,
                    task="classification"),
     err(ValueError, r"classification needs a binary label, but the label column 'y' has 3: "
                     r"x, y, z values.*--task regression"),
     "give a binary label, or --task regression for a numeric one", **INPUT_FILE)
case("input-one-group", LI, "one group", "a table whose sensitive column holds one value",
     lambda c: _csv(c, "a,b,s,y\n1,2,m,0\n3,4,m,1\n"),
     err(ValueError, r"the sensitive column 's' has 1 group \(m\); at least 2 groups"),
     "give a column with at least two groups", **INPUT_FILE)
case("input-missing-text-value", LI, "NaN/inf", "an empty cell in a text feature column",
     lambda c: _csv(c, "a,t,s,y\n1,,m,0\n3,u,f,1\n"), WORKS,
     "works: a missing text value is a level of its own (t=<missing>)", n_out=2,
     **INPUT_FILE)
case("input-both-sources", LI, "mismatched lengths", "--dataset and --input",
     lambda c: _csv(c, GOOD_CSV, dataset="adult"),
     err(ValueError, r"exactly one of --dataset NAME or --input PATH"), "give one source",
     **INPUT_FILE)
case("input-zarr-group", LI, "zarr store from another version",
     "a zarr group (a daskfair run) as --input", lambda c: {"path": _run(c), "sensitive": "0"},
     err(ValueError, r"is a zarr group; give the path of a 2-D array inside it"),
     "give the path of an array inside the group", **INPUT_FILE)
case("input-zarr-corrupt", LI, "half-written store", "a zarr array whose zarr.json is cut off",
     lambda c: {"path": _truncated(c), "sensitive": "0"},
     err(ValueError, r"is not a readable zarr array"), "rewrite the array", **INPUT_FILE)
case("input-zarr-1d", LI, "mismatched lengths", "a 1-D zarr array",
     lambda c: _zarr_input(c, (5,), sensitive="0"),
     err(ValueError, r"must be a 2-D numeric array, got shape \(5,\)"), "give a 2-D array",
     **INPUT_FILE)
case("input-zarr-no-rows", LI, "empty arrays", "a zarr array of shape (0, 3)",
     lambda c: _zarr_input(c, (0, 3), sensitive="0"), err(ValueError, r"holds no rows"),
     "give rows", **INPUT_FILE)
case("input-zarr-column-out-of-range", LI, "mismatched lengths", "--sensitive 7 of 3 columns",
     lambda c: _zarr_input(c, sensitive="7"),
     err(ValueError, r"--sensitive 7 is outside the 3 columns"), "give a column index",
     **INPUT_FILE)
case("input-zarr-column-name", LI, "non-numeric columns", "--sensitive sex for a zarr array",
     lambda c: _zarr_input(c, sensitive="sex"),
     err(ValueError, r"is a zarr array: --sensitive must be a column index, got 'sex'"),
     "give a column index", **INPUT_FILE)
case("input-zarr-label-is-sensitive", LI, "mismatched lengths", "--label 0 --sensitive 0",
     lambda c: _zarr_input(c, sensitive="0", label="0"),
     err(ValueError, r"--label and --sensitive name the same column \(0\)"),
     "give the groups a column of their own", **INPUT_FILE)
case("input-zarr-features-overlap", LI, "mismatched lengths", "--features 0 2 --sensitive 2",
     lambda c: _zarr_input(c, sensitive="2", features=["0", "2"]),
     err(ValueError, r"--features must not include the label or sensitive column"),
     "leave the label and groups out of --features", **INPUT_FILE)


# -- the document --------------------------------------------------------------------------------

def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _outcome(e: Expect) -> str:
    if e.error is None:
        return "works" + (f" ({e.warns.__name__})" if e.warns else "")
    return e.error.__name__ + (" ⚠" if e.defect else "")


def markdown_table(cases: list[Case] = CASES) -> str:
    """One row per case: id, entry point, item, input, outcome per backend, regex, advice."""
    lines = [
        "| id | entry point | item | bad input | numpy | dask | unknown chunks | message "
        "matches | what it says to do |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for c in cases:
        cols = [_outcome(c.expected(b)) if b in c.backends or (b == "numpy" and "file" in
                                                                 c.backends) else "–"
                for b in ARRAYS]
        regex = c.expect.match or (c.dask and c.dask.match) or ""
        lines.append("| " + " | ".join(_cell(x) for x in (
            f"`{c.id}`", f"`{c.entry}`", c.item, c.input, *cols,
            f"`{regex}`" if regex else "", c.says)) + " |")
    return "\n".join(lines) + "\n"


def render_doc(cases: list[Case] = CASES) -> str:
    """The whole of docs/hostile_inputs.md."""
    defects = [(c.id, b, c.expected(b).defect) for c in cases for b in c.backends
               if c.expected(b).defect]
    by_entry: dict[str, int] = {}
    for c in cases:
        by_entry[c.entry] = by_entry.get(c.entry, 0) + 1
    counts = ", ".join(f"{k} {v}" for k, v in by_entry.items())
    seen: dict[str, dict[str, list[str]]] = {}
    for cid, b, text in defects:
        seen.setdefault(text, {}).setdefault(cid, []).append(b)
    defect_lines = "\n".join(
        "* " + ", ".join(f"`{cid}` ({', '.join(bs)})" for cid, bs in ids.items()) + f": {text}"
        for text, ids in seen.items())
    return f"""# Hostile inputs

Every bad input tried on daskfair's public entry points, and what it gets. Generated from
`tests/hostile_inputs.py` by `python tests/hostile_inputs.py`; `tests/test_hostile_inputs.py`
runs every case with numpy inputs, with dask inputs (5-row blocks, synchronous scheduler) and
with dask inputs of unknown chunk sizes (a boolean row selection), and fails when this page and
the catalogue disagree. A path-based case (stores, `load_input`) runs once, in the numpy
column.

Outcomes: an exception type, "works" (the call must return a result of the right length with
finite values; for groups given as strings, floats or booleans, the same result as integer
codes), or "–" (not run: the input is not an array, or the case is about one backend). The
regex is the one the numpy message must match (dask messages match the same one unless the
catalogue says otherwise). ⚠ marks a known defect: the case states the behaviour it should
have and runs as a strict xfail until the module named below is fixed.

Every other error is a `ValueError` or `TypeError` (or daskfair's `StoreError` and its kinds
`IncompleteRunError`, `CorruptStoreError` and `StoreLockedError`, all `ValueError`s), plus
`FileNotFoundError`, `FileExistsError` and `PermissionError` for paths: the errors the
`daskfair` command prints as one line.

{len(cases)} cases, by entry point: {counts}.

{markdown_table(cases)}
## Known defects (fix outside the validation layer)

{defect_lines or NO_DEFECTS}
"""


NO_DEFECTS = ("None open: every defect this catalogue found has been fixed (each ran as a "
              "strict xfail until then).")


if __name__ == "__main__":
    DOC.parent.mkdir(exist_ok=True)
    DOC.write_text(render_doc())
    print(f"wrote {DOC} ({len(CASES)} cases)")
