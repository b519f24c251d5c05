"""The command line's jobs: FKR-F²E, the SAfairKM front and FCE, each writing one zarr run.

Each job takes a :class:`~daskfair.inputs.JobData`, an open :class:`~daskfair.store.Run` and
the client, runs the method on the cluster, records its results in the run (arrays for what
is large, attributes for tables and metrics) and returns a JSON-able summary; the caller marks
the run complete. Text goes through ``echo``.
"""

from __future__ import annotations

import itertools
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import dask
import dask.array as da
import numpy as np
import pandas as pd

from .._validation import is_dask
from ..fkr.frontier import GRID_OF
from ..fkr.statistics import fold_of
from ..metrics import (
    REPORT_COLUMNS,
    clustering_report,
    hypervolume_2d,
)
from ..progress import IterationBar
from ..store import Run
from .inputs import JobData, to_dask
from .paper.methods import (
    REGISTRY,
    RIDGE_THRESHOLD,
    FitSettings,
    constant_from_labels,
    constant_from_moments,
    score,
)

__all__ = ["fce_job", "fkr_job", "format_fce_report", "format_fkr_results", "safairkm_job"]

logger = logging.getLogger(__name__)

Echo = Callable[[str], Any]


def _numpy(x: Any) -> np.ndarray | None:
    if x is None:
        return None
    return np.asarray(x.compute() if is_dask(x) else x)


# -- FKR-F²E ---------------------------------------------------------------------------------

def _split(n: int, data: JobData, split: int | None, test_size: float, seed: int,
           y: np.ndarray, s: np.ndarray, task: str) -> tuple[np.ndarray, np.ndarray, str]:
    if data.splits is not None and split is not None:
        if not 0 <= split < len(data.splits):
            raise ValueError(f"--split must lie in [0, {len(data.splits) - 1}], got {split}.")
        train = np.asarray(data.splits[split])
        return train, np.setdiff1d(np.arange(n), train), f"published split {split}"
    _check_test_size(test_size)
    from sklearn.model_selection import train_test_split

    # stratified by group (and class): the test rows keep every group's share
    groups = np.unique(s, return_inverse=True)[1]
    strata = groups * 2 + y if task == "classification" else groups
    if np.bincount(np.unique(strata, return_inverse=True)[1]).min() < 2:
        strata = None
    train, test = train_test_split(np.arange(n), test_size=test_size, random_state=seed,
                                   stratify=strata)
    return (np.sort(train), np.sort(test),
            f"random {1 - test_size:.0%}/{test_size:.0%} split (seed {seed}"
            + (", stratified)" if strata is not None else ")"))


def _check_test_size(test_size: float) -> None:
    if not 0 < test_size < 1:
        raise ValueError(f"--test-size must lie in (0, 1), got {test_size}.")


_HASH_BINS = 1 << 20


def _is_test(rows: np.ndarray, test_size: float, seed: int) -> np.ndarray:
    """A row is a test row by a seeded hash of its number: the split of a table that is not
    in memory, the same for any partitioning (and file format) of the same rows."""
    return fold_of(rows, _HASH_BINS, seed + 0x5EED) < round(test_size * _HASH_BINS)


def _take_rows(block: np.ndarray, test: bool, test_size: float, seed: int,
               block_info: Any = None) -> np.ndarray:
    lo = block_info[0]["array-location"][0][0]
    return block[_is_test(np.arange(lo, lo + len(block)), test_size, seed) == test]


def _rows(x: da.Array, test: bool, test_size: float, seed: int) -> da.Array:
    """The test (or training) rows of ``x``, with their counts per block known (computed
    here from the row numbers alone: nothing is read)."""
    edges = np.cumsum((0, *x.chunks[0]))
    counts = tuple(int((_is_test(np.arange(lo, hi), test_size, seed) == test).sum())
                   for lo, hi in itertools.pairwise(edges))
    return x.map_blocks(_take_rows, test, test_size, seed, dtype=x.dtype,
                        chunks=(counts, *x.chunks[1:]))


def _classes(data: JobData, task: str) -> tuple[str, np.ndarray | None]:
    """The task and, to classify, the label's two values (from a table's pass: no read)."""
    if data.summary is not None:
        counts = data.summary.columns[data.description["label"]].counts
        values = None if counts is None else np.asarray(sorted(counts))
    else:
        values = np.unique(_numpy(data.y))
    if task == "auto":
        task = "classification" if values is not None and len(values) == 2 else "regression"
    if task == "classification":
        if values is None or len(values) != 2:
            raise ValueError(f"classification needs a binary label, got "
                             f"{'many' if values is None else len(values)} classes; use "
                             "--task regression for a continuous label.")
        return task, values
    return task, None


