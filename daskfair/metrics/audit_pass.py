"""``audit``: per-group metrics of binary decisions with confidence intervals, from one pass
over the rows (docs/design.md#audits-in-one-pass)."""

from __future__ import annotations

import functools
import itertools
from typing import Any

import dask
import dask.array as da
import numpy as np
import pandas as pd

from .. import progress
from .._arrow import check_arrow
from .._blocks import _tree, block_size, streamed_tree
from .._keyed import MISSING
from .._params import Integer, Nothing, Options, Real, Spec, checked
from .._validation import check_known_chunks, is_dask
from ._audit_blocks import (
    AuditBlock,
    audit_block,
    exact_value,
    merge_blocks,
    merge_sorted,
)
from ._audit_counts import Counts
from ._audit_stats import auc_from_histograms, own_metrics
from ._outcomes import check_outcomes
from ._regression_blocks import RegressionBlock, merge_regression, regression_block
from ._score_tables import Histograms
from .audit_levels import LevelAudit, level_counts, level_cuts
from .audit_result import Audit
from .regression_audit import RegressionAudit

__all__ = ["AUDIT", "UNKNOWN", "audit"]


def _merge_regressions(*blocks: RegressionBlock) -> RegressionBlock:
    return functools.reduce(merge_regression, blocks)


#: How each task's block statistics are added (any number of blocks at once).
_MERGE = {"classification": merge_blocks, "regression": _merge_regressions}
#: The group name of rows whose sensitive value is missing.
UNKNOWN = "unknown"


def _is_frame(x: Any) -> bool:
    return not is_dask(x) and hasattr(x, "npartitions") and hasattr(x, "to_delayed")


def _columns(s: Any, what: str = "sensitive_feature") -> tuple[list[Any], list[str]]:
    """The sensitive (or control) columns and their names, as fairlearn names them."""
    if isinstance(s, pd.DataFrame) or (_is_frame(s) and s.ndim == 2):
        return [s[c] for c in s.columns], [str(c) for c in s.columns]
    if isinstance(s, pd.Series) or (_is_frame(s) and s.ndim == 1):
        return [s], [str(s.name) if s.name is not None else f"{what}_0"]
    if isinstance(s, list | tuple) and s and all(
            isinstance(c, np.ndarray | pd.Series) or is_dask(c) or _is_frame(c) for c in s):
        return list(s), [str(c.name) if isinstance(c, pd.Series) or (_is_frame(c) and
                         c.name is not None) else f"{what}_{i}"
                         for i, c in enumerate(s)]
    a = s if is_dask(s) else np.asarray(s, dtype=object)
    if a.ndim == 1:
        return [a], [f"{what}_0"]
    if a.ndim == 2:
        return [a[:, j] for j in range(a.shape[1])], [
            f"{what}_{j}" for j in range(a.shape[1])]
    raise ValueError(f"{what}s must be 1-D or 2-D, got shape {a.shape}.")


def _frame_block(part: pd.DataFrame, n_groups: int, pos_label: Any, task: str) -> Any:
    # the joined frame's columns are named by the inputs' keys
    for c in part.columns:
        check_arrow(part[c], _public(c))
    return _array_block([part[c] for c in part.columns], n_groups, pos_label,
                        tuple(part.columns), task)


def _frame_parts(named: dict[str, Any], n_groups: int, pos_label: Any,
                 task: str) -> list[Any]:
    """One task per partition of the inputs' dask DataFrames, joined column-wise."""
    import dask.dataframe as dd

    bad = [k for k, v in named.items() if not _is_frame(v)]
    if bad:
        raise TypeError(f"{_public(bad[0])} is in memory while other inputs are dask DataFrame "
                        "columns: give every input as a column of the same dask DataFrame.")
    counts = {v.npartitions for v in named.values()}
    if len(counts) > 1:
        raise ValueError(f"the inputs have different numbers of partitions ({sorted(counts)});"
                         " give every input as a column of the same dask DataFrame.")
    series = [v.rename(k) if isinstance(v, dd.Series) else v[v.columns[0]].rename(k)
              for k, v in named.items()]
    frame = dd.concat(series, axis=1, ignore_unknown_divisions=True) \
        if len(series) > 1 else series[0].to_frame()
    # mapped on the frame, the block function fuses with the read: one task per partition,
    # and no partition is held between two tasks
    stats = frame.map_partitions(_frame_block, n_groups, pos_label, task, meta=(None, object),
                                 enforce_metadata=False)
    return list(stats.to_delayed(optimize_graph=True))


