"""The SAfairKM Pareto front, the paper's Algorithm 3 (docs/design.md#safairkm-pareto-front)."""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from functools import partial
from typing import TYPE_CHECKING, Any

import dask
import dask.array as da
import numpy as np

from .._params import Flag, Integer, Named, Nothing, Options, Real, Spec, checked, is_sequence
from .._random import as_seed_sequence
from .._validation import check_array
from ..runtime.clients import task_client
from ..runtime.inprocess import InProcessClient
from ..runtime.iterative import IterativeRun, Recoveries, check_resume, crossed
from ..runtime.recovery import LOST_WORK
from ._block_functions import select_nondominated
from .estimator import SAFairKMeans
from .pareto import DOMINANCE, ParetoFront
from .problem import Members, Problem, check_fits_workers, make_problem, start_members
from .tasks import expand_task, gather_members, labels_of, objectives, read_members, write_members

if TYPE_CHECKING:
    from ..store import Run

__all__ = ["DEFAULT_PAIRS", "MIN_MOVES", "FrontParams", "check_moves", "pareto_front"]

logger = logging.getLogger(__name__)

#: (n_a, n_b) pairs per iteration: the authors' code's (docs/design.md#safairkm-pareto-front).
DEFAULT_PAIRS = ((25, 0), (20, 4), (15, 3), (5, 2))


def _pairs(update_pairs: Any) -> bool:
    """Whether ``update_pairs`` is a non-empty list of pairs of integers >= 0, not both 0."""
    try:
        arr = np.asarray(update_pairs)
    except (TypeError, ValueError):
        return False
    return bool(arr.ndim == 2 and arr.shape[1] == 2 and arr.shape[0] > 0
                and arr.dtype.kind in "iu" and (arr >= 0).all()
                and all(a + b > 0 for a, b in arr.tolist()))  # Python's ints: no overflow


#: Moves a member's child may log in one iteration, beyond one per row (docs/design.md
#: #parameters): a child's log of moves is never much longer than a label vector.
MIN_MOVES = 1000


def check_moves(update_pairs: Sequence[tuple[int, int]], q: int, n_samples: int) -> None:
    """ValueError unless q · (n_a + 2 n_b) of every pair is at most max(n_samples,
    :data:`MIN_MOVES`): the room the kernels allocate for the moves of an iteration."""
    most = q * max(a + 2 * b for a, b in update_pairs)
    limit = max(n_samples, MIN_MOVES)
    if most > limit:
        raise ValueError(
            f"q and update_pairs ask for {most:,} moves per member and iteration (q * (n_a + "
            f"2 n_b)); with {n_samples:,} rows at most {limit:,} are allowed (each iteration's "
            "moves are logged, and a log longer than a label vector repeats rows): lower q "
            "or the pairs.")


#: The front's parameters, with Algorithm 2's it shares with SAFairKMeans.
FRONT: dict[str, list[Spec]] = {
    **{k: SAFairKMeans._parameter_constraints[k] for k in (
        "n_clusters", "max_iter", "target", "max_swap_candidates", "random_state",
        "min_group_size", "small_groups")},
    "update_pairs": [Named("a non-empty list of (n_kmeans_updates, n_swap_updates) pairs of "
                           "integers >= 0, not both 0", _pairs, is_sequence)],
    "n_init": [Integer(1)], "budget": [Integer(1)], "q": [Integer(1)],
    "dominance": [Options(DOMINANCE)], "sync_every": [Integer(1)],
    "n_batches": [Nothing, Integer(1)], "checkpoint_every": [Integer(1)], "resume": [Flag],
    "time_limit": [Nothing, Real(0, low_open=True)],
    "callback": [Nothing, Named("a callable", callable)]}


@dataclass(frozen=True)
class FrontParams:
    """The checked parameters of a SAfairKM front (:func:`pareto_front` documents them)."""

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
    min_group_size: int
    small_groups: str

    def stored(self, seed: np.random.SeedSequence, problem: Problem) -> dict[str, Any]:
        """The parameters a store records and ``resume`` compares."""
        return {**asdict(self), "update_pairs": [list(p) for p in self.update_pairs],
                "seed_entropy": str(seed.entropy), "seed_spawn_key": list(seed.spawn_key),
                "n_samples": problem.n_samples, "n_groups": problem.n_groups}