def _scale(X: Any, data: JobData, train: Any) -> tuple[Any, np.ndarray, np.ndarray]:
    """The FKR-F²E protocol's min-max scaling (docs/design.md#fkr-ridge-thresholds-and-metrics): on the training rows'
    range, or a table's range from its pass (every row: no pass of its own), with constant
    columns 0."""
    if data.encoder is not None:
        enc, cols = data.encoder, data.summary.columns
        lo = np.array([cols[c].low for c in enc.numeric_columns_]
                      + [0.0] * (enc.n_features_out_ - len(enc.numeric_columns_)))
        hi = np.array([cols[c].high for c in enc.numeric_columns_]
                      + [1.0] * (enc.n_features_out_ - len(enc.numeric_columns_)))
        lo, hi = np.nan_to_num(lo), np.nan_to_num(hi)
    else:
        Xtr = train(X) if callable(train) else X[train]
        lo, hi = Xtr.min(axis=0), Xtr.max(axis=0)
        if is_dask(X):
            lo, hi = da.compute(lo, hi)
    span = np.where(hi > lo, hi - lo, 1.0)
    return (X - lo) / span, lo, span


def fkr_job(
    data: JobData,
    *,
    run: Run,
    client: Any,
    kernel: str = "rbf",
    degree: int = 3,
    gamma: Sequence[float] | float | None = None,
    coef0: float = 1.0,
    disparity_bound: float = 0.01,
    disparity_confidence: float | None = 0.9,
    constraint: str = "demographic_parity",
    folds: int = 5,
    components: Sequence[int | None] | None = None,
    objective: str = "mean_discrepancy",
    fairness: float | None = None,
    alpha: float = 1e-4,
    mu: float = 1.0,
    n_landmarks: int = 1000,
    task: str = "auto",
    split: int | None = 0,
    test_size: float = 0.25,
    seed: int = 0,
    chunk_rows: int = 50_000,
    echo: Echo = print,
) -> dict[str, Any]:
    """Fit the fair kernel model and its baselines on the training rows; score the test rows.

    Without ``components``: the most accurate model whose validation disparity plus its
    margin (``disparity_confidence``) is within ``disparity_bound``
    (:class:`~daskfair.FairKernelClassifierCV`, or the regressor's CV for a continuous
    label), whose candidate frontier is stored; its baselines, FKRR (penalty ``mu``) and
    unconstrained kernel ridge, are solved from the moments its first pass summed
    (:meth:`~daskfair.FairKernelRidge.fit_moments`), the constant predictor from the class
    counts: two passes over the training rows in all. With ``components``: FKR-F²E
    for every k (the paper's method), the baselines fitted each with a pass of their own.
    Every model is then scored in one pass over the test rows. Features are min-max scaled
    (docs/design.md#fkr-ridge-thresholds-and-metrics): on the training rows' range, or for a table on its range from the pass
    that read it.

    In-memory data are split as the paper did (seeded, stratified by group and class, or the
    published split); a table or a zarr array, which is never brought into this process,
    by a seeded hash of the row number (about ``test_size`` of every group and class).
    """
    if data.y is None:
        raise ValueError("FKR-F²E needs a label: give --label COLUMN.")
    task, classes = _classes(data, task)
    classify = task == "classification"
    rows = _train_test(data, classes, classify, task, split, test_size, seed, chunk_rows)
    n_train, n_test, X = rows.n_train, rows.n_test, rows.X
    echo(f"FKR-F²E ({task}): {n_train:,} training and {n_test:,} test rows, "
         f"{X.shape[1]} features; {rows.split_text}")
    gammas = [None] if gamma is None else list(np.atleast_1d(gamma))
    settings = FitSettings(
        kernel={"kernel": kernel, "degree": degree, "coef0": coef0, "gamma": gammas[0]},
        approximation=({"approximation": "exact"} if n_train <= n_landmarks
                       else {"n_landmarks": n_landmarks, "random_state": seed}),
        classify=classify, alpha=alpha, mu=mu, objective=objective, fairness=fairness,
        disparity_bound=disparity_bound, disparity_confidence=disparity_confidence,
        constraints=constraint, folds=folds,
        cv_kernel={"gamma": gammas if len(gammas) > 1 else gammas[0]})
    fitted, constant = _fit_models(settings, components, rows, classify, echo)
    # every model's predictions in one pass over the test rows (kept in the cluster's memory
    # for the scores)
    t0 = time.perf_counter()
    preds = _predict_all([est for _, _, est, _ in fitted], rows.Xte, classify, constant)
    yte, s_te = rows.yte, rows.s_te
    if rows.streamed:
        preds, yte, s_te = dask.persist(preds, yte, s_te)
    score_seconds = time.perf_counter() - t0
    results, chosen = [], None
    names = [*fitted, (REGISTRY["constant"].label(settings), None, None, 0.0)]
    for i, (name, k, est, seconds) in enumerate(names):
        pred = preds[:, i]
        row = {"method": name, "n_fair_features": getattr(est, "n_fair_features_", k),
               **score(pred, yte, s_te, classify=classify), "seconds": seconds}
        if hasattr(est, "frontier_"):
            chosen = est
            row.update(validation_sd=est.best_disparity_, validation_error=_best_error(est))
        results.append(row)
        if i == 0:  # the first (fair) model is kept in the run
            _store_model(run, est, pred, rows.test, classes, data, rows.lo, rows.span)
    summary = {"task": task, "split": rows.split_text, "n_train": int(n_train),
               "n_test": int(n_test), "results": results, "test_pass_seconds": score_seconds}
    if chosen is not None:
        summary["selection"] = _store_frontier(run, chosen)
    run.set_attrs(**summary)
    return summary


