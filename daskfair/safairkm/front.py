"""The SAfairKM Pareto front (the paper's Algorithm 3) with its list spread over the cluster.

The list of label vectors lives on the workers in batches (futures of :class:`Members`). An
iteration submits one task per batch that keeps the batch's survivors and adds, for every
survivor and every pair (n_a, n_b), the result of q iterations of Algorithm 2; only the
objectives (f1, f2) come back to the client, which computes the global non-dominated set
(O(L log L)) and tells each batch which members to keep. Batches are rebalanced when their
sizes drift apart. Label vectors reach the client only when asked for.

A child is stored as its parent's label vector plus the positions its moves changed (at most
q·(n_a + 2 n_b)), not as a copy of the N labels (:class:`~.problem.Members`); survivors get
a vector of their own only when their changes outgrow :func:`delta_limit`.

Determinism: members are ranked by (f1, f2) after every filter and a child's randomness is
keyed by (seed, iteration, parent rank, pair), so the front does not depend on the number of
workers or batches.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import dask
import dask.array as da
import numpy as np

from .._random import as_seed_sequence
from .._validation import check_array, check_int
from ..metrics import hypervolume_2d
from ..runtime.inprocess import InProcessClient
from ..runtime.iterative import IterativeRun, Recoveries, check_resume, crossed
from ..runtime.recovery import LOST_WORK
from ..store import Run, open_run
from ._block_functions import expand_batch, select_nondominated
from .problem import Members, Problem, check_fits_workers, make_problem, start_members

__all__ = ["DEFAULT_PAIRS", "FrontParams", "ParetoFront", "nondominated", "pareto_front"]

logger = logging.getLogger(__name__)

#: Four pairs (n_a k-means updates, n_b swap updates) per iteration. Deviation: these are the
#: pairs of the authors' code (Figure 1 says only "4 pairs"); unlike the paper's
#: W = {(n_a, n_b): n_a + n_b = n_total} (Algorithm 3) their sums differ (25, 24, 18, 7). One
#: swap update here exchanges two points (one of each group between the least balanced
#: cluster and its target, as the paper's Section 3 describes); the authors' code moves one
#: point per swap update, so n_b here does about twice their swap work (docs/findings.md F2.1).
DEFAULT_PAIRS = ((25, 0), (20, 4), (15, 3), (5, 2))
DOMINANCE = ("weak", "strict")

def nondominated(cost: Any, balance: Any, dominance: str = "weak") -> np.ndarray:
    """Indices of the non-dominated points (minimise cost, maximise balance), by cost.

    ``dominance="weak"`` (default) drops a point when another is at least as good in both
    objectives and better in one; of points with equal (cost, balance) the first one stays.
    ``"strict"`` is the paper's Algorithm 3: a point is dropped only when another is better
    in both, so ties and duplicates stay (a larger front).

    Parameters
    ----------
    cost, balance : array-like of shape (n_points,)
        The points' cost and balance.
    dominance : {"weak", "strict"}
        Which points count as dominated.

    Returns
    -------
    ndarray of int
        The indices of the non-dominated points, by increasing cost.

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
    _check_dominance(dominance)
    return select_nondominated(f1, f2, np.arange(f1.size), dominance == "strict")


def _check_dominance(dominance: str) -> None:
    if dominance not in DOMINANCE:
        raise ValueError(f"dominance must be one of {DOMINANCE}, got {dominance!r}.")


