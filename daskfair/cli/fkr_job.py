"""The ``fkr`` job. In-memory data are split as the FKR-F²E paper did (seeded, stratified by
group and class, or a published split), a table or zarr array by a seeded hash of the row
number; features are min-max scaled on the training rows' range (a table's from its pass)."""

from __future__ import annotations

import copy
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import dask
import dask.array as da
import numpy as np

from .._params import Integer, Real, check_params
from .._validation import is_dask
from ..fkr.frontier import GRID_OF
from ..model_selection import split_rows
from ..models import write_model
from ..store import Run
from .inputs import JobData, to_dask
from .paper.methods import (
    REGISTRY,
    RIDGE_THRESHOLD,
    constant_from_labels,
    constant_from_moments,
    score,
)
from .results import numpy_of, preprocessing

__all__ = ["check_fkr_job", "fkr_job", "format_fkr_results"]

Echo = Callable[[str], Any]


@dataclass(frozen=True)
class _Rows:
    """The job's training and test rows, scaled (dask), and how they were split."""

    X: Any
    Xtr: Any
    ytr: Any
    s_tr: Any
    Xte: Any
    yte: Any
    s_te: Any
    test: Any          # the test rows' numbers
    scaler: Any        # the fitted ColumnScaler of every row
    n_train: int
    n_test: int
    split_text: str
    streamed: bool     # a table or zarr array never brought into this process


#: The job's own parameters (the models' are their estimators').
_JOB = {"test_size": (Real(0, 1, low_open=True, high_open=True),),
        "random_state": (Integer(0),), "chunk_rows": (Integer(1),)}


def check_fkr_job(params: Mapping[str, Any], *, n_fair_features: Sequence[int] | None = None,
                  task: str = "auto", test_size: float = 0.25, random_state: int = 0,
                  chunk_rows: int = 50_000, **_: Any) -> None:
    """The parameters of :func:`fkr_job` and of every model it will fit (for both tasks when
    ``task`` is "auto"), checked: refused before any data are read."""
    check_params({"test_size": test_size, "random_state": random_state,
                  "chunk_rows": chunk_rows}, _JOB)
    params = {**params, "random_state": random_state}
    for classify in (True, False) if task == "auto" else (task == "classification",):
        for est in _planned(params, n_fair_features, classify):
            est._validate_params()


def _planned(params: Mapping[str, Any], n_fair_features: Sequence[int] | None,
             classify: bool) -> list[Any]:
    """The unfitted estimators the job will fit: the fair model(s), then the baselines."""
    if n_fair_features is None:
        fair = [REGISTRY["CV"].build(params, classify=classify)]
    else:
        fair = [REGISTRY["FKR-F2E"].build({**params, "n_fair_features": k}, classify=classify)
                for k in n_fair_features]
    return fair + [m.build(params, classify=classify) for m in REGISTRY.values()
                   if m.baseline and m.estimator is not None]


def _split(n: int, data: JobData, split: int | None, test_size: float, seed: int,
           y: np.ndarray, s: np.ndarray, task: str) -> tuple[np.ndarray, np.ndarray, str]:
    """An in-memory split: the published one, else seeded and stratified by group × class."""
    if data.splits is not None and split is not None:
        if not 0 <= split < len(data.splits):
            raise ValueError(f"split must lie in [0, {len(data.splits) - 1}], got {split}.")
        train = np.asarray(data.splits[split])
        return train, np.setdiff1d(np.arange(n), train), f"published split {split}"
    from sklearn.model_selection import train_test_split

    groups = np.unique(s, return_inverse=True)[1]
    strata = groups * 2 + y if task == "classification" else groups
    if np.bincount(np.unique(strata, return_inverse=True)[1]).min() < 2:
        strata = None
    train, test = train_test_split(np.arange(n), test_size=test_size, random_state=seed,
                                   stratify=strata)
    return (np.sort(train), np.sort(test),
            f"random {1 - test_size:.0%}/{test_size:.0%} split (seed {seed}"
            + (", stratified)" if strata is not None else ")"))


def _hashed_rows(x: da.Array, test: bool, test_size: float, seed: int) -> da.Array:
    """The test (or training) rows of ``x`` as :func:`daskfair.train_test_split` chooses
    them (a hash of the row number: nothing is read)."""
    return split_rows([x], None, test_size, seed)[int(test)]


def _classes(data: JobData, task: str) -> tuple[str, np.ndarray | None]:
    """The task and, to classify, the label's two values (from a table's pass: no read)."""
    if data.summary is not None:
        counts = data.summary.columns[data.description["label"]].counts
        values = None if counts is None else np.asarray(sorted(counts))
    else:
        values = np.unique(numpy_of(data.y))
    if task == "auto":
        task = "classification" if values is not None and len(values) == 2 else "regression"
    if task == "classification":
        if values is None or len(values) != 2:
            raise ValueError(f"classification needs a binary label, got "
                             f"{'many' if values is None else len(values)} classes; use "
                             "--task regression for a continuous label.")
        return task, values
    return task, None


