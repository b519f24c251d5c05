"""The ``fkr`` job: the pipeline ``daskfair.load`` returns (a table's encoder, the column
scaling, the fair model) fitted on the training rows with the public estimators, and scored
on the test rows: the user's own test table, a data set's published split, or
:func:`daskfair.train_test_split`.

A table's encoder is fitted from the training rows' pass (``TableEncoder.fit_summary``) and
its scaling from the encoded columns' ranges that pass gives (``output_ranges``): the
steps ``Pipeline.fit`` would learn, without a pass of their own; and the model reads the
features, the label and the groups from the same partitions, so each pass reads a
partition once (``tests/test_cli_jobs.py`` checks the bits against ``Pipeline.fit``)."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import dask
import dask.array as da
import numpy as np

from .._frames import partitions
from .._params import Integer, Real, check_params
from .._validation import is_dask
from ..fkr.frontier import GRID_OF
from ..model_selection import split_rows
from ..models import write_model
from ..store import Run
from .inputs import JobData, frame_column, to_dask
from .params import takes
from .results import numpy_of

__all__ = ["build_models", "check_fkr_job", "fkr_job", "format_fkr_results", "pipeline_steps"]

Echo = Callable[[str], Any]
#: The coverage of the test disparity's interval.
TEST_CONFIDENCE = 0.95


@dataclass(frozen=True)
class _Rows:
    """The training and test rows as the model reads them, prepared by ``steps`` (the
    pipeline's fitted encoder and scaling), the test rows' numbers and where they are from."""

    steps: list[tuple[str, Any]]
    X: Any
    y: Any
    s: Any
    X_test: Any
    y_test: Any
    s_test: Any
    test_rows: Any
    text: str


#: Parameters of FKR-F²E alone (the CV searches its own grids of them); None: the default.
_FKR_F2E_ONLY = ("fairness_weight", "relative_alpha")
#: The job's own parameters (the models' are their estimators').
_JOB = {"test_size": (Real(0, 1, low_open=True, high_open=True),),
        "random_state": (Integer(0),), "chunk_rows": (Integer(1),)}


def _model_class(classify: bool, search: bool) -> type:
    from ..fkr import (
        FairKernelClassifier,
        FairKernelClassifierCV,
        FairKernelRegressor,
        FairKernelRegressorCV,
    )

    if search:
        return FairKernelClassifierCV if classify else FairKernelRegressorCV
    return FairKernelClassifier if classify else FairKernelRegressor


def pipeline_steps(params: Mapping[str, Any], *, table: bool) -> list[tuple[str, Any]]:
    """The pipeline's unfitted steps before the model: a table's encoder, the scaling."""
    from ..scaling import ColumnScaler
    from ..tables import TableEncoder

    encode = [("encode", TableEncoder(**takes(TableEncoder, params)))] if table else []
    return [*encode, ("scale", ColumnScaler())]


_OWN_DEFAULT = ("gammas", "n_landmarks", "max_landmarks")


def build_models(params: Mapping[str, Any], *, classify: bool,
                 n_fair_features: Sequence[int] | None = None,
                 baselines: bool = False) -> list[tuple[str, Any]]:
    """(name, unfitted estimator) of every model the job fits, from the library parameters
    ``params``: the CV selection under the bound (or FKR-F²E for each k of
    ``n_fair_features``), then with ``baselines`` the same search without a bound and the
    constant predictor."""
    from sklearn.dummy import DummyClassifier, DummyRegressor

    # a flag not given: the estimators' own default (the width and rank from the data)
    params = {k: v for k, v in params.items() if v is not None or k not in _OWN_DEFAULT}
    cv = _model_class(classify, search=True)
    if n_fair_features is None:
        out = [(f"{cv.__name__} (<= {params.get('disparity_bound', 0.01):g})",
                cv(**takes(cv, params)))]
    else:
        single = _model_class(classify, search=False)
        fixed = {**{k: v for k, v in params.items()
                    if not (k in _FKR_F2E_ONLY and v is None)},
                 "gamma": np.atleast_1d(params.get("gammas") or [None])[0]}
        out = [(f"FKR-F2E ({params.get('objective', 'mean_discrepancy')}), k = {k}",
                single(**takes(single, {**fixed, "n_fair_features": k})))
               for k in n_fair_features]
    if baselines:
        # the largest disparity a classifier can have (1) or any regression's: no bound
        bound = 1.0 if classify else float(np.finfo(np.float64).max)
        out.append((f"{cv.__name__} (no bound)",
                    cv(**takes(cv, {**params, "disparity_bound": bound}))))
        out.append(("constant", DummyClassifier(strategy="most_frequent") if classify
                    else DummyRegressor(strategy="mean")))
    return out


def check_fkr_job(params: Mapping[str, Any], *, n_fair_features: Sequence[int] | None = None,
                  task: str = "auto", test_size: float | None = None, random_state: int = 0,
                  chunk_rows: int = 50_000, baselines: bool = False, **_: Any) -> None:
    """The parameters of :func:`fkr_job` and of every model it will fit (for both tasks when
    ``task`` is "auto"), checked: refused before any data are read."""
    check_params({"test_size": 0.25 if test_size is None else test_size,
                  "random_state": random_state, "chunk_rows": chunk_rows}, _JOB)
    given = [k for k in _FKR_F2E_ONLY if params.get(k) is not None]
    if given and n_fair_features is None:
        raise ValueError(f"{given[0]} applies to FKR-F²E (n_fair_features=...); the CV "
                         "selection searches its own grid of it.")
    params = {**params, "random_state": random_state}
    for classify in (True, False) if task == "auto" else (task == "classification",):
        models = build_models(params, classify=classify, n_fair_features=n_fair_features,
                              baselines=baselines)
        for _, step in [*pipeline_steps(params, table=True), *models]:
            if hasattr(step, "_validate_params"):
                step._validate_params()


def _task(data: JobData, task: str) -> tuple[str, np.ndarray | None]:
    """The task and, to classify, the label's two values (a table's from its pass)."""
    if data.summary is not None:
        counts = data.summary.columns[data.description["label"]].counts
        values = None if counts is None else np.asarray(sorted(counts))
    else:
        values = np.unique(numpy_of(data.y))
    if task == "auto":
        task = "classification" if values is not None and len(values) == 2 else "regression"
    if task == "classification" and (values is None or len(values) != 2):
        raise ValueError(f"classification needs a binary label, got "
                         f"{'many' if values is None else len(values)} classes; use "
                         "--task regression for a continuous label.")
    return task, values if task == "classification" else None


def _table_rows(data: JobData, test: JobData | None, params: Mapping[str, Any],
                test_size: float | None, seed: int, chunk_rows: int) -> _Rows:
    """A table's rows: the encoder fitted from the training rows' pass (the whole input's
    with a test table; else the split's, one more pass), the scaling from its ranges."""
    from ..scaling import ColumnScaler
    from ..tables import summarize

    label, group = data.description["label"], data.description["sensitive"]
    encode = pipeline_steps(params, table=True)[0][1]
    if test is not None:
        parts, summary = data.parts, data.summary
        test_parts, test_lengths = test.parts, test.summary.lengths
        rows, text = np.arange(test.summary.n_rows), f"test rows: {test.description['path']}"
    else:
        size = 0.25 if test_size is None else test_size
        train, held, _, rows = split_rows([data.frame, np.arange(data.summary.n_rows)],
                                          data.summary.lengths, size, seed)
        parts, test_parts = partitions(train), partitions(held)
        summary = summarize(train, data.columns, limit=encode.max_levels,
                            counted=[label, group], parts=parts)
        test_lengths = [a - b for a, b in zip(data.summary.lengths, summary.lengths,
                                              strict=True)]
        text = f"train_test_split(test_size={size:g}, random_state={seed})"
    encode.fit_summary(summary, data.columns)
    low, high = encode.output_ranges()
    scale = ColumnScaler.from_values(low, high - low)

    def side(frame: Any, parts: list[Any], lengths: list[int]) -> list[Any]:
        X = encode.transform_partitions(parts, lengths, chunk_rows=chunk_rows)
        return [scale.transform(X), *(frame_column(frame, parts, lengths, c, chunk_rows)
                                      for c in (label, group))]

    held_frame = data.frame if test is None else test.frame
    return _Rows([("encode", encode), ("scale", scale)],
                 *side(data.frame, parts, summary.lengths),
                 *side(held_frame, test_parts, test_lengths), rows, text)


def _array_rows(data: JobData, split: int | None, test_size: float | None, seed: int,
                chunk_rows: int) -> _Rows:
    """In-memory or zarr rows: a published split or train_test_split, then the scaling
    fitted on the training rows."""
    from ..scaling import ColumnScaler

    X, y, s = (to_dask(a, chunk_rows) for a in (data.X, data.y, data.sensitive))
    n = X.shape[0]
    if data.splits is not None and split is not None:
        if not 0 <= split < len(data.splits):
            raise ValueError(f"split must lie in [0, {len(data.splits) - 1}], got {split}.")
        train = np.asarray(data.splits[split])
        rows = np.setdiff1d(np.arange(n), train)
        parts = [a[i] for a in (X, y, s) for i in (train, rows)]
        text = f"published split {split}"
    else:
        size = 0.25 if test_size is None else test_size
        *parts, _, rows = split_rows([X, y, s, np.arange(n)], None, size, seed)
        text = f"train_test_split(test_size={size:g}, random_state={seed})"
    scale = ColumnScaler().fit(parts[0])
    return _Rows([("scale", scale)], scale.transform(parts[0]), parts[2], parts[4],
                 scale.transform(parts[1]), parts[3], parts[5], rows, text)


def _fit(name: str, est: Any, rows: _Rows, echo: Echo) -> tuple[Any, Any, float]:
    """``est`` fitted on the training rows (a constant needs only their labels), the model
    that predicts new rows (its pipeline) and the seconds it took."""
    from sklearn.pipeline import Pipeline

    t0 = time.perf_counter()
    if hasattr(est, "strategy"):  # scikit-learn's constant predictor
        y = numpy_of(rows.y)
        model = est.fit(np.zeros((len(y), 1)), y)
    else:
        est.fit(rows.X, rows.y, sensitive_features=rows.s)
        model = Pipeline([*rows.steps, ("model", est)])
    seconds = time.perf_counter() - t0
    echo(f"  fitted {name} ({seconds:.1f} s)")
    return est, model, seconds


def _predict(est: Any, rows: _Rows) -> Any:
    """The test rows' predictions, aligned with their labels' chunks."""
    if hasattr(est, "strategy"):
        pred = est.predict(np.zeros((len(rows.test_rows), 1)))
    else:
        pred = est.predict(rows.X_test)
    if is_dask(rows.y_test):
        pred = da.asarray(pred).rechunk({0: rows.y_test.chunks[0]})
    return pred


def _score(pred: Any, rows: _Rows, classes: np.ndarray | None, seed: int) -> dict[str, Any]:
    """The test rows' disparity (with its interval for a classifier, from the audit's
    bootstrap) and error (the audit's error rate of all rows)."""
    from ..metrics import audit, regression_report

    if classes is None:
        report = regression_report(rows.y_test, pred, sensitive_features=rows.s_test)
        return {"disparity": report["mean_prediction_gap"], "error": report["rmse"]}
    result = audit(rows.y_test, pred, sensitive_features=rows.s_test, pos_label=classes[1],
                   confidence=TEST_CONFIDENCE, random_state=seed)
    lo, hi = (float(v["selection_rate"]) for v in result.difference_ci())
    return {"disparity": float(result.difference()["selection_rate"]),
            "disparity_interval": [lo, hi], "error": float(result.overall["error_rate"])}


def _chosen(est: Any) -> dict[str, Any]:
    """The chosen candidate's own parameters (and threshold), from the CV's grids."""
    column = {grid: name for name, grid in GRID_OF.items()}
    out = {column[grid]: value[0] for grid, value in est.best_params_.items()}
    out["n_landmarks"] = int(est.cv_results_["param_n_landmarks"][est.best_index_])
    if hasattr(est, "best_threshold_"):
        out["threshold"] = est.best_threshold_
    return out


def _validation_error(est: Any) -> float:
    return float(est.cv_results_["mean_test_error"][est.best_index_])


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
            "validation_error": _validation_error(est),
            "front": front.to_dict(orient="records")}


