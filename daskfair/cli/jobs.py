"""The command line's jobs: FKR-F²E, the SAfairKM front and FCE, each writing one zarr run.

Each job takes a :class:`~daskfair.inputs.JobData`, an open :class:`~daskfair.store.Run` and
the client, runs the method on the cluster, records its results in the run (arrays for what
is large, attributes for tables and metrics) and returns a JSON-able summary; the caller marks
the run complete. Text goes through ``echo``.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from typing import Any

import dask
import dask.array as da
import numpy as np

from .._validation import is_dask
from ..fkr.protocol import minmax_scale
from ..metrics import (
    REPORT_COLUMNS,
    clustering_report,
    error_rate,
    hypervolume_2d,
    statistical_disparity,
)
from ..progress import IterationBar
from ..store import Run
from .inputs import JobData, to_dask

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
    if not 0 < test_size < 1:
        raise ValueError(f"--test-size must lie in (0, 1), got {test_size}.")
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


def _scores(task: str, pred: Any, y: np.ndarray, s: np.ndarray) -> dict[str, float]:
    if task == "classification":
        return {"sd": statistical_disparity(pred, sensitive_features=s),
                "error": error_rate(y, pred)}
    # Regression: the gap between the groups' mean predictions (SD's continuous analogue)
    # and the root mean squared error, in one pass over the predictions.
    pred = pred if is_dask(pred) else da.from_array(pred)
    groups = np.unique(s)
    means = [pred[s == g].mean() for g in groups]
    sq = ((pred - y) ** 2).mean()
    means, sq = dask.compute(means, sq)
    return {"sd": float(max(means) - min(means)), "error": float(np.sqrt(sq))}


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

    Without ``components``: the most accurate model whose validation disparity is within
    ``disparity_bound`` (:class:`~daskfair.FairKernelClassifierCV`, or the regressor's CV for
    a continuous label), whose candidate frontier is stored. With ``components``: FKR-F²E
    for every k (the seed's method). The baselines always come along: FKRR (penalty ``mu``),
    unconstrained kernel ridge and the constant predictor (DESIGN §2). Features are min-max
    scaled on the training rows, as in the seed.
    """
    from ..fkr import (
        FairKernelClassifier,
        FairKernelClassifierCV,
        FairKernelRegressor,
        FairKernelRegressorCV,
        FairKernelRidge,
    )

    if data.y is None:
        raise ValueError("FKR-F²E needs a label: give --label COLUMN.")
    y_raw, s = _numpy(data.y), _numpy(data.sensitive)
    n = len(y_raw)
    classes = np.unique(y_raw)
    if task == "auto":
        task = "classification" if len(classes) == 2 else "regression"
    if task == "classification":
        if len(classes) != 2:
            raise ValueError(f"classification needs a binary label, got {len(classes)} "
                             "classes; use --task regression for a continuous label.")
        y = (y_raw == classes[1]).astype(np.int64)
    else:
        y = y_raw.astype(np.float64)
    train, test, split_text = _split(n, data, split, test_size, seed, y, s, task)
    X = minmax_scale(to_dask(data.X, chunk_rows), train)  # the seed's scaling
    Xtr, Xte = X[train], X[test]
    echo(f"FKR-F²E ({task}): {len(train):,} training and {len(test):,} test rows, "
         f"{X.shape[1]} features; {split_text}")
    gammas = [None] if gamma is None else list(np.atleast_1d(gamma))
    kernel_kw = {"kernel": kernel, "degree": degree, "coef0": coef0}
    approx = ({"approximation": "exact"} if len(train) <= n_landmarks
              else {"n_landmarks": n_landmarks, "random_state": seed})
    classify = task == "classification"
    methods: list[tuple[str, int | None, Any]] = []
    if components is None:
        cv_cls = FairKernelClassifierCV if classify else FairKernelRegressorCV
        extra = {"constraints": constraint} if classify else {}
        methods.append((f"{cv_cls.__name__} (<= {disparity_bound:g})", None, cv_cls(
            **kernel_kw, gamma=gammas if len(gammas) > 1 else gammas[0],
            disparity_bound=disparity_bound, cv=folds, **extra, **approx)))
    else:
        fkr_cls = FairKernelClassifier if classify else FairKernelRegressor
        fixed = {"threshold": 0.5} if classify else {}
        methods += [(f"FKR-F2E ({objective})", k, fkr_cls(
            n_components=k, objective=objective, fairness=fairness, **kernel_kw,
            gamma=gammas[0], alpha=alpha, **fixed, **approx)) for k in components]
    methods += [(f"FKRR (mu={mu:g})", None, FairKernelRidge(mu, **kernel_kw, gamma=gammas[0],
                                                            alpha=alpha, **approx)),
                ("kernel ridge", None, FairKernelRidge(0.0, **kernel_kw, gamma=gammas[0],
                                                       alpha=alpha, **approx)),
                ("constant", None, None)]
    results, chosen = [], None
    for i, (name, k, est) in enumerate(methods):
        t0 = time.perf_counter()
        if est is None:
            value = np.bincount(y[train]).argmax() if classify else y[train].mean()
            pred = np.full(len(test), value)
        else:
            est.fit(Xtr, y[train], sensitive_features=s[train])
            pred = est.predict(Xte)
            if classify and isinstance(est, FairKernelRidge):
                pred = (pred >= 0.5).astype(np.int64)
        row = {"method": name, "n_components": getattr(est, "n_components_", k),
               **_scores(task, pred, y[test], s[test]),
               "seconds": time.perf_counter() - t0}
        if hasattr(est, "frontier_"):
            chosen = est
            row.update(validation_sd=est.best_disparity_, validation_error=est.best_error_)
        results.append(row)
        echo(f"  fitted {name}" + (f", k = {row['n_components']}" if row["n_components"]
                                     else "") + f" ({row['seconds']:.1f} s)")
        if i == 0:  # the first (fair) model is kept in the run
            _store_model(run, est, pred, test, classes if classify else None)
    summary = {"task": task, "split": split_text, "n_train": len(train),
               "n_test": len(test), "results": results}
    if chosen is not None:
        summary["selection"] = _store_frontier(run, chosen)
    run.set_attrs(**summary)
    return summary


