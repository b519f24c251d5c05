"""``SAFairKMeans``: one trade-off point of SAfairKM (the paper's Algorithm 2) as an estimator."""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, ClusterMixin
from sklearn.utils.validation import check_is_fitted

from .._groups import check_group_size_params
from .._nearest import nearest_center
from .._random import as_seed_sequence
from .._validation import check_array, check_int, check_labels, is_dask
from ._block_functions import balance_of, cost_of, run_member
from .problem import Problem, make_problem, members_from_labels, start_labels

__all__ = ["SAFairKMeans"]

TARGETS = ("local", "global")
INITS = ("k-means++", "random")


class SAFairKMeans(ClusterMixin, BaseEstimator):
    """Stochastic alternating balance fair k-means (Liu & Vicente, Algorithm 2).

    Every iteration draws ``n_kmeans_updates`` random points and moves each to its closest
    center (mini-batch k-means), then makes up to ``n_swap_updates`` swaps between the least
    balanced cluster and a target cluster: a point of the over-represented group leaves, a
    point of the under-represented group arrives. The ratio n_a : n_b sets the trade-off
    between the k-means cost f1 and the balance f2; :func:`pareto_front` traces all of it.

    Parameters
    ----------
    n_clusters : int, default=8
        K ≥ 2, at most the number of rows.
    n_kmeans_updates : int, default=20
        n_a ≥ 0, points per mini-batch k-means step.
    n_swap_updates : int, default=4
        n_b ≥ 0, swaps per iteration (n_a + n_b > 0).
    max_iter : int, default=300
        Iterations of Algorithm 2 (all are run).
    target : {"local", "global"}, default="local"
        Swap target: nearest center (eq. 5) or the cluster richest in the scarce group (eq. 4).
    init : {"k-means++", "random"} or array-like of shape (n_samples,), default="k-means++"
        Starting labels: k-means (k-means++ seeds, then Lloyd iterations), a balanced
        random permutation taken mod K, or given labels 0..K-1, every cluster used.
    max_swap_candidates : int, default=32
        Cap of the candidate batch of a swap (1 + ⌊√t⌋ at iteration t).
    random_state : int, RandomState, Generator, SeedSequence or None, default=None
        Seeds the starting labels and the moves.
    min_group_size : int, default=1
        The fewest rows a sensitive group (one value, or one combination of values for
        several sensitive columns) may have; 1 accepts every group.
    small_groups : {"raise", "merge"}, default="raise"
        Groups below ``min_group_size``: "raise" a ``ValueError`` naming them, or "merge"
        them into one group "other" (named in a ``UserWarning``; every group name becomes
        a string), as in :class:`~daskfair.FairKernelRegressor`.

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
        The cluster of every row.
    cluster_centers_ : ndarray of shape (n_clusters, n_features)
        Means of the final clusters.
    cost_ : float
        f1, the mean squared distance to the cluster means.
    balance_ : float
        f2 = ``min_k min_{j≠j'} |C_k ∩ V_j| / |C_k ∩ V_j'|``.
    history_ : ndarray of shape (max_iter, 2)
        (f1, f2) after every iteration.
    n_iter_ : int
        Iterations run (``max_iter``).
    groups_ : ndarray of shape (n_groups,)
        The distinct sensitive values, in code order.
    merged_groups_ : dict of str to int
        The groups merged into "other" and their rows (empty when none were).
    n_features_in_ : int
        Number of features seen in ``fit``.

    See Also
    --------
    pareto_front : The whole cost/balance front by SAfairKM (Algorithm 3).
    VFairKMeans : Variational fair k-means, the paper's baseline.
    vfairkm_front : VfairKM's front over a sweep of its fairness weight.
    ParetoFront : A front of clusterings.

    Notes
    -----
    The centers are always the exact means of the current assignment (the paper's eq. 2), so
    ``cost_`` and ``balance_`` are exact. A cluster's last point never leaves, and a swap is
    made only when it raises the balance of the least balanced cluster without pushing the
    target cluster below the current overall balance, so f2 never falls during swaps
    (docs/design.md#safairkm-swap-step).

    Costs: ``fit`` reads X and the sensitive features into memory once (one pass over dask
    input). An iteration costs O(n_a·K·d) for the k-means updates and, per swap, O(K·J²) to
    order the clusters plus O(d) for each of its m = min(1 + ⌊√t⌋, ``max_swap_candidates``)
    candidates: nothing grows with the number of rows but the sampling's reads of a group.
    ``predict`` is one pass over X (lazy for dask input).
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

    def _checked_params(self) -> dict[str, Any]:
        """Every parameter checked, ``random_state`` as a SeedSequence; ``n_clusters`` and
        label ``init`` are checked against the data by :func:`make_problem` and ``fit``."""
        params = self.get_params()
        for name, low in (("n_kmeans_updates", 0), ("n_swap_updates", 0), ("max_iter", 1),
                          ("max_swap_candidates", 1)):
            params[name] = check_int(params[name], name, low)
        if params["n_kmeans_updates"] + params["n_swap_updates"] == 0:
            raise ValueError("n_kmeans_updates + n_swap_updates must be positive.")
        if params["target"] not in TARGETS:
            raise ValueError(f"target must be 'local' or 'global', got {params['target']!r}.")
        if isinstance(params["init"], str) and params["init"] not in INITS:
            raise ValueError(
                f"init must be 'k-means++', 'random' or a label array, got {params['init']!r}.")
        params["min_group_size"] = check_group_size_params(params["min_group_size"],
                                                           params["small_groups"])
        params["random_state"] = as_seed_sequence(params["random_state"])
        return params

    def fit(self, X: Any, y: Any = None, *, sensitive_features: Any) -> SAFairKMeans:
        """Run ``max_iter`` iterations of Algorithm 2 from the starting labels.

        Parameters
        ----------
        X : array-like or dask array of shape (n_samples, n_features)
            The points (read into memory: points move one at a time).
        y : None
            Not used, present for the scikit-learn API.
        sensitive_features : array-like of shape (n_samples,) or (n_samples, n_columns)
            Group of every row (at least two groups); several columns make one group of
            every combination of their values (named as fairlearn does, e.g. ``"black,F"``).

        Returns
        -------
        self : SAFairKMeans
            The fitted estimator.

        Raises
        ------
        ValueError
            If a parameter is out of range, X is not finite or has fewer than 2 rows,
            ``n_clusters`` is not in 2..n_samples, there are fewer than 2 groups, a group is
            smaller than ``min_group_size`` with ``small_groups="raise"``, or label ``init``
            is out of range or leaves a cluster empty.
        TypeError
            If ``n_clusters`` is not an integer or X is not numeric.

        Examples
        --------
        >>> import numpy as np
        >>> from daskfair import SAFairKMeans, make_fair_blobs
        >>> X, s, _ = (np.asarray(a) for a in make_fair_blobs(400, n_clusters=2, random_state=0))
        >>> km = SAFairKMeans(2, max_iter=20, random_state=0).fit(X, sensitive_features=s)
        >>> km.labels_.shape, bool(0 <= km.balance_ <= 1)
        ((400,), True)
        """
        params = self._checked_params()
        problem = make_problem(X, sensitive_features, params["n_clusters"],
                               min_group_size=params["min_group_size"],
                               small_groups=params["small_groups"])
        seed = params["random_state"]
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

    def predict(self, X: Any) -> Any:
        """Nearest center of each row (new rows: no balance guarantee, as for any k-means).

        Parameters
        ----------
        X : array-like or dask array of shape (n_samples, n_features)
            The points.

        Returns
        -------
        ndarray or dask.array.Array of shape (n_samples,)
            The nearest cluster center of every row: lazy, block by block, for dask input.

        Raises
        ------
        ValueError
            If X has another number of features than in ``fit``, or is not finite (lazily
            for dask input).
        sklearn.exceptions.NotFittedError
            If the estimator is not fitted.
        """
        check_is_fitted(self)
        X = check_array(X, "X")
        if X.shape[1] != self.n_features_in_:
            raise ValueError(
                f"X has {X.shape[1]} features, but SAFairKMeans is expecting "
                f"{self.n_features_in_} features as input.")
        if is_dask(X):
            return X.map_blocks(nearest_center, self.cluster_centers_, drop_axis=1,
                                dtype=np.intp)
        return nearest_center(X, self.cluster_centers_)


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
