"""Fairness and clustering metrics of the three papers, for numpy, pandas or dask inputs.

Every metric reads its inputs once: a pure per-block function counts (a contingency table,
per-cluster sums), the counts are tree-summed over the row blocks
(:func:`daskfair._blocks.block_sum`), and the metric is a formula on the small table. Dask
inputs therefore never leave the workers; the result is a Python float.

Notation: ``D_tk = |G_t ∩ π_k|`` (groups × clusters), ``|π_k|`` cluster sizes, n rows.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import scipy.optimize
import scipy.stats
from sklearn.metrics import mutual_info_score

from .._blocks import block_sum
from .._groups import is_missing, sensitive_column, sorted_groups
from .._keyed import Keyed, arrange, column_values, local_codes, merge
from .._validation import (
    as_array,
    check_array,
    check_consistent_length,
    check_n_labels,
    is_dask,
    label_column,
)

__all__ = [
    "GROUP_REPORT_COLUMNS",
    "REPORT_COLUMNS",
    "GroupReport",
    "WorstPair",
    "balance",
    "cce",
    "clustering_accuracy",
    "clustering_report",
    "contingency",
    "demographic_parity_difference",
    "equalized_odds_difference",
    "error_rate",
    "fairness_cce",
    "group_report",
    "hypervolume_2d",
    "kmeans_cost",
    "mean_prediction_gap",
    "mnce",
    "nmi",
    "normalized_entropy",
    "regression_report",
]

#: Columns of :func:`clustering_report`, in the FCE paper's order.
REPORT_COLUMNS = ("ACC", "NMI", "Bal", "MNCE", "CCE", "NE", "f_CCE")


# -- counting ------------------------------------------------------------------------------
#
# A metric's one pass counts the distinct raw (label, group, ...) tuples of every row block
# (daskfair._keyed); the value checks (missing values, negative or fractional labels, ranges,
# the number of groups) then run on the distinct values, and the count table is put on the
# grid of codes. Only shapes and dtypes are checked before the pass. (scikit-learn's
# contingency_matrix needs both label vectors in memory; this table is summed block by block.)

def _label_column(x: Any, name: str, n: int | None = None) -> Any:
    """A 1-D column of integer labels: shape and dtype checks only (nothing is read)."""
    x = label_column(x, n, name=name)
    if x.shape[0] == 0:
        raise ValueError(f"{name} is empty; metrics need at least one row.")
    return x


def _label_codes(values: list[Any], name: str, n_rows: int,
                 n_labels: int | None = None) -> tuple[dict[Any, int], int]:
    """Codes of a label column's distinct raw values (the label itself) and the table size."""
    if any(is_missing(v) or not np.isfinite(v) for v in values):
        raise ValueError(
            f"{name} contains NaN or infinite values; every row needs a cluster index 0, 1, "
            "2, ... Drop or relabel those rows.")
    if any(float(v) != int(v) for v in values):
        raise ValueError(f"{name} must be integer cluster indices, got non-integer floats.")
    ints = [int(v) for v in values]
    lo, hi = min(ints), max(ints)
    if lo < 0:
        raise ValueError(
            f"{name} has negative values ({lo}); labels must be 0, 1, 2, ... "
            "(encode them with numpy.unique(..., return_inverse=True)).")
    if n_labels is None:
        if hi >= n_rows:
            # a count table over 0..hi would be mostly empty (and may not fit in memory)
            raise ValueError(
                f"{name} has the label {hi}, larger than the number of rows ({n_rows}): "
                "re-encode it as 0, 1, 2, ... (numpy.unique(x, return_inverse=True)).")
        n_labels = hi + 1
    elif hi >= n_labels:
        raise ValueError(f"{name} must lie in [0, {n_labels - 1}], found values in "
                         f"[{lo}, {hi}].")
    return dict(zip(values, ints, strict=True)), n_labels


def _count_block(*columns: np.ndarray) -> Keyed:
    codes, keys = local_codes(*columns)
    return Keyed(keys, (np.bincount(codes, minlength=len(keys)).astype(np.int64),))


@dataclass(frozen=True)
class _SizeOf:
    """A label column's number of labels taken from an earlier column's (the FCE paper's c:
    the number of true classes)."""

    column: int


