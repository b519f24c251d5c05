"""``FairClusteringEnsemble``: the FCE consensus as a scikit-learn style estimator."""

from __future__ import annotations

import logging
import os
import warnings
from collections.abc import Callable, Sequence
from functools import partial
from numbers import Real
from typing import Any

import dask
import dask.array as da
import numpy as np
from sklearn.base import BaseEstimator, ClusterMixin
from sklearn.exceptions import ConvergenceWarning

from .._blocks import align_rows, block_size
from .._groups import check_group_size_params, check_sensitive, group_column
from .._random import as_seed_sequence, child_rng
from .._validation import as_array, check_int, check_known_chunks, check_n_clusters, is_dask
from ..runtime.clients import worker_memory_limits
from ..runtime.iterative import IterativeRun, check_resume
from ..store import Run
from .checkpoint import load_state, save_state
from .consensus import (
    ALIGNMENTS,
    ConsensusState,
    auto_fairness,
    init_state,
    paper_state,
    rows_of,
    run_consensus,
)

__all__ = ["FairClusteringEnsemble", "check_base_labels", "hold_base_labels",
           "select_n_clusters"]

#: Starts of the consensus: "matched" (daskfair's) and "paper" (the FCE paper's).
INITS = ("matched", "paper")

logger = logging.getLogger(__name__)


def check_base_labels(base_labels: Any) -> tuple[Any, np.ndarray]:
    """Validate base labelings; return them as an (n, m) int32 array and every c_i.

    Accepts an (n, m) array (numpy, pandas or dask; columns = labelings) or a sequence of
    1-D labelings of equal length. Labels must be integers >= 0; c_i = max label + 1 (an
    unused label is an empty cluster).

    Only checks: a dask input is read once for the checks and comes back as a lazy int32
    array in its own blocks (each later use reads the source again).
    :func:`hold_base_labels` checks and keeps the labels for the passes of a fit.
    """
    base = _label_matrix(base_labels)
    checks = _label_checks(base)
    if is_dask(base):
        checks = _block_extremes(*dask.compute(*checks))
    return base.astype(np.int32), _label_counts(base, checks)


def hold_base_labels(base_labels: Any, n_clusters: int | None = None
                     ) -> tuple[Any, np.ndarray]:
    """:func:`check_base_labels`, and a dask input set up for the passes of a fit.

    A dask input is read once: the checks and the int32 copy (in the input's row blocks when
    they are of a reasonable size, see :func:`_row_chunks`) come from the same read, and
    the copy is kept in the cluster's memory (persisted) when it takes at most a quarter of
    it — every later pass of a fit reads that copy, not the source. Larger inputs stay lazy
    (each pass reads the source). ``n_clusters`` (the consensus's c, when known) widens the
    rows that the size of the blocks is set for (:func:`_row_chunks`).
    """
    base = _label_matrix(base_labels)
    if not is_dask(base):
        return check_base_labels(base)
    # a block holds m labels and, in the sweep, c HR values per row
    size = block_size(max(base.shape[1], n_clusters or 1), max_rows=MAX_BLOCK_ROWS)
    base = align_rows(base, rows=_row_chunks(base.chunks[0], size))[0]
    checks = _label_checks(base)
    held = base.astype(np.int32)
    if _fits_in_memory(held.nbytes):
        held, *checks = dask.persist(held, *checks)  # one read for both
    sizes = _label_counts(base, _block_extremes(*dask.compute(*checks)))
    return held, sizes


def _label_matrix(base_labels: Any) -> Any:
    # the labelings as one (n, m) array of numbers, its shape and type checked
    if isinstance(base_labels, Sequence) and not isinstance(base_labels, str):
        cols = [as_array(b, "base_labels") for b in base_labels]
        lengths = {c.shape[0] for c in cols}
        if len(lengths) > 1:
            raise ValueError(
                f"base labelings have different lengths {sorted(lengths)}; every labeling "
                "must label the same rows in the same order."
            )
        base_labels = (da.stack if any(is_dask(c) for c in cols) else np.column_stack)(cols)
    base = as_array(base_labels, "base_labels")
    if base.ndim != 2:
        raise ValueError(
            f"base_labels must be 2-D (n_samples, n_labelings), got shape {base.shape}."
        )
    if is_dask(base):
        check_known_chunks(base, "base_labels")
    if base.shape[0] == 0 or base.shape[1] == 0:
        raise ValueError(f"base_labels is empty (shape {base.shape}).")
    if base.dtype.kind not in "iuf":
        raise TypeError(f"base_labels must be integers, got dtype {base.dtype}.")
    return base