def _store_predictions(run: Run, pred: Any, rows: _Rows, classes: np.ndarray | None) -> None:
    """The first model's test predictions (1 for the positive class) and the rows' numbers."""
    values = da.asarray(pred) if is_dask(pred) else np.asarray(pred)
    if classes is not None:
        values = values == classes[1]
    run.write_array("predictions/test", values.astype(np.float64))
    run.write_array("predictions/test_rows", da.asarray(rows.test_rows))
    run.set_attrs(classes=None if classes is None else classes.tolist())


def fkr_job(
    data: JobData,
    *,
    run: Run,
    client: Any,
    params: Mapping[str, Any] | None = None,
    test: JobData | None = None,
    n_fair_features: Sequence[int] | None = None,
    task: str = "auto",
    split: int | None = 0,
    test_size: float | None = None,
    random_state: int = 0,
    chunk_rows: int = 50_000,
    baselines: bool = False,
    echo: Echo = print,
) -> dict[str, Any]:
    """Fit the fair model's pipeline (and with ``baselines`` the same search without a bound
    and the constant) on the training rows, score the test rows and write the first model,
    its test predictions, the CV's frontier and the results into ``run``; returns the
    results.

    ``params`` are the library parameters by name: each step takes those it has.
    """
    if data.y is None:
        raise ValueError("FKR-F²E needs a label: give --label COLUMN.")
    if test is not None and (data.frame is None or test.frame is None):
        raise ValueError("--test takes a table with the columns of --input (a CSV or Parquet "
                         "table); a named data set is split by --split or --test-size.")
    params = {**(params or {}), "random_state": random_state}
    check_fkr_job(params, n_fair_features=n_fair_features, task=task, test_size=test_size,
                  random_state=random_state, chunk_rows=chunk_rows, baselines=baselines)
    task, classes = _task(data, task)
    rows = (_table_rows(data, test, params, test_size, random_state, chunk_rows)
            if data.frame is not None
            else _array_rows(data, split, test_size, random_state, chunk_rows))
    n_test = len(rows.test_rows)
    echo(f"FKR-F²E ({task}): {n_test:,} test rows ({rows.text})")
    results, first = [], None
    for i, (name, est) in enumerate(build_models(params, classify=classes is not None,
                                                 n_fair_features=n_fair_features,
                                                 baselines=baselines)):
        est, model, seconds = _fit(name, est, rows, echo)
        pred = _predict(est, rows)
        if is_dask(pred):  # the predictions, labels and groups read in one pass, kept
            pred, y_test, s_test = dask.persist(pred, rows.y_test, rows.s_test)
            rows = replace(rows, y_test=y_test, s_test=s_test)
        row = {"method": name, "n_fair_features": getattr(est, "n_fair_features_", None),
               **_score(pred, rows, classes, random_state), "seconds": seconds}
        if hasattr(est, "frontier_"):
            row.update(validation_disparity=est.best_disparity_,
                       validation_error=_validation_error(est))
        results.append(row)
        if i == 0:
            first = est
            write_model(run, model)
            _store_predictions(run, pred, rows, classes)
    summary = {"task": task, "split": rows.text, "n_test": n_test, "results": results,
               "test_confidence": TEST_CONFIDENCE}
    if hasattr(first, "frontier_"):
        summary["selection"] = _store_frontier(run, first)
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