def _scale(X: Any, data: JobData, train: Any) -> tuple[Any, Any]:
    """``X`` min-max scaled on the training rows' range, or a table's range from its pass
    (every row: no pass of its own), and the ColumnScaler that does it to new rows."""
    from ..tables import ColumnScaler

    if data.encoder is not None:
        enc, cols = data.encoder, data.summary.columns
        pad = enc.n_features_out_ - len(enc.numeric_columns_)
        lo = np.nan_to_num([cols[c].low for c in enc.numeric_columns_] + [0.0] * pad)
        hi = np.nan_to_num([cols[c].high for c in enc.numeric_columns_] + [1.0] * pad)
    else:
        Xtr = train(X) if callable(train) else X[train]
        lo, hi = Xtr.min(axis=0), Xtr.max(axis=0)
        if is_dask(X):
            lo, hi = da.compute(lo, hi)
    scaler = ColumnScaler.from_values(lo, hi - lo)
    return scaler.transform(X), scaler


def _streamed_rows(data: JobData, classes: Any, classify: bool, test_size: float,
                   seed: int) -> _Rows:
    y = (data.y == classes[1]).astype(np.int64) if classify else data.y.astype(np.float64)
    X = data.X  # in its blocks as read (the methods align rows to their own blocks)
    y, s = y.rechunk({0: X.chunks[0]}), data.sensitive.rechunk({0: X.chunks[0]})

    def part(a: Any, test: bool) -> Any:
        return _hashed_rows(a, test, test_size, seed)

    X, scaler = _scale(X, data, lambda a: part(a, False))
    Xtr, ytr, s_tr = (part(a, False) for a in (X, y, s))
    Xte, yte, s_te = (part(a, True) for a in (X, y, s))
    test = part(da.arange(X.shape[0], chunks=X.chunks[0]), True)
    text = (f"random {1 - test_size:.0%}/{test_size:.0%} split (seed {seed}, by a hash of "
            "the row number)")
    return _Rows(X, Xtr, ytr, s_tr, Xte, yte, s_te, test, scaler, Xtr.shape[0],
                 Xte.shape[0], text, True)


def _train_test(data: JobData, classes: Any, classify: bool, task: str, split: int | None,
                test_size: float, seed: int, chunk_rows: int) -> _Rows:
    """Split and scale: in-memory data as the paper did, streamed data by a row hash."""
    if is_dask(data.X) and data.splits is None:
        return _streamed_rows(data, classes, classify, test_size, seed)
    y_raw, s = numpy_of(data.y), numpy_of(data.sensitive)
    y = (y_raw == classes[1]).astype(np.int64) if classify else y_raw.astype(np.float64)
    train, test, split_text = _split(data.X.shape[0], data, split, test_size, seed, y, s, task)
    X, scaler = _scale(to_dask(data.X, chunk_rows), data, train)
    return _Rows(X, X[train], y[train], s[train], X[test], y[test], s[test], test, scaler,
                 len(train), len(test), split_text, False)


def _timed(fit: Callable[[], Any]) -> tuple[Any, float]:
    t0 = time.perf_counter()
    return fit(), time.perf_counter() - t0


def _fit_models(params: Mapping[str, Any], n_fair_features: Sequence[int] | None,
                rows: _Rows, classify: bool, echo: Echo
                ) -> tuple[list[tuple[str, int | None, Any, float]], float]:
    """(name, k, model, seconds) of the fair model(s) and the baselines, and the constant."""
    Xtr, ytr, s_tr = rows.Xtr, rows.ytr, rows.s_tr
    baselines = [m for m in REGISTRY.values() if m.baseline and m.estimator is not None]
    fitted: list[tuple[str, int | None, Any, float]] = []
    if n_fair_features is None:
        cv = REGISTRY["CV"]
        est, seconds = _timed(lambda: cv.build(params, classify=classify).fit(
            Xtr, ytr, sensitive_features=s_tr))
        fitted.append((cv.label(params, classify), None, est, seconds))
        echo(f"  fitted {fitted[-1][0]} ({seconds:.1f} s)")
        total, fmap = est.moments_[0], est.feature_maps_[0]
        for m in baselines:
            model, seconds = _timed(lambda m=m: m.build(params, classify=classify)
                                    .fit_moments(total, fmap))
            fitted.append((m.label(params, classify), None, model, seconds))
        return fitted, constant_from_moments(total, classify=classify)
    fkr = REGISTRY["FKR-F2E"]
    for k in n_fair_features:
        est, seconds = _timed(lambda k=k: fkr.build({**params, "n_fair_features": k},
                                                    classify=classify)
                              .fit(Xtr, ytr, sensitive_features=s_tr))
        fitted.append((fkr.label(params, classify), k, est, seconds))
        echo(f"  fitted {fitted[-1][0]}, k = {est.n_fair_features_} ({seconds:.1f} s)")
    for m in baselines:
        model, seconds = _timed(lambda m=m: m.build(params, classify=classify)
                                .fit(Xtr, ytr, sensitive_features=s_tr))
        fitted.append((m.label(params, classify), None, model, seconds))
    return fitted, constant_from_labels(dask.compute(ytr)[0], classify=classify)


