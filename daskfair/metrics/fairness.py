"""Fairness of predictions: gaps in rates or means between groups, and per-group reports.

Each metric is one pass over the rows (:mod:`._counts`); dask inputs stay on the workers.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from .._blocks import block_sum
from .._groups import sensitive_column, sorted_groups
from .._keyed import Keyed, arrange, column_values, local_codes, merge
from .._validation import as_array, check_consistent_length, is_dask
from ._counts import count_table

__all__ = [
    "GROUP_REPORT_COLUMNS",
    "GroupReport",
    "WorstPair",
    "demographic_parity_difference",
    "equalized_odds_difference",
    "error_rate",
    "group_report",
    "mean_prediction_gap",
    "regression_report",
]


def demographic_parity_difference(
    y_true: Any, y_pred: Any, *, sensitive_features: Any, pos_label: Any = 1
) -> float:
    """Largest gap in selection rate between any two groups (fairlearn's name).

    ``max_g P(ŷ = pos_label | g) − min_g P(ŷ = pos_label | g)`` over the groups present
    (with two groups, the FKR-F²E paper's eq. 16); one pass over the rows.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,) or None
        Not read (a selection rate needs no true labels); first, as in fairlearn.
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

    Raises
    ------
    ValueError
        Inputs empty, not 1-D or unequal, fewer than two groups, or a missing group value.

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
    table = count_table(("sensitive_features", s, "groups"), ("y_pred", positive, "binary"))[0]
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

    Raises
    ------
    ValueError
        Inputs empty, not 1-D, or of different lengths.

    See Also
    --------
    group_report : The error rate of every group.

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

    max(max_g TPR_g − min_g TPR_g, max_g FPR_g − min_g FPR_g), as fairlearn's
    ``equalized_odds_difference`` with its defaults (``agg="worst_case"``); one pass over the
    rows.

    Parameters
    ----------
    y_true, y_pred : array-like, pandas or dask of shape (n_samples,)
        True and predicted labels; "positive" means ``== pos_label``.
    sensitive_features : array-like, pandas or dask of shape (n_samples,) or (n_samples, c)
        Group of every row (at least two groups); every group needs both true classes.
    pos_label : scalar, default=1
        The favourable outcome.

    Returns
    -------
    float
        The largest gap, in [0, 1].

    Raises
    ------
    ValueError
        Inputs empty, not 1-D or unequal, fewer than two groups, or a group lacking a class.

    See Also
    --------
    demographic_parity_difference : The largest gap in selection rate.
    group_report : Every group's rates and the worst pairs.

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
    table, (names, _, _) = count_table(  # [group, true, pred]
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
    """The groups of lowest and highest ``rate`` (the first in group order on a tie)."""
    values = table[rate].to_numpy()
    low, high = (table.index[int(i)] for i in (np.argmin(values), np.argmax(values)))
    return WorstPair(*(g.item() if isinstance(g, np.generic) else g for g in (low, high)),
                     rate, float(values.max() - values.min()))


def group_report(y_true: Any, y_pred: Any, *, sensitive_features: Any,
                 pos_label: Any = 1) -> GroupReport:
    """Every group's rates and the worst pairs of groups, from one pass over the rows.

    Its worst pairs' differences equal :func:`demographic_parity_difference` and
    :func:`equalized_odds_difference` exactly.

    Parameters
    ----------
    y_true, y_pred : array-like, pandas or dask of shape (n_samples,)
        True and predicted labels; "positive" means ``== pos_label``.
    sensitive_features : array-like, pandas or dask of shape (n_samples,) or (n_samples, c)
        Group of every row (at least two groups). Several columns (a 2-D array, a DataFrame,
        a list of 1-D arrays) make one group of every combination of their values, named as
        fairlearn names them: each value as ``str``, a comma or backslash in it escaped by a
        backslash, joined by commas (``"black,F"``).
    pos_label : scalar, default=1
        The favourable outcome.

    Returns
    -------
    GroupReport
        ``table`` (a DataFrame indexed by group, columns :data:`GROUP_REPORT_COLUMNS`),
        ``demographic_parity`` and ``equalized_odds`` (the worst pairs).

    Raises
    ------
    ValueError
        Inputs empty, not 1-D or of different lengths, or fewer than two groups.

    See Also
    --------
    demographic_parity_difference, equalized_odds_difference : The two gaps alone.

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
    counts, (names, _, _) = count_table(  # [group, true, pred]
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
    """Block function: per distinct group, its rows, Σ prediction and Σ squared error."""
    codes, keys = local_codes(s)
    k = len(keys)
    return Keyed(keys, (np.bincount(codes, minlength=k).astype(np.int64),
                        np.bincount(codes, weights=pred, minlength=k),
                        np.bincount(codes, weights=(pred - truth) ** 2, minlength=k)))


def regression_report(y_true: Any, y_pred: Any, *, sensitive_features: Any) -> dict[str, float]:
    """The gap between the groups' mean predictions and the root mean squared error.

    ``mean_prediction_gap`` is ``max_g mean(ŷ | g) − min_g mean(ŷ | g)``, demographic parity
    of a score (what :class:`~daskfair.FairKernelRegressorCV` bounds on validation rows);
    ``rmse`` is over all rows. One pass over the three columns.

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

    Raises
    ------
    ValueError
        Inputs empty, not 1-D or unequal, fewer than two groups, or not finite.

    See Also
    --------
    mean_prediction_gap : The gap alone.

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

    See Also
    --------
    regression_report : The gap and the root mean squared error.

    Examples
    --------
    >>> from daskfair.metrics import mean_prediction_gap
    >>> mean_prediction_gap([1.0, 2.0, 3.0, 6.0], sensitive_features=[0, 0, 1, 1])
    3.0
    """
    y_pred = as_array(y_pred, "y_pred")
    return regression_report(y_pred, y_pred, sensitive_features=sensitive_features)[
        "mean_prediction_gap"]