@dataclass(frozen=True)
class _Rows:
    """The fkr job's training and test rows, scaled (dask), and how they were split."""

    X: Any
    Xtr: Any
    ytr: Any
    s_tr: Any
    Xte: Any
    yte: Any
    s_te: Any
    test: Any          # the test rows' numbers
    lo: np.ndarray     # the min-max scaling
    span: np.ndarray
    n_train: int
    n_test: int
    split_text: str
    streamed: bool     # a table or zarr array never brought into this process


def _train_test(data: JobData, classes: Any, classify: bool, task: str, split: int | None,
                test_size: float, seed: int, chunk_rows: int) -> _Rows:
    """Split and scale: in-memory data as the paper did, streamed data by a row hash."""
    n = data.X.shape[0]
    if is_dask(data.X) and data.splits is None:
        _check_test_size(test_size)
        y = (data.y == classes[1]).astype(np.int64) if classify else data.y.astype(np.float64)
        s = data.sensitive
        X = data.X  # in its blocks as read (the methods align rows to their own blocks)
        y, s = y.rechunk({0: X.chunks[0]}), s.rechunk({0: X.chunks[0]})

        def part(a: Any, test: bool) -> Any:
            return _rows(a, test, test_size, seed)

        X, lo, span = _scale(X, data, lambda a: part(a, False))
        Xtr, ytr, s_tr = (part(a, False) for a in (X, y, s))
        Xte, yte, s_te = (part(a, True) for a in (X, y, s))
        return _Rows(X, Xtr, ytr, s_tr, Xte, yte, s_te,
                     part(da.arange(n, chunks=X.chunks[0]), True), lo, span, Xtr.shape[0],
                     Xte.shape[0], f"random {1 - test_size:.0%}/{test_size:.0%} split (seed "
                     f"{seed}, by a hash of the row number)", True)
    y_raw, s = _numpy(data.y), _numpy(data.sensitive)
    y = (y_raw == classes[1]).astype(np.int64) if classify else y_raw.astype(np.float64)
    train, test, split_text = _split(n, data, split, test_size, seed, y, s, task)
    X, lo, span = _scale(to_dask(data.X, chunk_rows), data, train)
    return _Rows(X, X[train], y[train], s[train], X[test], y[test], s[test], test, lo, span,
                 len(train), len(test), split_text, False)