@dataclass
class ParetoFront:
    """A cost/balance trade-off: non-dominated clusterings sorted by increasing cost.

    Made by :func:`pareto_front` (or read back by :meth:`from_store`), not by hand.

    Parameters
    ----------
    cost : ndarray of shape (n_points,)
        f1 of each point (increasing).
    balance : ndarray of shape (n_points,)
        f2 of each point (increasing along the front).
    history : list of dict
        Per iteration: ``iteration``, ``n_points``, ``seconds`` since the start.
    params : dict
        The parameters of the run.
    _labels, _client : object
        Where the label vectors are (on the workers, or in memory) and the client holding
        them; read them through :attr:`labels` or :meth:`labels_dask`.

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
        """Label vectors, one row per point (gathered from the workers on first access)."""
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
        reference : (r_cost, r_balance)
            A cost no point should exceed and a balance no point should fall below.

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
        ax : matplotlib.axes.Axes, optional
            Where to draw (default: a new figure).
        label : str, optional
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


# -- tasks (run on the workers) --------------------------------------------------------------

def _gather_members(pieces: Sequence[tuple[Members, np.ndarray]],
                    limit: int | None = None) -> Members:
    if len(pieces) == 1:
        return pieces[0][0].take(pieces[0][1], limit)
    return Members.concat([m.take(idx, limit) for m, idx in pieces])


#: Ranks of a batch's members between global filters are ``batch · LOCAL_RANKS + i``: unique
#: across batches (a child's randomness is keyed by its parent's rank) and above every global
#: rank.
LOCAL_RANKS = 2**32


def delta_limit(n_samples: int) -> int:
    """Longest delta a member keeps before it gets a label vector of its own.

    Every child copies its parent's delta (9 bytes a position with one-byte labels) and adds
    its own moves; a row of its own costs one N-vector once. At N/128 positions the deltas
    of a member's P + 1 = 5 output rows stay near a third of an N-vector per iteration.
    """
    return max(16, n_samples // 128)


def _expand_task(
    problem: Problem, pieces: list[tuple[Members, np.ndarray]], ranks: np.ndarray,
    pairs: np.ndarray, q: int, t: int, global_target: bool, max_candidates: int,
    base_seed: int, sync_every: int = 1, batch: int = 0, strict: bool = False,
    limit: int | None = None,
) -> Members:
    """``sync_every`` iterations of Algorithm 3 on one batch: expand, filter the batch's own
    list (not after the last one: that is the global filter's), expand again.

    Children are deltas against their parents (:func:`expand_batch`); only the members that
    survive a filter are taken forward, and one whose delta outgrew ``limit`` (default
    :func:`delta_limit`) is then written out in full.
    """
    limit = delta_limit(problem.n_samples) if limit is None else limit
    members, P = _gather_members(pieces, limit), len(pairs)
    for s in range(sync_every):
        out = Members(members.pool, *expand_batch(
            problem.X, problem.groups, problem.grp_idx, problem.grp_ptr, members.pool,
            members.base, members.dlo, members.dhi, members.dpos, members.dval, members.sums,
            members.counts, members.f1, members.f2, ranks, pairs, q, t + s, global_target,
            max_candidates, np.uint64(base_seed), problem.total_sq,
        ))
        # tie-break keys in output order: parent (rank, 0), then its children (rank, pair + 1)
        out.keys = (ranks[:, None] * (P + 1) + np.arange(P + 1)).ravel()
        if s == sync_every - 1:
            return out
        members = out.take(select_nondominated(out.f1, out.f2, out.keys, strict), limit)
        ranks = batch * LOCAL_RANKS + np.arange(len(members), dtype=np.int64)
    raise AssertionError("sync_every must be >= 1")


def _objectives_and_keys(members: Members) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    return members.f1, members.f2, members.keys


def _objectives(members: Members, idx: Any = slice(None)) -> tuple[np.ndarray, np.ndarray]:
    return members.f1[idx], members.f2[idx]


def _labels_of(members: Members, idx: np.ndarray) -> np.ndarray:
    return members.take(idx).labels


def _write_members(pieces: list[tuple[Members, np.ndarray]], path: str, name: str) -> int:
    import zarr

    m = _gather_members(pieces)
    group = zarr.open_group(store=path, mode="a").require_group(name)
    for key in Members.FIELDS:  # the label vectors in full
        group.create_array(key, data=getattr(m, key), overwrite=True)
    return len(m)


def _read_members(path: str, name: str) -> Members:
    import zarr

    group = zarr.open_group(store=path, mode="r")[name]
    return Members.full(*(group[key][...] for key in Members.FIELDS))


# -- orchestration -----------------------------------------------------------------------------

def _balanced_pieces(
    survivors: list[tuple[Any, np.ndarray, np.ndarray]], n_batches: int
) -> list[list[tuple[Any, np.ndarray, np.ndarray]]]:
    """Group the survivors into at most ``n_batches`` batches of near-equal size.

    Members stay on their batch up to the target size; only the excess moves.
    """
    total = sum(len(idx) for _, idx, _ in survivors)
    n_target = max(1, min(n_batches, total))
    cap = math.ceil(total / n_target)
    sizes = [len(idx) for _, idx, _ in survivors if len(idx)]
    if len(sizes) <= n_target and max(sizes) <= 2 * cap and (
            len(sizes) == n_target or max(sizes) <= cap):
        return [[s] for s in survivors if len(s[1])]
    batches, overflow = [], []
    for fut, idx, ranks in survivors:
        if len(idx) == 0:
            continue
        if len(batches) < n_target:
            batches.append([(fut, idx[:cap], ranks[:cap])])
            rest = slice(cap, None)
        else:
            rest = slice(0, None)
        if len(idx[rest]):
            overflow.append((fut, idx[rest], ranks[rest]))
    while len(batches) < n_target:
        batches.append([])
    for b in batches:
        room = cap - sum(len(p[1]) for p in b)
        while room > 0 and overflow:
            fut, idx, ranks = overflow.pop()
            take = min(room, len(idx))
            b.append((fut, idx[:take], ranks[:take]))
            if take < len(idx):
                overflow.append((fut, idx[take:], ranks[take:]))
            room -= take
    return [b for b in batches if b]


def _check_pairs(pairs: Any) -> np.ndarray:
    arr = np.asarray(pairs)
    if arr.ndim != 2 or arr.shape[1] != 2 or arr.shape[0] == 0:
        raise ValueError(f"update_pairs must be a list of (n_a, n_b) pairs, got {pairs!r}.")
    if arr.dtype.kind not in "iu" or (arr < 0).any() or (arr.sum(axis=1) == 0).any():
        raise ValueError(
            f"update_pairs must hold non-negative integers with n_a + n_b > 0, got {pairs!r}.")
    return arr.astype(np.int64)


@dataclass(frozen=True)
class FrontParams:
    """The algorithm's parameters of a SAfairKM front (:func:`pareto_front` documents them),
    checked when made; ``update_pairs`` becomes a tuple of int pairs."""

    n_clusters: int
    update_pairs: tuple[tuple[int, int], ...]
    n_init: int
    max_iter: int
    budget: int
    q: int
    target: str
    max_swap_candidates: int
    dominance: str
    sync_every: int

    def __post_init__(self) -> None:
        pairs = tuple((a, b) for a, b in _check_pairs(self.update_pairs).tolist())
        object.__setattr__(self, "update_pairs", pairs)
        for name in ("n_init", "max_iter", "budget", "q", "max_swap_candidates", "sync_every"):
            check_int(getattr(self, name), name)
        if self.target not in ("local", "global"):
            raise ValueError(f"target must be 'local' or 'global', got {self.target!r}.")
        _check_dominance(self.dominance)

    def stored(self, seed: np.random.SeedSequence, problem: Problem) -> dict[str, Any]:
        """The parameters a store records and ``resume`` compares."""
        return {
            "n_clusters": self.n_clusters, "update_pairs": [list(p) for p in self.update_pairs],
            "n_init": self.n_init, "max_iter": self.max_iter, "budget": self.budget,
            "q": self.q, "target": self.target,
            "max_swap_candidates": self.max_swap_candidates, "dominance": self.dominance,
            "sync_every": self.sync_every,
            "seed_entropy": str(seed.entropy), "seed_spawn_key": list(seed.spawn_key),
            "n_samples": problem.n_samples, "n_groups": problem.n_groups,
        }


def pareto_front(
    X: Any,
    *,
    sensitive_features: Any,
    n_clusters: int = 8,
    update_pairs: Sequence[tuple[int, int]] = DEFAULT_PAIRS,
    n_init: int = 30,
    max_iter: int = 500,
    budget: int = 1500,
    q: int = 1,
    target: str = "local",
    max_swap_candidates: int = 32,
    dominance: str = "weak",
    sync_every: int = 1,
    n_batches: int | None = None,
    random_state: Any = None,
    store: str | Run | None = None,
    checkpoint_every: int = 50,
    resume: bool = False,
    time_limit: float | None = None,
    client: Any = None,
    callback: Callable[[int, np.ndarray, np.ndarray], None] | None = None,
) -> ParetoFront:
    """Cost/balance Pareto front of fair k-means by SAfairKM (the paper's Algorithm 3).

    Parameters
    ----------
    X : array-like or dask array of shape (n_samples, n_features)
        Gathered into memory once and scattered to every worker (SAfairKM moves single
        points at random, so every task needs all rows).
    sensitive_features : array-like of shape (n_samples,)
        Group of every row (J ≥ 2 groups).
    n_clusters : int, default=8
        K ≥ 2.
    update_pairs : sequence of (n_a, n_b)
        k-means updates and swap updates per iteration of Algorithm 2; each pair pulls the
        front towards a different trade-off.
    n_init : int, default=30
        Starting label vectors: the first half random, the second half k-means++.
    max_iter : int, default=500
        Iterations of Algorithm 3 (the paper used 2,500 for Adult, 8,000 for Bank); fewer
        when ``budget`` or ``time_limit`` stops the run.
    budget : int
        Stop once the front holds this many points.
    q : int
        Iterations of Algorithm 2 per member, pair and iteration (the paper: 1).
    target : {"local", "global"}
        Target cluster of a swap: the nearest center (eq. 5) or the cluster richest in the
        scarce group (eq. 4).
    max_swap_candidates : int
        Cap of the growing candidate batch of the swap step (1 + ⌊√t⌋ at iteration t).
    dominance : {"weak", "strict"}
        The filter after every iteration. "weak" (default; a deviation from the paper,
        docs/design.md#safairkm-pareto-front) drops weakly dominated points and duplicates: the list holds one
        clustering per distinct non-dominated (cost, balance). "strict" is the paper's
        Algorithm 3, line 8: only points worse in both objectives are dropped, so ties and
        duplicates stay. The choice changes
        the list size and so the front's size — the denominator of "seconds per point".
    sync_every : int
        Iterations per round trip (default 1: the paper's Algorithm 3 exactly). With s > 1
        each batch runs s iterations on its own list, filtering it between them, and the
        global filter runs once per round: far fewer round trips on a cluster, a different
        (equally valid) front, still the same for any number of workers when ``n_batches``
        is fixed. ``history`` and ``callback`` then report the global front after each
        round; checkpoints are taken at round ends.
    n_batches : int, optional
        Batches the list is split into (default: the cluster's threads), batch j kept on
        worker j mod W. Does not change the result when ``sync_every=1``.
    random_state : int, SeedSequence or None
    store : str or Run, optional
        zarr path of the run: checkpoints every ``checkpoint_every`` iterations and the
        final front (``daskfair.open_run``); the run is marked complete at the end. An open
        :class:`~daskfair.store.Run` (a job that stores more results in the same run) gets
        the checkpoints and the front but is left for its owner to complete.
    checkpoint_every : int
        Iterations between checkpoints (without a store: between the copies of the list
        kept on the client to recover from a lost worker).
    resume : bool
        Continue the run stored at ``store`` from its last checkpoint; it ends with the same
        front as an uninterrupted run with the same parameters. With a path, the stored
        parameters must equal these; with a Run, its owner checks them.
    time_limit : float, optional
        Stop after the iteration during which this many seconds have passed (the result then
        depends on the machine's speed: for benchmarks, not for reproducible runs).
    client : distributed.Client, optional
        Default: :func:`daskfair.runtime.clients.task_client` (the running client, else this
        process's threads).
    callback : callable, optional
        ``callback(iteration, cost, balance)`` after every iteration (for progress).

    Returns
    -------
    ParetoFront
        Its ``params`` are the stored parameters.

    Examples
    --------
    >>> import numpy as np
    >>> from daskfair import make_fair_blobs, pareto_front
    >>> X, s, _ = (np.asarray(a) for a in make_fair_blobs(500, n_clusters=3, random_state=0))
    >>> front = pareto_front(X, sensitive_features=s, n_clusters=3, n_init=6, max_iter=20,
    ...                      random_state=0)
    >>> bool(np.all(np.diff(front.cost) > 0) and np.all(np.diff(front.balance) > 0))
    True
    >>> front.labels.shape == (len(front.cost), 500)
    True
    """
    from ..runtime.clients import task_client

    params = FrontParams(n_clusters, update_pairs, n_init, max_iter, budget, q, target,
                         max_swap_candidates, dominance, sync_every)
    check_int(checkpoint_every, "checkpoint_every")
    check_resume(store, resume)
    seed = as_seed_sequence(random_state)
    X = check_array(X, "X", min_samples=2)  # in-memory input: refused before a cluster starts
    client = task_client(client)
    check_fits_workers(X, client, "SAfairKM")
    problem = make_problem(X, sensitive_features, n_clusters)
    if n_batches is None:
        n_batches = max(1, sum(client.nthreads().values()))
    search = _FrontSearch(client, problem, params, seed, check_int(n_batches, "n_batches"),
                          callback)
    stored = params.stored(seed, problem)
    with IterativeRun.open(store, resume=resume, kind="safairkm", params=stored,
                           checkpoint_every=checkpoint_every) as job:
        return search.run(job, time_limit, stored)


class _FrontSearch:
    """Algorithm 3's list, spread over the cluster in batches, iterated over a run."""

    def __init__(self, client: Any, problem: Problem, params: FrontParams,
                 seed: np.random.SeedSequence, n_batches: int,
                 callback: Callable[[int, np.ndarray, np.ndarray], None] | None) -> None:
        self.client, self.problem, self.params = client, problem, params
        self.seed, self.n_batches, self.callback = seed, n_batches, callback
        self.pairs = np.asarray(params.update_pairs, dtype=np.int64)
        self.base_seed = int(seed.generate_state(1, np.uint64)[0])
        self.place()

    def place(self) -> None:
        """Where the batches go, and the problem on every worker (again after a loss)."""
        # batch j lives on worker j mod W: without this the scheduler's data locality piles
        # all batches onto the worker that happened to create them. allow_other_workers
        # keeps the run going if a worker leaves.
        self.slots = _worker_slots(self.client.nthreads())
        self.problem_f = self.client.scatter(self.problem, broadcast=True, hash=False)

    def start(self, job: IterativeRun) -> tuple[int, list, list[dict[str, Any]]]:
        """Iteration 0's members, or the store's last checkpoint (with the history up to
        it) when there is one to use."""
        if job.run is not None and (job.resume or job.has_checkpoint):
            t_ckpt, members, past = _resume(job.run, self.client)
            if members is not None:
                return t_ckpt, members, past
        n_init = self.params.n_init
        per = math.ceil(n_init / self.n_batches)
        members = []
        for lo in range(0, n_init, per):
            starts = list(range(lo, min(n_init, lo + per)))
            fut = self.client.submit(start_members, self.problem_f, starts, n_init, self.seed,
                                     pure=False, workers=_slot(self.slots, len(members)),
                                     allow_other_workers=True)
            members.append((fut, np.arange(len(starts)), np.asarray(starts)))
        return 0, members, []

    def restore(self, job: IterativeRun) -> tuple[int, list]:
        """After a loss: the copy kept on the client, else the store's checkpoint (or the
        start)."""
        if job.run is None and job.recovery_point is not None:
            t, copy = job.recovery_point
            futures = self.client.scatter([m for m, _ in copy], hash=False)
            return t, [(f, np.arange(len(m)), r)
                       for f, (m, r) in zip(futures, copy, strict=True)]
        t, survivors, _ = self.start(job)
        return t, survivors

    def run(self, job: IterativeRun, time_limit: float | None,
            stored: dict[str, Any]) -> ParetoFront:
        """Iterate to the end (resuming from the run's checkpoint, restarting from the
        recovery point after a loss), store the front and finish the run."""
        t, survivors, history = self.start(job)
        # a resumed run's seconds continue from its checkpoint (the time between is not counted)
        start = time.perf_counter() - (history[-1]["seconds"] if history else 0.0)
        recoveries = Recoveries("SAfairKM front")
        while True:
            try:
                t, survivors = self.iterate(job, t, survivors, history, start, time_limit)
                f1, f2 = _front_objectives(self.client, survivors)
                labels = _front_labels(self.client, survivors, self.problem)
                if job.run is not None:
                    job.run.write_array("labels", labels,
                                        chunks=(min(64, len(f1)), self.problem.n_samples))
                break
            except LOST_WORK as exc:
                recoveries.lost(exc, self.client)
                self.place()
                t, survivors = self.restore(job)
                history[:] = [h for h in history if h["iteration"] <= t]
        front = ParetoFront(f1, f2, history, stored, labels,
                            self.client if isinstance(labels, da.Array) else None)
        if job.run is not None:
            job.run.write_array("cost", f1)
            job.run.write_array("balance", f2)
        job.finish(n_points=len(f1), n_iter_done=t, history=history)
        return front

    def iterate(self, job: IterativeRun, t: int, survivors: list,
                history: list[dict[str, Any]], start: float,
                time_limit: float | None) -> tuple[int, list]:
        """Rounds of ``sync_every`` iterations from iteration ``t`` until the run is done,
        saved as :meth:`IterativeRun.save` says; returns the last iteration and list."""
        p = self.params
        done = t >= p.max_iter or (job.run is not None
                                   and bool((job.run.checkpoint or {}).get("done")))
        while not done:
            step = min(p.sync_every, p.max_iter - t)
            survivors, n_keep = _iteration(
                self.client, self.problem_f, survivors, self.n_batches, self.slots,
                self.pairs, p.q, t, p.target, p.max_swap_candidates, self.base_seed,
                self.callback, p.dominance == "strict", step)
            t += step
            history.append({"iteration": t, "n_points": n_keep,
                            "seconds": time.perf_counter() - start})
            if crossed(t, step, max(1, p.max_iter // 10)):
                logger.info("SAfairKM front: iteration %d/%d, %d points", t, p.max_iter,
                            n_keep)
            done = t >= p.max_iter or n_keep >= p.budget or (
                time_limit is not None and time.perf_counter() - start > time_limit)
            job.save(t, step, done,
                     checkpoint=partial(_checkpoint, self.client, survivors=survivors, t=t,
                                        done=done, history=history),
                     copy=partial(_copy_members, self.client, survivors))
        return t, survivors


def _iteration(
    client: Any, problem_f: Any, survivors: list, n_batches: int, slots: list,
    pairs_arr: np.ndarray, q: int, t: int, target: str, max_swap_candidates: int,
    base_seed: int, callback: Callable | None, strict: bool = False, sync_every: int = 1,
) -> tuple[list, int]:
    """``sync_every`` iterations of Algorithm 3 (one round trip): every batch expands and
    filters its own list, then the global filter keeps the survivors."""
    batches = _balanced_pieces(survivors, n_batches)
    futures = []
    for j, pieces in enumerate(batches):
        ranks = np.concatenate([r for _, _, r in pieces])
        fut = client.submit(
            _expand_task, problem_f, [(f, i) for f, i, _ in pieces], ranks, pairs_arr,
            q, t, target == "global", max_swap_candidates, base_seed, sync_every, j, strict,
            pure=False, workers=_slot(slots, j), allow_other_workers=True,
        )
        futures.append(fut)
    objs = client.gather([client.submit(_objectives_and_keys, f, pure=False,
                                        workers=_slot(slots, j), allow_other_workers=True)
                          for j, f in enumerate(futures)])
    sizes = [len(o[0]) for o in objs]
    f1 = np.concatenate([o[0] for o in objs])
    f2 = np.concatenate([o[1] for o in objs])
    keep = select_nondominated(f1, f2, np.concatenate([o[2] for o in objs]), strict)
    owner = np.repeat(np.arange(len(futures)), sizes)
    local = np.concatenate([np.arange(s) for s in sizes])
    new_rank = np.empty(len(f1), dtype=np.int64)
    new_rank[keep] = np.arange(len(keep))
    survivors = []
    for j, fut in enumerate(futures):
        mine = keep[owner[keep] == j]
        mine.sort()
        survivors.append((fut, local[mine], new_rank[mine]))
    if callback is not None:
        callback(t + sync_every, f1[keep], f2[keep])
    return survivors, len(keep)


def _copy_members(client: Any, survivors: list) -> list[tuple[Members, np.ndarray]]:
    # the survivors' members and ranks, gathered to the client
    parts = [(f, i, r) for f, i, r in survivors if len(i)]
    members = client.gather([client.submit(_gather_members, [(f, i)], pure=False)
                             for f, i, _ in parts])
    return [(m, r) for m, (_, _, r) in zip(members, parts, strict=True)]


def _worker_slots(nthreads: dict[str, int]) -> list:
    return [w for w, n in sorted(nthreads.items()) for _ in range(n)] or [None]


def _slot(slots: list, j: int) -> list | None:
    w = slots[j % len(slots)]
    return None if w is None else [w]


def _front_objectives(client: Any, survivors: list) -> tuple[np.ndarray, np.ndarray]:
    objs = client.gather([client.submit(_objectives, f, i, pure=False)
                          for f, i, _ in survivors])
    order = np.argsort(np.concatenate([r for _, _, r in survivors]))
    return (np.concatenate([o[0] for o in objs])[order],
            np.concatenate([o[1] for o in objs])[order])


def _front_labels(client: Any, survivors: list, problem: Problem) -> da.Array | np.ndarray:
    # rows in rank (= cost) order, built lazily from the batches that hold them (at once,
    # in memory, when the tasks ran in this process)
    parts, order = [], []
    if isinstance(client, InProcessClient):
        for fut, idx, ranks in survivors:
            parts.append(fut.result().take(idx).labels)
            order.append(ranks)
        return np.concatenate(parts)[np.argsort(np.concatenate(order))]
    for fut, idx, ranks in survivors:
        if len(idx) == 0:
            continue
        lab = client.submit(_labels_of, fut, idx, pure=False)
        parts.append(da.from_delayed(dask.delayed(lab), (len(idx), problem.n_samples),
                                     dtype=problem.label_dtype))
        order.append(ranks)
    stacked = da.concatenate(parts, axis=0)
    return stacked[np.argsort(np.concatenate(order))]


def _checkpoint(client: Any, run: Any, survivors: list, t: int, done: bool,
                history: list[dict[str, Any]]) -> None:
    # workers write their own arrays into a fresh group; the client switches the pointer
    # in the attributes afterwards, so a crash mid-write leaves the last checkpoint intact
    name = f"checkpoint_{t}"
    # batch j of the checkpoint is the j-th batch that has members: _resume reads b0, b1, ...
    # for the entries of ``ranks`` (numbering every batch, empty ones too, left gaps that a
    # resume could not read)
    kept = [(f, i, r) for f, i, r in survivors if len(i)]
    writes = [client.submit(_write_members, [(f, i)], str(run.path), f"{name}/b{j}",
                            pure=False)
              for j, (f, i, _) in enumerate(kept)]
    client.gather(writes)
    ranks = [r.tolist() for _, _, r in kept]
    run.commit_checkpoint(name, iteration=t, ranks=ranks, done=done, history=history)


def _resume(run: Run, client: Any) -> tuple[int, list | None, list[dict[str, Any]]]:
    ckpt = run.checkpoint
    if not ckpt:
        logger.info("no checkpoint in %s yet: starting from the beginning", run.path)
        return 0, None, []
    survivors = []
    for j, ranks in enumerate(ckpt["ranks"]):
        fut = client.submit(_read_members, str(run.path), f"{ckpt['group']}/b{j}", pure=False)
        survivors.append((fut, np.arange(len(ranks)), np.asarray(ranks, dtype=np.int64)))
    logger.info("resuming %s from iteration %d", run.path, ckpt["iteration"])
    past = [h for h in ckpt.get("history", []) if h["iteration"] <= ckpt["iteration"]]
    return int(ckpt["iteration"]), survivors, past
