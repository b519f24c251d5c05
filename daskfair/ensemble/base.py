"""Base clusterings for the ensemble: each run fitted on a seeded sample as one task, then
every row assigned under all runs in one pass (docs/design.md#fce-base-clusterings)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import dask.array as da
import numpy as np

from .._nearest import nearest_center
from .._params import Flag, Grid, Integer, Nothing, Options, Seed, checked
from .._random import as_seed_sequence, child_rng, spawn_seeds
from .._validation import check_array, check_n_clusters, is_dask
from ..kernels import kernel_params
from ..nystroem import fit_nystroem, landmark_pool
from ..runtime.recovery import LOST_WORK, count_recovery, wait_for_workers

__all__ = ["BASE_METHODS", "assign_block", "base_clusterings", "fit_run"]

BASE_METHODS = ("kmeans", "minibatch", "spectral", "agglomerative")


def fit_run(sample: np.ndarray, method: str, n_clusters: int, seed: int) -> dict[str, Any]:
    """One base clustering fitted on ``sample``: a small picklable model for assign_block."""
    from sklearn.cluster import AgglomerativeClustering, KMeans, MiniBatchKMeans
    rng = np.random.default_rng(seed)
    if method == "kmeans":
        km = KMeans(n_clusters, n_init=1, random_state=seed).fit(sample)
        return {"method": method, "centers": km.cluster_centers_}
    if method == "minibatch":
        km = MiniBatchKMeans(n_clusters, n_init=1, batch_size=1024, random_state=seed)
        return {"method": method, "centers": km.fit(sample).cluster_centers_}
    if method == "agglomerative":
        rows = sample[np.sort(rng.choice(len(sample), min(len(sample), 2000), replace=False))]
        labels = AgglomerativeClustering(n_clusters, linkage="ward").fit_predict(rows)
        centers = np.stack([rows[labels == k].mean(axis=0) for k in range(n_clusters)])
        return {"method": method, "centers": centers}
    if method == "spectral":
        # k-means on the unit rows of the top-c kernel principal directions of a Nyström rbf
        # map; scikit-learn's "scale" gamma from the per-column variances (1 if constant)
        var = float(sample.var(axis=0).mean())
        gamma = 1.0 / (sample.shape[1] * var) if var > 0 else 1.0
        params = kernel_params("rbf", sample.shape[1], gamma=gamma)
        fmap = fit_nystroem(sample, params, n_landmarks=min(300, len(sample)),
                            random_state=seed)
        Z = fmap.transform(sample)
        mean = Z.mean(axis=0)
        _, vecs = np.linalg.eigh(np.atleast_2d(np.cov(Z - mean, rowvar=False)))
        V = vecs[:, ::-1][:, :n_clusters]
        E = _unit_rows((Z - mean) @ V)
        km = KMeans(n_clusters, n_init=1, random_state=seed).fit(E)
        return {"method": method, "centers": km.cluster_centers_, "feature_map": fmap,
                "mean": mean, "directions": V}
    raise ValueError(f"unknown base clustering method {method!r}; choose from {BASE_METHODS}.")


def _unit_rows(E: np.ndarray) -> np.ndarray:
    return E / np.maximum(np.linalg.norm(E, axis=1, keepdims=True), 1e-12)


def assign_block(X: np.ndarray, models: Sequence[dict[str, Any]]) -> np.ndarray:
    """Labels of one block's rows under every fit_run model: int32, (n_block, n_runs)."""
    out = np.empty((X.shape[0], len(models)), dtype=np.int32)  # the consensus holds int32
    for r, model in enumerate(models):
        if model["method"] == "spectral":
            Z = model["feature_map"].transform(X)
            out[:, r] = nearest_center(_unit_rows((Z - model["mean"]) @ model["directions"]),
                                 model["centers"])
        else:
            out[:, r] = nearest_center(X, model["centers"])
    return out


def _fit_runs(client: Any, sample: np.ndarray, runs: list[tuple[str, int, int]]) -> list[Any]:
    """fit_run of every ``(method, n_clusters, seed)`` as a task on the scattered sample;
    runs lost with it are submitted again with a new copy (the same models)."""
    models: list[Any] = [None] * len(runs)
    recoveries = 0
    while True:
        todo = [r for r, model in enumerate(models) if model is None]
        if not todo:
            return models
        sample_f = client.scatter(sample, broadcast=True, hash=False)
        futures = {r: client.submit(fit_run, sample_f, *runs[r],
                                    key=f"daskfair-base-{r}-{runs[r][2]:x}-{sample_f.key}")
                   for r in todo}
        try:
            for r, model in zip(todo, client.gather([futures[r] for r in todo]), strict=True):
                models[r] = model
        except LOST_WORK as exc:
            for r, future in futures.items():
                if future.status == "finished":
                    try:
                        models[r] = future.result()
                    except LOST_WORK:  # lost in the meantime: fitted again below
                        pass
            recoveries = count_recovery(recoveries, exc, "FCE base clusterings")
            wait_for_workers(client)


