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


def select_n_clusters(
    base_labels: Any,
    candidates: Sequence[int],
    *,
    sample_size: int = 3000,
    random_state: Any = None,
) -> tuple[int, dict[int, float]]:
    """Choose c by the silhouette of the concatenated base indicator matrices (the FCE paper).

    The rows of [Y(1), …, Y(m)] (one-hot, n × Σ c_i) are clustered by k-means for every
    candidate c and the silhouette of each result is computed, on a seeded subsample of at
    most ``sample_size`` rows; the c with the largest silhouette wins. A candidate whose
    k-means finds a single cluster scores -1.

    Parameters
    ----------
    base_labels : array-like or dask array of shape (n_samples, n_labelings)
        The base clusterings, one per column (checked as by
        :func:`~daskfair.ensemble.labels.check_base_labels`).
    candidates : sequence of int
        The values of c to try, each in [2, rows of the subsample - 1].
    sample_size : int, default=3000
        Rows the silhouette is computed on, at most.
    random_state : int, RandomState, Generator, SeedSequence or None, default=None
        Seeds the subsample and the k-means fits.

    Returns
    -------
    best : int
        The candidate with the largest silhouette.
    scores : dict of int to float
        The silhouette of every candidate.

    Raises
    ------
    ValueError
        A candidate outside [2, rows of the subsample - 1], every candidate finding a single
        cluster, or base labels that :func:`~daskfair.ensemble.labels.check_base_labels`
        refuses.

    See Also
    --------
    daskfair.FairClusteringEnsemble : Chooses its c this way for ``n_clusters="auto"``.
    daskfair.base_clusterings : Base clusterings to choose c for.

    Examples
    --------
    >>> import numpy as np
    >>> from daskfair.ensemble import select_n_clusters
    >>> truth = np.random.default_rng(0).integers(0, 3, 300)
    >>> base = np.column_stack([truth, (truth + 1) % 3, truth])
    >>> select_n_clusters(base, range(2, 6), random_state=0)[0]
    3
    """
    base, sizes = hold_base_labels(base_labels)
    return _select_n_clusters(base, sizes, candidates, sample_size, random_state)


def _auto_n_clusters(base: Any, sizes: np.ndarray, random_state: Any) -> int:
    """c for ``n_clusters="auto"``: the best of 2 .. 2 max c_i, capped below the rows of the
    silhouette sample, on labels that :func:`hold_base_labels` has checked."""
    n = base.shape[0]
    top = min(2 * int(sizes.max()), min(n, AUTO_SAMPLE_SIZE) - 1)
    if top < 2:
        raise ValueError(
            "n_clusters='auto' chooses c by the silhouette of the base labelings, "
            "which needs labelings with 2 or more clusters and 3 or more rows (max "
            f"c_i = {int(sizes.max())}, {n} rows): give n_clusters.")
    return _select_n_clusters(base, sizes, range(2, top + 1), AUTO_SAMPLE_SIZE,
                              random_state)[0]


def _select_n_clusters(
    base: Any, sizes: np.ndarray, candidates: Sequence[int], sample_size: int,
    random_state: Any,
) -> tuple[int, dict[int, float]]:
    # select_n_clusters on labels that hold_base_labels has already checked
    from sklearn.cluster import KMeans
    from sklearn.metrics import silhouette_score

    n = base.shape[0]
    rng = child_rng(as_seed_sequence(random_state), 0)
    idx = np.sort(rng.choice(n, size=min(n, sample_size), replace=False))
    onehot = _indicators(base[idx], sizes)
    scores = {}
    for c in candidates:
        if not 2 <= c < len(onehot):
            raise ValueError(f"candidate c={c} must lie in [2, {len(onehot) - 1}].")
        with warnings.catch_warnings():
            # c above the number of distinct indicator rows is a poor candidate, not an error
            warnings.simplefilter("ignore", ConvergenceWarning)
            km = KMeans(c, n_init=3, random_state=int(rng.integers(2**31))).fit(onehot)
        # fewer distinct indicator rows than c: k-means may find one cluster, which has no
        # silhouette; such a candidate is the worst possible
        found = len(np.unique(km.labels_))
        scores[int(c)] = float(silhouette_score(onehot, km.labels_)) if found > 1 else -1.0
    if max(scores.values()) == -1.0:
        raise ValueError(
            "n_clusters could not be chosen: the base labelings put every row in one cluster "
            "for every candidate c; give n_clusters.")
    best = max(scores, key=scores.get)
    return best, scores


def _indicators(sample: Any, sizes: np.ndarray) -> np.ndarray:
    # [Y(1), …, Y(m)] of the sampled rows: one-hot, (rows, Σ c_i)
    sample = np.asarray(sample.compute() if is_dask(sample) else sample)
    offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    onehot = np.zeros((len(sample), int(sizes.sum())))
    onehot[np.arange(len(sample))[:, None], offsets + sample] = 1.0
    return onehot
