"""The count tables every metric is computed from (docs/design.md#metrics-in-one-pass)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._blocks import block_sum
from .._groups import is_missing, sensitive_column, sorted_groups
from .._keyed import Keyed, arrange, column_values, local_codes, merge
from .._validation import check_n_labels, label_column
from ._outcomes import check_outcomes, missing_outcome

__all__ = ["Outcome", "SizeOf", "count_table", "group_cluster", "label_codes",
           "nonempty_labels"]


def nonempty_labels(x: Any, name: str, n: int | None = None) -> Any:
    """A 1-D column of integer labels: shape and dtype checks only (nothing is read)."""
    x = label_column(x, n, name=name)
    if x.shape[0] == 0:
        raise ValueError(f"{name} is empty; metrics need at least one row.")
    return x


def label_codes(values: list[Any], name: str, n_rows: int,
                n_labels: int | None = None) -> tuple[dict[Any, int], int]:
    """Codes of a label column's distinct raw values (the label itself) and the table size."""
    if any(is_missing(v) or not math.isfinite(v) for v in values):  # ints of any size
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
    """Block function: each distinct tuple of the block's columns and its rows."""
    codes, keys = local_codes(*columns)
    return Keyed(keys, (np.bincount(codes, minlength=len(keys)).astype(np.int64),))


@dataclass(frozen=True)
class Outcome:
    """A label column of binary outcomes: coded 1 where it equals ``pos_label``, checked by
    :func:`~daskfair.metrics._outcomes.check_outcomes` with the call's other outcome columns."""

    pos_label: Any


@dataclass(frozen=True)
class SizeOf:
    """A label column's number of labels taken from an earlier column's (the FCE paper's c)."""

    column: int


def count_table(*columns: tuple[str, Any, Any]) -> tuple[np.ndarray, list[np.ndarray]]:
    """One pass: the joint count table of ``(name, column, kind)`` triples and each column's
    values; ``kind`` is "groups" (sorted, at least two), "binary", an ``Outcome`` (raw labels,
    1 where favourable), a number of labels (None: the largest + 1) or ``SizeOf(j)``. Values
    are checked column by column, in order (outcomes first, together)."""
    n = columns[0][1].shape[0]
    for _, _, kind in columns:
        if kind not in ("groups", "binary", None) and not isinstance(kind, SizeOf | Outcome):
            check_n_labels(kind)
    keyed = block_sum(_count_block, *(col for _, col, _ in columns), combine=merge)
    outcomes = {name: column_values(keyed.keys, c) for c, (name, _, kind) in enumerate(columns)
                if isinstance(kind, Outcome)}
    for name, seen in outcomes.items():
        if any(is_missing(v) for v in seen):
            raise ValueError(missing_outcome(name))
    if outcomes:
        check_outcomes(next(k for _, _, k in columns if isinstance(k, Outcome)).pos_label,
                       outcomes)
    codes, values = [], []
    for c, (name, col, kind) in enumerate(columns):
        seen = column_values(keyed.keys, c)
        if isinstance(kind, Outcome):
            codes.append({v: int(v == kind.pos_label) for v in seen})
            values.append(np.arange(2))
        elif kind == "groups":
            groups = sorted_groups(seen, col.dtype, name=name)
            codes.append({v: i for i, v in enumerate(groups.tolist())})
            values.append(groups)
        else:
            if isinstance(kind, SizeOf):
                kind = len(values[kind.column])
            code, size = label_codes(seen, name, n, 2 if kind == "binary" else kind)
            codes.append(code)
            values.append(np.arange(size))
    table = arrange(keyed, codes, tuple(len(v) for v in values))[0]
    return table, values


def group_cluster(labels: Any, sensitive_features: Any, n_clusters: int | None) -> np.ndarray:
    """D of shape (n_groups, n_clusters): ``D[t, k] = |G_t ∩ π_k|``, from one pass."""
    labels = nonempty_labels(labels, "labels")
    s = sensitive_column(sensitive_features, labels.shape[0])
    return count_table(("sensitive_features", s, "groups"), ("labels", labels, n_clusters))[0]
