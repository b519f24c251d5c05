"""One-hot encoding of a table, fitted in one pass and applied partition by partition."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import dask
import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from .. import progress
from .._arrow import check_arrow
from .._frames import count_rows, partition_array, partitions
from .._params import Integer, Options, ParamsMixin, Spec
from .summary import TableSummary, is_text, merge_summaries, partition_summary

__all__ = ["MISSING", "TableEncoder", "check_columns", "check_encodable", "summarize"]

#: The name of the level that stands for a missing value.
MISSING = "<missing>"


def _is_dask_frame(X: Any) -> bool:
    """Whether ``X`` is a dask DataFrame (it has delayed partitions)."""
    return hasattr(X, "to_delayed") and hasattr(X, "npartitions")


def summarize(X: Any, columns: Sequence[str], *, limit: int, counted: Sequence[str] = (),
              parts: Sequence[Any] | None = None) -> TableSummary:
    """The one pass (:mod:`daskfair.tables.summary`) over a pandas or dask DataFrame.

    Parameters
    ----------
    X : pandas or dask DataFrame
    columns : sequence of str
        The columns to summarise as features.
    limit : int
        Distinct values of a text column kept at most (``max_levels``).
    counted : sequence of str, default=()
        Further columns whose values are counted (the label, the groups).
    parts : sequence of dask.delayed.Delayed, default=None
        ``X``'s partitions, to summarise the very ones arrays are cut from (None: from ``X``).

    Returns
    -------
    TableSummary
    """
    columns, counted = list(columns), list(counted)
    if not _is_dask_frame(X):
        return merge_summaries([partition_summary(X, columns, limit=limit, counted=counted)],
                               limit)
    if parts is None:
        parts = partitions(X[columns])
    text = [c for c in columns if is_text(X[c].dtype)]  # by the schema, for every partition
    tasks = [dask.delayed(partition_summary, pure=True)(p, columns, limit=limit,
                                                        counted=counted, text=text)
             for p in parts]
    return merge_summaries(progress.compute(dask.delayed(list)(tasks)), limit)


def check_columns(X: Any, columns: Sequence[str], what: str) -> None:
    """ValueError naming the ``columns`` that the table ``X`` (called ``what``) lacks."""
    missing = [c for c in columns if c not in X.columns]
    if missing:
        raise ValueError(f"{what} has no column(s) {missing}; its columns are "
                         f"{list(map(str, X.columns))}.")


def _sorted_levels(name: str, values: Sequence[Any]) -> list[Any]:
    """A text column's levels, sorted; TypeError for values of mixed types."""
    types = {type(v).__name__ for v in values}
    if "str" in types and len(types) > 1:
        raise TypeError(
            f"column {name!r} mixes text and other values ({', '.join(sorted(types))}): make "
            "it one type (all text, or all numbers) before encoding it.")
    try:
        return sorted(values)
    except TypeError:
        raise TypeError(f"column {name!r} mixes values that cannot be sorted "
                        f"({', '.join(sorted(types))}): make it one type.") from None


def _codes(col: pd.Series, levels: pd.Index, arrow_levels: Any) -> np.ndarray:
    """The position of every value in ``levels``, -1 for a missing or unseen value."""
    if arrow_levels is not None and isinstance(col.dtype, pd.StringDtype) \
            and col.dtype.storage == "pyarrow":
        import pyarrow as pa
        import pyarrow.compute as pc

        # Arrow's hash lookup on the column's own buffers: faster than pandas' on str objects
        found = pc.index_in(pa.array(col), value_set=arrow_levels)
        return found.fill_null(-1).to_numpy().astype(np.int64)
    return levels.get_indexer(col)


def _arrow_levels(levels: pd.Index) -> Any:
    """The levels as an Arrow array for :func:`_codes`, or None (not all text, no pyarrow)."""
    if not all(isinstance(v, str) for v in levels):
        return None
    try:
        import pyarrow as pa
    except ImportError:
        return None
    return pa.array(list(levels), type=pa.large_string())