def _predict_all(models: list[Any], X: Any, classify: bool, constant: float) -> Any:
    """Predictions of every model and of the constant, one column each: models that share a
    feature map share its kernel block k(x, L), so the test rows are read once for all."""
    groups: dict[int, list[int]] = {}
    for i, est in enumerate(models):
        groups.setdefault(id(est.feature_map_), []).append(i)
    raw: list[Any] = [None] * len(models)
    for members in groups.values():
        fmap = models[members[0]].feature_map_
        out = fmap.project(X, np.column_stack([models[i].dual_coef_ for i in members]))
        for j, i in enumerate(members):
            raw[i] = out[:, j] + models[i].intercept_
    cols = []
    for est, f in zip(models, raw, strict=True):
        if classify:
            # the classifiers' rule (a·(f − threshold) ≥ 0 with a > 0), FKRR's at ½
            f = (f >= getattr(est, "threshold_", RIDGE_THRESHOLD)).astype(np.float64)
        cols.append(f)
    if is_dask(X):
        return da.stack([*cols, da.full_like(cols[0], constant)], axis=1)
    return np.column_stack([*cols, np.full(len(cols[0]), constant)])


def _pipeline(est: Any, rows: _Rows, data: JobData, classes: np.ndarray | None) -> Any:
    """What predicts new rows as the test rows were: the encoder, the scaling, the model."""
    from sklearn.pipeline import Pipeline

    if classes is not None:  # fitted on y == classes[1]: predict the table's own labels
        est = copy.copy(est)
        est.classes_ = np.asarray(classes)
    return Pipeline([*preprocessing(data, rows.scaler), ("model", est)])


def _store_model(run: Run, est: Any, pred: Any, rows: _Rows, classes: np.ndarray | None,
                 data: JobData) -> None:
    """The model with its encoder and scaling (``daskfair.load``) and its test predictions."""
    write_model(run, _pipeline(est, rows, data, classes))
    run.write_array("predictions/test", da.asarray(pred).astype(np.float64))
    run.write_array("predictions/test_rows", rows.test)
    run.set_attrs(classes=None if classes is None else classes.tolist())


def _best_error(est: Any) -> float:
    return float(est.cv_results_["mean_test_error"][est.best_index_])


def _chosen(est: Any) -> dict[str, Any]:
    """The chosen candidate's own parameters (and threshold), from the CV's grids."""
    column = {grid: name for name, grid in GRID_OF.items()}
    out = {column[grid]: value[0] for grid, value in est.best_params_.items()}
    if hasattr(est, "best_threshold_"):
        out["threshold"] = est.best_threshold_
    return out


def _store_frontier(run: Run, est: Any) -> dict[str, Any]:
    """Every candidate's validation disparity/error as arrays; the front in the attributes."""
    fr = est.frontier_
    for col in ("candidate", "disparity", "disparity_sem", "disparity_upper", "error"):
        run.write_array(f"frontier/{col}", fr[col].to_numpy())
    run.write_array("frontier/pareto", fr["pareto"].to_numpy().astype(np.int8))
    front = fr[fr["pareto"] | fr["selected"]].replace({np.nan: None})
    return {"n_candidates": int(est.n_candidates_), "cv": int(est.n_splits_),
            "disparity_bound": float(est.disparity_bound_),
            "best_params": _chosen(est),
            "validation_disparity": est.best_disparity_,
            "validation_disparity_interval": list(est.best_disparity_interval_),
            "disparity_confidence": est.disparity_confidence_, "new_rows": est.new_rows_,
            "validation_error": _best_error(est),
            "front": front.to_dict(orient="records")}