def _store_model(run: Run, est: Any, pred: Any, test: np.ndarray,
                 classes: np.ndarray | None) -> None:
    run.write_array("model/landmarks", est.feature_map_.landmarks)
    run.write_array("model/dual_coef", est.dual_coef_)
    if hasattr(est, "projection_"):
        run.write_array("model/projection", est.projection_)
    run.write_array("predictions/test", da.asarray(pred).astype(np.float64))
    run.write_array("predictions/test_rows", test)
    run.set_attrs(model={"estimator": type(est).__name__,
                         "intercept": float(est.intercept_),
                         "threshold": getattr(est, "threshold_", None),
                         "kernel": {k: v for k, v in est.feature_map_.params.items()},
                         "n_components": getattr(est, "n_components_", None),
                         "classes": None if classes is None else classes.tolist()})


def _store_frontier(run: Run, est: Any) -> dict[str, Any]:
    """Every candidate's validation disparity/error as arrays; the front in the attributes."""
    fr = est.frontier_
    for col in ("candidate", "disparity", "error"):
        run.write_array(f"frontier/{col}", fr[col].to_numpy())
    run.write_array("frontier/pareto", fr["pareto"].to_numpy().astype(np.int8))
    front = fr[fr["pareto"] | fr["selected"]].replace({np.nan: None})
    return {"n_candidates": int(est.n_candidates_), "folds": int(est.cv),
            "disparity_bound": float(est.disparity_bound),
            "best_params": {k: (v.item() if hasattr(v, "item") else v)
                            for k, v in est.best_params_.items()},
            "validation_sd": est.best_disparity_, "validation_error": est.best_error_,
            "front": front.to_dict(orient="records")}


def format_selection(selection: dict[str, Any]) -> str:
    """One line: what the CV estimator chose and its validation scores."""
    p = dict(selection["best_params"])
    family = p.pop("family")
    text = ", ".join(f"{k} {v:.4g}" if isinstance(v, float) else f"{k} {v}"
                     for k, v in p.items())
    return (f"chosen from {selection['n_candidates']} candidates on "
            f"{selection['folds']} folds: {family} ({text}); validation disparity "
            f"{selection['validation_sd']:.4f}, error {selection['validation_error']:.4f}")