def _fit_models(settings: FitSettings, components: Sequence[int | None] | None, rows: _Rows,
                classify: bool, echo: Echo) -> tuple[list[tuple[str, int | None, Any, float]],
                                                     float]:
    """The fair model(s) and the baselines: (name, k, model, seconds) each, and the constant.

    Without ``components`` the CV selection, its baselines solved from the moments of its
    first pass (no pass of their own); with them FKR-F²E for every k and the baselines each
    fitted.
    """
    Xtr, ytr, s_tr = rows.Xtr, rows.ytr, rows.s_tr
    baselines = [m for m in REGISTRY.values() if m.baseline and m.build is not None]
    fitted: list[tuple[str, int | None, Any, float]] = []
    if components is None:
        cv = REGISTRY["CV"]
        t0 = time.perf_counter()
        est = cv.build(settings).fit(Xtr, ytr, sensitive_features=s_tr)
        fitted.append((cv.label(settings), None, est, time.perf_counter() - t0))
        echo(f"  fitted {fitted[-1][0]} ({fitted[-1][3]:.1f} s)")
        total, fmap = est.moments_[0], est.feature_maps_[0]
        for method in baselines:
            t0 = time.perf_counter()
            fitted.append((method.label(settings), None,
                           method.build(settings).fit_moments(total, fmap),
                           time.perf_counter() - t0))
        return fitted, constant_from_moments(total, classify=classify)
    fkr = REGISTRY["FKR-F2E"]
    for k in components:
        t0 = time.perf_counter()
        est = fkr.build(replace(settings, n_components=k))
        est.fit(Xtr, ytr, sensitive_features=s_tr)
        fitted.append((fkr.label(settings), k, est, time.perf_counter() - t0))
        echo(f"  fitted {fitted[-1][0]}, k = {est.n_fair_features_} ({fitted[-1][3]:.1f} s)")
    for method in baselines:
        t0 = time.perf_counter()
        fitted.append((method.label(settings), None,
                       method.build(settings).fit(Xtr, ytr, sensitive_features=s_tr),
                       time.perf_counter() - t0))
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


def _store_model(run: Run, est: Any, pred: Any, test: Any, classes: np.ndarray | None,
                 data: JobData, low: np.ndarray, span: np.ndarray) -> None:
    """The model, its test predictions, and what new rows need to be predicted as these
    were: the scaling and, for a table, its encoder (``TableEncoder.from_dict``)."""
    run.write_array("model/landmarks", est.feature_map_.landmarks)
    run.write_array("model/scale_low", np.asarray(low, dtype=np.float64))
    run.write_array("model/scale_span", np.asarray(span, dtype=np.float64))
    _store_encoder(run, data)
    run.write_array("model/dual_coef", est.dual_coef_)
    if hasattr(est, "projection_"):
        run.write_array("model/projection", est.projection_)
    run.write_array("predictions/test", da.asarray(pred).astype(np.float64))
    run.write_array("predictions/test_rows", test)
    run.set_attrs(model={"estimator": type(est).__name__,
                         "intercept": float(est.intercept_),
                         "threshold": getattr(est, "threshold_", None),
                         "kernel": {k: v for k, v in est.feature_map_.params.items()},
                         "n_fair_features": getattr(est, "n_fair_features_", None),
                         "classes": None if classes is None else classes.tolist()})


def _store_frontier(run: Run, est: Any) -> dict[str, Any]:
    """Every candidate's validation disparity/error as arrays; the front in the attributes."""
    fr = est.frontier_
    for col in ("candidate", "disparity", "disparity_sem", "disparity_upper", "error"):
        run.write_array(f"frontier/{col}", fr[col].to_numpy())
    run.write_array("frontier/pareto", fr["pareto"].to_numpy().astype(np.int8))
    front = fr[fr["pareto"] | fr["selected"]].replace({np.nan: None})
    return {"n_candidates": int(est.n_candidates_), "folds": int(est.cv),
            "disparity_bound": float(est.disparity_bound_),
            "best_params": _chosen(est),
            "validation_sd": est.best_disparity_,
            "validation_sd_interval": list(est.best_disparity_interval_),
            "disparity_confidence": est.disparity_confidence_,
            "validation_error": _best_error(est),
            "front": front.to_dict(orient="records")}


def _chosen(est: Any) -> dict[str, Any]:
    """The chosen candidate's own parameters (and threshold), from the CV's grids."""
    column = {grid: name for name, grid in GRID_OF.items()}
    out = {column[grid]: value[0] for grid, value in est.best_params_.items()}
    if hasattr(est, "best_threshold_"):
        out["threshold"] = est.best_threshold_
    return out


