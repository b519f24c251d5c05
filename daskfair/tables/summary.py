"""The one pass over a table: every column's levels or range, missing values, lengths."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from .._arrow import check_arrow

__all__ = ["ColumnSummary", "TableSummary", "is_text", "merge_summaries", "partition_summary"]


def is_text(dtype: Any) -> bool:
    """Text, categorical or object columns (one-hot encoded); numbers and booleans are not."""
    if isinstance(dtype, pd.CategoricalDtype):
        return True
    return not (pd.api.types.is_numeric_dtype(dtype) or pd.api.types.is_bool_dtype(dtype))


@dataclass
class ColumnSummary:
    """What one pass learns of a column.

    Parameters
    ----------
    text : bool
        One-hot encoded (text, categorical, object) rather than used as a number.
    n_missing, n_infinite : int, default=0
        Missing values, and a numeric column's ±inf values.
    low, high : float, default=nan
        Numeric columns: the smallest and largest finite value (NaN when there is none).
    counts : dict or None, default={}
        Value → rows, missing values left out; None beyond the limit of distinct values.
    n_distinct : int, default=0
        Distinct values seen (a lower bound when ``counts`` is None).
    types : set of str, default=set()
        Python types of a text column's values.
    """

    text: bool
    n_missing: int = 0
    n_infinite: int = 0
    low: float = np.nan
    high: float = np.nan
    counts: dict[Any, int] | None = field(default_factory=dict)
    n_distinct: int = 0
    types: set[str] = field(default_factory=set)

    @property
    def constant(self) -> bool:
        """One value in every row (missing counted as a value of its own)."""
        if self.text:
            return self.counts is not None and len(self.counts) + (self.n_missing > 0) <= 1
        if self.n_missing:
            return np.isnan(self.low)
        return bool(self.low == self.high)


@dataclass
class TableSummary:
    """The merged summary of a table.

    Parameters
    ----------
    columns : dict of str to ColumnSummary
        Every column's summary, by name.
    lengths : list of int
        The rows of every partition, in order.
    """

    columns: dict[str, ColumnSummary]
    lengths: list[int]

    @property
    def n_rows(self) -> int:
        """Rows of the whole table."""
        return int(sum(self.lengths))


def _count_values(values: pd.Series, limit: int) -> tuple[dict[Any, int] | None, int]:
    """Value → rows (None beyond ``limit`` distinct values), and the distinct values seen."""
    counts = values.value_counts(dropna=True, sort=False)
    if isinstance(counts.index, pd.CategoricalIndex):  # unobserved categories are no levels
        counts = counts[counts > 0]
        counts.index = counts.index.astype(object)
    if len(counts) > limit:
        return None, len(counts)
    plain = {k.item() if isinstance(k, np.generic) else k: int(v) for k, v in counts.items()}
    return plain, len(counts)


def partition_summary(df: pd.DataFrame, columns: Sequence[str], *, limit: int,
                      counted: Iterable[str] = (),
                      text: Iterable[str] | None = None) -> dict[str, Any]:
    """Block function: one partition's length and each column's :class:`ColumnSummary`;
    ``counted`` numeric columns have their values counted too, ``text`` (None: by this
    partition's types) are the text columns by the table's schema."""
    counted = set(counted)
    check_arrow(df[list(dict.fromkeys([*columns, *counted]))], "the table")
    text = {c for c in columns if is_text(df[c].dtype)} if text is None else set(text)
    out: dict[str, ColumnSummary] = {}
    for name in columns:
        col = df[name]
        missing = col.isna()
        if name in text:
            present = col[~missing]
            counts, n = _count_values(present, limit)
            types = {type(v).__name__ for v in counts} if counts else set()
            out[name] = ColumnSummary(True, int(missing.sum()), counts=counts, n_distinct=n,
                                      types=types)
            continue
        try:
            values = col.to_numpy(dtype=np.float64, na_value=np.nan)
        except (TypeError, ValueError):
            raise ValueError(
                f"column {name!r} is numeric in the table's schema but holds text in a "
                "partition: make the column one type in every file.") from None
        finite = np.isfinite(values)
        summary = ColumnSummary(
            False, int(np.isnan(values).sum()), int(np.isinf(values).sum()),
            float(values[finite].min()) if finite.any() else np.nan,
            float(values[finite].max()) if finite.any() else np.nan, counts=None)
        if name in counted:
            summary.counts, summary.n_distinct = _count_values(col[~missing], limit)
        out[name] = summary
    return {"length": len(df), "columns": out}


def _merge_column(a: ColumnSummary, b: ColumnSummary, limit: int) -> ColumnSummary:
    """Two partitions' summaries of one column, added up."""
    counts: dict[Any, int] | None = None
    if a.counts is not None and b.counts is not None:
        counts = dict(a.counts)
        for k, v in b.counts.items():
            counts[k] = counts.get(k, 0) + v
        if len(counts) > limit:
            counts = None
    n_distinct = len(counts) if counts is not None else max(a.n_distinct, b.n_distinct,
                                                             limit + 1)
    return ColumnSummary(
        a.text or b.text, a.n_missing + b.n_missing, a.n_infinite + b.n_infinite,
        float(np.fmin(a.low, b.low)), float(np.fmax(a.high, b.high)), counts, n_distinct,
        a.types | b.types)


def merge_summaries(parts: Sequence[dict[str, Any]], limit: int) -> TableSummary:
    """Add the partitions' summaries up (in partition order) into a :class:`TableSummary`."""
    if not parts:
        raise ValueError("the table has no partitions.")
    columns = dict(parts[0]["columns"])
    for part in parts[1:]:
        for name, col in part["columns"].items():
            columns[name] = _merge_column(columns[name], col, limit)
    return TableSummary(columns, [int(p["length"]) for p in parts])
