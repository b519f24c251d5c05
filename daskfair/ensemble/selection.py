"""The number of consensus clusters c, chosen by the silhouette of the base labelings."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from .._random import as_seed_sequence, child_rng
from .._validation import is_dask
from .labels import hold_base_labels

__all__ = ["select_n_clusters"]

#: Rows the silhouette of ``n_clusters="auto"`` is computed on, at most.
AUTO_SAMPLE_SIZE = 3000


def select_n_clusters(base_labels: Any, candidates: Sequence[int], *, sample_size: int = 3000,
                      random_state: Any = None) -> tuple[int, dict[int, float]]:
    """Choose c by the silhouette of the concatenated base indicator matrices (the FCE paper).

    Parameters
    ----------
    base_labels : array-like or dask array of shape (n_samples, n_labelings)
        The base clusterings, one per column.
    candidates : sequence of int
        The values of c to try, each in [2, rows of the subsample - 1].
    sample_size : int, default=3000
        Rows the k-means fits and silhouettes are computed on, at most (a seeded subsample).
    random_state : int, RandomState, Generator, SeedSequence or None, default=None
        Seeds the subsample and the k-means fits.

    Returns
    -------
    best : int
        The candidate with the largest silhouette.
    scores : dict of int to float
        The silhouette of every candidate (-1 where k-means finds a single cluster).

    Raises
    ------
    ValueError
        On a candidate out of range, no candidate with two clusters, or bad base labels.

    See Also
    --------
    daskfair.FairClusteringEnsemble : Chooses its c this way for ``n_clusters="auto"``.
    daskfair.base_clusterings : Base clusterings to choose c for.
    """
    base, sizes = hold_base_labels(base_labels)
    return _select_n_clusters(base, sizes, candidates, sample_size, random_state)


def _auto_n_clusters(base: Any, sizes: np.ndarray, random_state: Any) -> int:
    """c for ``n_clusters="auto"``: the best of 2 .. 2 max c_i (below the sample's rows)."""
    n = base.shape[0]
    top = min(2 * int(sizes.max()), min(n, AUTO_SAMPLE_SIZE) - 1)
    if top < 2:
        raise ValueError("n_clusters='auto' chooses c by the silhouette of the base labelings, "
                         "which needs labelings with 2 or more clusters and 3 or more rows (max "
                         f"c_i = {int(sizes.max())}, {n} rows): give n_clusters.")
    return _select_n_clusters(base, sizes, range(2, top + 1), AUTO_SAMPLE_SIZE,
                              random_state)[0]


def _select_n_clusters(base: Any, sizes: np.ndarray, candidates: Sequence[int], sample_size: int,
                       random_state: Any) -> tuple[int, dict[int, float]]:
    # select_n_clusters on labels that hold_base_labels has already checked
    from sklearn.cluster import KMeans
    from sklearn.metrics import silhouette_score
    n = base.shape[0]
    rng = child_rng(as_seed_sequence(random_state), 0)
    sample = base[np.sort(rng.choice(n, size=min(n, sample_size), replace=False))]
    sample = np.asarray(sample.compute() if is_dask(sample) else sample)
    # [Y(1), …, Y(m)] of the sampled rows: one-hot, (rows, Σ c_i)
    onehot = np.zeros((len(sample), int(sizes.sum())))
    onehot[np.arange(len(sample))[:, None], np.cumsum(sizes) - sizes + sample] = 1.0
    scores = {}
    for c in candidates:
        if not 2 <= c < len(onehot):
            raise ValueError(f"candidate c={c} must lie in [2, {len(onehot) - 1}].")
        with warnings.catch_warnings():  # c above the distinct rows: a poor candidate
            warnings.simplefilter("ignore", ConvergenceWarning)
            km = KMeans(c, n_init=3, random_state=int(rng.integers(2**31))).fit(onehot)
        # one cluster found (fewer distinct rows than c) has no silhouette: the worst score
        found = len(np.unique(km.labels_))
        scores[int(c)] = float(silhouette_score(onehot, km.labels_)) if found > 1 else -1.0
    if max(scores.values()) == -1.0:
        raise ValueError("n_clusters could not be chosen: the base labelings put every row in "
                         "one cluster for every candidate c; give n_clusters.")
    return max(scores, key=scores.get), scores