def _cluster_numbers(n_clusters: int, n_runs: int, n: int, random: bool,
                     seed: np.random.SeedSequence) -> list[int]:
    if not random:
        return [n_clusters] * n_runs
    hi = max(n_clusters, min(2 * n_clusters, int(np.sqrt(n))))
    rng = child_rng(seed, 2)
    return [int(c) for c in rng.integers(n_clusters, hi + 1, size=n_runs)]


@checked(n_clusters=[Integer(1)], n_runs=[Integer(1)],
         methods=[Grid((Options(BASE_METHODS),))], random_cluster_numbers=[Flag],
         sample_size=[Integer(2)], random_state=[Nothing, Seed])
def base_clusterings(X: Any, *, n_clusters: int = 8, n_runs: int = 100,
                     methods: Sequence[str] = ("kmeans",), random_cluster_numbers: bool = False,
                     sample_size: int = 100_000, random_state: Any = None, client: Any = None
                     ) -> np.ndarray | da.Array:
    """Run ``n_runs`` base clusterings of ``X``, each as a task on the Dask cluster.

    Parameters
    ----------
    X : array-like or dask array of shape (n_samples, n_features)
        The features.
    n_clusters : int, default=8
        Clusters per run (the lower end when ``random_cluster_numbers``).
    n_runs : int, default=100
        m, the number of base clusterings.
    methods : sequence of str, default=("kmeans",)
        Run r uses ``methods[r % len(methods)]``: "kmeans", "minibatch", "spectral" (on a
        Nyström rbf map) or "agglomerative" (Ward on 2,000 rows); a mix: the "diverse" pools.
    random_cluster_numbers : bool, default=False
        Draw each run's number of clusters from [c, max(c, min(2c, √n))].
    sample_size : int, default=100_000
        Rows of the seeded sample the runs are fitted on.
    random_state : int, RandomState, Generator, SeedSequence or None, default=None
        Seeds the sample, the runs' numbers of clusters and the runs.
    client : distributed.Client or None, default=None
        Where the runs are fitted; None: :func:`daskfair.get_client`.

    Returns
    -------
    ndarray or dask array of shape (n_samples, n_runs), dtype int32
        One labeling per run (lazy, chunked like X, for dask input).

    Raises
    ------
    ValueError
        On bad parameters or X (the message says which).

    See Also
    --------
    daskfair.FairClusteringEnsemble : The fair consensus of these labelings.
    daskfair.ensemble.select_n_clusters : A number of consensus clusters for them.

    Examples
    --------
    >>> from distributed import Client
    >>> from daskfair import base_clusterings, make_fair_blobs
    >>> X, s, _ = make_fair_blobs(600, n_clusters=3, random_state=0)
    >>> with Client(processes=False, n_workers=1, dashboard_address=":0") as client:
    ...     base_clusterings(X, n_clusters=3, n_runs=4, random_state=0, client=client).shape
    (600, 4)
    """
    from ..runtime.clients import get_client
    X = check_array(X, "X", min_samples=2)
    n = X.shape[0]
    n_clusters = check_n_clusters(n_clusters, n)
    seed = as_seed_sequence(random_state)
    if n > sample_size:
        rng = child_rng(seed, 0)
        pool = landmark_pool(n, sample_size, "uniform", X.shape[1], rng)
        sample = X[np.sort(rng.choice(pool, size=sample_size, replace=False))]
    else:
        sample = X
    sample = np.asarray(sample.compute() if is_dask(sample) else sample)
    cs = _cluster_numbers(n_clusters, n_runs, len(sample), random_cluster_numbers, seed)
    seeds = spawn_seeds(int(child_rng(seed, 1).integers(2**63)), n_runs)
    client = client or get_client()
    models = _fit_runs(client, sample, [(methods[r % len(methods)], cs[r], seeds[r])
                                        for r in range(n_runs)])
    if is_dask(X) and n <= sample_size:
        # every row was read for the fits: assign them in memory instead of a second pass
        return da.from_array(assign_block(sample, models), chunks=(X.chunks[0], (n_runs,)))
    if is_dask(X):
        return X.map_blocks(assign_block, models, dtype=np.int32,
                            chunks=(X.chunks[0], (n_runs,)))
    return assign_block(X, models)
