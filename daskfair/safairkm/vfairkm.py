"""VfairKM: variational fair k-means (Ziko et al., "Variational fair clustering"), the baseline
the SAfairKM paper compares with (its Appendix C, eq. 7).

Objective for a penalty μ ≥ 0, with soft assignments s_p on the simplex, the target group
proportions U and the cluster proportions P_k(j) = v_jᵀ s_k / 1ᵀ s_k:

    Σ_p Σ_k s_pk ‖x_p − c_k‖² + μ Σ_k D_KL(U ‖ P_k).

Up to a constant, D_KL(U‖P_k) = −Σ_j u_j log(v_jᵀ s_k) + log(1ᵀ s_k). Ziko et al. minimise
it over S by bound optimisation: at S^i, the objective is bounded by its linearisation plus a
proximity term L·Σ_p KL(s_p ‖ s_p^i), whose minimiser over each simplex is a multiplicative
softmax step

    s_p ← s_p^i ⊙ exp(−(e_p + μ b_p) / L) / normaliser,   e_pk = ‖x_p − c_k‖²,
    b_pk = 1 / (1ᵀ s_k^i) − u_{j(p)} / (v_{j(p)}ᵀ s_k^i)   (∂ of the KL term at S^i),

with L a Lipschitz constant of the gradient. The KL term's gradient is not Lipschitz on the
simplex (b blows up as v_jᵀ s_k → 0), so no fixed L makes every step a descent step; here L
is found by backtracking: a step is taken only when the objective at the new S lies below the
bound (then it is also at most the objective at S^i), else L doubles; after an accepted step
L halves again. So the objective never increases over the S steps (tested).

Outer iterations alternate the S steps (warm-started from the last S) with the centers
c_k = Σ_p s_pk x_p / Σ_p s_pk, the exact minimiser of the first term for the soft S, so the
objective never increases over the whole fit either (``objective_`` records it). The final
labels are argmax_k s_pk. With μ = 0 the S step is exact (the nearest center, a vertex of the
simplex) and the fit is exactly Lloyd's k-means. Deviations from Ziko et al.'s code: the
backtracking L (theirs is a fixed constant) and the soft centers (theirs are the means of the
hard clusters, which can raise the objective) — both so that the objective cannot rise.
"""

from __future__ import annotations

from collections.abc import Sequence
from numbers import Real
from typing import Any

import numpy as np
from scipy.special import rel_entr, softmax
from sklearn.base import BaseEstimator, ClusterMixin

from .._random import as_seed_sequence, child_rng
from .._validation import check_array, check_int
from ..metrics import balance as balance_metric
from .front import ParetoFront, nondominated
from .problem import Problem, check_fits_workers, make_problem

__all__ = ["VFairKMeans", "fairness_error", "vfairkm_front"]

_FLOOR = 1e-12  # keeps u_j / (v_jᵀ s_k) finite when a group has (numerically) left a cluster


def fairness_error(labels: np.ndarray, groups: np.ndarray, n_clusters: int,
                   n_groups: int) -> float:
    """Σ_k D_KL(U ‖ P_k) of hard labels (U the overall group proportions)."""
    table = np.zeros((n_clusters, n_groups))
    np.add.at(table, (labels, groups), 1.0)
    u = table.sum(axis=0) / table.sum()
    sizes = table.sum(axis=1)
    P = table[sizes > 0] / sizes[sizes > 0, None]
    with np.errstate(divide="ignore"):
        return float((u * (np.log(u) - np.log(P))).sum())


def _objective(S: np.ndarray, e: np.ndarray, onehot: np.ndarray, u: np.ndarray,
               mu: float) -> float:
    """Σ s_pk e_pk + μ Σ_k D_KL(U ‖ P_k) of soft assignments (P_k floored as in the step)."""
    value = float((S * e).sum())
    if mu == 0:
        return value
    size = np.maximum(S.sum(axis=0), _FLOOR)
    group = np.maximum(onehot.T @ S, _FLOOR)  # v_jᵀ s_k, (J, K)
    return value + mu * float((u[:, None] * (np.log(u)[:, None] - np.log(group / size))).sum())