def _array_parts(named: dict[str, Any], n_groups: int, pos_label: Any,
                 task: str) -> list[Any]:
    """One task per row chunk of the first dask array (the others cut alike)."""
    for k, v in named.items():
        if is_dask(v):
            check_known_chunks(v, _public(k))
        else:
            check_arrow(v, _public(k))
    lengths = {_public(k): np.shape(v)[0] if np.ndim(v) else 0 for k, v in named.items()}
    if len(set(lengths.values())) > 1:
        raise ValueError(f"every input needs one value per row; got {lengths} rows.")
    ref = next(v for v in named.values() if is_dask(v))
    rows = ref.chunks[0]
    arrays = {}
    for k, v in named.items():
        a = v if is_dask(v) else da.from_array(np.asarray(v), chunks=(rows,))
        if a.ndim != 1 or a.shape[0] != ref.shape[0]:
            raise ValueError(f"{_public(k)} must be 1-D with {ref.shape[0]} rows (one value per "
                             f"row), got shape {a.shape}.")
        arrays[k] = a.rechunk((rows,)).to_delayed(optimize_graph=True).ravel()
    keys = list(arrays)
    return [dask.delayed(_array_block, pure=True)([arrays[k][i] for k in keys], n_groups,
                                                 pos_label, tuple(keys), task)
            for i in range(len(rows))]


def _public(key: str) -> str:
    """The parameter an internal column name comes from."""
    key = key.strip("_")
    if key.startswith(("group", "control")):
        return "sensitive_features" if key.startswith("group") else "control_features"
    return {"score": "y_score", "weight": "sample_weight"}.get(key, key)


def _array_block(columns: list[Any], n_groups: int, pos_label: Any,
                 keys: tuple[str, ...], task: str) -> Any:
    if task == "regression":
        return regression_block(columns[:n_groups], columns[n_groups], columns[n_groups + 1])
    extra = dict(zip(keys[n_groups + 2:], columns[n_groups + 2:], strict=True))
    return audit_block(columns[:n_groups], columns[n_groups], columns[n_groups + 1],
                       extra.get("__score"), extra.get("__weight"), pos_label)


def _memory_counts(named: dict[str, Any], n_groups: int, pos_label: Any, task: str) -> Any:
    for k, v in named.items():
        check_arrow(v, _public(k))
    arrays = {k: np.asarray(v.to_numpy() if hasattr(v, "to_numpy") else v)
              for k, v in named.items()}
    n = {_public(k): a.shape for k, a in arrays.items()}
    if len(set(n.values())) > 1 or any(len(s) != 1 for s in n.values()):
        raise ValueError(f"every input needs one value per row; got shapes {n}.")
    length = next(iter(n.values()))[0]
    keys, step = list(arrays), block_size(len(arrays))
    blocks = (_array_block([arrays[k][lo:lo + step] for k in keys], n_groups, pos_label,
                           tuple(keys), task)
              for lo in range(0, max(length, 1), step))
    return streamed_tree(blocks, _MERGE[task])


def count_pass(y_true: Any, y_pred: Any, sensitive_features: Any, y_score: Any = None,
               sample_weight: Any = None, pos_label: Any = 1,
               control_features: Any = None, task: str = "classification"
               ) -> tuple[Any, list[str], int]:
    """The one pass: every block's statistics, summed, the names of the group columns (the
    control columns first, then the sensitive ones) and how many are control columns."""
    controls, control_names = ([], []) if control_features is None else _columns(
        control_features, "control_feature")
    groups, names = _columns(sensitive_features)
    twice = sorted(set(control_names) & set(names))
    if twice:
        raise ValueError(f"control_features and sensitive_features both name {twice}; a "
                         "column is one or the other.")
    named = {f"__control{j}": c for j, c in enumerate(controls)}
    named.update({f"__group{j}": c for j, c in enumerate(groups)})
    columns, names = [*controls, *groups], [*control_names, *names]
    named.update(__y_true=y_true, __y_pred=y_pred)
    if y_score is not None:
        named["__score"] = y_score
    if sample_weight is not None:
        named["__weight"] = sample_weight
    for k, v in named.items():
        if v is None:
            raise TypeError(f"{_public(k)} is None; pass one value per row.")
    if any(_is_frame(v) for v in named.values()):
        parts = _frame_parts(named, len(columns), pos_label, task)
    elif any(is_dask(v) for v in named.values()):
        parts = _array_parts(named, len(columns), pos_label, task)
    else:
        return _memory_counts(named, len(columns), pos_label, task), names, len(controls)
    # eight blocks a merge: 6 merge tasks for 40 partitions, not 39, and fewer transfers
    # (the sums are of integers: any grouping gives the same bits)
    return progress.compute(_tree(parts, _MERGE[task], fan_in=8)), names, len(controls)