def _label_checks(base: Any) -> list[Any]:
    """Every column's smallest and largest label (for a dask input: one task per block,
    (1, 2, m) each), then for floats whether all are finite and whole; lazy for dask."""
    if is_dask(base):
        checks = [base.map_blocks(_column_range, new_axis=1, dtype=base.dtype,
                                  chunks=((1,) * base.numblocks[0], (2,), base.chunks[1]))]
        if base.dtype.kind == "f":
            checks += [da.isfinite(base).all(), (base % 1 == 0).all()]
        return checks
    checks = [base.min(axis=0), base.max(axis=0)]
    if base.dtype.kind == "f":
        checks += [np.isfinite(base).all(), (base % 1 == 0).all()]
    return checks


def _block_extremes(ranges: np.ndarray, *rest: Any) -> list[Any]:
    # the computed checks of a dask input, with the blocks' extremes reduced to the columns'
    return [ranges[:, 0].min(axis=0), ranges[:, 1].max(axis=0), *rest]


def _label_counts(base: Any, checks: list[Any]) -> np.ndarray:
    """c_i of every labeling, from the computed checks; raises on labels that are not
    cluster indices."""
    if base.dtype.kind == "f":
        if not checks[2]:
            raise ValueError("base_labels contains NaN or inf; every row needs a cluster in "
                             "every labeling: drop or relabel those rows.")
        if not checks[3]:
            raise ValueError("base_labels must be integer cluster indices, got fractions.")
    lo, hi = (np.asarray(v) for v in checks[:2])
    if (lo < 0).any():
        bad = int(np.flatnonzero(lo < 0)[0])
        raise ValueError(
            f"base_labels column {bad} has negative labels (min {int(lo[bad])}); labels must "
            "be cluster indices 0, 1, 2, ..."
        )
    if (hi >= base.shape[0]).any():
        bad = int(np.flatnonzero(hi >= base.shape[0])[0])
        raise ValueError(
            f"base_labels column {bad} has the label {int(hi[bad])}, larger than the number of "
            f"rows ({base.shape[0]}): it cannot be a cluster index. Re-encode each labeling "
            "as 0, 1, 2, ... (numpy.unique(labels, return_inverse=True)).")
    # labels < n_samples < 2³¹ (an int32 row count) fit in int32
    return hi.astype(np.int64) + 1


def _column_range(block: np.ndarray) -> np.ndarray:
    # (1, 2, m): the block's smallest and largest value in every column (an empty block: the
    # extremes of its type, which any other block's values replace)
    if len(block) == 0:
        info = (np.iinfo if block.dtype.kind in "iu" else np.finfo)(block.dtype)
        return np.array([[info.max] * block.shape[1], [info.min] * block.shape[1]],
                        dtype=block.dtype)[None]
    return np.stack([block.min(axis=0), block.max(axis=0)])[None]


#: Most rows in a row block of the consensus, where the input's own blocks are not kept
#: (blocks of 2¹⁸ rows: ~40 tasks per pass at 10⁷ rows instead of the ~150 of daskfair's
#: general 2¹⁶-row cap; each task's HR rows stay near 64 MB). The results do not depend on it.
MAX_BLOCK_ROWS = 2**18