def _s_steps(S: np.ndarray, e: np.ndarray, onehot: np.ndarray, codes: np.ndarray,
             u: np.ndarray, mu: float, L: float, max_iter: int, tol: float,
             history: list[float]) -> tuple[np.ndarray, float]:
    """Bound-optimisation steps on S with backtracking on L; the objective never increases."""
    if mu == 0:  # the exact minimiser over S: every row at its nearest center
        S = np.eye(e.shape[1])[np.argmin(e, axis=1)]
        history.append(_objective(S, e, onehot, u, mu))
        return S, L
    f = _objective(S, e, onehot, u, mu)
    with np.errstate(divide="ignore"):
        for _ in range(max_iter):
            size = np.maximum(S.sum(axis=0), _FLOOR)
            group = np.maximum(onehot.T @ S, _FLOOR)
            grad = e + mu * (1.0 / size[None, :] - u[codes][:, None] / group[codes])
            log_s = np.log(S)
            while True:
                new = softmax(log_s - grad / L, axis=1)
                f_new = _objective(new, e, onehot, u, mu)
                bound = f + float((grad * (new - S)).sum()) + L * float(rel_entr(new, S).sum())
                if f_new <= f and f_new <= bound + 1e-12 * max(abs(f), 1.0):
                    break
                L *= 2.0
                if L > 1e300:  # no descent step left at this precision
                    return S, L
            S, decrease, f = new, f - f_new, f_new
            history.append(f)
            L = max(L / 2.0, 1e-12)
            if decrease <= tol * max(abs(f), 1.0):
                break
    return S, L


def _fit(problem: Problem, mu: float, init_centers: np.ndarray, max_iter: int,
         max_bound_iter: int, tol: float) -> tuple[np.ndarray, np.ndarray, int, list[float]]:
    X, codes = problem.X, problem.groups
    onehot = np.zeros((problem.n_samples, problem.n_groups))
    onehot[np.arange(problem.n_samples), codes] = 1.0
    u = onehot.mean(axis=0)
    centers = init_centers.copy()
    x2 = np.einsum("ij,ij->i", X, X)[:, None]

    def distances(c: np.ndarray) -> np.ndarray:
        return np.maximum(x2 - 2.0 * X @ c.T + (c**2).sum(axis=1), 0.0)

    e = distances(centers)
    S = softmax(-e, axis=1)  # a soft start: multiplicative steps keep zeros at zero
    L, labels, history = 1.0, None, []
    n_iter = 0
    for n_iter in range(1, max_iter + 1):  # noqa: B007 - n_iter is reported
        S, L = _s_steps(S, e, onehot, codes, u, mu, L, max_bound_iter, tol, history)
        weight = S.sum(axis=0)
        full = weight > _FLOOR  # a cluster without weight keeps its center
        centers = centers.copy()
        centers[full] = (S.T @ X)[full] / weight[full, None]
        e = distances(centers)
        history.append(_objective(S, e, onehot, u, mu))
        new = np.argmax(S, axis=1)
        stalled = len(history) > 1 and history[-2] - history[-1] <= tol * max(
            abs(history[-1]), 1.0)
        if labels is not None and np.array_equal(new, labels) and (mu == 0 or stalled):
            labels = new
            break
        labels = new
    return labels, centers, n_iter, history