def _levels(keys: list[tuple[Any, ...]], j: int, name: str) -> list[Any]:
    values = {k[j] for k in keys}
    known = [v for v in values if v != MISSING]
    try:
        levels = sorted(known)
    except TypeError:
        kinds = sorted({type(v).__name__ for v in known})
        raise TypeError(f"sensitive feature {name!r} mixes values that cannot be sorted into "
                        f"groups (types {kinds}); give it as one type, e.g. .astype(str)."
                        ) from None
    if MISSING in values:
        if UNKNOWN in levels:
            raise ValueError(f"sensitive feature {name!r} has missing values and a group named "
                             f"{UNKNOWN!r}; rename that group, so the two stay apart.")
        levels.append(UNKNOWN)
    return levels


def arrange_counts(total: AuditBlock, names: list[str], pos_label: Any) -> Counts:
    """The summed statistics on the grid of every combination of the groups' levels."""
    keys = list(total.cells.keys)
    if not keys:
        raise ValueError("the inputs have no rows; an audit needs at least one.")
    check_outcomes(pos_label, dict(zip(("y_true", "y_pred"), total.labels, strict=True)))
    group_index, raw, at = _grid(keys, names)
    index = at * 4 + np.array([k[-2] * 2 + k[-1] for k in keys], dtype=np.int64)
    n_groups = len(group_index)
    rows = np.zeros(n_groups * 4, dtype=np.int64)
    rows[index] = total.cells.values[0]
    weights = squares = None
    if len(total.cells.values) > 1:
        sums = np.zeros((n_groups * 4, 2), dtype=np.float64)
        sums[index] = exact_value(total.cells.values[1])
        weights, squares = (sums[:, j].reshape(n_groups, 2, 2) for j in (0, 1))
    auc = scores = None
    if total.histograms is not None:
        per_group = [[total.histograms.get((*g, y)) for y in (0, 1)]
                     for g in itertools.product(*raw)]
        auc, scores = _auc_table(per_group), _grid_histograms(per_group)
    return Counts(group_index, rows.reshape(n_groups, 2, 2), weights, squares, auc, scores)


def _grid_histograms(per_group: list[list[Any]]) -> Histograms:
    """The (group, label) histograms in the grid's order, as flat arrays."""
    parts = [(k, h) for k, h in enumerate(h for pair in per_group for h in pair)
             if h is not None]
    if not parts:
        empty = np.zeros(0, dtype=np.int64)
        return Histograms(empty, empty, empty)
    return Histograms(np.concatenate([np.full(len(h[0]), k, dtype=np.int64) for k, h in parts]),
                      np.concatenate([h[0] for _, h in parts]).astype(np.int64),
                      np.concatenate([h[1] for _, h in parts]).astype(np.int64))


def _grid(keys: list[tuple[Any, ...]], names: list[str]
          ) -> tuple[pd.Index, list[list[Any]], np.ndarray]:
    """The index of every combination of the groups' levels, the levels as the blocks keyed
    them, and each key's position on that grid."""
    levels = [_levels(keys, j, n) for j, n in enumerate(names)]
    # the levels as the blocks keyed them: "unknown" is MISSING there
    raw = [[MISSING if isinstance(v, str) and v == UNKNOWN else v for v in lv]
           for lv in levels]
    code = [{v: i for i, v in enumerate(lv)} for lv in raw]
    sizes = tuple(len(lv) for lv in levels)
    at = np.array([np.ravel_multi_index(tuple(code[j][k[j]] for j in range(len(names))),
                                        sizes) for k in keys], dtype=np.int64)
    index = (pd.MultiIndex.from_product(levels, names=names) if len(names) > 1
             else pd.Index(levels[0], name=names[0]))
    return index, raw, at