def format_fkr_results(summary: dict[str, Any]) -> str:
    """Text table of the FKR job's methods (test SD and error)."""
    err = "error" if summary["task"] == "classification" else "RMSE"
    lines = [f"{'method':<36}{'k':>5}{'SD':>9}{err:>9}{'seconds':>9}", "-" * 68]
    for r in summary["results"]:
        lines.append(f"{r['method']:<36}{r['n_components'] or '-':>5}{r['sd']:>9.4f}"
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

    ``scale="safairkm"`` is the seed's preprocessing (z-scored columns, unit-length rows);
    ``rows`` subsamples (seeded) as the seed did (5,000 rows).
    """
    from ..datasets import preprocess_safairkm, standard_scale
    from ..safairkm import DEFAULT_PAIRS, pareto_front, vfairkm_front

    X, s = _numpy(data.X).astype(np.float64), _numpy(data.sensitive)
    if scale == "safairkm":
        X, s = preprocess_safairkm(X, s, n_samples=rows, seed=seed)
    elif scale == "standard":
        X = standard_scale(X)
    elif scale != "none":
        raise ValueError(f"--scale must be safairkm, standard or none, got {scale!r}.")
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
        X, sensitive_features=s, n_clusters=n_clusters, pairs=pairs or DEFAULT_PAIRS,
        n_starts=n_starts, n_iter=n_iter, budget=budget, target=target, dominance=dominance,
        sync_every=sync_every, random_state=seed, store=run,
        checkpoint_every=checkpoint_every, resume=resume, client=client, callback=report)
    bar.close()
    rows_out = {"SAfairKM": {"points": len(front), "seconds": time.perf_counter() - t0,
                             "cost": front.cost.tolist(), "balance": front.balance.tolist()}}
    if vfairkm_mus:
        t0 = time.perf_counter()
        base = vfairkm_front(X, sensitive_features=s, n_clusters=n_clusters, mus=vfairkm_mus,
                             random_state=seed, client=client)
        rows_out["VfairKM"] = {"points": len(base), "seconds": time.perf_counter() - t0,
                               "cost": base.cost.tolist(), "balance": base.balance.tolist(),
                               "mu": base.params["mu"]}
        run.write_array("vfairkm/cost", base.cost)
        run.write_array("vfairkm/balance", base.balance)
    ref = (1.05 * max(max(r["cost"]) for r in rows_out.values()), 0.0)
    for r in rows_out.values():
        r["hypervolume"] = hypervolume_2d(r["cost"], r["balance"], ref)
    summary = {"fronts": rows_out, "reference": list(ref), "best_balance": best,
               "n_samples": len(X)}
    run.set_attrs(**summary)
    return summary


# -- FCE -------------------------------------------------------------------------------------

def _report(y: np.ndarray | None, labels: Any, s: Any, c: int) -> dict[str, float]:
    if y is None:
        # Without classes ACC and NMI are undefined: the fairness and capacity columns are
        # computed against a dummy class vector and ACC/NMI dropped.
        rep = clustering_report(np.zeros(len(s), np.int64), labels, sensitive_features=s,
                                n_clusters=c)
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
        y, s = _numpy(data.y), _numpy(data.sensitive)
        c_base = base_clusters or n_clusters
        if c_base is None:
            raise ValueError("clustering features needs --clusters (or --base-clusters).")
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
    fce = FairClusteringEnsemble(c, fairness=fairness, lambda1=lambda1, max_iter=max_iter,
                                 tol=tol, alignment=alignment, init=init, random_state=seed)
    t0 = time.perf_counter()
    fce.fit(base, sensitive_features=to_dask(s, chunk_rows), store=run,
            resume=resume,
            callback=lambda st: bar.update(st.n_iter, f"objective {st.objective[-1]:.6g}"))
    bar.close()
    seconds = time.perf_counter() - t0
    c = fce.n_clusters_
    consensus = _report(y, fce.labels_, s, c)
    scored = base_np if pool is not None else base
    # a base clustering with more clusters than the consensus (a pool's, --base-clusters) is
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
    run.set_attrs(report=summary)
    return summary


def format_fce_report(summary: dict[str, Any]) -> str:
    """The base clusterings' mean ± std and the consensus, one row each."""
    cols = [c for c in REPORT_COLUMNS if c in summary["columns"]]
    head = f"{'':<22}" + "".join(f"{c:>12}" for c in cols)
    base = "".join(f"{summary['base_mean'][c]:>7.3f}±{summary['base_std'][c]:.3f}"[-12:]
                   .rjust(12) for c in cols)
    fair = "".join(f"{summary['consensus'][c]:>12.3f}" for c in cols)
    return "\n".join([head, "-" * len(head), f"{'base clusterings':<22}{base}",
                      f"{'FCE consensus':<22}{fair}"])
