"""The ``safairkm`` job: the SAfairKM cost/balance front (checkpointed in the run) and
VfairKM's μ sweep as its baseline."""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import dask
import numpy as np

from .._params import Grid, Integer, Named, Nothing, Options, Real, checked, is_sequence
from .._validation import is_dask
from ..metrics import hypervolume_2d
from ..progress import IterationBar
from ..store import Run
from .inputs import JobData
from .results import MERGE_WARNING, merged_sizes, preprocessing

__all__ = ["SCALES", "add_hypervolumes", "front_row", "safairkm_job"]

Echo = Callable[[str], Any]
#: ``scale``: the SAfairKM paper's z-scores and unit-length rows, z-scores, or none.
SCALES = ("safairkm", "standard", "none")


def _scaler(scale: str) -> Any:
    from ..scaling import ColumnScaler

    return None if scale == "none" else ColumnScaler("standard", unit_rows=scale == "safairkm")


def _sample_rows(data: JobData, client: Any, scaler: Any, rows: int | None,
                 seed: int) -> tuple[np.ndarray, np.ndarray]:
    """The rows SAfairKM keeps: scaled (a dask input on the workers, its column moments in
    one pass), then ``rows`` of them drawn as ``preprocess_safairkm`` draws them; only those
    are brought here."""
    from ..safairkm.problem import check_fits_workers

    X, s = data.X, data.sensitive
    n = X.shape[0]
    keep = (np.sort(np.random.default_rng(seed).choice(n, rows, replace=False))
            if rows is not None and rows < n else None)
    if is_dask(X):
        try:
            check_fits_workers(X if keep is None else X[:len(keep)], client, "SAfairKM")
        except ValueError as exc:
            raise ValueError(f"{exc} --rows N subsamples the rows.") from None
    X = X.astype(np.float64)
    if scaler is not None:
        X = scaler.fit(X).transform(X)
    if keep is not None:
        X, s = X[keep], s[keep]
    X, s = dask.compute(X, s)
    return np.asarray(X), np.asarray(s)


def _store_preprocessing(run: Run, data: JobData, scaler: Any) -> None:
    """What a front's point needs to assign new rows: the table's encoder and the scaling."""
    from sklearn.pipeline import Pipeline

    from ..models import write_model

    steps = preprocessing(data, scaler)
    if steps:
        write_model(run, Pipeline(steps))


def front_row(front: Any, seconds: float) -> dict[str, Any]:
    """A front's points, cost and balance, and the seconds it took."""
    return {"points": len(front), "seconds": seconds, "cost": front.cost.tolist(),
            "balance": front.balance.tolist()}


def add_hypervolumes(fronts: dict[str, dict[str, Any]]) -> tuple[float, float]:
    """Every front's hypervolume, from one reference point (returned): 1.05 × the largest
    cost, balance 0."""
    ref = (1.05 * max(max(r["cost"]) for r in fronts.values()), 0.0)
    for r in fronts.values():
        r["hypervolume"] = hypervolume_2d(r["cost"], r["balance"], ref)
    return ref


def _baseline(X: np.ndarray, s: np.ndarray, run: Run, client: Any,
              fairness_weights: Sequence[float], n_clusters: int,
              random_state: int, params: Mapping[str, Any]) -> dict[str, Any]:
    from ..safairkm import vfairkm_front

    t0 = time.perf_counter()
    base = vfairkm_front(X, sensitive_features=s, n_clusters=n_clusters,
                         fairness_weights=fairness_weights, random_state=random_state,
                         client=client, **{k: params[k] for k in
                                           ("min_group_size", "small_groups") if k in params})
    run.write_array("vfairkm/cost", base.cost)
    run.write_array("vfairkm/balance", base.balance)
    return {**front_row(base, time.perf_counter() - t0),
            "fairness_weight": base.params["fairness_weight"]}


_NO_BASELINE = Named("empty (no VfairKM)", lambda v: is_sequence(v) and not len(v))


@checked(vfairkm_fairness_weights=[Grid((Real(0),)), _NO_BASELINE],
         rows=[Nothing, Integer(1)],
         scale=[Options(SCALES)])
def safairkm_job(
    data: JobData,
    *,
    run: Run,
    client: Any,
    params: Mapping[str, Any],
    vfairkm_fairness_weights: Sequence[float] = (0.0, 200.0, 400.0, 800.0),
    rows: int | None = None,
    scale: str = "safairkm",
    echo: Echo = print,
) -> dict[str, Any]:
    """The SAfairKM front of the job's rows with ``params`` (:func:`~daskfair.pareto_front`'s,
    but its data, store, client and callback), checkpointed in ``run``, and VfairKM's front
    over ``vfairkm_fairness_weights``; ``rows`` subsamples (seeded), ``scale`` is one of
    :data:`SCALES`. Returns the summary stored in the run."""
    from ..safairkm import pareto_front

    seed = params.get("random_state", 0)
    scaler = _scaler(scale)
    X, s = _sample_rows(data, client, scaler, rows, seed)
    groups, counts = np.unique(s, return_counts=True)
    sizes, merged = merged_sizes(dict(zip(groups.tolist(), counts.tolist(), strict=True)),
                                 params)
    best = float(min(sizes) / max(sizes))
    n_clusters = params.get("n_clusters", 8)
    echo(f"SAfairKM front: {len(X):,} rows, {X.shape[1]} features, K = {n_clusters}, "
         f"{len(sizes)} groups (best possible balance {best:.3f}){merged}")
    bar = IterationBar(params.get("max_iter", 500), "iterations")
    t0 = time.perf_counter()
    with warnings.catch_warnings():  # the merge was said above
        warnings.filterwarnings("ignore", MERGE_WARNING, UserWarning)
        front = pareto_front(X, sensitive_features=s, **params, store=run, client=client,
                             callback=lambda t, cost, b: bar.update(t, f"{len(cost)} points"))
        bar.close()
        fronts = {"SAfairKM": front_row(front, time.perf_counter() - t0)}
        if vfairkm_fairness_weights:
            fronts["VfairKM"] = _baseline(X, s, run, client, vfairkm_fairness_weights,
                                          n_clusters, seed, params)
    ref = add_hypervolumes(fronts)
    summary = {"fronts": fronts, "reference": list(ref), "best_balance": best,
               "n_samples": len(X)}
    _store_preprocessing(run, data, scaler)
    run.set_attrs(**summary)
    return summary