def _count_table(*columns: tuple[str, Any, Any]) -> tuple[np.ndarray, list[np.ndarray]]:
    """One pass: the joint count table of ``(name, column, kind)`` triples.

    ``kind`` is ``"groups"`` (sorted distinct values, at least two), ``"binary"`` (0/1), the
    number of labels of an integer label column (``None``: its largest label + 1), or
    ``_SizeOf(j)``: as many labels as column j (an earlier one) has. Returns the table (one
    axis per column, in the given order) and each column's values (the groups' sorted values;
    ``arange`` for the others). Value checks run column by column, in the given order.
    """
    n = columns[0][1].shape[0]
    for _, _, kind in columns:
        if kind not in ("groups", "binary", None) and not isinstance(kind, _SizeOf):
            check_n_labels(kind)
    keyed = block_sum(_count_block, *(col for _, col, _ in columns), combine=merge)
    codes, values = [], []
    for c, (name, col, kind) in enumerate(columns):
        seen = column_values(keyed.keys, c)
        if kind == "groups":
            groups = sorted_groups(seen, col.dtype, name=name)
            codes.append({v: i for i, v in enumerate(groups.tolist())})
            values.append(groups)
        else:
            if isinstance(kind, _SizeOf):
                kind = len(values[kind.column])
            code, size = _label_codes(seen, name, n, 2 if kind == "binary" else kind)
            codes.append(code)
            values.append(np.arange(size))
    table = arrange(keyed, codes, tuple(len(v) for v in values))[0]
    return table, values


def contingency(a: Any, b: Any, *, n_a: int | None = None, n_b: int | None = None) -> np.ndarray:
    """Counts table ``T[i, j] = |{rows: a = i, b = j}|`` of two label vectors (one pass).

    Parameters
    ----------
    a, b : array-like or dask array of shape (n_samples,)
        Non-negative integer labels.
    n_a, n_b : int, optional
        Number of categories (default: max label + 1, found by the same pass).

    Returns
    -------
    ndarray of shape (n_a, n_b), int64

    Examples
    --------
    >>> from daskfair.metrics import contingency
    >>> contingency([0, 0, 1, 1], [0, 1, 1, 1])
    array([[1, 1],
           [0, 2]])
    """
    a = _label_column(a, "a")
    b = _label_column(b, "b", a.shape[0])
    return _count_table(("a", a, n_a), ("b", b, n_b))[0]


def _group_cluster(labels: Any, sensitive_features: Any, n_clusters: int | None) -> np.ndarray:
    """D of shape (n_groups, n_clusters)."""
    labels = _label_column(labels, "labels")
    s = sensitive_column(sensitive_features, labels.shape[0])
    return _count_table(("sensitive_features", s, "groups"), ("labels", labels, n_clusters))[0]


# -- FKR-F²E paper (Okray, Hu & Lan 2019) ---------------------------------------------------

def demographic_parity_difference(
    y_true: Any, y_pred: Any, *, sensitive_features: Any, pos_label: Any = 1
) -> float:
    """Largest gap in selection rate between any two groups (fairlearn's name).

    ``max_g P(ŷ = pos_label | g) − min_g P(ŷ = pos_label | g)``: with two groups the FKR-F²E
    paper's statistical disparity (its eq. 16). One pass over the rows, which also lists the
    groups; every group listed has at least one row, so every rate is defined.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,) or None
        Not read: a selection rate needs no true labels. It is the first argument, as in
        fairlearn, so that fairlearn's calls run unchanged.
    y_pred : array-like, pandas or dask of shape (n_samples,)
        Predictions; "selected" means ``y_pred == pos_label``.
    sensitive_features : array-like, pandas or dask of shape (n_samples,) or (n_samples, c)
        Group of every row (at least two groups); several columns make one group of every
        combination of their values.
    pos_label : scalar, default=1
        The favourable outcome.

    Returns
    -------
    float
        The largest gap in selection rate between two groups, in [0, 1].

    See Also
    --------
    equalized_odds_difference : The largest gap in true- or false-positive rate.
    group_report : Every group's rates and the worst pairs.

    Examples
    --------
    >>> from daskfair.metrics import demographic_parity_difference
    >>> demographic_parity_difference(None, [1, 1, 0, 1, 0, 0],
    ...                               sensitive_features=["a", "a", "a", "b", "b", "b"])
    0.3333333333333333
    """
    y_pred = as_array(y_pred, "y_pred")
    if y_pred.ndim != 1 or y_pred.shape[0] == 0:
        raise ValueError(f"y_pred must be a non-empty 1-D array, got shape {y_pred.shape}.")
    s = sensitive_column(sensitive_features, y_pred.shape[0])
    positive = (y_pred == pos_label).astype(np.int64)
    table = _count_table(("sensitive_features", s, "groups"), ("y_pred", positive, "binary"))[0]
    rate = table[:, 1] / table.sum(axis=1)
    return float(rate.max() - rate.min())


