"""Cost/balance Pareto fronts: the non-dominated filter and :class:`ParetoFront`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import dask.array as da
import numpy as np

from .._params import Options, checked
from ..metrics import hypervolume_2d
from ._block_functions import select_nondominated

__all__ = ["DOMINANCE", "ParetoFront", "nondominated"]

DOMINANCE = ("weak", "strict")


@checked(dominance=[Options(DOMINANCE)])
def nondominated(cost: Any, balance: Any, dominance: str = "weak") -> np.ndarray:
    """Indices of the non-dominated points (minimise cost, maximise balance), by cost.

    Parameters
    ----------
    cost, balance : array-like of shape (n_points,)
        The points' cost f1 and balance f2.
    dominance : {"weak", "strict"}, default="weak"
        "weak" keeps one of equal points; "strict" (the paper's Algorithm 3) keeps ties.

    Returns
    -------
    ndarray of int64 of shape (n_kept,)
        The indices of the non-dominated points, by increasing cost.

    Raises
    ------
    ValueError
        If ``cost`` and ``balance`` differ in length or ``dominance`` is unknown.
    """
    f1 = np.asarray(cost, dtype=np.float64).ravel()
    f2 = np.asarray(balance, dtype=np.float64).ravel()
    if f1.shape != f2.shape:
        raise ValueError(f"cost and balance have different lengths ({f1.size}, {f2.size}).")
    return select_nondominated(f1, f2, np.arange(f1.size), dominance == "strict")


@dataclass
class ParetoFront:
    """Non-dominated clusterings by increasing cost, made by :func:`pareto_front` and others.

    Parameters
    ----------
    cost, balance : ndarray of shape (n_points,)
        f1 and f2 of each point (both increasing).
    history : list of dict, default=[]
        Per iteration: ``iteration``, ``n_points``, ``seconds`` since the start.
    params : dict, default={}
        The parameters of the run.
    _labels, _client : object, default=None
        Where the label vectors are and the client holding them (read :attr:`labels`).
    centers : ndarray of shape (n_points, n_clusters, n_features), default=None
        Every point's cluster centers (what :meth:`point` assigns new rows by).
    groups : ndarray of shape (n_groups,), default=None
        The groups in code order.
    """

    cost: np.ndarray
    balance: np.ndarray
    history: list[dict[str, Any]] = field(default_factory=list)
    params: dict[str, Any] = field(default_factory=dict)
    _labels: Any = None
    _client: Any = None
    centers: np.ndarray | None = None
    groups: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.cost)

    @property
    def labels(self) -> np.ndarray:
        """Label vectors (n_points, n_samples), gathered on first access (RuntimeError if lost)."""
        if isinstance(self._labels, da.Array):
            try:
                self._labels = self._client.compute(self._labels).result()
            except Exception as exc:
                raise RuntimeError(
                    "the label vectors of this front were kept on a Dask cluster that is no "
                    f"longer reachable ({type(exc).__name__}). Read front.labels before closing "
                    "the client, or pass store= to keep them in a zarr store."
                ) from exc
            self._client = None
        return self._labels

    @classmethod
    def from_store(cls, path: str) -> ParetoFront:
        """Load a finished front written by ``pareto_front(..., store=path)``.

        Parameters
        ----------
        path : path-like
            The run store.

        Returns
        -------
        ParetoFront
            The stored front, its label vectors read from the store.

        Raises
        ------
        ValueError
            If the store holds another kind of run.
        """
        from ..store import open_run  # zarr: only to read a store

        run = open_run(path)
        if run.kind != "safairkm":
            raise ValueError(f"{path} holds a {run.kind!r} run, not a SAfairKM front.")
        with run.reading("the front"):
            groups = run.attrs.get("groups")
            cost, balance, labels, centers = (run.read_array(name) for name in (
                "cost", "balance", "labels", "centers"))
            _check_stored(cost, balance, labels, centers)
            return cls(cost, balance, list(run.attrs.get("history", [])), run.params, labels,
                       centers=centers, groups=None if groups is None else np.asarray(groups))

    def index(self, *, front_point: int | None = None, balance: float | None = None) -> int:
        """The point ``front_point`` (checked), or the one whose balance is closest to ``balance``.

        Parameters
        ----------
        front_point : int, default=None
            A point's position (0: the lowest cost).
        balance : float, default=None
            A balance in [0, 1]; ties go to the lower cost.

        Returns
        -------
        int
        """
        if (front_point is None) == (balance is None):
            raise ValueError(
                f"this front has {len(self)} points (balance {self.balance.min():.3f} to "
                f"{self.balance.max():.3f}): choose one with front_point= (0 is the lowest "
                "cost) or balance= (the closest), not both.")
        if balance is not None:
            if not 0 <= balance <= 1:
                raise ValueError(f"balance must lie in [0, 1], got {balance!r}.")
            return int(np.argmin(np.abs(self.balance - balance)))
        if isinstance(front_point, bool) or not isinstance(front_point, int | np.integer) \
                or not 0 <= front_point < len(self):
            raise ValueError(f"front_point must be an integer in [0, {len(self) - 1}], got "
                             f"{front_point!r}.")
        return int(front_point)

    def point(self, front_point: int) -> Any:
        """A point as a fitted :class:`SAFairKMeans`: its ``predict`` assigns new rows to the
        point's nearest center.

        Parameters
        ----------
        front_point : int
            The point's position (0: the lowest cost; :meth:`index` finds one by balance).

        Returns
        -------
        SAFairKMeans
            With ``labels_``, ``cluster_centers_``, ``cost_``, ``balance_``, ``groups_`` and
            ``n_features_in_`` of the point (no ``history_``).
        """
        from .estimator import SAFairKMeans

        i = self.index(front_point=front_point)
        if self.centers is None:
            raise ValueError("this front keeps no cluster centers (only pareto_front's do); "
                             "fit SAFairKMeans with init=front.labels[i] to get them.")
        names = ("n_clusters", "max_iter", "target", "max_swap_candidates", "min_group_size",
                 "small_groups")
        est = SAFairKMeans(**{k: self.params[k] for k in names if k in self.params})
        est.labels_ = np.asarray(self.labels[i]).astype(np.int64)
        est.cluster_centers_ = np.asarray(self.centers[i], dtype=np.float64)
        est.cost_, est.balance_ = float(self.cost[i]), float(self.balance[i])
        est.groups_ = self.groups
        est.n_features_in_ = est.cluster_centers_.shape[1]
        return est

    def hypervolume(self, reference: tuple[float, float]) -> float:
        """Area dominated by the front inside the box (cost ≤ r_cost, balance ≥ r_balance).

        Parameters
        ----------
        reference : (float, float)
            (r_cost, r_balance), worse than every point in both.

        Returns
        -------
        float
            The dominated area (:func:`daskfair.metrics.hypervolume_2d`).
        """
        return hypervolume_2d(self.cost, self.balance, reference)

    def plot(self, ax: Any = None, *, label: str = "SAfairKM", **kwargs: Any) -> Any:
        """Scatter the front by ``ax.plot(cost, balance, **kwargs)``; needs matplotlib.

        Parameters
        ----------
        ax : matplotlib.axes.Axes, default=None
            Where to draw (None: a new figure).
        label : str, default="SAfairKM"
            The legend entry.
        **kwargs
            Passed to ``ax.plot``.

        Returns
        -------
        matplotlib.axes.Axes
            The axes drawn on.
        """
        import matplotlib.pyplot as plt

        if ax is None:
            _, ax = plt.subplots(figsize=(5, 4))
        ax.plot(self.cost, self.balance, "o", ms=3, label=label, **kwargs)
        ax.set_xlabel("clustering cost f1")
        ax.set_ylabel("balance f2")
        ax.legend()
        return ax


def _check_stored(cost: np.ndarray, balance: np.ndarray, labels: np.ndarray,
                  centers: np.ndarray) -> None:
    """ValueError unless a stored front's arrays agree: P points, n rows, k clusters."""
    points = len(cost)
    if not (cost.shape == balance.shape == (points,) and labels.ndim == 2
            and len(labels) == points and centers.ndim == 3 and len(centers) == points):
        raise ValueError("its arrays' shapes disagree")
    k = centers.shape[1]
    if labels.dtype.kind not in "iu" or (
            labels.size and not 0 <= labels.min() <= labels.max() < k):
        raise ValueError(f"its labels are not cluster numbers 0 to {k - 1}")
    if not all(np.isfinite(a).all() for a in (centers, cost, balance)):
        raise ValueError("its centers, costs or balances are not finite")