def _best_error(est: Any) -> float:
    return float(est.cv_results_["mean_test_error"][est.best_index_])


def format_selection(selection: dict[str, Any]) -> str:
    """One line: what the CV estimator chose and its validation scores."""
    p = dict(selection["best_params"])
    family = p.pop("family")
    text = ", ".join(f"{k} {v:.4g}" if isinstance(v, float) else f"{k} {v}"
                     for k, v in p.items())
    confidence = selection.get("disparity_confidence")
    if confidence is None:
        margin = " (no margin)"
    else:
        lo, hi = selection["validation_sd_interval"]
        margin = f" (on new rows {lo:.4f} to {hi:.4f}, {confidence:.0%} on each side)"
    return (f"chosen from {selection['n_candidates']} candidates on "
            f"{selection['folds']} folds: {family} ({text}); validation disparity "
            f"{selection['validation_sd']:.4f}{margin}, error "
            f"{selection['validation_error']:.4f}")


def format_fkr_results(summary: dict[str, Any]) -> str:
    """Text table of the FKR job's methods (test SD and error)."""
    err = "error" if summary["task"] == "classification" else "RMSE"
    lines = [f"{'method':<36}{'k':>5}{'SD':>9}{err:>9}{'seconds':>9}", "-" * 68]
    for r in summary["results"]:
        lines.append(f"{r['method']:<36}{r['n_fair_features'] or '-':>5}{r['sd']:>9.4f}"
                     f"{r['error']:>9.4f}{r['seconds']:>9.1f}")
    if "selection" in summary:
        lines += ["", format_selection(summary["selection"])]
    return "\n".join(lines)


# -- SAfairKM --------------------------------------------------------------------------------

def safairkm_job(
    data: JobData,
    *,
    run: Run,
    client: Any,
    n_clusters: int = 10,
    n_starts: int = 30,
    n_iter: int = 500,
    budget: int = 1500,
    pairs: Sequence[tuple[int, int]] | None = None,
    target: str = "local",
    dominance: str = "weak",
    sync_every: int = 1,
    rows: int | None = None,
    scale: str = "safairkm",
    vfairkm_mus: Sequence[float] = (0.0, 200.0, 400.0, 800.0),
    checkpoint_every: int = 10,
    resume: bool = False,
    seed: int = 0,
    echo: Echo = print,
) -> dict[str, Any]:
    """The SAfairKM cost/balance front (checkpointed in ``run``) and VfairKM's μ sweep.

    ``scale="safairkm"`` is the SAfairKM paper's preprocessing (z-scored columns, unit-length
    rows); ``rows`` subsamples (seeded) as the paper did (5,000 rows).
    """
    from ..datasets import preprocess_safairkm, standard_scale
    from ..safairkm import DEFAULT_PAIRS, pareto_front, vfairkm_front

    if scale not in ("safairkm", "standard", "none"):
        raise ValueError(f"--scale must be safairkm, standard or none, got {scale!r}.")
    if is_dask(data.X):
        X, s = _sample_rows(data, client, scale, rows, seed)
    else:
        X, s = _numpy(data.X).astype(np.float64), _numpy(data.sensitive)
        if scale == "safairkm":
            X, s = preprocess_safairkm(X, s, n_samples=rows, seed=seed)
        elif scale == "standard":
            X = standard_scale(X)
        if scale != "safairkm" and rows is not None and rows < len(X):
            keep = np.sort(np.random.default_rng(seed).choice(len(X), rows, replace=False))
            X, s = X[keep], s[keep]
    groups, counts = np.unique(s, return_counts=True)
    best = float(counts.min() / counts.max())
    echo(f"SAfairKM front: {len(X):,} rows, {X.shape[1]} features, K = {n_clusters}, "
         f"{len(groups)} groups (best possible balance {best:.3f})")
    bar = IterationBar(n_iter, "iterations")

    def report(t: int, cost: np.ndarray, balance: np.ndarray) -> None:
        bar.update(t, f"{len(cost)} points")

    t0 = time.perf_counter()
    front = pareto_front(
        X, sensitive_features=s, n_clusters=n_clusters, update_pairs=pairs or DEFAULT_PAIRS,
        n_init=n_starts, max_iter=n_iter, budget=budget, target=target, dominance=dominance,
        sync_every=sync_every, random_state=seed, store=run,
        checkpoint_every=checkpoint_every, resume=resume, client=client, callback=report)
    bar.close()
    rows_out = {"SAfairKM": {"points": len(front), "seconds": time.perf_counter() - t0,
                             "cost": front.cost.tolist(), "balance": front.balance.tolist()}}
    if vfairkm_mus:
        t0 = time.perf_counter()
        base = vfairkm_front(X, sensitive_features=s, n_clusters=n_clusters,
                             fairness_weights=vfairkm_mus, random_state=seed, client=client)
        rows_out["VfairKM"] = {"points": len(base), "seconds": time.perf_counter() - t0,
                               "cost": base.cost.tolist(), "balance": base.balance.tolist(),
                               "mu": base.params["fairness_weight"]}
        run.write_array("vfairkm/cost", base.cost)
        run.write_array("vfairkm/balance", base.balance)
    ref = (1.05 * max(max(r["cost"]) for r in rows_out.values()), 0.0)
    for r in rows_out.values():
        r["hypervolume"] = hypervolume_2d(r["cost"], r["balance"], ref)
    summary = {"fronts": rows_out, "reference": list(ref), "best_balance": best,
               "n_samples": len(X)}
    _store_encoder(run, data)
    run.set_attrs(**summary)
    return summary