@checked(**FRONT)
def pareto_front(X: Any, *, sensitive_features: Any, n_clusters: int = 8,
                 update_pairs: Sequence[tuple[int, int]] = DEFAULT_PAIRS, n_init: int = 30,
                 max_iter: int = 500, budget: int = 1500, q: int = 1, target: str = "local",
                 max_swap_candidates: int = 32, dominance: str = "weak", sync_every: int = 1,
                 n_batches: int | None = None, random_state: Any = None,
                 min_group_size: int = 1, small_groups: str = "raise",
                 store: str | Run | None = None, checkpoint_every: int = 50,
                 resume: bool = False, time_limit: float | None = None, client: Any = None,
                 callback: Callable[[int, np.ndarray, np.ndarray], None] | None = None,
                 ) -> ParetoFront:
    """Cost/balance Pareto front of fair k-means by SAfairKM (the paper's Algorithm 3).

    Parameters
    ----------
    X : array-like or dask array of shape (n_samples, n_features)
        Gathered into memory once (one pass over dask input) and scattered to every worker.
    sensitive_features : array-like of shape (n_samples,) or (n_samples, n_columns)
        Group of every row (at least two groups).
    n_clusters, target, max_swap_candidates : as in :class:`SAFairKMeans`.
    random_state, min_group_size, small_groups : as in :class:`SAFairKMeans`.
    update_pairs : sequence of (int, int), default=DEFAULT_PAIRS
        The pairs (n_a, n_b) of Algorithm 2 applied to every member in every iteration.
    n_init : int, default=30
        Starting label vectors: the first half random, the second half k-means++.
    max_iter : int, default=500
        Iterations of Algorithm 3 (fewer when ``budget`` or ``time_limit`` stops the run).
    budget : int, default=1500
        Stop once the front holds this many points.
    q : int, default=1
        Iterations of Algorithm 2 per member, pair and iteration (the paper: 1).
    dominance : {"weak", "strict"}, default="weak"
        The filter after every iteration, as in :func:`nondominated`.
    sync_every : int, default=1
        Iterations per round trip; 1 is Algorithm 3 exactly, s > 1 gives another front.
    n_batches : int, default=None
        Batches of the list (None: the cluster's threads); no effect when ``sync_every=1``.
    store : str or Run, default=None
        zarr path of the run (checkpoints, the front), or an open Run its owner completes.
    checkpoint_every : int, default=50
        Iterations between checkpoints (without a store: between copies on the client).
    resume : bool, default=False
        Continue the run at ``store`` from its last checkpoint, to the same front.
    time_limit : float, default=None
        Stop after the iteration during which this many seconds have passed.
    client : distributed.Client, default=None
        None: the running client, else this process's threads.
    callback : callable, default=None
        ``callback(iteration, cost, balance)`` after every round trip.

    Returns
    -------
    ParetoFront
        Its ``params`` are the stored parameters.

    Raises
    ------
    ValueError
        On bad parameters or data, a refused ``resume``, or rows over half a worker's memory.

    Examples
    --------
    >>> from daskfair import make_fair_blobs, pareto_front
    >>> X, s, _ = make_fair_blobs(500, n_clusters=3, random_state=0)
    >>> front = pareto_front(X, sensitive_features=s, n_clusters=3, n_init=6, max_iter=20,
    ...                      random_state=0)
    >>> bool(front.hypervolume((1.05 * front.cost.max(), 0.0)) > 0)
    True
    """
    params = FrontParams(
        int(n_clusters), tuple((int(a), int(b)) for a, b in np.asarray(update_pairs)),
        int(n_init), int(max_iter), int(budget), int(q), target, int(max_swap_candidates),
        dominance, int(sync_every), int(min_group_size), small_groups)
    check_resume(store, resume)
    seed = as_seed_sequence(random_state)
    X = check_array(X, "X", min_samples=2)  # in-memory input: refused before a cluster starts
    check_moves(params.update_pairs, params.q, X.shape[0])
    client = task_client(client)
    check_fits_workers(X, client, "SAfairKM")
    problem = make_problem(X, sensitive_features, n_clusters,
                           min_group_size=params.min_group_size,
                           small_groups=params.small_groups)
    if n_batches is None:
        n_batches = max(1, sum(client.nthreads().values()))
    search = _FrontSearch(client, problem, params, seed, n_batches, callback)
    stored = params.stored(seed, problem)
    with IterativeRun.open(store, resume=resume, kind="safairkm", params=stored,
                           checkpoint_every=checkpoint_every) as job:
        return search.run(job, time_limit, stored)