def error_rate(y_true: Any, y_pred: Any) -> float:
    """Fraction of rows where ``y_pred != y_true`` (the papers' classification error).

    Parameters
    ----------
    y_true, y_pred : array-like or dask array of shape (n_samples,)
        True and predicted labels.

    Returns
    -------
    float
        The error rate, in [0, 1].

    Examples
    --------
    >>> from daskfair.metrics import error_rate
    >>> error_rate([0, 1, 1, 0], [0, 1, 0, 0])
    0.25
    """
    y_true, y_pred = as_array(y_true, "y_true"), as_array(y_pred, "y_pred")
    if y_true.ndim != 1 or y_pred.ndim != 1:
        raise ValueError(f"y_true and y_pred must be 1-D, got shapes {y_true.shape} and "
                         f"{y_pred.shape}.")
    n = check_consistent_length(("y_true", y_true), ("y_pred", y_pred))
    if n == 0:
        raise ValueError("y_true is empty; the error rate needs at least one row.")
    wrong = (y_true != y_pred).sum()
    return float(wrong.compute() if is_dask(wrong) else wrong) / n


def _true_pred_groups(y_true: Any, y_pred: Any, sensitive_features: Any) -> tuple[Any, ...]:
    """Two non-empty 1-D columns of one length and the groups' column (shape checks only)."""
    y_true, y_pred = as_array(y_true, "y_true"), as_array(y_pred, "y_pred")
    if y_true.ndim != 1 or y_pred.ndim != 1 or y_true.shape[0] == 0:
        raise ValueError(f"y_true and y_pred must be non-empty and 1-D, got shapes "
                         f"{y_true.shape} and {y_pred.shape}.")
    n = check_consistent_length(("y_true", y_true), ("y_pred", y_pred))
    return y_true, y_pred, sensitive_column(sensitive_features, n)


def equalized_odds_difference(
    y_true: Any, y_pred: Any, *, sensitive_features: Any, pos_label: Any = 1
) -> float:
    """Largest gap in true- or false-positive rate between any two groups.

    max(max_g TPR_g − min_g TPR_g, max_g FPR_g − min_g FPR_g), fairlearn's
    ``equalized_odds_difference`` (its defaults, ``agg="worst_case"``), computed from one
    group × true × predicted count table (one pass over the rows, which also lists the
    groups).

    Parameters
    ----------
    y_true, y_pred : array-like of shape (n_samples,)
        True and predicted labels; "positive" means ``== pos_label``.
    sensitive_features : array-like of shape (n_samples,)
        Group of every row (at least two groups); every group needs both true classes.
    pos_label : scalar
        The favourable outcome.

    Returns
    -------
    float
        The largest gap, in [0, 1].

    Examples
    --------
    >>> from daskfair.metrics import equalized_odds_difference
    >>> equalized_odds_difference([1, 0, 1, 0], [1, 0, 0, 0],
    ...                           sensitive_features=["a", "a", "b", "b"])
    1.0
    """
    y_true, y_pred, s = _true_pred_groups(y_true, y_pred, sensitive_features)
    truth = (y_true == pos_label).astype(np.int64)
    pred = (y_pred == pos_label).astype(np.int64)
    table, (names, _, _) = _count_table(  # [group, true, pred]
        ("sensitive_features", s, "groups"), ("y_true", truth, "binary"),
        ("y_pred", pred, "binary"))
    per_class = table.sum(axis=2)
    missing = np.argwhere(per_class == 0)
    if missing.size:
        g, v = missing[0]
        raise ValueError(
            f"group {names[g]!r} has no rows with true label "
            f"{'positive' if v else 'negative'}, so its {'true' if v else 'false'}-positive "
            "rate is undefined; equalized odds needs both classes in every group.")
    rates = table[:, :, 1] / per_class  # column 0: FPR, column 1: TPR
    return float((rates.max(axis=0) - rates.min(axis=0)).max())


#: Columns of the ``table`` of :func:`group_report`.
GROUP_REPORT_COLUMNS = ("rows", "selection_rate", "true_positive_rate",
                        "false_positive_rate", "error_rate")


@dataclass(frozen=True)
class WorstPair:
    """The two groups farthest apart on one rate (made by :func:`group_report`).

    Parameters
    ----------
    low, high : object
        The group with the lowest and the one with the highest rate (the first in group
        order on a tie).
    rate : str
        The column of the report's ``table`` they differ on.
    difference : float
        ``high``'s rate minus ``low``'s.
    """

    low: Any
    high: Any
    rate: str
    difference: float