class VFairKMeans(ClusterMixin, BaseEstimator):
    """Variational fair k-means (Ziko et al.): k-means cost + μ·Σ_k KL(U ‖ P_k).

    Parameters
    ----------
    n_clusters : int, default=8
    fairness_weight : float, default=0.0
        The fairness penalty μ ≥ 0; 0 is plain k-means (Lloyd). The SAfairKM paper swept μ up
        to 3,260 (Adult) and 2,440 (Bank) on 5,000 L2-normalised rows.
    max_iter : int, default=100
        Outer iterations (centers, then assignments).
    max_bound_iter : int, default=50
        Bound-optimisation steps on S per outer iteration.
    tol : float, default=1e-6
        Relative decrease of the objective that ends the S steps (and, once the labels no
        longer change, the fit).
    random_state : int, SeedSequence or None
        Seeds the k-means++ starting centers.
    min_group_size, small_groups
        The smallest group accepted and what happens to smaller ones, as in
        :class:`~daskfair.SAFairKMeans`.

    Attributes
    ----------
    labels_, cluster_centers_, cost_ (f1), balance_ (f2), fairness_error_ (Σ_k KL(U‖P_k) of
    the hard clusters), n_iter_, groups_, n_features_in_
    merged_groups_ : dict of str to int
        The groups merged into "other" and their rows (empty when none were).
    objective_ : ndarray
        The objective of the soft assignments after every S step and every center update
        (non-increasing).
    """

    def __init__(self, n_clusters: int = 8, *, fairness_weight: float = 0.0,
                 max_iter: int = 100, max_bound_iter: int = 50, tol: float = 1e-6,
                 random_state: Any = None, min_group_size: int = 1,
                 small_groups: str = "raise") -> None:
        self.n_clusters = n_clusters
        self.fairness_weight = fairness_weight
        self.max_iter = max_iter
        self.max_bound_iter = max_bound_iter
        self.tol = tol
        self.random_state = random_state
        self.min_group_size = min_group_size
        self.small_groups = small_groups

    def fit(self, X: Any, y: Any = None, *, sensitive_features: Any) -> VFairKMeans:
        """Fit on ``X`` with the groups ``sensitive_features``.

        Parameters
        ----------
        X : array-like or dask array of shape (n_samples, n_features)
            The points.
        y : None
            Ignored (present for the scikit-learn API).
        sensitive_features : array-like of shape (n_samples,) or (n_samples, c)
            Group of every row; several columns make one group of every combination of
            their values (named as fairlearn does, e.g. ``"black,F"``).

        Returns
        -------
        self : VFairKMeans
            The fitted estimator.

        Examples
        --------
        >>> import numpy as np
        >>> from daskfair import VFairKMeans, make_fair_blobs
        >>> X, s, _ = (np.asarray(a) for a in make_fair_blobs(400, n_clusters=2, random_state=0))
        >>> VFairKMeans(2, random_state=0).fit(X, sensitive_features=s).labels_.shape
        (400,)
        """
        weight = self.fairness_weight
        if isinstance(weight, bool) or not isinstance(weight, Real) or not (
                np.isfinite(weight) and weight >= 0):
            raise ValueError(f"fairness_weight must be a finite number >= 0, got {weight!r}.")
        for name in ("max_iter", "max_bound_iter"):
            check_int(getattr(self, name), name)
        problem = make_problem(X, sensitive_features, self.n_clusters,
                               min_group_size=self.min_group_size,
                               small_groups=self.small_groups)
        self._fit_problem(problem, _init_centers(problem, self.random_state), weight)
        return self

    def _fit_problem(self, problem: Problem, centers: np.ndarray,
                     fairness_weight: float) -> VFairKMeans:
        from ..metrics import kmeans_cost

        labels, centers, n_iter, history = _fit(problem, float(fairness_weight), centers,
                                                self.max_iter, self.max_bound_iter, self.tol)
        self.objective_ = np.asarray(history)
        k = problem.n_clusters
        self.labels_ = labels.astype(np.int64)
        self.cluster_centers_ = centers + problem.offset
        self.cost_ = kmeans_cost(problem.X, labels)
        self.balance_ = balance_metric(labels, sensitive_features=problem.groups,
                                       n_clusters=k)
        self.fairness_error_ = fairness_error(labels, problem.groups, k, problem.n_groups)
        self.n_iter_ = n_iter
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
            Group of every row; several columns make one group of every combination of
            their values (named as fairlearn does, e.g. ``"black,F"``).

        Returns
        -------
        ndarray of shape (n_samples,)
            The cluster of every row.
        """
        return self.fit(X, sensitive_features=sensitive_features).labels_


def _init_centers(problem: Problem, random_state: Any) -> np.ndarray:
    from sklearn.cluster import kmeans_plusplus

    rng = child_rng(as_seed_sequence(random_state), 2)
    centers, _ = kmeans_plusplus(problem.X, problem.n_clusters,
                                 random_state=int(rng.integers(2**31)))
    return centers


def _fit_task(problem: Problem, mu: float, centers: np.ndarray,
              kwargs: dict[str, Any]) -> tuple[np.ndarray, float, float, int]:
    est = VFairKMeans(problem.n_clusters, fairness_weight=mu, **kwargs)._fit_problem(
        problem, centers, mu)
    return est.labels_.astype(problem.label_dtype), est.cost_, est.balance_, est.n_iter_


def vfairkm_front(
    X: Any,
    *,
    sensitive_features: Any,
    n_clusters: int = 8,
    fairness_weights: Sequence[float],
    random_state: Any = None,
    client: Any = None,
    **kwargs: Any,
) -> ParetoFront:
    """VfairKM over a sweep of μ, one task per μ, dominated points removed (the paper's
    comparison). Every fit starts from the same k-means++ centers.

    Parameters
    ----------
    X : array-like or dask array of shape (n_samples, n_features)
    sensitive_features : array-like of shape (n_samples,)
    n_clusters : int, default=8
    fairness_weights : sequence of float
        The μ of the sweep (:class:`VFairKMeans`'s ``fairness_weight``), each >= 0.
    random_state : int, SeedSequence or None
    client : distributed.Client, optional
    **kwargs
        Other parameters of :class:`VFairKMeans`.

    Returns
    -------
    ParetoFront
        ``params["fairness_weight"]`` gives the μ of every point of the front.

    Examples
    --------
    >>> import numpy as np
    >>> from daskfair import make_fair_blobs, vfairkm_front
    >>> X, s, _ = (np.asarray(a) for a in make_fair_blobs(500, n_clusters=3, random_state=0))
    >>> front = vfairkm_front(X, sensitive_features=s, n_clusters=3,
    ...                       fairness_weights=[0, 100, 1000], random_state=0)
    >>> 1 <= len(front.cost) <= 3
    True
    """
    from ..runtime.clients import task_client

    mus_arr = np.asarray(fairness_weights, dtype=np.float64).ravel()
    if mus_arr.size == 0 or not np.isfinite(mus_arr).all() or (mus_arr < 0).any():
        raise ValueError("fairness_weights must be a non-empty list of finite values >= 0, "
                         f"got {fairness_weights!r}.")
    X = check_array(X, "X", min_samples=2)  # in-memory input: refused before a cluster starts
    client = task_client(client)
    check_fits_workers(X, client, "VfairKM")
    problem = make_problem(X, sensitive_features, n_clusters)
    centers = _init_centers(problem, random_state)
    VFairKMeans(n_clusters, **kwargs)  # unknown keyword arguments fail here, not in a task
    problem_f = client.scatter(problem, broadcast=True, hash=False)
    futures = [client.submit(_fit_task, problem_f, float(mu), centers, kwargs, pure=False)
               for mu in mus_arr]
    results = client.gather(futures)
    cost = np.array([r[1] for r in results])
    bal = np.array([r[2] for r in results])
    keep = nondominated(cost, bal)
    labels = np.stack([results[i][0] for i in keep])
    params = {"n_clusters": n_clusters, "fairness_weights": mus_arr.tolist(),
              "fairness_weight": mus_arr[keep].tolist(),
              "n_iter": [int(results[i][3]) for i in keep]}
    return ParetoFront(cost[keep], bal[keep], [], params, labels)