def _sample_rows(data: JobData, client: Any, scale: str, rows: int | None,
                 seed: int) -> tuple[np.ndarray, np.ndarray]:
    """The rows SAfairKM keeps, from data that are not in this process: scaled on the
    workers (column moments in one pass), then only the sampled rows brought here — the
    rows ``preprocess_safairkm`` would pick from the same data in memory."""
    from ..datasets import standard_scale
    from ..safairkm.problem import check_fits_workers

    X, s = data.X.astype(np.float64), data.sensitive
    n = X.shape[0]
    keep = (np.sort(np.random.default_rng(seed).choice(n, rows, replace=False))
            if rows is not None and rows < n else None)
    check_fits_workers(X if keep is None else X[:len(keep)], client, "SAfairKM")
    if scale in ("safairkm", "standard"):
        X = standard_scale(X)
    if scale == "safairkm":
        X = X / da.maximum(da.linalg.norm(X, axis=1, keepdims=True), 1e-300)
    if keep is not None:
        X, s = X[keep], s[keep]
    X, s = dask.compute(X, s)
    return np.asarray(X), np.asarray(s)


def _code_block(block: np.ndarray, index: pd.Index) -> np.ndarray:
    return index.get_indexer(block.astype(object)).astype(np.int32)


def _codes(values: Any, levels: Sequence[Any]) -> Any:
    """Values as int32 codes of ``levels``, block by block (small enough to keep in the
    cluster's memory, where the raw values of a table's column are re-read with it)."""
    index = pd.Index(list(levels), dtype=object)
    return values.map_blocks(_code_block, index, dtype=np.int32,
                             name=f"codes-{dask.base.tokenize(values, list(levels))}")


# -- FCE -------------------------------------------------------------------------------------

def _report(y: np.ndarray | None, labels: Any, s: Any, c: int) -> dict[str, float]:
    if y is None:
        # Without classes ACC and NMI are undefined: the fairness and capacity columns are
        # computed against a dummy class vector and ACC/NMI dropped.
        zeros = da.zeros_like(s, dtype=np.int64) if is_dask(s) else np.zeros(len(s), np.int64)
        rep = clustering_report(zeros, labels, sensitive_features=s, n_clusters=c)
        return {k: v for k, v in rep.items() if k not in ("ACC", "NMI")}
    return clustering_report(y, labels, sensitive_features=s, n_clusters=c)