@dataclass(frozen=True)
class GroupReport:
    """Per-group rates of binary predictions and the worst pairs of groups (made by
    :func:`group_report`).

    Parameters
    ----------
    table : pandas.DataFrame
        One row per group (the index, named ``group``, in sorted order) with the columns
        ``rows``, ``selection_rate`` (P(ŷ = 1)), ``true_positive_rate`` (P(ŷ = 1 | y = 1)),
        ``false_positive_rate`` (P(ŷ = 1 | y = 0)) and ``error_rate`` (P(ŷ ≠ y)); a rate with
        no rows to count is NaN.
    demographic_parity : WorstPair
        The groups of lowest and highest selection rate: its ``difference`` is
        :func:`demographic_parity_difference`.
    equalized_odds : WorstPair or None
        The pair and rate (true- or false-positive) of the largest gap: its ``difference`` is
        :func:`equalized_odds_difference`. None when a group lacks one of the true classes.
    """

    table: pd.DataFrame
    demographic_parity: WorstPair
    equalized_odds: WorstPair | None


def _worst_pair(table: pd.DataFrame, rate: str) -> WorstPair:
    values = table[rate].to_numpy()
    low, high = (table.index[int(i)] for i in (np.argmin(values), np.argmax(values)))
    return WorstPair(*(g.item() if isinstance(g, np.generic) else g for g in (low, high)),
                     rate, float(values.max() - values.min()))


def group_report(y_true: Any, y_pred: Any, *, sensitive_features: Any,
                 pos_label: Any = 1) -> GroupReport:
    """Every group's rates and the worst pairs of groups, from one pass over the rows.

    The table is counted as :func:`equalized_odds_difference` counts (a group × true ×
    predicted count table), so its worst pairs give exactly that function's value and
    :func:`demographic_parity_difference`'s.

    Parameters
    ----------
    y_true, y_pred : array-like, pandas or dask of shape (n_samples,)
        True and predicted labels; "positive" means ``== pos_label``.
    sensitive_features : array-like, pandas or dask of shape (n_samples,) or (n_samples, c)
        Group of every row (at least two groups). Several columns (a 2-D array, a DataFrame,
        a list of 1-D arrays) make one group of every combination of their values, named as
        fairlearn names them: each value as ``str``, a comma or backslash in it escaped by a
        backslash, joined by commas (``"black,F"``).
    pos_label : scalar
        The favourable outcome.

    Returns
    -------
    GroupReport
        ``table`` (a DataFrame indexed by group), ``demographic_parity`` and
        ``equalized_odds`` (the worst pairs).

    Examples
    --------
    >>> from daskfair.metrics import group_report
    >>> report = group_report([1, 0, 1, 0, 1, 0], [1, 0, 1, 1, 0, 0],
    ...                       sensitive_features=[["a", "F"], ["a", "F"], ["a", "M"],
    ...                                           ["a", "M"], ["b", "F"], ["b", "F"]])
    >>> report.table["selection_rate"].to_dict()
    {'a,F': 0.5, 'a,M': 1.0, 'b,F': 0.0}
    >>> report.demographic_parity
    WorstPair(low='b,F', high='a,M', rate='selection_rate', difference=1.0)
    """
    y_true, y_pred, s = _true_pred_groups(y_true, y_pred, sensitive_features)
    truth = (y_true == pos_label).astype(np.int64)
    pred = (y_pred == pos_label).astype(np.int64)
    counts, (names, _, _) = _count_table(  # [group, true, pred]
        ("sensitive_features", s, "groups"), ("y_true", truth, "binary"),
        ("y_pred", pred, "binary"))
    rows = counts.sum(axis=(1, 2))
    per_class = counts.sum(axis=2)
    with np.errstate(invalid="ignore", divide="ignore"):
        rates = counts[:, :, 1] / per_class  # column 0: FPR, column 1: TPR
    table = pd.DataFrame(
        {"rows": rows,
         "selection_rate": counts[:, :, 1].sum(axis=1) / rows,
         "true_positive_rate": rates[:, 1],
         "false_positive_rate": rates[:, 0],
         "error_rate": (counts[:, 0, 1] + counts[:, 1, 0]) / rows},
        index=pd.Index(names, name="group"))
    odds = None
    if (per_class > 0).all():
        pairs = [_worst_pair(table, r) for r in ("true_positive_rate", "false_positive_rate")]
        odds = max(pairs, key=lambda p: p.difference)  # the first on a tie
    return GroupReport(table, _worst_pair(table, "selection_rate"), odds)


