"""``SAFairKMeans``: one trade-off point of SAfairKM (the paper's Algorithm 2) as an estimator."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
from sklearn.base import BaseEstimator, ClusterMixin

from .._groups import GROUP_SIZE
from .._params import Array, Integer, Nothing, Options, ParamsMixin, Seed, Spec
from .._random import as_seed_sequence
from .._validation import check_labels, is_dask
from ._block_functions import balance_of, cost_of, run_member
from ._nearest_center import NearestCenterMixin
from .problem import CLUSTERS, Problem, make_problem, members_from_labels, start_labels

__all__ = ["SAFairKMeans"]

TARGETS = ("local", "global")
INITS = ("k-means++", "random")


class SAFairKMeans(ParamsMixin, NearestCenterMixin, ClusterMixin, BaseEstimator):
    """Stochastic alternating balance fair k-means (Liu & Vicente, Algorithm 2).

    Parameters
    ----------
    n_clusters : int, default=8
        K ≥ 2, at most the number of rows.
    n_kmeans_updates : int, default=20
        n_a ≥ 0, random points moved to their closest center per iteration.
    n_swap_updates : int, default=4
        n_b ≥ 0, swaps that raise the least balance per iteration (n_a + n_b > 0).
    max_iter : int, default=300
        Iterations of Algorithm 2 (all are run).
    target : {"local", "global"}, default="local"
        Swap target: nearest center (eq. 5) or the cluster richest in the scarce group (eq. 4).
    init : {"k-means++", "random"} or array-like of shape (n_samples,), default="k-means++"
        Starting labels: k-means, a balanced random permutation mod K, or labels 0..K-1.
    max_swap_candidates : int, default=32
        Cap of the candidate batch of a swap (1 + ⌊√t⌋ at iteration t).
    random_state : int, RandomState, Generator, SeedSequence or None, default=None
        Seeds the starting labels and the moves.
    min_group_size : int, default=1
        The fewest rows a sensitive group may have; 1 accepts every group.
    small_groups : {"raise", "merge"}, default="raise"
        Groups below ``min_group_size``: raise a ValueError, or merge them into "other" (warns).

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
        The cluster of every row.
    cluster_centers_ : ndarray of shape (n_clusters, n_features)
        Means of the final clusters.
    cost_, balance_ : float
        f1 (the mean squared distance to the cluster means) and f2 (the balance).
    history_ : ndarray of shape (max_iter, 2)
        (f1, f2) after every iteration.
    n_iter_, n_features_in_ : int
        Iterations run (``max_iter``) and features seen in ``fit``.
    groups_, merged_groups_ : ndarray of shape (n_groups,), dict of str to int
        The sensitive values in code order; the groups merged into "other" with their rows.

    See Also
    --------
    pareto_front : The whole cost/balance front by SAfairKM (Algorithm 3).

    Notes
    -----
    f1, f2: the paper's eq. (2). ``fit``: one pass over X; an iteration costs O(n_a·K·d) plus
    O(K·J²) and O(d) per candidate for every swap. ``predict``: one pass over X (lazy for dask).
    """

    def __init__(self, n_clusters: int = 8, *, n_kmeans_updates: int = 20,
                 n_swap_updates: int = 4, max_iter: int = 300, target: str = "local",
                 init: Any = "k-means++", max_swap_candidates: int = 32,
                 random_state: Any = None, min_group_size: int = 1,
                 small_groups: str = "raise") -> None:
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

    _parameter_constraints: ClassVar[dict[str, list[Spec]]] = {
        "n_clusters": [CLUSTERS], "n_kmeans_updates": [Integer(0)],
        "n_swap_updates": [Integer(0)], "max_iter": [Integer(1)],
        "target": [Options(TARGETS)], "init": [Options(INITS), Array("a label array")],
        "max_swap_candidates": [Integer(1)], "random_state": [Nothing, Seed], **GROUP_SIZE}

    def _check_combination(self, params: dict[str, Any]) -> None:
        if params["n_kmeans_updates"] + params["n_swap_updates"] == 0:
            raise ValueError("n_kmeans_updates + n_swap_updates must be positive.")

    def fit(self, X: Any, y: Any = None, *, sensitive_features: Any) -> SAFairKMeans:
        """Run ``max_iter`` iterations of Algorithm 2 from the starting labels.

        Parameters
        ----------
        X : array-like or dask array of shape (n_samples, n_features)
            The points (read into memory).
        y : None
            Not used, present for the scikit-learn API.
        sensitive_features : array-like of shape (n_samples,) or (n_samples, n_columns)
            Group of every row (≥ 2 groups; several columns: one group per combination).

        Returns
        -------
        self : SAFairKMeans
            The fitted estimator.

        Raises
        ------
        ValueError, TypeError
            On bad parameters, data, groups or ``init`` (the message says which).

        Examples
        --------
        >>> from daskfair import SAFairKMeans, make_fair_blobs
        >>> X, s, _ = make_fair_blobs(400, n_clusters=2, random_state=0)
        >>> SAFairKMeans(2, max_iter=20, random_state=0).fit(X, sensitive_features=s).labels_.shape
        (400,)
        """
        params = self._validate_params()
        problem = make_problem(X, sensitive_features, params["n_clusters"],
                               min_group_size=params["min_group_size"],
                               small_groups=params["small_groups"])
        seed = as_seed_sequence(params["random_state"])
        m = members_from_labels(problem, _start(problem, params["init"], seed))
        lab, sums, counts = m.labels[0].copy(), m.sums[0].copy(), m.counts[0].copy()
        history = np.empty((params["max_iter"], 2))
        run_member(problem.X, problem.groups, problem.grp_idx, problem.grp_ptr, lab, sums,
                   counts, params["n_kmeans_updates"], params["n_swap_updates"],
                   params["max_iter"], 0, params["target"] == "global",
                   params["max_swap_candidates"],
                   np.uint64(seed.generate_state(1, np.uint64)[0]), problem.total_sq, history,
                   np.zeros(1, np.int64))
        sizes = counts.sum(axis=1)
        self.labels_ = lab.astype(np.int64)
        self.cluster_centers_ = sums / sizes[:, None] + problem.offset
        self.cost_ = float(cost_of(sums, counts, problem.total_sq, problem.n_samples))
        self.balance_ = float(balance_of(counts))
        self.history_ = history
        self.n_iter_ = params["max_iter"]
        self.groups_ = problem.group_values
        self.merged_groups_ = dict(problem.merged)
        self.n_features_in_ = problem.X.shape[1]
        return self


def _start(problem: Problem, init: Any, seed: np.random.SeedSequence) -> np.ndarray:
    """The starting label vector of a fit: ``init`` checked against the problem."""
    if isinstance(init, str):
        # start 0 of start_labels is random, start 1 of 2 is k-means++
        return start_labels(problem, int(init == "k-means++"), 2, seed)
    labels = check_labels(init, problem.n_samples, n_labels=problem.n_clusters, name="init")
    labels = np.asarray(labels.compute() if is_dask(labels) else labels)
    if np.bincount(labels, minlength=problem.n_clusters).min() == 0:
        raise ValueError("init leaves a cluster empty; every cluster needs a point.")
    return labels.astype(problem.label_dtype)
