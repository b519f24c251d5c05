"""VfairKM (Ziko et al.), the SAfairKM paper's baseline (docs/design.md#vfairkm-bound-step)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np
from scipy.special import rel_entr, softmax
from sklearn.base import BaseEstimator, ClusterMixin

from .._groups import GROUP_SIZE
from .._params import Grid, Integer, Nothing, ParamsMixin, Real, Seed, Spec, checked
from .._random import as_seed_sequence, child_rng
from .._validation import check_array
from ..metrics import balance as balance_metric
from ..metrics import kmeans_cost
from ._nearest_center import NearestCenterMixin
from .pareto import ParetoFront, nondominated
from .problem import CLUSTERS, Problem, check_fits_workers, make_problem

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
               fairness_weight: float) -> float:
    """Σ s_pk e_pk + μ Σ_k D_KL(U ‖ P_k) of soft assignments (P_k floored as in the step)."""
    value = float((S * e).sum())
    if fairness_weight == 0:
        return value
    size = np.maximum(S.sum(axis=0), _FLOOR)
    group = np.maximum(onehot.T @ S, _FLOOR)  # v_jᵀ s_k, (J, K)
    return value + fairness_weight * float(
        (u[:, None] * (np.log(u)[:, None] - np.log(group / size))).sum())


def _s_steps(S: np.ndarray, e: np.ndarray, onehot: np.ndarray, codes: np.ndarray,
             u: np.ndarray, fairness_weight: float, L: float, max_iter: int, tol: float,
             history: list[float]) -> tuple[np.ndarray, float]:
    """Bound-optimisation steps on S with backtracking on L; the objective never increases."""
    if fairness_weight == 0:  # the exact minimiser over S: every row at its nearest center
        S = np.eye(e.shape[1])[np.argmin(e, axis=1)]
        history.append(_objective(S, e, onehot, u, fairness_weight))
        return S, L
    f = _objective(S, e, onehot, u, fairness_weight)
    with np.errstate(divide="ignore"):
        for _ in range(max_iter):
            size = np.maximum(S.sum(axis=0), _FLOOR)
            group = np.maximum(onehot.T @ S, _FLOOR)
            # e + μ b, b the gradient of the KL term at S
            grad = e + fairness_weight * (1.0 / size[None, :] - u[codes][:, None] / group[codes])
            log_s = np.log(S)
            while True:
                new = softmax(log_s - grad / L, axis=1)
                f_new = _objective(new, e, onehot, u, fairness_weight)
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


class VFairKMeans(ParamsMixin, NearestCenterMixin, ClusterMixin, BaseEstimator):
    """Variational fair k-means (Ziko et al.): k-means cost + μ·Σ_k KL(U ‖ P_k).

    Parameters
    ----------
    n_clusters, random_state, min_group_size, small_groups : as in :class:`SAFairKMeans`.
    fairness_weight : float, default=0.0
        The fairness penalty μ ≥ 0; 0 is plain k-means (Lloyd).
    max_iter : int, default=100
        Outer iterations (centers, then assignments).
    max_bound_iter : int, default=50
        Bound-optimisation steps on the soft assignments per outer iteration.
    tol : float, default=1e-6
        Relative decrease of the objective that ends the bound steps (and the fit).

    Attributes
    ----------
    labels_, cost_, balance_, groups_, merged_groups_, n_features_in_ : as in SAFairKMeans.
    cluster_centers_ : ndarray of shape (n_clusters, n_features)
        The soft means of the clusters (``labels_``: the largest soft assignment).
    fairness_error_ : float
        Σ_k KL(U ‖ P_k) of the hard clusters (infinite when a cluster misses a group).
    objective_ : ndarray of shape (n_steps,)
        The objective after every bound step and center update (non-increasing).
    n_iter_ : int
        Outer iterations run.

    See Also
    --------
    vfairkm_front : VfairKM over a sweep of ``fairness_weight``.

    Notes
    -----
    The SAfairKM paper's eq. (7). ``fit`` reads X and the groups into memory once (one pass
    over dask input); an outer iteration costs O(N·K·d), plus O(N·K·J) per bound step.
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

    _parameter_constraints: ClassVar[dict[str, list[Spec]]] = {
        "n_clusters": [CLUSTERS], "fairness_weight": [Real(0)], "max_iter": [Integer(1)],
        "max_bound_iter": [Integer(1)], "tol": [Real(0)], "random_state": [Nothing, Seed],
        **GROUP_SIZE}

    def fit(self, X: Any, y: Any = None, *, sensitive_features: Any) -> VFairKMeans:
        """Fit on ``X`` with the groups ``sensitive_features``.

        Parameters
        ----------
        X, y, sensitive_features : as in :meth:`SAFairKMeans.fit`.

        Returns
        -------
        self : VFairKMeans
            The fitted estimator.

        Raises
        ------
        ValueError, TypeError
            On bad parameters, data or groups (the message says which).
        """
        params = self._validate_params()
        problem = make_problem(X, sensitive_features, params["n_clusters"],
                               min_group_size=params["min_group_size"],
                               small_groups=params["small_groups"])
        fitted = _fitted(problem, _init_centers(problem, params["random_state"]), params)
        for name, value in fitted.items():
            setattr(self, name, value)
        return self


def _init_centers(problem: Problem, seed: np.random.SeedSequence) -> np.ndarray:
    from sklearn.cluster import kmeans_plusplus

    rng = child_rng(as_seed_sequence(seed), 2)
    centers, _ = kmeans_plusplus(problem.X, problem.n_clusters,
                                 random_state=int(rng.integers(2**31)))
    return centers