def _group_sum_block(s: np.ndarray, pred: np.ndarray, truth: np.ndarray) -> Keyed:
    # per distinct group of the block: rows, Σ prediction, Σ squared error
    codes, keys = local_codes(s)
    k = len(keys)
    return Keyed(keys, (np.bincount(codes, minlength=k).astype(np.int64),
                        np.bincount(codes, weights=pred, minlength=k),
                        np.bincount(codes, weights=(pred - truth) ** 2, minlength=k)))


def regression_report(y_true: Any, y_pred: Any, *, sensitive_features: Any) -> dict[str, float]:
    """The gap between the groups' mean predictions and the root mean squared error.

    ``mean_prediction_gap`` is ``max_g mean(ŷ | g) − min_g mean(ŷ | g)``, the continuous
    analogue of the statistical disparity (demographic parity of a score; what
    :class:`~daskfair.FairKernelRegressorCV` bounds on validation rows); ``rmse`` is over all
    rows. One pass over the three columns, which also lists the groups.

    Parameters
    ----------
    y_true, y_pred : array-like or dask array of shape (n_samples,)
        True values and predictions.
    sensitive_features : array-like or dask array of shape (n_samples,)
        Group of every row (at least two groups).

    Returns
    -------
    dict
        ``{"mean_prediction_gap": float, "rmse": float}``.

    Examples
    --------
    >>> from daskfair.metrics import regression_report
    >>> regression_report([1.0, 2.0, 3.0, 4.0], [1.0, 2.0, 3.0, 6.0],
    ...                   sensitive_features=[0, 0, 1, 1])
    {'mean_prediction_gap': 3.0, 'rmse': 1.0}
    """
    y_true, y_pred, s = _true_pred_groups(y_true, y_pred, sensitive_features)
    keyed = block_sum(_group_sum_block, s, y_pred.astype(np.float64),
                      y_true.astype(np.float64), combine=merge)
    groups = sorted_groups(column_values(keyed.keys, 0), s.dtype)
    counts, sums, squares = arrange(keyed, [{v: i for i, v in enumerate(groups.tolist())}],
                                    (len(groups),))
    if not (np.isfinite(sums).all() and np.isfinite(squares).all()):
        raise ValueError("y_true or y_pred holds NaN or infinite values; drop those rows.")
    means = sums / counts
    return {"mean_prediction_gap": float(means.max() - means.min()),
            "rmse": float(np.sqrt(squares.sum() / counts.sum()))}


def mean_prediction_gap(y_pred: Any, *, sensitive_features: Any) -> float:
    """The largest gap between the groups' mean predictions, in the units of ŷ; one pass.

    ``max_g mean(ŷ | g) − min_g mean(ŷ | g)`` over at least two groups.

    Parameters
    ----------
    y_pred : array-like or dask array of shape (n_samples,)
        Predictions.
    sensitive_features : array-like or dask array of shape (n_samples,)
        Group of every row.

    Returns
    -------
    float
        The gap, ≥ 0.

    Examples
    --------
    >>> from daskfair.metrics import mean_prediction_gap
    >>> mean_prediction_gap([1.0, 2.0, 3.0, 6.0], sensitive_features=[0, 0, 1, 1])
    3.0
    """
    y_pred = as_array(y_pred, "y_pred")
    return regression_report(y_pred, y_pred, sensitive_features=sensitive_features)[
        "mean_prediction_gap"]


# -- SAfairKM paper (Liu & Vicente), eq. (2) -------------------------------------------------

def _cost_block(X: np.ndarray, labels: np.ndarray, shift: np.ndarray) -> Keyed:
    # per distinct label of the block: count, Σ x and Σ ‖x‖² of the shifted rows
    codes, keys = local_codes(labels)
    X = X - shift
    k = len(keys)
    counts = np.bincount(codes, minlength=k).astype(np.float64)
    sums = np.zeros((k, X.shape[1]))
    np.add.at(sums, codes, X)
    sq = np.bincount(codes, weights=np.einsum("ij,ij->i", X, X), minlength=k)
    return Keyed(keys, (counts, sums, sq))