def _score_models(fitted: list, constant: float, rows: _Rows, classify: bool,
                  label: str) -> tuple[list[dict[str, Any]], Any, float]:
    """Every model scored in one pass over the test rows: (result rows, the first model's
    predictions, the seconds of that pass)."""
    t0 = time.perf_counter()
    preds = _predict_all([est for _, _, est, _ in fitted], rows.Xte, classify, constant)
    yte, s_te = rows.yte, rows.s_te
    if rows.streamed:  # kept in the cluster's memory for the scores
        preds, yte, s_te = dask.persist(preds, yte, s_te)
    seconds = time.perf_counter() - t0
    results = []
    for i, (name, k, est, fit_seconds) in enumerate([*fitted, (label, None, None, 0.0)]):
        row = {"method": name, "n_fair_features": getattr(est, "n_fair_features_", k),
               **score(preds[:, i], yte, s_te, classify=classify), "seconds": fit_seconds}
        if hasattr(est, "frontier_"):
            row.update(validation_disparity=est.best_disparity_,
                       validation_error=_best_error(est))
        results.append(row)
    return results, preds[:, 0], seconds


def fkr_job(
    data: JobData,
    *,
    run: Run,
    client: Any,
    params: Mapping[str, Any] | None = None,
    n_fair_features: Sequence[int] | None = None,
    task: str = "auto",
    split: int | None = 0,
    test_size: float = 0.25,
    random_state: int = 0,
    chunk_rows: int = 50_000,
    echo: Echo = print,
) -> dict[str, Any]:
    """Fit the fair kernel model and its baselines on the training rows, score the test rows
    in one pass and write the model, the test predictions, the frontier and the results into
    ``run``; returns the results.

    ``params`` are the models' parameters by library name: each model takes those its
    estimator has. Without ``n_fair_features`` the fair model is the CV selection under the
    disparity bound, its baselines solved from the moments of its first pass; with them,
    FKR-F²E for every k and the baselines each fitted.
    """
    if data.y is None:
        raise ValueError("FKR-F²E needs a label: give --label COLUMN.")
    params = {**(params or {}), "random_state": random_state}
    check_fkr_job(params, n_fair_features=n_fair_features, task=task, test_size=test_size,
                  random_state=random_state, chunk_rows=chunk_rows)
    task, classes = _classes(data, task)
    classify = task == "classification"
    rows = _train_test(data, classes, classify, task, split, test_size, random_state,
                       chunk_rows)
    echo(f"FKR-F²E ({task}): {rows.n_train:,} training and {rows.n_test:,} test rows, "
         f"{rows.X.shape[1]} features; {rows.split_text}")
    if rows.n_train <= params.get("n_landmarks", 1000):
        params["approximation"] = "exact"
    fitted, constant = _fit_models(params, n_fair_features, rows, classify, echo)
    label = REGISTRY["constant"].label(params, classify)
    results, first, seconds = _score_models(fitted, constant, rows, classify, label)
    _store_model(run, fitted[0][2], first, rows, classes, data)
    summary = {"task": task, "split": rows.split_text, "n_train": int(rows.n_train),
               "n_test": int(rows.n_test), "results": results, "test_pass_seconds": seconds}
    if hasattr(fitted[0][2], "frontier_"):
        summary["selection"] = _store_frontier(run, fitted[0][2])
    run.set_attrs(**summary)
    return summary


def format_selection(selection: Mapping[str, Any]) -> str:
    """One line: what the CV estimator chose and its validation scores."""
    p = dict(selection["best_params"])
    family = p.pop("family")
    text = ", ".join(f"{k} {v:.4g}" if isinstance(v, float) else f"{k} {v}"
                     for k, v in p.items())
    confidence = selection.get("disparity_confidence")
    if confidence is None:
        margin = " (no margin)"
    else:
        lo, hi = selection["validation_disparity_interval"]
        rows = selection.get("new_rows")
        about = "the population's" if rows is None else f"on {rows:,} new rows"
        margin = f" ({about} at most {hi:.4f} at {confidence:.0%}; interval from {lo:.4f})"
    return (f"chosen from {selection['n_candidates']} candidates on "
            f"{selection['cv']} folds: {family} ({text}); validation disparity "
            f"{selection['validation_disparity']:.4f}{margin}, error "
            f"{selection['validation_error']:.4f}")


def format_fkr_results(summary: Mapping[str, Any]) -> str:
    """Text table of the job's models: test disparity and error."""
    err = "error" if summary["task"] == "classification" else "RMSE"
    lines = [f"{'method':<36}{'k':>5}{'disparity':>11}{err:>9}{'seconds':>9}", "-" * 70]
    for r in summary["results"]:
        lines.append(f"{r['method']:<36}{r['n_fair_features'] or '-':>5}"
                     f"{r['disparity']:>11.4f}{r['error']:>9.4f}{r['seconds']:>9.1f}")
    if "selection" in summary:
        lines += ["", format_selection(summary["selection"])]
    return "\n".join(lines)
