"""``FairClusteringEnsemble``: the FCE consensus as a scikit-learn style estimator."""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from numbers import Integral, Real
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, ClusterMixin

from .._groups import check_group_size_params, check_sensitive, group_column
from .._random import as_seed_sequence, child_rng
from .._validation import check_int, check_n_clusters, is_dask
from ..runtime.iterative import IterativeRun, check_resume
from ..store import Run
from .checkpoint import load_state, save_state
from .consensus import (
    ALIGNMENTS,
    ConsensusState,
    auto_fairness,
    init_state,
    paper_state,
    run_consensus,
)
from .labels import hold_base_labels, hold_groups
from .selection import _auto_n_clusters

__all__ = ["INITS", "FairClusteringEnsemble"]

#: Starts of the consensus: "matched" (daskfair's) and "paper" (the FCE paper's).
INITS = ("matched", "paper")


class FairClusteringEnsemble(ClusterMixin, BaseEstimator):
    """Fair clustering ensemble with equal cluster capacity (FCE; Zhou et al., TPAMI 2025).

    Finds a consensus of m base clusterings that is fair towards the protected groups and has
    clusters of equal capacity. It needs only the labelings, never the features: ``fit``
    takes the base labels as its ``X``.

    Parameters
    ----------
    n_clusters : int or "auto", default="auto"
        c, the consensus's clusters. ``"auto"`` chooses it from ``range(2, 2·max c_i + 1)``
        by :func:`~daskfair.ensemble.select_n_clusters` (the silhouette of the base indicator
        matrices, on at most 3,000 rows).
    fairness_weight : float or "auto", default="auto"
        The paper's λ2, >= 0: the weight on ‖GᵀY‖² is ``consensus_weight * fairness_weight``
        (the authors' code's λ2 is that product). ``"auto"`` uses
        :func:`~daskfair.ensemble.auto_fairness`, a size-free choice; ``0`` is the paper's
        FCE-f ablation (no fairness term).
    consensus_weight : float, default=0.001
        The paper's λ1 > 0, the weight of the consensus term ‖Y − HR‖².
    max_iter : int, default=50
        Most iterations.
    tol : float, default=1e-4
        Stop when the relative change of the objective is at most ``tol`` (>= 0).
    alignment : {"rotation", "hungarian"}, default="rotation"
        R(i) and R as orthogonal matrices (FCE) or as permutations found by the Hungarian
        method (the paper's FCE-a ablation).
    init : {"matched", "paper"}, default="matched"
        "matched" (daskfair's start, docs/design.md#fce-alternating-updates): Y starts as one
        base clustering with c clusters (chosen by ``random_state``; without one, the one
        with the closest number folded onto c labels), every R(i) is its Hungarian matching to
        it, R = I and α = 1/m. "paper": the paper's start, R = R(i) = I, α = 1/m and H from
        Σ Y(i) (:func:`~daskfair.ensemble.consensus.paper_state`).
    random_state : int, RandomState, Generator, SeedSequence or None, default=None
        Chooses the starting base clustering for ``init="matched"`` and seeds the silhouette
        search of ``n_clusters="auto"``.
    min_group_size : int, default=1
        The fewest rows a protected group (one value, or one combination of values for
        several sensitive columns) may have; 1 accepts every group.
    small_groups : {"raise", "merge"}, default="raise"
        Groups below ``min_group_size``: "raise" a ``ValueError`` naming them, or "merge"
        them into one group "other" (named in a ``UserWarning``; every group name becomes
        a string), as in :class:`~daskfair.FairKernelRegressor`.

    Attributes
    ----------
    labels_ : ndarray or dask array of shape (n_samples,)
        Consensus clusters (dask when the input was dask).
    weights_ : ndarray of shape (n_labelings,)
        α, the weights of the base clusterings.
    objective_ : ndarray of shape (n_iter_,)
        The objective after every iteration (non-increasing).
    n_iter_ : int
        Iterations made.
    converged_ : bool
        Whether the last relative change of the objective was at most ``tol``.
    fairness_weight_ : float
        The λ2 used (``fairness_weight``, or its value for ``"auto"``).
    n_clusters_ : int
        The c used (``n_clusters``, or its choice for ``"auto"``).
    rotations_ : list of ndarray
        R(i), each of shape (c_i, c).
    rotation_ : ndarray of shape (c, c)
        R.
    group_counts_ : ndarray of shape (n_groups, c)
        GᵀY of the consensus: the rows of every group in every cluster.
    groups_ : ndarray of shape (n_groups,)
        The protected groups (several sensitive columns: fairlearn's combined names, e.g.
        ``"black,F"``).
    merged_groups_ : dict of str to int
        The groups merged into "other" and their rows (empty when none were).
    n_features_in_ : int
        n_labelings, the base clusterings seen by ``fit`` (its ``X``'s columns).

    See Also
    --------
    daskfair.base_clusterings : The base clusterings, each a task on the cluster.
    daskfair.ensemble.select_n_clusters : The silhouette choice of ``n_clusters="auto"``.
    daskfair.ensemble.auto_fairness : The value of ``fairness_weight="auto"``.

    Notes
    -----
    The consensus minimises the paper's eq. (10)::

        Σ αᵢ² ‖H − Y(i)R(i)‖² + λ1 ‖Y − HR‖² + λ1 λ2 ‖GᵀY‖²

    over H (HᵀH = I), the rotations R(i) (c_i × c) and R, the one-hot labels Y and the
    weights α on the simplex, by alternating block updates that never raise it (each exact,
    except R(i) when c_i > c: a majorisation–minimisation from the previous R(i);
    docs/design.md#fce-alternating-updates).

    Costs: the c × c statistics of an iteration come from integer tables (the base
    clusterings' co-association, counted once, and the consensus's contingency tables,
    updated by the Y-step's exact sequential sweep), so an iteration is one pass over the
    label matrix and no n × n matrix is formed. Every sum is exact or of integers: the result
    is the same, bit for bit, for any row blocks.

    Passes over dask inputs: the base labels are read once (the checks and an int32 copy,
    held in the cluster's memory when it takes at most a quarter of it) and
    ``sensitive_features`` twice (its groups, the held codes; one more small reduction when
    ``min_group_size`` > 1); nothing is read from them per iteration. Too large to hold: the
    set-up reads the base labels three times (checks, the starting column, the tables; four
    with ``init="paper"``) and each iteration once, the groups once per iteration.
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

    def _checked_params(self) -> dict[str, Any]:
        """Every constructor parameter, checked (the one place that checks them)."""
        params = self.get_params()
        c = params["n_clusters"]
        if isinstance(c, str):
            if c != "auto":
                raise ValueError(f"n_clusters must be an integer or 'auto', got {c!r}.")
        elif isinstance(c, bool) or not isinstance(c, Integral):
            raise TypeError(f"n_clusters must be an integer or 'auto', got {c!r}.")
        elif c < 1:
            raise ValueError(f"n_clusters must be >= 1, got {c}.")
        weight = params["fairness_weight"]
        if not ((isinstance(weight, str) and weight == "auto") or (_real(weight) and weight >= 0)):
            raise ValueError(
                f"fairness_weight must be 'auto' or a finite number >= 0, got {weight!r}.")
        weight = params["consensus_weight"]
        if not (_real(weight) and weight > 0):
            raise ValueError(f"consensus_weight must be a finite number > 0, got {weight!r}.")
        params["max_iter"] = check_int(params["max_iter"], "max_iter")
        if not (_real(params["tol"]) and params["tol"] >= 0):
            raise ValueError(f"tol must be a finite number >= 0, got {params['tol']!r}.")
        if params["alignment"] not in ALIGNMENTS:
            raise ValueError(
                f"alignment must be one of {ALIGNMENTS}, got {params['alignment']!r}.")
        if params["init"] not in INITS:
            raise ValueError(f"init must be one of {INITS}, got {params['init']!r}.")
        if not isinstance(params["random_state"], np.random.SeedSequence | np.random.Generator
                          | np.random.RandomState):
            as_seed_sequence(params["random_state"])  # None or an int; a generator not drawn
        params["min_group_size"] = check_group_size_params(params["min_group_size"],
                                                           params["small_groups"])
        return params

    def _prepare(self, base_labels: Any, sensitive_features: Any, params: dict[str, Any]
                 ) -> _Inputs:
        """The checked inputs held for the passes, c and λ2: every check on the data."""
        auto_c = params["n_clusters"] == "auto"
        base, sizes = hold_base_labels(base_labels, None if auto_c else params["n_clusters"])
        n = base.shape[0]
        s, merged = group_column(sensitive_features, n, params["min_group_size"],
                                 params["small_groups"])
        groups, names = check_sensitive(s, n)
        groups = hold_groups(groups, base)
        if auto_c:
            c = _auto_n_clusters(base, sizes, params["random_state"])
        else:
            c = check_n_clusters(params["n_clusters"], n)
        weight = params["fairness_weight"]
        fairness_weight = auto_fairness(n, c, len(names)) if weight == "auto" else float(weight)
        return _Inputs(base, groups, sizes, c, fairness_weight, names, merged)

    def _initial_state(self, inputs: _Inputs, params: dict[str, Any]) -> ConsensusState:
        """The paper's start (``init="paper"``), or a base clustering with c clusters (chosen
        by ``random_state``); without one, the one with the closest number, folded onto c
        labels (label mod c)."""
        base, c, sizes = inputs.base, inputs.n_clusters, inputs.sizes
        n_groups = len(inputs.group_names)
        if params["init"] == "paper":
            return paper_state(base, inputs.groups, c, sizes, n_groups)
        exact = np.flatnonzero(sizes == c)
        if exact.size:
            rng = child_rng(as_seed_sequence(params["random_state"]), 1)
            ref = base[:, int(rng.choice(exact))]
        else:
            ref = base[:, int(np.argmin(np.abs(sizes - c)))] % c
        if is_dask(ref):
            # one read of the base labels for the starting column, kept: every later use
            # reads it from memory instead of the whole base matrix again
            ref = ref.persist()
        return init_state(base, inputs.groups, ref, c, sizes, n_groups)

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
        """Find the fair consensus of ``base_labels``.

        The fitted attributes are set together at the end: a fit that raises leaves the
        estimator as it was (unfitted, or with every attribute of its previous fit).

        Parameters
        ----------
        base_labels : array-like or dask array of shape (n_samples, n_labelings)
            The base clusterings, one per column: integer labels >= 0 (numpy, pandas or
            dask; with dask the labels stay distributed and ``labels_`` is a dask array).
        y : None, default=None
            Not used; present for the scikit-learn API.
        sensitive_features : array-like of shape (n_samples,) or (n_samples, n_sensitive)
            Protected group of every row (numpy, pandas or dask); several columns make one
            group of every combination of their values (named as fairlearn does, e.g.
            ``"black,F"``).
        store : path-like, Run or None, default=None
            zarr run that receives a checkpoint every ``checkpoint_every`` iterations and the
            final labels. A path is created (kind "fce") and marked complete at the end; an
            open :class:`~daskfair.store.Run` is left for its owner to complete.
        resume : bool, default=False
            Continue from the store's last checkpoint; the result equals an uninterrupted
            fit with the same parameters and data.
        checkpoint_every : int, default=1
            Iterations between checkpoints.
        callback : callable or None, default=None
            ``callback(state)`` after every iteration (progress), with the
            :class:`~daskfair.ensemble.consensus.ConsensusState`.

        Returns
        -------
        self : FairClusteringEnsemble
            The fitted estimator.

        Raises
        ------
        ValueError
            A parameter out of its range; base labels that are not cluster indices 0, 1, …
            (NaN, negative, fractions, empty, of different lengths, not 2-D); fewer than two
            groups, groups below ``min_group_size`` with ``small_groups="raise"``, or groups of
            another length; ``n_clusters`` above the rows, or no c for ``"auto"``;
            ``resume=True`` without a store, or a store the run cannot use.
        TypeError
            ``n_clusters`` not an integer or ``"auto"``, or base labels that are not numbers.

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
        params = self._checked_params()
        check_resume(store, resume, "fit")
        check_int(checkpoint_every, "checkpoint_every")
        inputs = self._prepare(base_labels, sensitive_features, params)
        stored = None if store is None or isinstance(store, Run) else _stored_params(
            params, inputs)
        with IterativeRun.open(store, resume=resume, kind="fce", params=stored,
                               checkpoint_every=checkpoint_every) as job:

            def after_iteration(s: ConsensusState) -> None:
                job.save(s.n_iter, 1, False, checkpoint=partial(save_state, state=s))
                if callback is not None:
                    callback(s)

            state = load_state(job.run, inputs.base) if job.run is not None and resume else None
            if state is None:
                state = self._initial_state(inputs, params)
            state, converged = run_consensus(
                inputs.base, inputs.groups, state,
                consensus_weight=params["consensus_weight"],
                fairness_weight=inputs.fairness_weight, alignment=params["alignment"],
                max_iter=params["max_iter"], tol=params["tol"], callback=after_iteration,
            )
            if job.run is not None:
                job.run.write_array("labels", state.labels)
                job.run.write_array("weights", state.alpha)
            job.finish(objective=state.objective, n_iter=state.n_iter, converged=converged,
                       fairness_weight_used=inputs.fairness_weight)
        vars(self).update(_fitted(state, converged, inputs))
        return self


