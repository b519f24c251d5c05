"""``FairClusteringEnsemble``: the FCE consensus as a scikit-learn style estimator."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, fields
from functools import partial
from itertools import pairwise
from typing import TYPE_CHECKING, Any, ClassVar

import dask.array as da
import numpy as np
from sklearn.base import BaseEstimator, ClusterMixin

from .._groups import GROUP_SIZE, check_sensitive, group_column
from .._params import (
    Flag,
    Integer,
    Named,
    Nothing,
    Options,
    ParamsMixin,
    Real,
    Seed,
    Spec,
    check_params,
)
from .._validation import check_n_clusters, is_dask
from ..runtime.iterative import IterativeRun, check_resume, is_open_run
from .consensus import (
    ALIGNMENTS,
    ConsensusState,
    auto_fairness,
    check_state,
    run_consensus,
    start_state,
)
from .labels import hold_base_labels, hold_groups
from .selection import _auto_n_clusters

if TYPE_CHECKING:
    from ..store import Run

__all__ = ["INITS", "FairClusteringEnsemble", "load_state", "save_state"]

#: Starts of the consensus: "matched" (daskfair's) and "paper" (the FCE paper's).
INITS = ("matched", "paper")


#: ``fit``'s execution arguments.
FIT: dict[str, list[Spec]] = {"resume": [Flag], "checkpoint_every": [Integer(1)],
                              "callback": [Nothing, Named("a callable", callable)]}


class FairClusteringEnsemble(ParamsMixin, ClusterMixin, BaseEstimator):
    """Fair clustering ensemble with equal cluster capacity (FCE; Zhou et al., TPAMI 2025).

    A consensus of m base clusterings, fair towards the protected groups, with clusters of
    equal capacity. It needs only the labelings: ``fit`` takes the base labels as its ``X``.

    Parameters
    ----------
    n_clusters : int or "auto", default="auto"
        c, the consensus's clusters; "auto": :func:`~daskfair.ensemble.select_n_clusters`.
    fairness_weight : float or "auto", default="auto"
        λ2 >= 0; the weight of ‖GᵀY‖² is ``consensus_weight * fairness_weight``. "auto":
        :func:`~daskfair.ensemble.auto_fairness`; 0: the paper's FCE-f (no fairness term).
    consensus_weight : float, default=0.001
        λ1 > 0, the weight of the consensus term ‖Y − HR‖².
    max_iter : int, default=50
        Most iterations.
    tol : float, default=1e-4
        Stop when the relative change of the objective is at most ``tol`` (>= 0).
    alignment : {"rotation", "hungarian"}, default="rotation"
        R(i) and R orthogonal (FCE) or permutations (the paper's FCE-a ablation).
    init : {"matched", "paper"}, default="matched"
        "matched": Y starts as a base clustering, each R(i) matched to it; "paper": the
        paper's start, R = R(i) = I (docs/design.md#fce-alternating-updates).
    random_state : int, RandomState, Generator, SeedSequence or None, default=None
        Seeds the starting base clustering and the silhouette search of "auto" c.
    min_group_size : int, default=1
        The fewest rows a protected group may have; 1 accepts every group.
    small_groups : {"raise", "merge"}, default="raise"
        Smaller groups raise a ``ValueError``, or are merged into a group "other" (warning).

    Attributes
    ----------
    labels_ : ndarray or dask array of shape (n_samples,)
        Consensus clusters (dask when the input was dask).
    weights_ : ndarray of shape (n_labelings,)
        α, the weights of the base clusterings.
    objective_ : ndarray of shape (n_iter,)
        The objective after every iteration (non-increasing).
    n_iter_ : int
        Iterations made.
    converged_ : bool
        Whether the last relative change of the objective was at most ``tol``.
    fairness_weight_ : float
        The λ2 used.
    n_clusters_ : int
        The c used.
    rotations_ : list of ndarray
        R(i), each of shape (c_i, c).
    rotation_ : ndarray of shape (c, c)
        R.
    group_counts_ : ndarray of shape (n_groups, c)
        GᵀY: the rows of every group in every cluster.
    groups_ : ndarray of shape (n_groups,)
        The protected groups (fairlearn's combined names for several columns).
    merged_groups_ : dict of str to int
        The groups merged into "other" and their rows.
    n_features_in_ : int
        n_labelings, the columns of ``fit``'s ``X``.

    See Also
    --------
    daskfair.base_clusterings : The base clusterings, each a task on the cluster.
    daskfair.ensemble.select_n_clusters : The choice of ``n_clusters="auto"``.
    daskfair.ensemble.auto_fairness : The value of ``fairness_weight="auto"``.

    Notes
    -----
    Minimises the paper's eq. (10), Σ αᵢ² ‖H − Y(i)R(i)‖² + λ1 ‖Y − HR‖² + λ1 λ2 ‖GᵀY‖².
    Dask inputs held in memory (at most a quarter of the cluster's): base labels read once,
    ``sensitive_features`` twice (once more if min_group_size > 1), nothing per iteration.
    Otherwise the base labels are read three times (four with init="paper") and once per
    iteration, the groups once more per iteration. No n × n matrix; the same bits for any
    row blocks.
    """

    def __init__(self, n_clusters: int | str = "auto", *, fairness_weight: float | str = "auto",
                 consensus_weight: float = 0.001, max_iter: int = 50, tol: float = 1e-4,
                 alignment: str = "rotation", init: str = "matched", random_state: Any = None,
                 min_group_size: int = 1, small_groups: str = "raise") -> None:
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

    _parameter_constraints: ClassVar[dict[str, list[Spec]]] = {
        "n_clusters": [Options(("auto",)), Integer(1)],
        "fairness_weight": [Options(("auto",)), Real(0)],
        "consensus_weight": [Real(0, low_open=True)], "max_iter": [Integer(1)],
        "tol": [Real(0)], "alignment": [Options(ALIGNMENTS)], "init": [Options(INITS)],
        "random_state": [Nothing, Seed], **GROUP_SIZE}

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
        c = (_auto_n_clusters(base, sizes, params["random_state"]) if auto_c
             else check_n_clusters(params["n_clusters"], n))
        weight = params["fairness_weight"]
        fairness_weight = auto_fairness(n, c, len(names)) if weight == "auto" else float(weight)
        return _Inputs(base, groups, sizes, c, fairness_weight, names, merged)

    def fit(self, base_labels: Any, y: None = None, *, sensitive_features: Any,
            store: str | os.PathLike[str] | Run | None = None, resume: bool = False,
            checkpoint_every: int = 1, callback: Callable[[ConsensusState], None] | None = None
            ) -> FairClusteringEnsemble:
        """Find the fair consensus of ``base_labels``.

        Parameters
        ----------
        base_labels : array-like or dask array of shape (n_samples, n_labelings)
            The base clusterings, one per column: integer labels >= 0.
        y : None, default=None
            Not used; present for the scikit-learn API.
        sensitive_features : array-like of shape (n_samples,) or (n_samples, n_sensitive)
            Protected group of every row; several columns make one group per combination.
        store : path-like, Run or None, default=None
            zarr run for checkpoints and the labels; a path is created (kind "fce").
        resume : bool, default=False
            Continue from the store's last checkpoint, to the uninterrupted fit's result.
        checkpoint_every : int, default=1
            Iterations between checkpoints.
        callback : callable or None, default=None
            ``callback(state)`` after every iteration, with the ConsensusState.

        Returns
        -------
        self : FairClusteringEnsemble
            The fitted estimator.

        Raises
        ------
        ValueError
            On bad parameters, base labels or groups, or a store (the message says which).
        TypeError
            ``n_clusters`` not an integer or "auto", or base labels that are not numbers.

        Examples
        --------
        >>> import numpy as np
        >>> from daskfair import FairClusteringEnsemble
        >>> y, s = np.random.default_rng(0).integers(0, 3, (2, 600))
        >>> fce = FairClusteringEnsemble(3, random_state=0)
        >>> fce.fit(np.column_stack([y, (y + 1) % 3, y]), sensitive_features=s).labels_.shape
        (600,)
        """
        params = self._validate_params()
        check_params({"resume": resume, "checkpoint_every": checkpoint_every,
                      "callback": callback}, FIT)
        check_resume(store, resume, "fit")
        inputs = self._prepare(base_labels, sensitive_features, params)
        stored = None if store is None or is_open_run(store) else _stored_params(
            params, inputs)
        with IterativeRun.open(store, resume=resume, kind="fce", params=stored,
                               checkpoint_every=checkpoint_every) as job:

            def after_iteration(s: ConsensusState) -> None:
                job.save(s.n_iter, 1, False, checkpoint=partial(save_state, state=s))
                if callback is not None:
                    callback(s)

            state = (load_state(job.run, inputs, len(inputs.group_names))
                     if job.run is not None and resume else None)
            if state is None:
                state = start_state(inputs.base, inputs.groups, inputs.n_clusters, inputs.sizes,
                                    len(inputs.group_names), params["init"],
                                    params["random_state"])
            state, converged = run_consensus(
                inputs.base, inputs.groups, state, consensus_weight=params["consensus_weight"],
                fairness_weight=inputs.fairness_weight, alignment=params["alignment"],
                max_iter=params["max_iter"], tol=params["tol"], callback=after_iteration)
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


def _stored_params(params: dict[str, Any], inputs: _Inputs) -> dict[str, Any]:
    """The parameters a store records and ``resume`` compares."""
    return {"alignment": params["alignment"], "fairness_weight": params["fairness_weight"],
            "init": params["init"], "consensus_weight": params["consensus_weight"],
            "max_iter": params["max_iter"], "n_clusters": params["n_clusters"],
            "random_state": _seed_json(params["random_state"]), "tol": params["tol"],
            "min_group_size": params["min_group_size"], "small_groups": params["small_groups"],
            "n_samples": inputs.base.shape[0], "n_labelings": inputs.base.shape[1],
            "base_cluster_counts": [int(c) for c in inputs.sizes],
            "n_clusters_used": inputs.n_clusters, "fairness_weight_used": inputs.fairness_weight}


def _seed_json(random_state: Any) -> Any:
    # the seed a stored run can be reproduced from: a Generator or SeedSequence by its entropy
    if random_state is None or isinstance(random_state, int | np.integer):
        return random_state
    entropy = getattr(random_state, "entropy", None)
    return {"entropy": str(entropy)} if entropy is not None else repr(random_state)


def _fitted(state: ConsensusState, converged: bool, inputs: _Inputs) -> dict[str, Any]:
    """Every fitted attribute of a finished consensus."""
    return {
        "labels_": state.labels, "weights_": state.alpha,
        "objective_": np.asarray(state.objective), "n_iter_": state.n_iter,
        "converged_": converged, "fairness_weight_": inputs.fairness_weight,
        "n_clusters_": inputs.n_clusters,
        "rotations_": [state.R_all[i:j] for i, j in pairwise(state.bounds)],
        "rotation_": state.R, "group_counts_": state.counts,
        "groups_": inputs.group_names, "merged_groups_": inputs.merged_groups,
        "n_features_in_": inputs.base.shape[1],
    }


#: ConsensusState fields stored as arrays (labels aside).
_ARRAYS = tuple(f.name for f in fields(ConsensusState)
                if f.name not in {"labels", "objective", "n_iter"})


def save_state(run: Run, state: ConsensusState) -> None:
    """Write ``state`` as the run's new checkpoint (the previous one is deleted after)."""
    name = f"checkpoint_{state.n_iter}"
    run.write_array(f"{name}/labels", state.labels)
    for key in _ARRAYS:
        run.write_array(f"{name}/{key}", getattr(state, key))
    run.commit_checkpoint(name, iteration=state.n_iter, objective=state.objective)


def load_state(run: Run, inputs: _Inputs, n_groups: int) -> ConsensusState | None:
    """The state of the run's last checkpoint (or None), checked to fit ``inputs``
    (:func:`~daskfair.ensemble.consensus.check_state`); its labels dask and persisted (the
    next checkpoint deletes the group) when the base labels are dask."""
    ckpt = run.checkpoint
    if not ckpt:
        return None
    name = ckpt["group"]
    with run.reading(f"the checkpoint {name}"):
        stored = run.array(f"{name}/labels")
        labels = (da.from_zarr(stored).persist() if is_dask(inputs.base) else stored[...])
        arrays = {key: run.read_array(f"{name}/{key}") for key in _ARRAYS}
        state = ConsensusState(labels=labels,
                               objective=[float(v) for v in ckpt["objective"]],
                               n_iter=int(ckpt["iteration"]), **arrays)
        check_state(state, inputs.base, inputs.groups, inputs.sizes, inputs.n_clusters,
                    n_groups)
    return state