def _fitted(problem: Problem, centers: np.ndarray, params: dict[str, Any]) -> dict[str, Any]:
    """The fitted attributes of VfairKM from the starting ``centers`` (checked ``params``)."""
    X, codes, mu, tol = problem.X, problem.groups, params["fairness_weight"], params["tol"]
    onehot = np.zeros((problem.n_samples, problem.n_groups))
    onehot[np.arange(problem.n_samples), codes] = 1.0
    u = onehot.mean(axis=0)
    x2 = np.einsum("ij,ij->i", X, X)[:, None]

    def distances(c: np.ndarray) -> np.ndarray:
        return np.maximum(x2 - 2.0 * X @ c.T + (c**2).sum(axis=1), 0.0)

    e = distances(centers)
    S = softmax(-e, axis=1)  # a soft start: multiplicative steps keep zeros at zero
    L, labels, history = 1.0, None, []
    n_iter = 0
    for n_iter in range(1, params["max_iter"] + 1):  # noqa: B007 - n_iter is reported
        S, L = _s_steps(S, e, onehot, codes, u, mu, L, params["max_bound_iter"], tol, history)
        weight = S.sum(axis=0)
        full = weight > _FLOOR  # a cluster without weight keeps its center
        centers = centers.copy()
        centers[full] = (S.T @ X)[full] / weight[full, None]  # the soft means
        e = distances(centers)
        history.append(_objective(S, e, onehot, u, mu))
        new = np.argmax(S, axis=1)
        stalled = len(history) > 1 and history[-2] - history[-1] <= tol * max(
            abs(history[-1]), 1.0)
        done = labels is not None and np.array_equal(new, labels) and (mu == 0 or stalled)
        labels = new
        if done:
            break
    k = problem.n_clusters
    return {
        "objective_": np.asarray(history), "labels_": labels.astype(np.int64),
        "cluster_centers_": centers + problem.offset,
        "cost_": kmeans_cost(X, labels),
        "balance_": balance_metric(labels, sensitive_features=codes, n_clusters=k),
        "fairness_error_": fairness_error(labels, codes, k, problem.n_groups),
        "n_iter_": n_iter, "groups_": problem.group_values,
        "merged_groups_": dict(problem.merged), "n_features_in_": X.shape[1],
    }


def _front_task(problem: Problem, centers: np.ndarray,
                params: dict[str, Any]) -> tuple[np.ndarray, float, float, int]:
    fitted = _fitted(problem, centers, params)
    return (fitted["labels_"].astype(problem.label_dtype), fitted["cost_"],
            fitted["balance_"], fitted["n_iter_"])


@checked(**{k: v for k, v in VFairKMeans._parameter_constraints.items()
            if k != "fairness_weight"}, fairness_weights=[Real(0), Grid((Real(0),))])
def vfairkm_front(X: Any, *, sensitive_features: Any, n_clusters: int = 8,
                  fairness_weights: Sequence[float], max_iter: int = 100,
                  max_bound_iter: int = 50, tol: float = 1e-6, random_state: Any = None,
                  min_group_size: int = 1, small_groups: str = "raise",
                  client: Any = None) -> ParetoFront:
    """VfairKM over a sweep of μ from the same k-means++ centers, dominated points removed.

    Parameters
    ----------
    X, sensitive_features, client : as in :func:`pareto_front`.
    fairness_weights : sequence of float
        The μ of the sweep (one task each), each ≥ 0.
    n_clusters, max_iter, max_bound_iter, tol : as in :class:`VFairKMeans`.
    random_state, min_group_size, small_groups : as in :class:`VFairKMeans`.

    Returns
    -------
    ParetoFront
        ``params["fairness_weight"]`` and ``params["n_iter"]``: μ and iterations per point.

    Raises
    ------
    ValueError
        On bad parameters or data, or rows that need over half of a worker's memory limit.

    Examples
    --------
    >>> from daskfair import make_fair_blobs, vfairkm_front
    >>> X, s, _ = make_fair_blobs(500, n_clusters=3, random_state=0)
    >>> front = vfairkm_front(X, sensitive_features=s, n_clusters=3,
    ...                       fairness_weights=[0, 100, 1000], random_state=0)
    >>> 1 <= len(front.cost) <= 3
    True
    """
    params = VFairKMeans(
        n_clusters, max_iter=max_iter, max_bound_iter=max_bound_iter, tol=tol,
        random_state=random_state, min_group_size=min_group_size, small_groups=small_groups,
    ).get_params()
    weights = np.atleast_1d(np.asarray(fairness_weights, dtype=np.float64))
    X = check_array(X, "X", min_samples=2)  # in-memory input: refused before a cluster starts
    from ..runtime.clients import task_client  # distributed: not for VFairKMeans.fit

    client = task_client(client)
    check_fits_workers(X, client, "VfairKM")
    problem = make_problem(X, sensitive_features, n_clusters,
                           min_group_size=params["min_group_size"],
                           small_groups=params["small_groups"])
    centers = _init_centers(problem, params["random_state"])
    problem_f = client.scatter(problem, broadcast=True, hash=False)
    futures = [client.submit(_front_task, problem_f, centers,
                             {**params, "fairness_weight": float(weight)}, pure=False)
               for weight in weights]
    results = client.gather(futures)
    cost = np.array([r[1] for r in results])
    bal = np.array([r[2] for r in results])
    keep = nondominated(cost, bal)
    labels = np.stack([results[i][0] for i in keep])
    stored = {name: params[name] for name in ("n_clusters", "max_iter", "max_bound_iter",
                                              "tol", "min_group_size", "small_groups")}
    stored.update(fairness_weights=weights.tolist(), fairness_weight=weights[keep].tolist(),
                  n_iter=[int(results[i][3]) for i in keep])
    return ParetoFront(cost[keep], bal[keep], [], stored, labels)