@dataclass(frozen=True)
class _Inputs:
    """The checked data of a fit, held for its passes, and the resolved c and λ2."""

    base: Any  # (n, m) int32, numpy or dask
    groups: Any  # (n,) group codes, numpy or dask
    sizes: np.ndarray  # (m,) c_i
    n_clusters: int
    fairness_weight: float
    group_names: np.ndarray
    merged_groups: dict[str, int]


def _real(value: Any) -> bool:
    # a finite real number, not a bool
    return isinstance(value, Real) and not isinstance(value, bool) and math.isfinite(value)


def _stored_params(params: dict[str, Any], inputs: _Inputs) -> dict[str, Any]:
    """The parameters a store records and ``resume`` compares."""
    return {"alignment": params["alignment"], "fairness_weight": params["fairness_weight"],
            "init": params["init"], "consensus_weight": params["consensus_weight"],
            "max_iter": params["max_iter"], "n_clusters": params["n_clusters"],
            "random_state": _seed_json(params["random_state"]), "tol": params["tol"],
            "min_group_size": params["min_group_size"], "small_groups": params["small_groups"],
            "n_samples": inputs.base.shape[0], "n_labelings": inputs.base.shape[1],
            "n_clusters_used": inputs.n_clusters, "fairness_weight_used": inputs.fairness_weight}


def _seed_json(random_state: Any) -> Any:
    # a stored run records the seed it can be reproduced from; a Generator or SeedSequence
    # object is recorded by its entropy when it has one
    if random_state is None or isinstance(random_state, int | np.integer):
        return random_state
    entropy = getattr(random_state, "entropy", None)
    return {"entropy": str(entropy)} if entropy is not None else repr(random_state)


def _fitted(state: ConsensusState, converged: bool, inputs: _Inputs) -> dict[str, Any]:
    """Every fitted attribute of a finished consensus."""
    sizes = np.diff(np.append(state.offsets, len(state.R_all)))
    return {
        "labels_": state.labels, "weights_": state.alpha,
        "objective_": np.asarray(state.objective), "n_iter_": state.n_iter,
        "converged_": converged, "fairness_weight_": inputs.fairness_weight,
        "n_clusters_": inputs.n_clusters,
        "rotations_": [state.R_all[o:o + s] for o, s in zip(state.offsets, sizes, strict=True)],
        "rotation_": state.R, "group_counts_": state.counts,
        "groups_": inputs.group_names, "merged_groups_": inputs.merged_groups,
        "n_features_in_": inputs.base.shape[1],
    }