def _verdict(summary: Mapping[str, Any]) -> str | None:
    """Whether the fair model's test disparity is consistent with the bound: its interval
    reaches below the bound, or lies wholly above it."""
    selection, first = summary.get("selection"), summary["results"][0]
    if selection is None or "disparity_interval" not in first:
        return None
    bound, (lo, hi) = selection["disparity_bound"], first["disparity_interval"]
    level = f"{summary['test_confidence']:.0%}"
    where = (f"consistent with the bound {bound:g}" if lo <= bound else
             f"above the bound {bound:g}: the population's disparity is likely larger")
    return (f"test disparity {first['disparity']:.4f}, {level} interval {lo:.4f} to "
            f"{hi:.4f}: {where} (on {summary['n_test']:,} test rows a disparity within the "
            "bound can measure above it)")


def format_fkr_results(summary: Mapping[str, Any]) -> str:
    """Text table of the job's models: test disparity and error."""
    err = "error" if summary["task"] == "classification" else "RMSE"
    lines = [f"{'method':<42}{'k':>5}{'disparity':>11}{err:>9}{'seconds':>9}", "-" * 76]
    for r in summary["results"]:
        lines.append(f"{r['method']:<42}{r['n_fair_features'] or '-':>5}"
                     f"{r['disparity']:>11.4f}{r['error']:>9.4f}{r['seconds']:>9.1f}")
    verdict = _verdict(summary)
    if verdict is not None:
        lines += ["", verdict]
    if "selection" in summary:
        lines += ["", format_selection(summary["selection"])]
    return "\n".join(lines)