def _balanced_pieces(
    survivors: list[tuple[Any, np.ndarray, np.ndarray]], n_batches: int
) -> list[list[tuple[Any, np.ndarray, np.ndarray]]]:
    """The survivors in at most ``n_batches`` batches of near-equal size (only excess moves)."""
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


class _FrontSearch:
    """Algorithm 3's list, spread over the cluster in batches, iterated over a run."""

    def __init__(self, client: Any, problem: Problem, params: FrontParams,
                 seed: np.random.SeedSequence, n_batches: int,
                 callback: Callable[[int, np.ndarray, np.ndarray], None] | None) -> None:
        self.client, self.problem, self.params = client, problem, params
        self.seed, self.n_batches, self.callback = seed, n_batches, callback
        self.update_pairs = np.asarray(params.update_pairs, dtype=np.int64)
        self.base_seed = int(seed.generate_state(1, np.uint64)[0])
        self.place()

    def place(self) -> None:
        # batch j on worker j mod W: data locality would pile every batch on one worker
        self.slots = [w for w, n in sorted(self.client.nthreads().items())
                      for _ in range(n)] or [None]
        self.problem_f = self.client.scatter(self.problem, broadcast=True, hash=False)

    def submit(self, j: int, fn: Callable, *args: Any) -> Any:
        w = self.slots[j % len(self.slots)]  # other workers take over when it leaves
        return self.client.submit(fn, *args, pure=False, workers=None if w is None else [w],
                                  allow_other_workers=True)

    def start(self, job: IterativeRun) -> tuple[int, list, list[dict[str, Any]]]:
        """Iteration 0's members, or the store's last checkpoint and the history up to it."""
        if job.run is not None and (job.resume or job.has_checkpoint):
            t_ckpt, members, past = _resume(job.run, self.client, self.problem_f)
            if members is not None:
                return t_ckpt, members, past
        n_init = self.params.n_init
        per = math.ceil(n_init / self.n_batches)
        members = []
        for lo in range(0, n_init, per):
            starts = list(range(lo, min(n_init, lo + per)))
            fut = self.submit(len(members), start_members, self.problem_f, starts, n_init,
                              self.seed)
            members.append((fut, np.arange(len(starts)), np.asarray(starts)))
        return 0, members, []

    def restore(self, job: IterativeRun) -> tuple[int, list]:
        """After a loss: the copy kept on the client, else the checkpoint (or the start)."""
        if job.run is None and job.recovery_point is not None:
            t, copy = job.recovery_point
            futures = self.client.scatter([m for m, _ in copy], hash=False)
            return t, [(f, np.arange(len(m)), r)
                       for f, (m, r) in zip(futures, copy, strict=True)]
        t, survivors, _ = self.start(job)
        return t, survivors

    def run(self, job: IterativeRun, time_limit: float | None,
            stored: dict[str, Any]) -> ParetoFront:
        """Iterate to the end (again after a loss), store the front and finish the run."""
        t, survivors, history = self.start(job)
        # a resumed run's seconds continue from its checkpoint (the time between is not counted)
        start = time.perf_counter() - (history[-1]["seconds"] if history else 0.0)
        recoveries = Recoveries("SAfairKM front")
        while True:
            try:
                t, survivors = self.iterate(job, t, survivors, history, start, time_limit)
                f1, f2, labels, centers = _front(self.client, survivors, self.problem)
                if job.run is not None:
                    job.run.write_array("labels", labels,
                                        chunks=(min(64, len(f1)), self.problem.n_samples))
                break
            except LOST_WORK as exc:
                recoveries.lost(exc, self.client)
                self.place()
                t, survivors = self.restore(job)
                history[:] = [h for h in history if h["iteration"] <= t]
        groups = self.problem.group_values
        front = ParetoFront(f1, f2, history, stored, labels,
                            self.client if isinstance(labels, da.Array) else None,
                            centers=centers, groups=groups)
        if job.run is not None:
            job.run.write_array("cost", f1)
            job.run.write_array("balance", f2)
            job.run.write_array("centers", centers)
            job.run.set_attrs(groups=groups.tolist())
        job.finish(n_points=len(f1), n_iter_done=t, history=history)
        return front

    def iterate(self, job: IterativeRun, t: int, survivors: list,
                history: list[dict[str, Any]], start: float,
                time_limit: float | None) -> tuple[int, list]:
        """Rounds from iteration ``t`` until the run is done; the last iteration and list."""
        p = self.params
        done = t >= p.max_iter or (job.run is not None
                                   and bool((job.run.checkpoint or {}).get("done")))
        while not done:
            step = min(p.sync_every, p.max_iter - t)
            survivors, n_keep = self.round(survivors, t, step)
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

    def round(self, survivors: list, t: int, step: int) -> tuple[list, int]:
        """``step`` iterations of Algorithm 3 in one round trip: the survivors and their count."""
        p, strict = self.params, self.params.dominance == "strict"
        futures = []
        for j, pieces in enumerate(_balanced_pieces(survivors, self.n_batches)):
            futures.append(self.submit(
                j, expand_task, self.problem_f, [(f, i) for f, i, _ in pieces],
                np.concatenate([r for _, _, r in pieces]), self.update_pairs, p.q, t,
                p.target == "global", p.max_swap_candidates, self.base_seed, step, j, strict))
        objs = self.client.gather([self.submit(j, objectives, f)
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
        if self.callback is not None:
            self.callback(t + step, f1[keep], f2[keep])
        return survivors, len(keep)


def _copy_members(client: Any, survivors: list) -> list[tuple[Members, np.ndarray]]:
    # the survivors' members and ranks, gathered to the client
    parts = [(f, i, r) for f, i, r in survivors if len(i)]
    members = client.gather([client.submit(gather_members, [(f, i)], pure=False)
                             for f, i, _ in parts])
    return [(m, r) for m, (_, _, r) in zip(members, parts, strict=True)]


def _front(client: Any, survivors: list, problem: Problem) -> tuple[np.ndarray, ...]:
    # (f1, f2, labels, centers) in rank (= cost) order; the labels lazy unless the tasks ran
    # here, the centers (n_points, K, d) gathered with the objectives
    order = np.argsort(np.concatenate([r for _, _, r in survivors]))
    objs = client.gather([client.submit(objectives, f, i, problem.offset, pure=False)
                          for f, i, _ in survivors])
    f1, f2, centers = (np.concatenate([o[k] for o in objs])[order] for k in (0, 1, 3))
    if isinstance(client, InProcessClient):
        labels = np.concatenate([f.result().take(i).labels for f, i, _ in survivors])[order]
        return f1, f2, labels, centers
    parts = [da.from_delayed(dask.delayed(client.submit(labels_of, f, i, pure=False)),
                             (len(i), problem.n_samples), dtype=problem.label_dtype)
             for f, i, _ in survivors if len(i)]
    return f1, f2, da.concatenate(parts, axis=0)[order], centers


def _checkpoint(client: Any, run: Any, survivors: list, t: int, done: bool,
                history: list[dict[str, Any]]) -> None:
    # workers write a fresh group, then the client switches the pointer: a crash mid-write
    # leaves the last checkpoint intact; groups b0, b1, ... have no gaps (_resume reads them)
    name = f"checkpoint_{t}"
    kept = [(f, i, r) for f, i, r in survivors if len(i)]
    client.gather([client.submit(write_members, [(f, i)], str(run.path), f"{name}/b{j}",
                                 pure=False) for j, (f, i, _) in enumerate(kept)])
    run.commit_checkpoint(name, iteration=t, ranks=[r.tolist() for _, _, r in kept],
                          done=done, history=history)


def _resume(run: Run, client: Any, problem: Any) -> tuple[int, list | None,
                                                          list[dict[str, Any]]]:
    ckpt = run.checkpoint
    if not ckpt:
        logger.info("no checkpoint in %s yet: starting from the beginning", run.path)
        return 0, None, []
    survivors = []
    with run.reading("the checkpoint pointer"):
        for j, ranks in enumerate(ckpt["ranks"]):
            fut = client.submit(read_members, str(run.path), f"{ckpt['group']}/b{j}",
                                problem, len(ranks), pure=False)
            survivors.append((fut, np.arange(len(ranks)), np.asarray(ranks, dtype=np.int64)))
        past = [h for h in ckpt.get("history", []) if h["iteration"] <= ckpt["iteration"]]
    logger.info("resuming %s from iteration %d", run.path, ckpt["iteration"])
    return int(ckpt["iteration"]), survivors, past