def kmeans_cost(X: Any, labels: Any) -> float:
    """k-means cost with exact cluster means (the SAfairKM paper's f1, eq. 2).

    ``f1 = (1/N) Σ_k Σ_{p ∈ C_k} ‖x_p − c̄_k‖²``, ``c̄_k`` the mean of the points assigned to k,
    computed in one pass over X and the labels as
    ``(1/N) Σ_k (Σ_{p∈k} ‖x_p‖² − ‖Σ_{p∈k} x_p‖² / n_k)`` on the rows shifted by the first row
    (the cost does not change; the two sums no longer cancel when the data sit far from the
    origin). X's first block is read once more for that row; the labels' value checks come
    from the pass.

    Parameters
    ----------
    X : array-like or dask array of shape (n_samples, n_features)
        The points.
    labels : array-like or dask array of shape (n_samples,)
        Cluster of every point.

    Returns
    -------
    float
        The mean squared distance of a point to its cluster's mean.

    Examples
    --------
    >>> from daskfair.metrics import kmeans_cost
    >>> kmeans_cost([[0.0], [2.0], [10.0], [12.0]], [0, 0, 1, 1])
    1.0
    """
    X = check_array(X, "X")
    labels = _label_column(labels, "labels", X.shape[0])
    first = X[:1]
    shift = np.asarray(first.compute() if is_dask(first) else first)[0]
    keyed = block_sum(_cost_block, X, labels, shift=shift, combine=merge)
    codes, k = _label_codes(column_values(keyed.keys, 0), "labels", X.shape[0])
    counts, sums, sq = arrange(keyed, [codes], (k,))
    used = counts > 0
    within = sq[used] - (sums[used] ** 2).sum(axis=1) / counts[used]
    return float(max(within.sum(), 0.0) / counts.sum())


def balance(labels: Any, *, sensitive_features: Any, n_clusters: int | None = None) -> float:
    """Balance (the SAfairKM paper's f2; the FCE paper's "Bal").

    ``Bal = min_k min_{j ≠ j'} |C_k ∩ V_j| / |C_k ∩ V_j'| = min_k (min_j D_jk / max_j D_jk)``,
    over the clusters that have points (an empty cluster constrains nothing). A cluster that
    misses a group gives 0; perfectly proportional clusters with equal groups give 1.

    Parameters
    ----------
    labels : array-like or dask array of shape (n_samples,)
        Cluster of every row.
    sensitive_features : array-like or dask array of shape (n_samples,)
        Group of every row.
    n_clusters : int, optional
        Number of clusters (default: the largest label + 1).

    Returns
    -------
    float
        The balance, in [0, 1].

    Examples
    --------
    >>> from daskfair.metrics import balance
    >>> balance([0, 0, 0, 1, 1, 1], sensitive_features=[0, 1, 1, 0, 1, 1])
    0.5
    """
    return _balance(_group_cluster(labels, sensitive_features, n_clusters))


def _balance(D: np.ndarray) -> float:
    D = D[:, D.sum(axis=0) > 0].astype(np.float64)
    return float((D.min(axis=0) / D.max(axis=0)).min())


# -- FCE paper (Zhou et al., TPAMI 2025) ------------------------------------------------------

def _accuracy(C: np.ndarray) -> float:
    rows, cols = scipy.optimize.linear_sum_assignment(C, maximize=True)
    return float(C[rows, cols].sum() / C.sum())


def _entropy(p: np.ndarray) -> float:
    # scipy normalises the counts; natural log. No −0.0 for a single category.
    return max(float(scipy.stats.entropy(p)), 0.0)


def _nmi(C: np.ndarray) -> float:
    # scikit-learn's mutual information takes the contingency table itself, so the table
    # stays the one pass's count table
    h_true, h_pred = _entropy(C.sum(axis=1)), _entropy(C.sum(axis=0))
    if h_true == 0 and h_pred == 0:
        return 1.0  # both constant: identical partitions (scikit-learn's convention)
    return mutual_info_score(None, None, contingency=C) / max(h_true, h_pred)


def _mnce(D: np.ndarray) -> float:
    h = _entropy(D.sum(axis=1))
    if h == 0:
        return 1.0
    return min(_entropy(D[:, k]) for k in range(D.shape[1]) if D[:, k].sum()) / h


def _cce(sizes: np.ndarray) -> float:
    return float(sizes.min() / sizes.max())


def _ne(sizes: np.ndarray, c: int) -> float:
    return float(_entropy(sizes) / np.log(c)) if c > 1 else 1.0


def _fairness_cce(D: np.ndarray) -> float:
    c = D.shape[1]
    gamma = D / D.sum(axis=1, keepdims=True)  # γ_tk = D_tk / |G_t|
    with np.errstate(divide="ignore"):
        ratio = np.minimum(c * gamma, 1.0 / (c * gamma))
    return float(np.nan_to_num(ratio, nan=0.0).min())


