"""``SAFairKMeans``: one trade-off point of SAfairKM (the paper's Algorithm 2) as an estimator."""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, ClusterMixin
from sklearn.utils.validation import check_is_fitted

from .._nearest import nearest_center
from .._random import as_seed_sequence
from .._validation import check_array, check_int, check_labels, is_dask
from ._block_functions import balance_of, cost_of, run_member
from .problem import make_problem, members_from_labels, start_labels

__all__ = ["SAFairKMeans"]


class SAFairKMeans(ClusterMixin, BaseEstimator):
    """Stochastic alternating balance fair k-means (Liu & Vicente, Algorithm 2).

    Every iteration draws ``n_kmeans_updates`` random points and moves each to its closest
    center (mini-batch k-means), then makes up to ``n_swap_updates`` swaps between the least
    balanced cluster and a target cluster: a point of the over-represented group leaves, a
    point of the under-represented group arrives. The ratio n_a : n_b sets the trade-off
    between the k-means cost f1 and the balance f2; :func:`daskfair.pareto_front` traces all
    of it.

    The centers are always the exact means of the current assignment (the paper's eq. 2), so
    ``cost_`` and ``balance_`` are exact. A cluster's last point never leaves, and a swap is
    made only when it raises the balance of the least balanced cluster without pushing the
    target cluster below the current overall balance, so f2 never falls during swaps.

    Parameters
    ----------
    n_clusters : int, default=8
    n_kmeans_updates : int, default=20
        n_a, points per mini-batch k-means step.
    n_swap_updates : int, default=4
        n_b, swaps per iteration.
    max_iter : int, default=300
    target : {"local", "global"}, default="local"
        Swap target: nearest center (eq. 5) or the cluster richest in the scarce group (eq. 4).
    init : {"k-means++", "random"} or array of shape (n_samples,), default="k-means++"
        Starting labels.
    max_swap_candidates : int, default=32
        Cap of the candidate batch of a swap (1 + ⌊√t⌋ at iteration t).
    random_state : int, SeedSequence or None
    min_group_size : int, default=1
        The fewest rows a sensitive group (one value, or one combination of values for
        several sensitive columns) may have; 1 accepts every group. Counting the groups'
        rows costs nothing more here: the groups are read into memory anyway.
    small_groups : {"raise", "merge"}, default="raise"
        Groups below ``min_group_size``: "raise" a ``ValueError`` naming them, or "merge"
        them into one group "other" (named in a ``UserWarning``; every group name becomes
        a string), as in :class:`~daskfair.FairKernelRegressor`.

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
    cluster_centers_ : ndarray of shape (n_clusters, n_features)
        Means of the final clusters.
    cost_ : float
        f1, the mean squared distance to the cluster means.
    balance_ : float
        f2 = ``min_k min_{j≠j'} |C_k ∩ V_j| / |C_k ∩ V_j'|``.
    history_ : ndarray of shape (max_iter, 2)
        (f1, f2) after every iteration.
    groups_ : ndarray
        The distinct sensitive values, in code order.
    merged_groups_ : dict of str to int
        The groups merged into "other" and their rows (empty when none were).
    n_features_in_ : int
    """

    def __init__(
        self,
        n_clusters: int = 8,
        *,
        n_kmeans_updates: int = 20,
        n_swap_updates: int = 4,
        max_iter: int = 300,
        target: str = "local",
        init: Any = "k-means++",
        max_swap_candidates: int = 32,
        random_state: Any = None,
        min_group_size: int = 1,
        small_groups: str = "raise",
    ) -> None:
        self.n_clusters = n_clusters
        self.n_kmeans_updates = n_kmeans_updates
        self.n_swap_updates = n_swap_updates
        self.max_iter = max_iter
        self.target = target
        self.init = init
        self.max_swap_candidates = max_swap_candidates
        self.random_state = random_state
        self.min_group_size = min_group_size
        self.small_groups = small_groups

    def _check_params(self) -> None:
        for name, low in (("n_kmeans_updates", 0), ("n_swap_updates", 0), ("max_iter", 1),
                          ("max_swap_candidates", 1)):
            check_int(getattr(self, name), name, low)
        if self.n_kmeans_updates + self.n_swap_updates == 0:
            raise ValueError("n_kmeans_updates + n_swap_updates must be positive.")
        if self.target not in ("local", "global"):
            raise ValueError(f"target must be 'local' or 'global', got {self.target!r}.")

    def fit(self, X: Any, y: Any = None, *, sensitive_features: Any) -> SAFairKMeans:
        """Run ``max_iter`` iterations of Algorithm 2 from the starting labels.

        Parameters
        ----------
        X : array-like or dask array of shape (n_samples, n_features)
        y : ignored
        sensitive_features : array-like of shape (n_samples,) or (n_samples, c)
            Group of every row (at least two groups); several columns make one group of
            every combination of their values (named as fairlearn does, e.g. ``"black,F"``).

        Returns
        -------
        self : SAFairKMeans
            The fitted estimator.

        Examples
        --------
        >>> import numpy as np
        >>> from daskfair import SAFairKMeans, make_fair_blobs
        >>> X, s, _ = (np.asarray(a) for a in make_fair_blobs(400, n_clusters=2, random_state=0))
        >>> km = SAFairKMeans(2, max_iter=20, random_state=0).fit(X, sensitive_features=s)
        >>> km.labels_.shape, bool(0 <= km.balance_ <= 1)
        ((400,), True)
        """
        self._check_params()
        problem = make_problem(X, sensitive_features, self.n_clusters,
                               min_group_size=self.min_group_size,
                               small_groups=self.small_groups)
        seed = as_seed_sequence(self.random_state)
        if isinstance(self.init, str):
            if self.init not in ("k-means++", "random"):
                raise ValueError(
                    f"init must be 'k-means++', 'random' or a label array, got {self.init!r}.")
            # start 0 of start_labels is random, start 1 of 2 is k-means++
            labels = start_labels(problem, int(self.init == "k-means++"), 2, seed)
        else:
            labels = check_labels(self.init, problem.n_samples, n_labels=problem.n_clusters,
                                  name="init")
            labels = np.asarray(labels.compute() if is_dask(labels) else labels)
            if np.bincount(labels, minlength=problem.n_clusters).min() == 0:
                raise ValueError("init leaves a cluster empty; every cluster needs a point.")
            labels = labels.astype(problem.label_dtype)
        m = members_from_labels(problem, labels)
        lab, sums, counts = m.labels[0].copy(), m.sums[0].copy(), m.counts[0].copy()
        history = np.empty((self.max_iter, 2))
        run_member(problem.X, problem.groups, problem.grp_idx, problem.grp_ptr, lab, sums,
                   counts, self.n_kmeans_updates, self.n_swap_updates, self.max_iter, 0,
                   self.target == "global", self.max_swap_candidates,
                   np.uint64(seed.generate_state(1, np.uint64)[0]), problem.total_sq, history,
                   np.zeros(1, np.int64))
        sizes = counts.sum(axis=1)
        self.labels_ = lab.astype(np.int64)
        self.cluster_centers_ = sums / sizes[:, None] + problem.offset
        self.cost_ = float(cost_of(sums, counts, problem.total_sq, problem.n_samples))
        self.balance_ = float(balance_of(counts))
        self.history_ = history
        self.n_iter_ = self.max_iter
        self.groups_ = problem.group_values
        self.merged_groups_ = dict(problem.merged)
        self.n_features_in_ = problem.X.shape[1]
        return self

    def fit_predict(self, X: Any, y: Any = None, *, sensitive_features: Any) -> np.ndarray:
        """Fit and return ``labels_``.

        Parameters
        ----------
        X : array-like or dask array of shape (n_samples, n_features)
            The points.
        y : None
            Ignored (present for the scikit-learn API).
        sensitive_features : array-like of shape (n_samples,) or (n_samples, c)
            Group of every row (at least two groups); several columns make one group of
            every combination of their values (named as fairlearn does, e.g. ``"black,F"``).

        Returns
        -------
        ndarray of shape (n_samples,)
            The cluster of every row.
        """
        return self.fit(X, sensitive_features=sensitive_features).labels_

    def predict(self, X: Any) -> np.ndarray:
        """Nearest center of each row (new rows: no balance guarantee, as for any k-means).

        Parameters
        ----------
        X : array-like or dask array of shape (n_samples, n_features)
            The points.

        Returns
        -------
        ndarray or dask array of shape (n_samples,)
            The nearest cluster center of every row.
        """
        check_is_fitted(self)
        X = check_array(X, "X")
        X = np.asarray(X.compute() if is_dask(X) else X)
        if X.shape[1] != self.n_features_in_:
            raise ValueError(
                f"X has {X.shape[1]} features, but SAFairKMeans is expecting "
                f"{self.n_features_in_} features as input.")
        return nearest_center(X, self.cluster_centers_)