@dataclass(frozen=True)
class _Plan:
    """What a block encoder needs: column names, levels and output positions."""

    numeric: tuple[str, ...]
    indicators: tuple[str, ...]
    fill: tuple[float, ...]  # per indicator column: the value a missing number takes
    # name, levels (no missing), a missing level, the levels as an Arrow array (or None)
    text: tuple[tuple[str, pd.Index, bool, Any], ...]
    width: int

    def encode(self, df: pd.DataFrame) -> np.ndarray:
        """Block function: one partition as an (n_rows, width) float64 array (a warning, in
        the log of the worker that runs it, for levels not seen in ``fit``)."""
        out, unseen = self.encode_counted(df)
        if unseen:
            text = (f"levels not seen when the encoder was fitted (rows per column: {unseen}) "
                    "are encoded as all-zero rows for their column")
            warnings.warn(text, UserWarning, stacklevel=2)  # on a worker: in its log
        return out

    def encode_counted(self, df: pd.DataFrame) -> tuple[np.ndarray, dict[str, int]]:
        """One partition encoded, and its rows per text column with a level not seen in ``fit``
        (encoded as all-zero rows for that column)."""
        check_arrow(df, "the table")
        out = np.zeros((len(df), self.width), dtype=np.float64)
        for j, name in enumerate(self.numeric):
            out[:, j] = df[name].to_numpy(dtype=np.float64, na_value=np.nan)
        j = len(self.numeric)
        for name, fill in zip(self.indicators, self.fill, strict=True):
            # the column's smallest fitted value (inside the data's range) and a 1 in its indicator
            col = self.numeric.index(name)
            miss = np.isnan(out[:, col])
            out[miss, col] = fill
            out[:, j] = miss
            j += 1
        values = out[:, :len(self.numeric)]
        if not np.isfinite(values).all():  # counted only when there is something to say
            bad = {kind: {c: int(k) for c, k in zip(self.numeric, test(values).sum(axis=0),
                                                    strict=True) if k}
                   for kind, test in (("missing", np.isnan), ("infinite", np.isinf))}
            said = "; ".join(f"{kind} values {cols} (column: rows)"
                             for kind, cols in bad.items() if cols)
            raise ValueError(
                f"numeric column(s) with {said} in the rows to encode, where the encoder "
                "was fitted without them: drop or impute those rows (or refit with "
                "numeric_missing='indicator' on data that has missing values).")
        unseen = {}
        n = len(df)
        # every row's 1 of every text column, set in one flat assignment
        flat = np.arange(n, dtype=np.int64) * self.width
        hits, mask = [], []
        for name, levels, has_missing, arrow_levels in self.text:
            col = df[name]
            missing = col.isna().to_numpy()
            codes = _codes(col, levels, arrow_levels)
            if has_missing:
                codes[missing] = len(levels)
            bad = (codes < 0) & ~missing
            if bad.any():
                unseen[name] = int(bad.sum())
            hits.append(flat + (j + codes))
            mask.append(codes >= 0)
            j += len(levels) + has_missing
        if hits:
            out.reshape(-1)[np.concatenate(hits)[np.concatenate(mask)]] = 1.0
        return out, unseen