def clustering_accuracy(y_true: Any, labels: Any) -> float:
    """ACC: accuracy after the best one-to-one matching of clusters to classes (Hungarian).

    ``ACC = max over matchings m of Σ_k |π_k ∩ class m(k)| / n``; with more clusters than
    classes (or the reverse) the unmatched ones count as errors.

    Parameters
    ----------
    y_true : array-like or dask array of shape (n_samples,)
        True classes.
    labels : array-like or dask array of shape (n_samples,)
        Cluster of every row.

    Returns
    -------
    float
        The accuracy, in [0, 1].

    Examples
    --------
    >>> from daskfair.metrics import clustering_accuracy
    >>> clustering_accuracy([0, 0, 1, 1], [1, 1, 0, 1])
    0.75
    """
    return _accuracy(contingency(y_true, labels))


def nmi(y_true: Any, labels: Any) -> float:
    """NMI = I(Y; Ŷ) / max(H(Y), H(Ŷ)) (natural log; the FCE paper's normalisation).

    Equals ``sklearn.metrics.normalized_mutual_info_score(..., average_method="max")``.

    Parameters
    ----------
    y_true : array-like or dask array of shape (n_samples,)
        True classes.
    labels : array-like or dask array of shape (n_samples,)
        Cluster of every row.

    Returns
    -------
    float
        The normalised mutual information, in [0, 1].

    Examples
    --------
    >>> from daskfair.metrics import nmi
    >>> nmi([0, 0, 1, 1], [1, 1, 0, 0])
    1.0
    """
    return _nmi(contingency(y_true, labels))


def mnce(labels: Any, *, sensitive_features: Any) -> float:
    """MNCE = min_k H(G | π_k) / H(G) (FCE seed): the least mixed cluster's group entropy.

    Entropies in natural log over the group proportions inside cluster k and in the whole
    data; empty clusters are skipped. Always in [0, 1]; 1 when every cluster has the groups in
    the data's proportions.

    Parameters
    ----------
    labels : array-like or dask array of shape (n_samples,)
        Cluster of every row.
    sensitive_features : array-like or dask array of shape (n_samples,)
        Group of every row.

    Returns
    -------
    float
        The least mixed cluster's normalised group entropy, in [0, 1].

    Examples
    --------
    >>> from daskfair.metrics import mnce
    >>> mnce([0, 0, 1, 1], sensitive_features=[0, 1, 0, 1])
    1.0
    """
    return _mnce(_group_cluster(labels, sensitive_features, None))


def cce(labels: Any, *, n_clusters: int | None = None) -> float:
    """CCE = ``min_k |π_k| / max_k |π_k|`` (cluster capacity equality, FCE paper, Definition 2).

    With ``n_clusters`` given, a label that never occurs is an empty cluster and gives 0.

    Parameters
    ----------
    labels : array-like or dask array of shape (n_samples,)
        Cluster of every row.
    n_clusters : int, optional
        Number of clusters (default: the largest label + 1).

    Returns
    -------
    float
        The smallest cluster's size over the largest's, in [0, 1].

    Examples
    --------
    >>> from daskfair.metrics import cce
    >>> cce([0, 0, 0, 1])
    0.3333333333333333
    """
    labels = _label_column(labels, "labels")
    return _cce(_count_table(("labels", labels, n_clusters))[0])


def normalized_entropy(labels: Any, *, n_clusters: int | None = None) -> float:
    """NE = ``−(1/log c) Σ_k p_k log p_k``, ``p_k = |π_k| / n`` (FCE seed).

    c is ``n_clusters`` if given (the FCE paper uses the number of true classes), else the
    number of distinct labels. 1 for equal cluster sizes.

    Parameters
    ----------
    labels : array-like or dask array of shape (n_samples,)
        Cluster of every row.
    n_clusters : int, optional
        The c of the normalisation.

    Returns
    -------
    float
        The normalised entropy of the cluster sizes.

    Examples
    --------
    >>> from daskfair.metrics import normalized_entropy
    >>> normalized_entropy([0, 1, 0, 1])
    1.0
    """
    labels = _label_column(labels, "labels")
    sizes = _count_table(("labels", labels, n_clusters))[0]
    c = n_clusters if n_clusters is not None else int((sizes > 0).sum())
    return _ne(sizes, c)


def fairness_cce(
    labels: Any, *, sensitive_features: Any, n_clusters: int | None = None
) -> float:
    """fairness_CCE (FCE paper, Definition 3): how evenly every group is spread over the clusters.

    ``fairness_CCE = min_{t,k} min(c γ_tk, 1 / (c γ_tk))``, ``γ_tk = D_tk / |G_t|``. 1 when every
    group is spread evenly over the c clusters (``|π_k ∩ G_t| = |G_t| / c``), which implies both
    fairness and equal capacity; a cluster missing a group gives 0.

    Parameters
    ----------
    labels : array-like or dask array of shape (n_samples,)
        Cluster of every row.
    sensitive_features : array-like or dask array of shape (n_samples,)
        Group of every row.
    n_clusters : int, optional
        c (default: the largest label + 1).

    Returns
    -------
    float
        The value, in [0, 1].

    Examples
    --------
    >>> from daskfair.metrics import fairness_cce
    >>> fairness_cce([0, 1, 0, 1], sensitive_features=[0, 0, 1, 1])
    1.0
    """
    return _fairness_cce(_group_cluster(labels, sensitive_features, n_clusters))


