"""Cost/balance Pareto fronts: the non-dominated filter and :class:`ParetoFront`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import dask.array as da
import numpy as np

from ..metrics import hypervolume_2d
from ..store import open_run
from ._block_functions import select_nondominated

__all__ = ["DOMINANCE", "ParetoFront", "check_dominance", "nondominated"]

DOMINANCE = ("weak", "strict")


def check_dominance(dominance: Any) -> str:
    """``dominance``, one of :data:`DOMINANCE`."""
    if dominance not in DOMINANCE:
        raise ValueError(f"dominance must be one of {DOMINANCE}, got {dominance!r}.")
    return dominance


def nondominated(cost: Any, balance: Any, dominance: str = "weak") -> np.ndarray:
    """Indices of the non-dominated points (minimise cost, maximise balance), by cost.

    Parameters
    ----------
    cost : array-like of shape (n_points,)
        The points' cost f1.
    balance : array-like of shape (n_points,)
        The points' balance f2.
    dominance : {"weak", "strict"}, default="weak"
        "weak" drops a point when another is at least as good in both objectives and better
        in one, and keeps the first of points with equal (cost, balance). "strict" is the
        paper's Algorithm 3 (line 8): a point is dropped only when another is better in
        both, so ties and duplicates stay (a larger front).

    Returns
    -------
    ndarray of int64 of shape (n_kept,)
        The indices of the non-dominated points, by increasing cost.

    Raises
    ------
    ValueError
        If ``cost`` and ``balance`` differ in length, or ``dominance`` is not one of the two.

    See Also
    --------
    pareto_front : The SAfairKM front, filtered this way after every iteration.
    ParetoFront : A filtered front with its label vectors.

    Examples
    --------
    >>> from daskfair.safairkm import nondominated
    >>> nondominated([1.0, 2.0, 3.0], [0.2, 0.1, 0.5])
    array([0, 2])
    """
    f1 = np.asarray(cost, dtype=np.float64).ravel()
    f2 = np.asarray(balance, dtype=np.float64).ravel()
    if f1.shape != f2.shape:
        raise ValueError(f"cost and balance have different lengths ({f1.size}, {f2.size}).")
    check_dominance(dominance)
    return select_nondominated(f1, f2, np.arange(f1.size), dominance == "strict")


@dataclass
class ParetoFront:
    """A cost/balance trade-off: non-dominated clusterings sorted by increasing cost.

    Made by :func:`pareto_front` or :func:`vfairkm_front` (or read back by
    :meth:`from_store`), not by hand.

    Parameters
    ----------
    cost : ndarray of shape (n_points,)
        f1 of each point (increasing).
    balance : ndarray of shape (n_points,)
        f2 of each point (increasing along the front).
    history : list of dict, default=[]
        Per iteration: ``iteration``, ``n_points``, ``seconds`` since the start.
    params : dict, default={}
        The parameters of the run.
    _labels : ndarray or dask.array.Array of shape (n_points, n_samples), default=None
        The label vectors, on the workers or in memory; read them through :attr:`labels`
        or :meth:`labels_dask`.
    _client : distributed.Client, default=None
        The client holding the label vectors when they are on the workers.

    See Also
    --------
    pareto_front : The SAfairKM front.
    vfairkm_front : The VfairKM front over a sweep of the fairness weight.
    nondominated : The filter that keeps a front's points.

    Examples
    --------
    >>> import numpy as np
    >>> from daskfair import make_fair_blobs, pareto_front
    >>> X, s, _ = (np.asarray(a) for a in make_fair_blobs(500, n_clusters=3, random_state=0))
    >>> front = pareto_front(X, sensitive_features=s, n_clusters=3, n_init=6, max_iter=20,
    ...                      random_state=0)
    >>> fairest = front.labels[np.argmax(front.balance)]  # one clustering per point
    >>> bool(front.hypervolume((1.05 * front.cost.max(), 0.0)) > 0)
    True
    """

    cost: np.ndarray
    balance: np.ndarray
    history: list[dict[str, Any]] = field(default_factory=list)
    params: dict[str, Any] = field(default_factory=dict)
    _labels: Any = None
    _client: Any = None

    def __len__(self) -> int:
        return len(self.cost)

    @property
    def labels(self) -> np.ndarray:
        """Label vectors, an ndarray of shape (n_points, n_samples), gathered on first access.

        Raises
        ------
        RuntimeError
            If the label vectors were kept on a Dask cluster that is no longer reachable.
        """
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
        run = open_run(path)
        if run.kind != "safairkm":
            raise ValueError(f"{path} holds a {run.kind!r} run, not a SAfairKM front.")
        return cls(run.read_array("cost"), run.read_array("balance"),
                   list(run.attrs.get("history", [])), run.params,
                   run.read_array("labels"))

    def labels_dask(self) -> da.Array:
        """The label vectors as a dask array, without gathering them.

        Returns
        -------
        dask.array.Array of shape (n_points, n_samples)
            One label vector per point.
        """
        if isinstance(self._labels, da.Array):
            return self._labels
        return da.from_array(self._labels, chunks=(64, -1))

    def hypervolume(self, reference: tuple[float, float]) -> float:
        """Area dominated by the front inside the box (cost ≤ r_cost, balance ≥ r_balance).

        Parameters
        ----------
        reference : (float, float)
            (r_cost, r_balance): a cost no point should exceed and a balance no point
            should fall below.

        Returns
        -------
        float
            The dominated area (:func:`daskfair.metrics.hypervolume_2d`).
        """
        return hypervolume_2d(self.cost, self.balance, reference)

    def plot(self, ax: Any = None, *, label: str = "SAfairKM", **kwargs: Any) -> Any:
        """Scatter the front (cost on x, balance on y); needs matplotlib (the ``plot`` extra).

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