class TableEncoder(ParamsMixin, TransformerMixin, BaseEstimator):
    """One-hot encode a table's text columns, in one pass, for pandas and dask DataFrames.

    The output: the numeric columns, their missing-value indicators, then one 0/1 column per
    sorted level of each text column (as ``pandas.get_dummies(..., prefix_sep="=")``). A missing
    text value is the level ``<missing>``; a level unseen in fitting gives an all-zero row for
    its column and a warning, a missing or infinite number unseen in fitting an error.

    Parameters
    ----------
    max_levels : int, default=1000
        A text column with more distinct values (an ID, free text) is refused.
    numeric_missing : {"error", "indicator"}, default="error"
        A missing number is an error, or takes the column's smallest value with a 0/1
        ``column=<missing>`` indicator column.

    Attributes
    ----------
    feature_names_in_, n_features_in_ : ndarray of str of shape (n_features_in,), int
        The encoded columns and their number.
    numeric_columns_, indicator_columns_ : list of str
        The columns used as numbers, and those with a ``column=<missing>`` indicator.
    levels_ : dict of str to list
        Text column → its levels in output order (``"<missing>"`` last).
    n_features_out_ : int
        The width of the encoded array.
    fill_ : dict of str to float
        Indicator column → the value its missing numbers take.
    lengths_, summary_ : list of int, TableSummary
        Rows of every partition of the fitted frame, and the pass's findings.

    Notes
    -----
    ``fit`` reads a dask DataFrame once, and ``fit_transform`` reuses that pass's partition
    lengths; ``transform`` of another dask DataFrame counts its rows first unless ``lengths=``
    are given. Encoding runs on the workers, block by block.

    Examples
    --------
    >>> import pandas as pd
    >>> enc = TableEncoder().fit(pd.DataFrame({"age": [30, 40], "job": ["nurse", None]}))
    >>> list(enc.get_feature_names_out())
    ['age', 'job=nurse', 'job=<missing>']
    >>> enc.transform(pd.DataFrame({"age": [35], "job": ["nurse"]}))
    array([[35.,  1.,  0.]])
    """

    def __init__(self, max_levels: int = 1000, numeric_missing: str = "error") -> None:
        self.max_levels = max_levels
        self.numeric_missing = numeric_missing

    def fit(self, X: Any, y: Any = None) -> TableEncoder:
        """Learn the levels and ranges of every column of ``X`` in one pass.

        Parameters
        ----------
        X : pandas or dask DataFrame
        y : None, default=None
            Not used (the scikit-learn API).

        Returns
        -------
        self : TableEncoder
        """
        self._validate_params()
        columns = self._columns(X)
        return self.fit_summary(summarize(X, columns, limit=self.max_levels), columns)

    def fit_summary(self, summary: TableSummary, columns: Sequence[str]) -> TableEncoder:
        """Fit from a pass already made (:func:`summarize`).

        Parameters
        ----------
        summary : TableSummary
        columns : sequence of str
            The columns to encode.

        Returns
        -------
        self : TableEncoder

        """
        self._validate_params()
        columns = [str(c) for c in columns]
        if summary.n_rows == 0:
            raise ValueError("the table holds no rows.")
        cols = {c: summary.columns[c] for c in columns}
        wide = {c: s.n_distinct for c, s in cols.items() if s.text and s.counts is None}
        if wide:
            raise ValueError(
                "text column(s) with more than max_levels="
                f"{self.max_levels:,} distinct values: "
                + ", ".join(f"{c!r} (at least {n:,})" for c, n in wide.items())
                + ". An ID or free text is not a category: leave it out of features=, or "
                "raise max_levels= if it is one.")
        missing = {c: s.n_missing for c, s in cols.items() if not s.text and s.n_missing}
        if missing and self.numeric_missing == "error":
            raise ValueError(
                f"numeric column(s) with missing values {missing} (column: rows). Drop or "
                "impute those rows, or encode them as 0 plus a column=<missing> indicator "
                "(numeric_missing='indicator').")
        infinite = {c: s.n_infinite for c, s in cols.items() if s.n_infinite}
        if infinite:
            raise ValueError(f"numeric column(s) with infinite values {infinite} (column: "
                             "rows); drop or clip those rows first.")
        levels = {c: _sorted_levels(c, list(s.counts)) + ([MISSING] if s.n_missing else [])
                  for c, s in cols.items() if s.text}
        self.feature_names_in_ = np.asarray(columns, dtype=object)
        self.n_features_in_ = len(columns)
        self.numeric_columns_ = [c for c in columns if not cols[c].text]
        self.indicator_columns_ = [c for c in self.numeric_columns_ if cols[c].n_missing]
        self.fill_ = {c: float(np.nan_to_num(cols[c].low)) for c in self.indicator_columns_}
        self.levels_ = levels
        self.n_features_out_ = (len(self.numeric_columns_) + len(self.indicator_columns_)
                                + sum(map(len, self.levels_.values())))
        self.lengths_ = list(summary.lengths)
        self.summary_ = summary
        return self

    _parameter_constraints: ClassVar[dict[str, list[Spec]]] = {
        "max_levels": [Integer(1)], "numeric_missing": [Options(("error", "indicator"))]}

    @staticmethod
    def _columns(X: Any) -> list[str]:
        """The DataFrame's column names, after checking it can be encoded."""
        if not hasattr(X, "columns"):
            raise TypeError("TableEncoder encodes a pandas or dask DataFrame, got "
                            f"{type(X).__name__}.")
        if len(X.columns) == 0:
            raise ValueError("the table has no columns.")
        check_encodable(X)
        return [str(c) for c in X.columns]

    def output_ranges(self) -> tuple[np.ndarray, np.ndarray]:
        """The smallest and largest value of every encoded column over the rows ``fit`` saw,
        from its pass (no pass of their own): what ``ColumnScaler().fit`` learns from those
        rows encoded.

        Returns
        -------
        low, high : ndarray of shape (n_features_out,)
        """
        check_is_fitted(self, "levels_")
        cols, n = self.summary_.columns, self.summary_.n_rows
        low, high = [], []
        for c in self.numeric_columns_:
            # a missing number takes the column's smallest value (0 when none is present)
            lo, hi = cols[c].low, cols[c].high
            low.append(0.0 if np.isnan(lo) else lo)
            high.append(0.0 if np.isnan(hi) else hi)
        for c in self.indicator_columns_:
            low.append(float(cols[c].n_missing == n))
            high.append(1.0)
        for c, levels in self.levels_.items():
            for v in levels:
                rows = cols[c].n_missing if v == MISSING else cols[c].counts[v]
                low.append(float(rows == n))
                high.append(1.0)
        return np.asarray(low, dtype=np.float64), np.asarray(high, dtype=np.float64)

    def get_feature_names_out(self, input_features: Any = None) -> np.ndarray:
        """Names of the encoded columns: ``column``, ``column=<missing>``, ``column=level``.

        Parameters
        ----------
        input_features : None, default=None
            Not used (the scikit-learn API).

        Returns
        -------
        ndarray of str of shape (n_features_out,)
        """
        names = list(self.numeric_columns_)
        names += [f"{c}={MISSING}" for c in self.indicator_columns_]
        names += [f"{c}={v}" for c, levels in self.levels_.items() for v in levels]
        return np.asarray(names, dtype=object)

    def _plan(self) -> _Plan:
        """What the block function needs of the fitted encoder."""
        text = []
        for c, levels in self.levels_.items():
            index = pd.Index([v for v in levels if v != MISSING], dtype=object)
            text.append((c, index, levels[-1] == MISSING, _arrow_levels(index)))
        return _Plan(tuple(self.numeric_columns_), tuple(self.indicator_columns_),
                     tuple(self.fill_.get(c, 0.0) for c in self.indicator_columns_),
                     tuple(text), self.n_features_out_)

    def transform(self, X: Any, *, lengths: Sequence[int] | None = None,
                  chunk_rows: int | None = None) -> Any:
        """Encode ``X``: a numpy array for pandas, a lazy dask array for dask.

        Parameters
        ----------
        X : pandas or dask DataFrame
            A table with the fitted columns (others are ignored).
        lengths : sequence of int, default=None
            Rows of each partition of a dask ``X`` (None: counted in a pass).
        chunk_rows : int, default=None
            Largest block of the dask array (None: one block per partition).

        Returns
        -------
        ndarray or dask array of shape (n_rows, n_features_out)
        """
        check_columns(X, list(self.feature_names_in_), "the table to encode")
        plan = self._plan()
        if not _is_dask_frame(X):
            return plan.encode(X)
        parts = partitions(X[list(self.feature_names_in_)])
        return self.transform_partitions(parts, count_rows(parts) if lengths is None
                                         else lengths, chunk_rows=chunk_rows)

    def transform_counted(self, X: pd.DataFrame) -> tuple[np.ndarray, dict[str, int]]:
        """Encode a pandas table and count its unseen levels.

        Parameters
        ----------
        X : pandas.DataFrame
            A table with the fitted columns.

        Returns
        -------
        ndarray of shape (n_rows, n_features_out)
            As :meth:`transform`.
        dict of str to int
            Rows per text column whose level ``fit`` did not see (encoded as all zeros).
        """
        check_is_fitted(self, "levels_")
        check_columns(X, list(self.feature_names_in_), "the table to encode")
        return self._plan().encode_counted(X)

    def transform_partitions(self, parts: Sequence[Any], lengths: Sequence[int], *,
                             chunk_rows: int | None = None) -> Any:
        """Encode delayed partitions whose lengths are known.

        Parameters
        ----------
        parts : sequence of dask.delayed.Delayed
        lengths : sequence of int
            Rows of each partition.
        chunk_rows : as in :meth:`transform`.

        Returns
        -------
        dask.array.Array of shape (sum(lengths), n_features_out)
        """
        return partition_array(parts, lengths, self._plan().encode, dtype=np.float64,
                               width=self.n_features_out_, chunk_rows=chunk_rows)

    def fit_transform(self, X: Any, y: Any = None, **fit_params: Any) -> Any:
        """Fit, then encode with the fit pass's partition lengths (no second pass).

        Parameters
        ----------
        X : pandas or dask DataFrame
        y : None, default=None
            Not used (the scikit-learn API).
        **fit_params
            ``chunk_rows``: as in :meth:`transform`.

        Returns
        -------
        ndarray or dask array of shape (n_rows, n_features_out)
        """
        self._validate_params()
        columns = self._columns(X)
        if not _is_dask_frame(X):
            return self.fit(X).transform(X)
        parts = partitions(X[columns])
        self.fit_summary(summarize(X, columns, limit=self.max_levels, parts=parts), columns)
        return self.transform_partitions(parts, self.lengths_,
                                         chunk_rows=fit_params.get("chunk_rows"))

    def to_dict(self) -> dict[str, Any]:
        """The fitted encoding as JSON-able data (what :meth:`from_dict` takes).

        Returns
        -------
        dict
        """
        return {"max_levels": int(self.max_levels), "numeric_missing": self.numeric_missing,
                "columns": [str(c) for c in self.feature_names_in_],
                "numeric": list(self.numeric_columns_),
                "indicators": list(self.indicator_columns_),
                "fill": {c: float(v) for c, v in self.fill_.items()},
                "levels": {c: [_jsonable(v) for v in levels]
                           for c, levels in self.levels_.items()}}

    @classmethod
    def from_dict(cls, spec: dict[str, Any]) -> TableEncoder:
        """The fitted encoder a :meth:`to_dict` result describes.

        Parameters
        ----------
        spec : dict
            A :meth:`to_dict` result.

        Returns
        -------
        TableEncoder
        """
        enc = cls(max_levels=spec["max_levels"], numeric_missing=spec["numeric_missing"])
        enc.feature_names_in_ = np.asarray(spec["columns"], dtype=object)
        enc.n_features_in_ = len(spec["columns"])
        enc.numeric_columns_ = list(spec["numeric"])
        enc.indicator_columns_ = list(spec["indicators"])
        enc.fill_ = {c: float(v) for c, v in spec.get("fill", {}).items()}
        enc.levels_ = {c: list(v) for c, v in spec["levels"].items()}
        enc.n_features_out_ = (len(enc.numeric_columns_) + len(enc.indicator_columns_)
                               + sum(map(len, enc.levels_.values())))
        return enc

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.input_tags.two_d_array = False
        tags.input_tags.categorical = True
        tags.input_tags.string = True
        return tags


def check_encodable(X: Any) -> None:
    """Refuse columns of dates, durations, periods or intervals (neither numbers nor levels).

    Parameters
    ----------
    X : pandas or dask DataFrame

    Raises
    ------
    ValueError
        A column of one of those types; the message names it.
    """
    odd = {str(c): str(t) for c, t in X.dtypes.items()
           if pd.api.types.is_datetime64_any_dtype(t) or pd.api.types.is_timedelta64_dtype(t)
           or isinstance(t, pd.PeriodDtype | pd.IntervalDtype)}
    if odd:
        raise ValueError(
            f"column(s) of dates or durations {odd} are neither numbers nor categories: turn "
            "them into numbers (the year, days since a date) or text first, or leave them out "
            "of features=.")


def _jsonable(value: Any) -> Any:
    """A level as JSON can hold it (text for anything but str, numbers, bools, None)."""
    if isinstance(value, str | int | float | bool) or value is None:
        return value
    return str(value)


def text_columns(X: Any) -> list[str]:
    """The columns of a DataFrame that :class:`TableEncoder` one-hot encodes.

    Parameters
    ----------
    X : pandas or dask DataFrame

    Returns
    -------
    list of str
    """
    return [str(c) for c, t in X.dtypes.items() if is_text(t)]