def clustering_report(
    y_true: Any, labels: Any, *, sensitive_features: Any, n_clusters: int | None = None
) -> dict[str, float]:
    """All seven FCE columns (ACC, NMI, Bal, MNCE, CCE, NE, f_CCE) from one count table.

    One classes × clusters × groups count table is built in one pass over the row blocks,
    which also lists the groups and finds the labels' ranges; every metric and every value
    check is computed from it.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        True classes (non-negative integers).
    labels : array-like of shape (n_samples,)
        Cluster labels (non-negative integers).
    sensitive_features : array-like of shape (n_samples,)
        Protected group of every row.
    n_clusters : int, optional
        c of CCE, NE and f_CCE; default: the number of true classes, as in the FCE paper
        (labels ≥ c are an error then).

    Returns
    -------
    dict
        The seven metrics by their column names, :data:`REPORT_COLUMNS`, as floats.

    Examples
    --------
    >>> from daskfair import clustering_report
    >>> report = clustering_report([0, 0, 1, 1], [0, 0, 1, 1], sensitive_features=[0, 1, 0, 1])
    >>> {name: round(value, 3) for name, value in report.items()}
    {'ACC': 1.0, 'NMI': 1.0, 'Bal': 1.0, 'MNCE': 1.0, 'CCE': 1.0, 'NE': 1.0, 'f_CCE': 1.0}
    """
    y_true = _label_column(y_true, "y_true")
    labels = _label_column(labels, "labels", y_true.shape[0])
    s = sensitive_column(sensitive_features, y_true.shape[0])
    table, (_, clusters, _) = _count_table(
        ("y_true", y_true, None),
        ("labels", labels, _SizeOf(0) if n_clusters is None else n_clusters),
        ("sensitive_features", s, "groups"))
    c = len(clusters)
    C = table.sum(axis=2)  # classes × clusters
    D = table.sum(axis=0).T  # groups × clusters
    sizes = C.sum(axis=0)
    return {
        "ACC": _accuracy(C),
        "NMI": _nmi(C),
        "Bal": _balance(D),
        "MNCE": _mnce(D),
        "CCE": _cce(sizes),
        "NE": _ne(sizes, c),
        "f_CCE": _fairness_cce(D),
    }


# -- fronts ----------------------------------------------------------------------------------

def hypervolume_2d(cost: Any, balance: Any, reference: tuple[float, float]) -> float:
    """Area dominated by a front when minimising cost and maximising balance.

    The region ``{(f1, f2): some point has cost ≤ f1 and balance ≥ f2, f1 ≤ r_cost,
    f2 ≥ r_balance}``; points outside the reference box add nothing. O(L log L): sort by cost,
    sweep keeping the best balance so far.

    Parameters
    ----------
    cost, balance : array-like of shape (n_points,)
        The points' cost and balance.
    reference : (r_cost, r_balance)
        A cost no point should exceed and a balance no point should fall below.

    Returns
    -------
    float
        The dominated area.

    Examples
    --------
    >>> from daskfair.metrics import hypervolume_2d
    >>> hypervolume_2d([1.0, 2.0], [0.5, 1.0], reference=(3.0, 0.0))
    1.5
    """
    f1 = np.asarray(cost, dtype=np.float64).ravel()
    f2 = np.asarray(balance, dtype=np.float64).ravel()
    if f1.shape != f2.shape:
        raise ValueError(f"cost and balance have different lengths ({f1.size}, {f2.size}).")
    if not (np.isfinite(f1).all() and np.isfinite(f2).all()):
        raise ValueError("cost and balance must be finite.")
    r1, r2 = map(float, reference)
    inside = (f1 < r1) & (f2 > r2)
    order = np.lexsort((-f2[inside], f1[inside]))
    xs, ys = f1[inside][order], f2[inside][order]
    area, best = 0.0, r2
    for i, (x, y) in enumerate(zip(xs, ys, strict=True)):
        if y > best:
            best = y
        nxt = xs[i + 1] if i + 1 < len(xs) else r1
        area += (nxt - x) * (best - r2)
    return float(area)

