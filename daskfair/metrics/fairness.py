"""Fairness of predictions: gaps in rates or means between groups, and per-group reports."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from .._blocks import block_sum
from .._groups import sensitive_column, sorted_groups
from .._keyed import Keyed, arrange, column_values, local_codes, merge
from .._params import shown
from .._validation import as_array, check_consistent_length, is_dask
from ._counts import Outcome, count_table

__all__ = ["GROUP_REPORT_COLUMNS", "GroupReport", "WorstPair", "demographic_parity_difference",
           "equalized_odds_difference", "error_rate", "group_report", "mean_prediction_gap",
           "regression_report"]


def demographic_parity_difference(y_true: Any, y_pred: Any, *, sensitive_features: Any,
                                  pos_label: Any = 1) -> float:
    """Largest gap in selection rate ``P(ŷ = pos_label | g)`` between two groups (fairlearn's).

    Parameters
    ----------
    y_true : array-like of shape (n_samples,) or None
        Not read; first, as in fairlearn.
    y_pred : array-like, pandas or dask of shape (n_samples,)
    sensitive_features : array-like, pandas or dask of shape (n_samples,) or (n_samples, n_columns)
        Group of every row (at least two); several columns make one group per combination.
    pos_label : scalar, default=1
        The favourable outcome.

    Returns
    -------
    float

    Examples
    --------
    >>> demographic_parity_difference(None, [1, 1, 0, 1, 0, 0],
    ...                               sensitive_features=["a", "a", "a", "b", "b", "b"])
    0.3333333333333333
    """
    y_pred = as_array(y_pred, "y_pred")
    if y_pred.ndim != 1 or y_pred.shape[0] == 0:
        raise ValueError(f"y_pred must be a non-empty 1-D array, got shape {y_pred.shape}.")
    s = sensitive_column(sensitive_features, y_pred.shape[0])
    table = count_table(("sensitive_features", s, "groups"),
                        ("y_pred", y_pred, Outcome(pos_label)))[0]
    rate = table[:, 1] / table.sum(axis=1)
    return float(rate.max() - rate.min())


def _true_pred(y_true: Any, y_pred: Any) -> tuple[Any, Any, int]:
    """Two 1-D columns of one non-zero length (shape checks only), and that length."""
    y_true, y_pred = as_array(y_true, "y_true"), as_array(y_pred, "y_pred")
    if y_true.ndim != 1 or y_pred.ndim != 1:
        raise ValueError(f"y_true and y_pred must be 1-D, got shapes {y_true.shape} and "
                         f"{y_pred.shape}.")
    n = check_consistent_length(("y_true", y_true), ("y_pred", y_pred))
    if n == 0:
        raise ValueError("y_true is empty; metrics need at least one row.")
    return y_true, y_pred, n


def error_rate(y_true: Any, y_pred: Any) -> float:
    """Fraction of rows where ``y_pred != y_true``.

    Parameters
    ----------
    y_true, y_pred : array-like or dask array of shape (n_samples,)
        True and predicted labels.

    Returns
    -------
    float

    Examples
    --------
    >>> error_rate([0, 1, 1, 0], [0, 1, 0, 0])
    0.25
    """
    y_true, y_pred, n = _true_pred(y_true, y_pred)
    text = [a.dtype.kind in "US" for a in (y_true, y_pred)]
    if text[0] != text[1] and all(a.dtype.kind in "USbiuf" for a in (y_true, y_pred)):
        raise TypeError(f"y_true and y_pred hold labels of different types ({y_true.dtype} "
                        f"and {y_pred.dtype}): give both as one type, e.g. `.astype(str)`.")
    wrong = (y_true != y_pred).sum()
    return float(wrong.compute() if is_dask(wrong) else wrong) / n


def _confusion(y_true: Any, y_pred: Any, sensitive_features: Any,
               pos_label: Any) -> tuple[np.ndarray, np.ndarray]:
    """The [group, true, predicted] count table of positives (one pass), and the groups."""
    y_true, y_pred, n = _true_pred(y_true, y_pred)
    s = sensitive_column(sensitive_features, n)
    table, (names, _, _) = count_table(("sensitive_features", s, "groups"),
                                       ("y_true", y_true, Outcome(pos_label)),
                                       ("y_pred", y_pred, Outcome(pos_label)))
    return table, names


def equalized_odds_difference(y_true: Any, y_pred: Any, *, sensitive_features: Any,
                              pos_label: Any = 1) -> float:
    """Largest gap in true- or false-positive rate between two groups (fairlearn's).

    Parameters
    ----------
    y_true, y_pred : array-like, pandas or dask of shape (n_samples,)
        True and predicted labels.
    sensitive_features, pos_label : as in :func:`demographic_parity_difference`.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        A group lacks one of the true classes (its rate is undefined).

    Examples
    --------
    >>> equalized_odds_difference([1, 0, 1, 0], [1, 0, 0, 0],
    ...                           sensitive_features=["a", "a", "b", "b"])
    1.0
    """
    table, names = _confusion(y_true, y_pred, sensitive_features, pos_label)
    per_class = table.sum(axis=2)
    missing = np.argwhere(per_class == 0)
    if missing.size:
        g, v = missing[0]
        raise ValueError(
            f"group {shown(names[g])} has no rows with true label "
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
        The groups of lowest and highest rate (the first in group order on a tie).
    rate, difference : str, float
        The column of the report's ``table`` they differ on, and ``high``'s minus ``low``'s.
    """

    low: Any
    high: Any
    rate: str
    difference: float


@dataclass(frozen=True)
class GroupReport:
    """Per-group rates and the worst pairs of groups (made by :func:`group_report`).

    Parameters
    ----------
    table : pandas.DataFrame
        One row per group (sorted index ``group``), columns :data:`GROUP_REPORT_COLUMNS`; a
        rate with no rows to count is NaN.
    demographic_parity, equalized_odds : WorstPair, WorstPair or None
        Their ``difference`` is :func:`demographic_parity_difference` and
        :func:`equalized_odds_difference` (None: a group lacks a class).
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

    Parameters
    ----------
    y_true, y_pred : array-like, pandas or dask of shape (n_samples,)
        True and predicted labels.
    sensitive_features : array-like, pandas or dask of shape (n_samples,) or (n_samples, n_columns)
        Group of every row (at least two); several columns make groups named as fairlearn
        names them (``"black,F"``).
    pos_label : scalar, default=1
        The favourable outcome.

    Returns
    -------
    GroupReport

    Examples
    --------
    >>> s = [["a", "F"], ["a", "F"], ["b", "M"], ["b", "M"]]
    >>> report = group_report([1, 0, 1, 0], [1, 0, 0, 0], sensitive_features=s)
    >>> report.table["selection_rate"].to_dict()
    {'a,F': 0.5, 'b,M': 0.0}
    >>> report.demographic_parity
    WorstPair(low='b,M', high='a,F', rate='selection_rate', difference=0.5)
    """
    counts, names = _confusion(y_true, y_pred, sensitive_features, pos_label)
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
    """The largest gap between the groups' mean predictions, and the RMSE, in one pass.

    Parameters
    ----------
    y_true, y_pred : array-like or dask array of shape (n_samples,)
        True values and predictions, finite.
    sensitive_features : array-like or dask array of shape (n_samples,)
        Group of every row (at least two groups).

    Returns
    -------
    dict of str to float
        ``{"mean_prediction_gap": max_g mean(ŷ | g) − min_g mean(ŷ | g), "rmse": ...}``.

    Examples
    --------
    >>> regression_report([1.0, 2.0, 3.0, 4.0], [1.0, 2.0, 3.0, 6.0],
    ...                   sensitive_features=[0, 0, 1, 1])
    {'mean_prediction_gap': 3.0, 'rmse': 1.0}
    """
    y_true, y_pred, n = _true_pred(y_true, y_pred)
    s = sensitive_column(sensitive_features, n)
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
    """``max_g mean(ŷ | g) − min_g mean(ŷ | g)``, in the units of ŷ (one pass).

    Parameters
    ----------
    y_pred, sensitive_features : as in :func:`regression_report`.

    Returns
    -------
    float

    Examples
    --------
    >>> mean_prediction_gap([1.0, 2.0, 3.0, 6.0], sensitive_features=[0, 0, 1, 1])
    3.0
    """
    y_pred = as_array(y_pred, "y_pred")
    return regression_report(y_pred, y_pred, sensitive_features=sensitive_features)[
        "mean_prediction_gap"]