def arrange_regression(total: RegressionBlock, names: list[str], n_control: int,
                       **params: Any) -> RegressionAudit | LevelAudit:
    """The summed statistics of a regression audit on the grid of the groups' levels (the
    control columns' first: one RegressionAudit per control level)."""
    keys = list(total.keys)
    if not keys:
        raise ValueError("the inputs have no rows; an audit needs at least one.")
    index, _, at = _grid(keys, names)
    rows = np.zeros(len(index), dtype=np.int64)
    rows[at] = total.rows
    parts = np.zeros((len(index), *total.parts.shape[1:]), dtype=np.int64)
    parts[at] = total.parts
    histograms: list[Any] = [None] * len(index)
    for k, pos in zip(keys, at, strict=True):
        histograms[pos] = total.histograms[k]
    if not n_control:
        return RegressionAudit(index, rows, total.low, parts, histograms, **params)
    levels = {}
    for key, cut, groups in level_cuts(index, n_control):
        if not rows[cut].any():
            continue  # a combination of control values no row has
        try:
            levels[key] = RegressionAudit(groups, rows[cut], total.low, parts[cut],
                                          histograms[cut], **params)
        except ValueError as exc:
            raise ValueError(f"control level {key!r}: {exc}") from None
    return LevelAudit.of(levels, names[:n_control])


def _pooled(histograms: list[Any]) -> tuple[np.ndarray, np.ndarray]:
    """Several histograms of scores as one."""
    present = [h for h in histograms if h is not None]
    if not present:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    return functools.reduce(merge_sorted, present)