def fce_job(
    data: JobData | None,
    *,
    run: Run,
    client: Any,
    pool: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None,
    n_clusters: int | None = None,
    n_runs: int = 20,
    methods: Sequence[str] = ("kmeans",),
    base_clusters: int | None = None,
    fairness: float | str = "auto",
    lambda1: float = 0.001,
    max_iter: int = 50,
    tol: float = 1e-4,
    alignment: str = "rotation",
    init: str = "matched",
    chunk_rows: int = 50_000,
    resume: bool = False,
    seed: int = 0,
    echo: Echo = print,
) -> dict[str, Any]:
    """Base clusterings (from features, or a given pool) and their fair FCE consensus.

    Base clusterings computed here are stored in the run (``base_labels``) before the
    consensus starts, so a resumed job reads them instead of clustering again. The consensus
    checkpoints after every iteration.
    """
    from ..datasets import standard_scale
    from ..ensemble import FairClusteringEnsemble, base_clusterings

    if pool is not None:
        base_np, y, s = pool
        base_np = base_np[:, :n_runs]
        base = to_dask(base_np, chunk_rows)
        echo(f"FCE on a pool of {base.shape[1]} base clusterings of {base.shape[0]:,} rows")
    else:
        if data.summary is not None:
            # a table's label and groups as codes, kept on the workers: every report below
            # reads them again, and would otherwise read the table again
            cols = data.summary.columns
            y = None if data.y is None else _codes(
                data.y, sorted(cols[data.description["label"]].counts))
            s = _codes(data.sensitive, sorted(cols[data.description["sensitive"]].counts))
            y, s = dask.persist(y, s)
        else:
            y, s = _numpy(data.y), _numpy(data.sensitive)
        c_base = base_clusters or n_clusters
        if c_base is None:
            raise ValueError("clustering features needs --n-clusters (or --base-n-clusters).")
        if not (resume and run.attrs.get("base_done")):
            X = standard_scale(to_dask(data.X, chunk_rows))
            echo(f"{n_runs} base clusterings ({', '.join(methods)}, c = {c_base}) of "
                 f"{X.shape[0]:,} rows, each a task")
            labels = base_clusterings(X, n_clusters=c_base, n_runs=n_runs, methods=methods,
                                      random_state=seed, client=client)
            run.write_array("base_labels", labels, chunks=(chunk_rows, n_runs))
            run.set_attrs(base_done=True)
        else:
            echo("base clusterings read from the store")
        base = da.from_zarr(run.group["base_labels"])
    c = n_clusters
    bar = IterationBar(max_iter, "FCE iterations")
    fce = FairClusteringEnsemble("auto" if c is None else c, fairness_weight=fairness,
                                 consensus_weight=lambda1, max_iter=max_iter, tol=tol,
                                 alignment=alignment, init=init, random_state=seed)
    t0 = time.perf_counter()
    fce.fit(base, sensitive_features=to_dask(s, chunk_rows), store=run,
            resume=resume,
            callback=lambda st: bar.update(st.n_iter, f"objective {st.objective[-1]:.6g}"))
    bar.close()
    seconds = time.perf_counter() - t0
    c = fce.n_clusters_
    consensus = _report(y, fce.labels_, s, c)
    scored = base_np if pool is not None else base
    # a base clustering with more clusters than the consensus (a pool's, --base-n-clusters) is
    # scored with its own number of clusters
    own = np.maximum(c, np.asarray(dask.compute(scored.max(axis=0))[0]) + 1)
    base_reports = np.array([[_report(y, scored[:, j], s, int(own[j]))[k] for k in consensus]
                             for j in range(scored.shape[1])])
    summary = {
        "n_clusters": c, "n_iter": fce.n_iter_, "converged": fce.converged_,
        "seconds": seconds, "columns": list(consensus),
        "consensus": consensus,
        "base_mean": dict(zip(consensus, base_reports.mean(axis=0).tolist(), strict=True)),
        "base_std": dict(zip(consensus, base_reports.std(axis=0, ddof=1).tolist()
                             if len(base_reports) > 1 else [0.0] * len(consensus),
                             strict=True)),
    }
    _store_encoder(run, data)
    run.set_attrs(report=summary)
    return summary


def _store_encoder(run: Run, data: JobData | None) -> None:
    """A table's encoding, stored with the run: new rows are encoded as these were."""
    if data is not None and data.encoder is not None:
        run.set_attrs(encoder=data.encoder.to_dict())


def format_fce_report(summary: dict[str, Any]) -> str:
    """The base clusterings' mean ± std and the consensus, one row each."""
    cols = [c for c in REPORT_COLUMNS if c in summary["columns"]]
    head = f"{'':<22}" + "".join(f"{c:>12}" for c in cols)
    base = "".join(f"{summary['base_mean'][c]:>7.3f}±{summary['base_std'][c]:.3f}"[-12:]
                   .rjust(12) for c in cols)
    fair = "".join(f"{summary['consensus'][c]:>12.3f}" for c in cols)
    return "\n".join([head, "-" * len(head), f"{'base clusterings':<22}{base}",
                      f"{'FCE consensus':<22}{fair}"])