def _row_chunks(chunks: tuple[int, ...], size: int) -> tuple[int, ...]:
    """Row blocks of the consensus: the input's own when each holds between a quarter and
    four times ``size`` rows (the last may be shorter), else blocks of ``size`` rows. The
    consensus's results do not depend on them (its sums are of integer tables), so an input
    in reasonable blocks is not copied into new ones."""
    n = sum(chunks)
    if all(c <= 4 * size for c in chunks) and all(c >= size / 4 for c in chunks[:-1]):
        return chunks
    return (size,) * (n // size) + ((n % size,) if n % size else ()) or (0,)


def _fits_in_memory(nbytes: int) -> bool:
    """Whether ``nbytes`` take at most a quarter of the running cluster's memory (or of this
    machine's available memory without one)."""
    import distributed

    try:
        total = sum(worker_memory_limits(distributed.get_client()))
    except ValueError:  # no client
        total = 0
    if total <= 0:
        import psutil

        total = psutil.virtual_memory().available
    return nbytes <= total / 4


def select_n_clusters(
    base_labels: Any,
    candidates: Sequence[int],
    *,
    sample_size: int = 3000,
    random_state: Any = None,
) -> tuple[int, dict[int, float]]:
    """Choose c by the silhouette of the concatenated base indicator matrices (the FCE paper).

    The rows of [Y(1), …, Y(m)] (one-hot, n × Σ c_i) are clustered by k-means for every
    candidate c and the silhouette of each result is computed (on a seeded subsample of at
    most ``sample_size`` rows); the c with the largest silhouette wins.

    Parameters
    ----------
    base_labels : array-like or dask array of shape (n_samples, n_labelings)
        The base clusterings.
    candidates : sequence of int
        The values of c to try.
    sample_size : int
        Rows the silhouette is computed on, at most.
    random_state : int, RandomState, Generator, SeedSequence or None
        Seeds the k-means fits and the subsample.

    Returns
    -------
    best : int
    scores : dict
        Silhouette per candidate.
    """
    base, sizes = hold_base_labels(base_labels)
    return _select_n_clusters(base, sizes, candidates, sample_size, random_state)


def _select_n_clusters(
    base: Any, sizes: np.ndarray, candidates: Sequence[int], sample_size: int,
    random_state: Any,
) -> tuple[int, dict[int, float]]:
    # select_n_clusters on labels that hold_base_labels has already validated
    from sklearn.cluster import KMeans
    from sklearn.metrics import silhouette_score

    n = base.shape[0]
    rng = child_rng(as_seed_sequence(random_state), 0)
    idx = np.sort(rng.choice(n, size=min(n, sample_size), replace=False))
    sample = base[idx]
    sample = np.asarray(sample.compute() if is_dask(sample) else sample)
    offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    onehot = np.zeros((len(sample), int(sizes.sum())))
    onehot[np.arange(len(sample))[:, None], offsets + sample] = 1.0
    scores = {}
    for c in candidates:
        if not 2 <= c < len(sample):
            raise ValueError(f"candidate c={c} must lie in [2, {len(sample) - 1}].")
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


def _seed_json(random_state: Any) -> Any:
    # a stored run records the seed it can be reproduced from; a Generator or SeedSequence
    # object is recorded by its entropy when it has one
    if random_state is None or isinstance(random_state, int | np.integer):
        return random_state
    entropy = getattr(random_state, "entropy", None)
    return {"entropy": str(entropy)} if entropy is not None else repr(random_state)


class FairClusteringEnsemble(ClusterMixin, BaseEstimator):
    """Fair clustering ensemble with equal cluster capacity (FCE; Zhou et al., TPAMI 2025).

    Finds a consensus of m base clusterings that is fair towards the protected groups and has
    clusters of equal capacity, by minimising (the paper's eq. 10)::

        Σ αᵢ² ‖H − Y(i)R(i)‖² + λ1 ‖Y − HR‖² + λ1 λ2 ‖GᵀY‖²

    over H (HᵀH = I), the rotations R(i) (c_i × c) and R, the one-hot labels Y and the weights
    α on the simplex, by alternating block updates (each exact, except R(i) when c_i > c: a
    majorisation–minimisation from the previous R(i); the objective never increases). It
    needs only the labelings, never the features. The c × c statistics of every iteration
    come from integer tables (the base clusterings' co-association, counted once, and the
    consensus's contingency tables, updated by the sweep), so an iteration is one pass over
    the label matrix — the exact sequential label sweep; no n × n matrix is formed. Every
    sum is exact or of integers, so the result is the same, bit for bit, for any row blocks.
    Dask inputs: the base labels are read once (checks and an int32 copy held in the
    cluster's memory when it takes at most a quarter of it) and ``sensitive_features`` twice
    (its groups, the held codes); nothing is read from them per iteration. Too large to
    hold: the set-up reads the base labels three times (checks, the starting column, the
    tables; four with ``init="paper"``) and each iteration once, the groups once per
    iteration.

    Parameters
    ----------
    n_clusters : int or "auto", default="auto"
        c. ``"auto"`` chooses it from ``range(2, 2·max c_i + 1)`` by
        :func:`select_n_clusters` (the silhouette of the base indicator matrices).
    fairness_weight : float or "auto", default="auto"
        The paper's λ2: the weight on ‖GᵀY‖² is ``consensus_weight * fairness_weight``.
        Note: the authors' code multiplies ‖GᵀY‖² by its λ2 alone — a factor λ1 apart — so
        their λ2 equals ``consensus_weight * fairness_weight`` here. The useful value shrinks
        like n^{-3/2}; ``"auto"`` uses :func:`~daskfair.ensemble.consensus.auto_fairness`, a
        size-free choice. ``0`` is the paper's FCE-f ablation (no fairness term).
    consensus_weight : float, default=0.001
        λ1, the weight of the consensus term.
    max_iter : int
        Maximum number of iterations.
    tol : float
        Stop when the relative change of the objective is below ``tol``.
    alignment : {"rotation", "hungarian"}
        R(i) and R as orthogonal matrices (FCE) or as permutations found by the Hungarian
        method (the paper's FCE-a ablation).
    init : {"matched", "paper"}
        "matched" (default; a deviation from the paper, docs/design.md#fce-alternating-updates): Y starts as one base
        clustering (chosen by ``random_state``), every R(i) is its Hungarian matching to it,
        R = I and α = 1/m. "paper": the paper's start, R = R(i) = I, α = 1/m and H from Σ Y(i)
        (:func:`~daskfair.ensemble.consensus.paper_state`). With R(i) = I the base
        clusterings' arbitrary label orders are summed unaligned, which the matching avoids;
        the two starts on the paper's six pools: docs/findings.md F3.3.
    random_state : int, SeedSequence or None
        Chooses the starting base clustering among those with c clusters for
        ``init="matched"`` (and seeds the silhouette search).
    min_group_size : int, default=1
        The fewest rows a protected group (one value, or one combination of values for
        several sensitive columns) may have; 1 accepts every group. For dask input a value
        above 1 costs one small reduction that reads ``sensitive_features`` only.
    small_groups : {"raise", "merge"}, default="raise"
        Groups below ``min_group_size``: "raise" a ``ValueError`` naming them, or "merge"
        them into one group "other" (named in a ``UserWarning``; every group name becomes
        a string), as in :class:`~daskfair.FairKernelRegressor`.

    Attributes
    ----------
    labels_ : ndarray or dask array of shape (n_samples,)
        Consensus clusters (dask when the input was dask).
    weights_ : ndarray of shape (n_labelings,)
        α.
    objective_ : ndarray, one value per iteration (``n_iter_`` of them)
        The objective after every iteration (non-increasing).
    n_iter_ : int
    converged_ : bool
    fairness_weight_ : float
        The λ2 used (``fairness_weight``, or its value for ``"auto"``).
    n_clusters_ : int
    rotations_ : list of ndarray
        R(i), each of shape (c_i, c).
    rotation_ : ndarray of shape (c, c)
        R.
    group_counts_ : ndarray of shape (n_groups, c)
        GᵀY of the consensus.
    groups_ : ndarray
        The protected groups (several sensitive columns: fairlearn's combined names, e.g.
        ``"black,F"``).
    merged_groups_ : dict of str to int
        The groups merged into "other" and their rows (empty when none were).
    """

    def __init__(
        self,
        n_clusters: int | str = "auto",
        *,
        fairness_weight: float | str = "auto",
        consensus_weight: float = 0.001,
        max_iter: int = 50,
        tol: float = 1e-4,
        alignment: str = "rotation",
        init: str = "matched",
        random_state: Any = None,
        min_group_size: int = 1,
        small_groups: str = "raise",
    ) -> None:
        self.n_clusters = n_clusters
        self.fairness_weight = fairness_weight
        self.consensus_weight = consensus_weight
        self.max_iter = max_iter
        self.tol = tol
        self.alignment = alignment
        self.init = init
        self.random_state = random_state
        self.min_group_size = min_group_size
        self.small_groups = small_groups

    def _resolved_params(self) -> dict[str, Any]:
        """The parameters, checked."""
        params = self.get_params()
        if isinstance(self.n_clusters, str) and self.n_clusters != "auto":
            raise ValueError(
                f"n_clusters must be an integer or 'auto', got {self.n_clusters!r}.")
        if self.alignment not in ALIGNMENTS:
            raise ValueError(f"alignment must be one of {ALIGNMENTS}, got {self.alignment!r}.")
        if self.init not in INITS:
            raise ValueError(f"init must be one of {INITS}, got {self.init!r}.")
        weight = params["fairness_weight"]
        if not (weight == "auto" or (isinstance(weight, Real) and weight >= 0)):
            raise ValueError(
                f"fairness_weight must be 'auto' or a number >= 0, got {weight!r}.")
        if params["consensus_weight"] <= 0:
            raise ValueError(
                f"consensus_weight must be > 0, got {params['consensus_weight']}.")
        if self.max_iter < 1:
            raise ValueError(f"max_iter must be >= 1, got {self.max_iter}.")
        check_group_size_params(self.min_group_size, self.small_groups)
        return params

    def _prepare(
        self, base_labels: Any, sensitive_features: Any, params: dict[str, Any]
    ) -> tuple[Any, Any, np.ndarray, int, float]:
        auto_c = params["n_clusters"] == "auto"
        base, sizes = hold_base_labels(base_labels, None if auto_c else params["n_clusters"])
        n = base.shape[0]
        s, self.merged_groups_ = group_column(sensitive_features, n, self.min_group_size,
                                              self.small_groups)
        groups, self.groups_ = check_sensitive(s, n)
        if is_dask(groups):
            # the group codes, read once more and kept like the base labels (int32, in
            # the base labels' row blocks) when they fit
            groups = align_rows(groups, rows=rows_of(base))[0].astype(np.int32)
            if _fits_in_memory(groups.nbytes):
                groups = groups.persist()
        if auto_c:
            # candidates 2 .. 2 max c_i, capped below the rows of the silhouette sample
            top = min(2 * int(sizes.max()), min(n, 3000) - 1)
            if top < 2:
                raise ValueError(
                    "n_clusters='auto' chooses c by the silhouette of the base labelings, "
                    "which needs labelings with 2 or more clusters and 3 or more rows (max "
                    f"c_i = {int(sizes.max())}, {n} rows): give n_clusters.")
            c, _ = _select_n_clusters(base, sizes, range(2, top + 1), 3000,
                                      self.random_state)
        else:
            c = check_n_clusters(params["n_clusters"], n)
        T = len(self.groups_)
        weight = params["fairness_weight"]
        lambda2 = auto_fairness(n, c, T) if weight == "auto" else float(weight)
        return base, groups, sizes, c, lambda2

    def _initial_state(self, base: Any, groups: Any, sizes: np.ndarray, c: int) -> ConsensusState:
        """The paper's start (``init="paper"``), or a base clustering with c clusters (chosen
        by ``random_state``).

        When no base clustering has c clusters, the one with the closest number is folded
        onto c labels (label mod c) to start from.
        """
        if self.init == "paper":
            return paper_state(base, groups, c, sizes, len(self.groups_))
        exact = np.flatnonzero(sizes == c)
        if exact.size:
            rng = child_rng(as_seed_sequence(self.random_state), 1)
            ref = base[:, int(rng.choice(exact))]
        else:
            ref = base[:, int(np.argmin(np.abs(sizes - c)))] % c
        if is_dask(ref):
            # one read of the base labels for the starting column, kept: every later use
            # (the start's statistics, the group counts, the first iteration) reads it from
            # memory instead of the whole base matrix again
            ref = ref.persist()
        return init_state(base, groups, ref, c, sizes, len(self.groups_))

    def fit(
        self,
        base_labels: Any,
        y: None = None,
        *,
        sensitive_features: Any,
        store: str | os.PathLike[str] | Run | None = None,
        resume: bool = False,
        checkpoint_every: int = 1,
        callback: Callable[[ConsensusState], None] | None = None,
    ) -> FairClusteringEnsemble:
        """Find the fair consensus of ``base_labels`` (n_samples, n_labelings).

        Parameters
        ----------
        base_labels : array-like or dask array of shape (n_samples, n_labelings)
            numpy, pandas and dask inputs are accepted; with dask the labels stay
            distributed and ``labels_`` is a dask array.
        y : None
            Ignored (present for the scikit-learn API).
        sensitive_features : array-like of shape (n_samples,) or (n_samples, c)
            Protected group of every row; several columns make one group of every
            combination of their values (named as fairlearn does, e.g. ``"black,F"``).
        store : path-like or Run, optional
            zarr run that receives a checkpoint every ``checkpoint_every`` iterations and the
            final labels. A path is created (kind "fce") and marked complete at the end; an
            open :class:`~daskfair.store.Run` is left for its owner to complete.
        resume : bool
            Continue from the store's last checkpoint; the result equals an uninterrupted
            fit with the same parameters and data.
        checkpoint_every : int, default=1
            Iterations between checkpoints.
        callback : callable, optional
            ``callback(state)`` after every iteration (progress).

        Returns
        -------
        self : FairClusteringEnsemble
            The fitted estimator.

        Examples
        --------
        >>> from sklearn.cluster import KMeans
        >>> import numpy as np
        >>> from daskfair import FairClusteringEnsemble, make_fair_blobs
        >>> X, s, _ = (np.asarray(a) for a in make_fair_blobs(600, n_clusters=3, random_state=0))
        >>> base = np.column_stack([KMeans(3, n_init=1, random_state=i).fit_predict(X)
        ...                         for i in range(5)])
        >>> fce = FairClusteringEnsemble(3, random_state=0).fit(base, sensitive_features=s)
        >>> fce.labels_.shape
        (600,)
        """
        check_resume(store, resume, "fit")
        params = self._resolved_params()
        check_int(checkpoint_every, "checkpoint_every")
        base, groups, sizes, c, lambda2 = self._prepare(base_labels, sensitive_features,
                                                        params)
        stored = None if store is None or isinstance(store, Run) else self._stored_params(
            params, base.shape, c, lambda2)
        with IterativeRun.open(store, resume=resume, kind="fce", params=stored,
                               checkpoint_every=checkpoint_every) as job:

            def after_iteration(s: ConsensusState) -> None:
                job.save(s.n_iter, 1, False, checkpoint=partial(save_state, state=s))
                if callback is not None:
                    callback(s)

            state = load_state(job.run, base) if job.run is not None and resume else None
            if state is None:
                state = self._initial_state(base, groups, sizes, c)
            state, converged = run_consensus(
                base, groups, state, lambda1=params["consensus_weight"], lambda2=lambda2,
                alignment=self.alignment, max_iter=self.max_iter, tol=self.tol,
                callback=after_iteration,
            )
            self._store(state, converged, c, lambda2)
            if job.run is not None:
                job.run.write_array("labels", state.labels)
                job.run.write_array("weights", state.alpha)
            job.finish(objective=state.objective, n_iter=state.n_iter, converged=converged,
                       fairness_weight_used=lambda2)
        return self

    def _stored_params(self, params: dict[str, Any], shape: tuple[int, int], c: int,
                       lambda2: float) -> dict[str, Any]:
        """The parameters a store records and ``resume`` compares."""
        return {"alignment": self.alignment, "fairness_weight": params["fairness_weight"],
                "init": self.init, "consensus_weight": params["consensus_weight"],
                "max_iter": self.max_iter, "n_clusters": params["n_clusters"],
                "random_state": _seed_json(self.random_state), "tol": self.tol,
                "min_group_size": int(self.min_group_size), "small_groups": self.small_groups,
                "n_samples": shape[0], "n_labelings": shape[1], "n_clusters_used": c,
                "fairness_weight_used": lambda2}

    def _store(self, state: ConsensusState, converged: bool, c: int, lambda2: float) -> None:
        self.labels_ = state.labels
        self.weights_ = state.alpha
        self.objective_ = np.asarray(state.objective)
        self.n_iter_ = state.n_iter
        self.converged_ = converged
        self.fairness_weight_ = lambda2
        self.n_clusters_ = c
        sizes = np.diff(np.append(state.offsets, len(state.R_all)))
        self.rotations_ = [state.R_all[o:o + s] for o, s in zip(state.offsets, sizes,
                                                                 strict=True)]
        self.rotation_ = state.R
        self.group_counts_ = state.counts

    def fit_predict(self, base_labels: Any, y: None = None, *,
                    sensitive_features: Any) -> Any:
        """Fit and return ``labels_``.

        Parameters
        ----------
        base_labels : array-like or dask array of shape (n_samples, n_labelings)
            The base clusterings, one per column.
        y : None
            Ignored (present for the scikit-learn API).
        sensitive_features : array-like of shape (n_samples,) or (n_samples, c)
            Group of every row (several columns: every combination of their values).

        Returns
        -------
        ndarray or dask array of shape (n_samples,)
            The consensus cluster of every row.
        """
        return self.fit(base_labels, sensitive_features=sensitive_features).labels_