def _auc_table(per_group: list[list[Any]]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(AUC, variance, bound) per group and, last, of all rows."""
    pairs = [(_pooled([neg]), _pooled([pos])) for neg, pos in per_group]
    pairs.append((_pooled([n for n, _ in per_group]), _pooled([p for _, p in per_group])))
    auc, var, bound = zip(*(auc_from_histograms(n, p) for n, p in pairs), strict=True)
    return np.array(auc), np.array(var), np.array(bound)


#: The statistics' parameters of :func:`audit` (the command line checks them before it reads).
AUDIT: dict[str, list[Spec]] = {
    "n_boot": [Integer(0)], "confidence": [Real(0, 1, low_open=True, high_open=True)],
    "min_group_size": [Integer(1)], "random_state": [Nothing, Integer(0)],
    "task": [Options(("classification", "regression"))]}


@checked(**AUDIT)
def audit(y_true: Any, y_pred: Any, *, sensitive_features: Any, y_score: Any = None,
          sample_weight: Any = None, n_boot: int = 1000, confidence: float = 0.95,
          min_group_size: int = 1, reference_group: Any = None, pos_label: Any = 1,
          random_state: int | None = None, metrics: Any = None,
          control_features: Any = None, task: str = "classification"
          ) -> Audit | LevelAudit | RegressionAudit:
    """Per-group metrics of binary decisions (or of a regression's predictions), with
    confidence intervals, from one pass.

    The rows are read once, into a table of rows per (group, label, decision) and per-group
    histograms of the scores; every metric, interval and test comes from these tables (the
    bootstrap resamples the table's cells, not the rows).

    Parameters
    ----------
    y_true, y_pred : array-like, pandas, dask array or dask Series of shape (n_samples,)
        True labels and decisions, two values each (``pos_label`` is the favourable one).
    sensitive_features : array-like, DataFrame, dask DataFrame, or list of columns
        One or several columns; every combination of their values is a group, indexed as
        fairlearn's ``MetricFrame`` indexes it (a MultiIndex for several columns). A missing
        value is the group ``"unknown"``.
    y_score : array-like of shape (n_samples,), default=None
        Scores (higher: more favourable) for the per-group ``roc_auc``.
    sample_weight : array-like of shape (n_samples,), default=None
        Row weights (0, or between 2**-40 and 2**40), for every rate; ``count`` stays rows.
    n_boot : int, default=1000
        Bootstrap replicates for the intervals (0: none). They cost no pass over the rows.
    confidence : float, default=0.95
        Coverage of every interval; the tests' level is ``1 - confidence``.
    min_group_size : int, default=1
        Groups with fewer rows keep their count, but their rates and intervals are NaN, and
        they are left out of every comparison (``suppressed``).
    reference_group : group or None, default=None
        The group the others are compared with (a tuple for several columns); None: the
        largest group.
    pos_label : scalar, default=1
        The favourable value of ``y_true`` and ``y_pred``.
    random_state : int or None, default=None
        Seed of the bootstrap: one seed gives the same intervals for any partitioning and
        any number of workers.
    metrics : str, function, list of them, or dict of str to function, default=None
        Further metrics of each group's counts, reported, compared and bootstrapped as the
        rates are: names of :data:`~daskfair.metrics.COUNT_METRICS` (fairlearn's and
        scikit-learn's function names, e.g. ``"false_negative_rate"``, ``"f1_score"``), or
        functions ``f(tp, fp, fn, tn)`` that combine arrays of counts element by element
        (every bootstrap replicate in one call; weighted counts with ``sample_weight``),
        named by their ``__name__`` or the dict's keys. They cost no pass.
    control_features : as sensitive_features, default=None
        Columns whose every combination of values is a level (a region, a period): the
        groups are compared within each level, as fairlearn's ``MetricFrame`` compares them
        with ``control_features``; still one pass (a level is one more key of the count
        table).
    task : {"classification", "regression"}, default="classification"
        ``"regression"``: ``y_true`` and ``y_pred`` are numbers (amounts, hours, prices),
        audited by the groups' mean prediction, target, residual, absolute and squared
        error, with Hall's intervals of means (:class:`~daskfair.metrics.RegressionAudit`);
        it takes ``sensitive_features``, ``control_features``, ``confidence``,
        ``min_group_size`` and ``reference_group``. Said explicitly, never guessed from the
        values: a binary target with continuous predictions is a question for either.

    Returns
    -------
    Audit, RegressionAudit with task="regression", or LevelAudit of either with
    control_features

    Examples
    --------
    >>> a = audit([1, 0, 1, 0, 1, 1], [1, 0, 0, 0, 1, 1], n_boot=0,
    ...           sensitive_features=["a", "a", "a", "b", "b", "b"])
    >>> a.by_group["selection_rate"].round(3).to_dict()
    {'a': 0.333, 'b': 0.667}
    """
    if task == "regression":
        return _regression(y_true, y_pred, sensitive_features, confidence, min_group_size,
                           reference_group, control_features, y_score=y_score,
                           sample_weight=sample_weight, metrics=metrics, pos_label=pos_label)
    own_metrics(metrics)  # refused before the pass
    if y_score is not None and sample_weight is not None:
        raise ValueError("roc_auc with sample_weight is not supported: pass y_score without "
                         "sample_weight, or audit the rates with weights and no y_score.")
    total, names, n_control = count_pass(y_true, y_pred, sensitive_features, y_score,
                                         sample_weight, pos_label, control_features)
    counts = arrange_counts(total, names, pos_label)
    params = {"n_boot": int(n_boot), "confidence": float(confidence),
              "min_group_size": int(min_group_size), "reference_group": reference_group,
              "random_state": random_state, "metrics": metrics}
    if control_features is None:
        return Audit(counts, **params)
    return LevelAudit(level_counts(counts, n_control, _level_auc(total, counts)),
                      names[:n_control], **params)


def _regression(y_true: Any, y_pred: Any, sensitive_features: Any, confidence: float,
                min_group_size: int, reference_group: Any, control_features: Any,
                **unused: Any) -> RegressionAudit | LevelAudit:
    given = [k for k, v in unused.items() if v is not None and not (k == "pos_label" and v == 1)]
    if given:
        raise ValueError(f"task='regression' takes no {', '.join(given)}: a regression audit "
                         "compares the groups' means of its predictions, targets and errors "
                         "(leave those parameters out).")
    total, names, n_control = count_pass(y_true, y_pred, sensitive_features,
                                         control_features=control_features, task="regression")
    return arrange_regression(total, names, n_control, confidence=float(confidence),
                              min_group_size=int(min_group_size),
                              reference_group=reference_group)


def _level_auc(total: AuditBlock, counts: Counts) -> Any:
    """``rows → (AUC, variance, bound)`` of those groups of ``counts`` and of their rows
    together (None without scores)."""
    if total.histograms is None:
        return None
    raw = [[MISSING if isinstance(v, str) and v == UNKNOWN else v for v in lv]
           for lv in counts.index.levels]
    combos = list(itertools.product(*raw))

    def auc_of(rows: slice) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        # the groups' own are the grid's; the level's rows together are pooled here
        hists = [[total.histograms.get((*g, y)) for g in combos[rows]] for y in (0, 1)]
        level_auc, level_var, level_bound = auc_from_histograms(_pooled(hists[0]),
                                                                _pooled(hists[1]))
        auc, var, bound = counts.auc
        return (np.r_[auc[rows], level_auc], np.r_[var[rows], level_var],
                np.r_[bound[rows], level_bound])

    return auc_of
