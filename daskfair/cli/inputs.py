"""A job's data: a named data set, a table (CSV or Parquet: summarised in one pass on the
workers, then encoded where each partition is read) or a 2-D zarr array (columns by index),
either larger than memory."""

from __future__ import annotations

import os
import re
import uuid
import warnings
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import dask.array as da
import numpy as np
import pandas as pd

from .._frames import partition_array, partitions
from .._groups import combined_names
from .._validation import is_dask
from ..tables import (
    TableEncoder,
    TableSummary,
    check_encodable,
    is_table_path,
    read_table,
    summarize,
)
from ..tables.summary import is_text

__all__ = ["JobData", "frame_column", "load_input", "table_data", "to_dask"]


@dataclass
class JobData:
    """Features, label (or None), raw groups, feature names, a JSON-able description of the
    source, the published training rows (or None), and for a table its encoder and summary
    (every column's levels or range, the label's and groups' counts, the partition lengths),
    the frame of its feature, label and group columns (the groups combined into one), that
    frame's delayed partitions, which the pass counted, and the raw feature columns.
    """

    X: Any
    y: Any
    sensitive: Any
    feature_names: list[str]
    description: dict[str, Any] = field(default_factory=dict)
    splits: list[np.ndarray] | None = None
    encoder: TableEncoder | None = None
    summary: TableSummary | None = None
    frame: Any = None
    parts: list[Any] | None = None
    columns: list[str] | None = None


def _same_columns(label: Any, sensitive: list[Any], features: list[Any] | None) -> None:
    if label is not None and label in sensitive:
        raise ValueError(
            f"--label and --sensitive name the same column ({label!r}); the groups must be a "
            "column of their own.")
    twice = sorted({str(c) for c in sensitive if sensitive.count(c) > 1})
    if twice:
        raise ValueError(f"--sensitive lists {twice} more than once; name each column once.")
    if features is not None:
        twice = sorted({str(c) for c in features if features.count(c) > 1})
        if twice:
            raise ValueError(f"--features lists {twice} more than once; name each column once.")
        overlap = {*sensitive, label} & set(features)
        if overlap:
            raise ValueError(f"--features must not include the label or sensitive column "
                             f"({sorted(str(c) for c in overlap)}).")


def _column(columns: list[str], name: str | None, what: str, path: Any) -> str:
    if name is None:
        raise ValueError(f"{path} is a table: name its {what} column with --{what} COLUMN.")
    if name not in columns:
        raise ValueError(f"{path} has no column {name!r} (--{what}); its columns are {columns}.")
    return name


def _values(part: pd.DataFrame, name: str) -> np.ndarray:
    return part[name].to_numpy()


def frame_column(frame: Any, parts: list[Any], lengths: list[int], name: str,
                 chunk_rows: int | None) -> da.Array:
    """Column ``name`` of ``frame``'s delayed ``parts`` (of ``lengths`` rows) as a dask array:
    cut from the same partitions as the features, so that a pass reads each once."""
    return partition_array(parts, lengths, partial(_values, name=name),
                           dtype=frame[name]._meta.to_numpy().dtype, chunk_rows=chunk_rows)


def _combined(part: pd.DataFrame, columns: list[str]) -> pd.Series:
    # a row missing any of the columns has no group: missing, counted and refused by the pass
    values = part[columns].to_numpy()
    names = pd.Series(combined_names(values), index=part.index, dtype=object)
    return names.where(~part[columns].isna().any(axis=1).to_numpy(), None)


def _sensitive_columns(sensitive: str | list[str] | None) -> list[str] | None:
    if sensitive is None or isinstance(sensitive, str):
        return None if sensitive is None else [sensitive]
    return list(sensitive)


def _check_target(summary: TableSummary, name: str, what: str, path: Any) -> None:
    col = summary.columns[name]
    if col.n_missing:
        raise ValueError(f"{path}: the {what} column {name!r} has {col.n_missing:,} missing "
                         "values; drop those rows first.")
    if col.n_infinite:
        raise ValueError(f"{path}: the {what} column {name!r} has {col.n_infinite:,} infinite "
                         "values; drop those rows first.")


def _mixed_types(exc: ValueError, path: Any) -> ValueError:
    """dask's dtype mismatch (a column numeric in the rows it sampled, text later), said
    plainly; other errors as they are."""
    text = str(exc)
    if "Mismatched dtypes" not in text:
        return exc
    columns = [c for c in re.findall(r"^\|\s*(.+?)\s*\|\s*\S+\s*\|\s*\S+\s*\|$", text,
                                     flags=re.M) if c != "Column"]
    if not columns:  # a layout we do not know: dask's own words
        return exc
    return ValueError(
        f"column(s) {columns} of {path} hold numbers in some rows and text in others (the "
        "type was guessed from the first rows). Make each column one type in the file, or "
        "leave it out with --features.")


def _check_task(label: Any, name: str, task: str) -> None:
    """The label fits the task: two values to classify, numbers to regress."""
    values = (sorted(map(str, label.counts)) if label.counts is not None else None)
    shown = ("more than 10" if values is None or len(values) > 10
             else f"{len(values)}: {', '.join(values)}")
    if task == "classification" and (values is None or len(values) != 2):
        raise ValueError(
            f"classification needs a binary label, but the label column {name!r} has "
            f"{shown} values. Use --task regression for a numeric label, or make it binary.")
    if task != "classification" and label.text and (values is None or len(values) != 2):
        raise ValueError(
            f"the label column {name!r} is text with {shown} values: FKR-F²E needs a binary "
            "label (classification) or a numeric one (regression).")


def _columns(frame: Any, label: str | None, sensitive: str | list[str] | None,
             features: list[str] | None, need_label: bool, encode: bool,
             path: Any) -> tuple[Any, list[str], list[str], str, str | None]:
    """The table's columns checked: (frame with the combined group column, features,
    sensitive columns, the group column's name, the label column or None)."""
    columns = [str(c) for c in frame.columns]
    s_cols = _sensitive_columns(sensitive) or []
    if not s_cols:
        _column(columns, None, "sensitive", path)
    for c in s_cols:
        _column(columns, c, "sensitive", path)
    y_col = _column(columns, label, "label", path) if (need_label or label is not None) else None
    _same_columns(y_col, s_cols, features)
    s_col = s_cols[0]
    if len(s_cols) > 1:
        s_col = ",".join(s_cols)
        if s_col in columns:
            raise ValueError(
                f"{path} already has a column {s_col!r}, the name of the combined groups of "
                f"--sensitive {' '.join(s_cols)}; rename that column.")
        frame = frame.assign(**{s_col: frame[s_cols].map_partitions(
            _combined, s_cols, meta=pd.Series(dtype=object, name=s_col))})
    if features is None:
        features = [c for c in columns if c not in {*s_cols, y_col}]
    for c in features:
        _column(columns, c, "features", path)
    if not features:
        raise ValueError(f"{path} has no feature columns besides the label and groups.")
    check_encodable(frame[features])
    text = [c for c in features if is_text(frame[c].dtype)]
    if text and not encode:
        raise ValueError(
            f"feature columns {text} of {path} are not numeric. Leave out --no-encode to "
            "one-hot encode them, encode them yourself, or leave them out with --features.")
    return frame, features, s_cols, s_col, y_col


def _summary(frame: Any, features: list[str], s_col: str, y_col: str | None, parts: list,
             max_levels: int, task: str | None, path: Any) -> TableSummary:
    """The table's one pass (levels, ranges, missing values, lengths), its targets checked."""
    targets = [c for c in (y_col, s_col) if c is not None]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", pd.errors.DtypeWarning)  # said below, more clearly
        try:
            summary = summarize(frame, [*features, *targets], limit=max_levels,
                                counted=targets, parts=parts)
        except ValueError as exc:
            raise _mixed_types(exc, path) from exc
    if summary.n_rows == 0:
        raise ValueError(f"{path} holds no rows.")
    for name, what in ((s_col, "sensitive"), (y_col, "label")):
        if name is not None:
            _check_target(summary, name, what, path)
    groups = summary.columns[s_col].counts
    if groups is None or len(groups) < 2:
        raise ValueError(
            f"{path}: the sensitive column {s_col!r} has "
            + ("more than --max-levels distinct values" if groups is None
               else f"{len(groups)} group ({', '.join(map(str, groups))})")
            + "; at least 2 groups are needed, and a group is a category, not an ID.")
    if y_col is not None and task is not None:
        _check_task(summary.columns[y_col], y_col, task)
    return summary


def table_data(frame: Any, label: str | None, sensitive: str | list[str] | None,
               features: list[str] | None, need_label: bool, encode: bool = True, *,
               max_levels: int = 1000, numeric_missing: str = "error",
               chunk_rows: int | None = 50_000, task: str | None = None,
               name: Any = "the table") -> JobData:
    """A dask DataFrame as a job's data: one pass on the workers summarises it; its rows are
    encoded where they are read, whenever a method reads them. Several ``sensitive``
    columns make one group of every combination (named as the estimators name them); a row
    missing any of them is a missing group."""
    frame, features, s_cols, s_col, y_col = _columns(frame, label, sensitive, features,
                                                     need_label, encode, name)
    frame = frame[[*features, *(c for c in (y_col, s_col) if c is not None)]]
    parts = partitions(frame)
    summary = _summary(frame, features, s_col, y_col, parts, max_levels, task, name)
    encoder = TableEncoder(max_levels=max_levels, numeric_missing=numeric_missing)
    encoder.fit_summary(summary, features)
    X = encoder.transform_partitions(parts, summary.lengths, chunk_rows=chunk_rows)

    def column(col: str) -> Any:
        return frame_column(frame, parts, summary.lengths, col, chunk_rows)

    return JobData(
        X, column(y_col) if y_col else None, column(s_col),
        [str(c) for c in encoder.get_feature_names_out()], {
            "source": "table", "path": str(name), "label": label, "sensitive": s_col,
            **({"sensitive_columns": s_cols} if len(s_cols) > 1 else {}),
            "rows": summary.n_rows, "partitions": len(parts),
            "encoded": {c: len(v) for c, v in encoder.levels_.items()},
            "constant": [c for c in features if summary.columns[c].constant]},
        encoder=encoder, summary=summary, frame=frame, parts=parts, columns=list(features))


def _index(value: str | None, width: int, what: str, path: Path) -> int | None:
    if value is None:
        return None
    try:
        i = int(value)
    except ValueError:
        raise ValueError(f"{path} is a zarr array: --{what} must be a column index, got "
                         f"{value!r}.") from None
    if not -width <= i < width:
        raise ValueError(f"--{what} {i} is outside the {width} columns of {path}.")
    return i % width


def _from_zarr(path: Path, label: str | None, sensitive: str | None,
               features: list[str] | None, need_label: bool) -> JobData:
    import zarr

    from .._files import walk_plain

    walk_plain(path)  # plain files only: a link or a FIFO could hang or read elsewhere
    try:
        node = zarr.open(store=str(path), mode="r")
    except Exception as exc:
        raise ValueError(f"{path} is not a readable zarr array ({exc}).") from exc
    if not isinstance(node, zarr.Array):
        arrays = sorted(node.array_keys())
        raise ValueError(
            f"{path} is a zarr group; give the path of a 2-D array inside it "
            + (f"(one of {arrays})." if arrays else "(it holds no arrays)."))
    if node.ndim != 2 or not np.issubdtype(node.dtype, np.number):
        raise ValueError(f"{path} must be a 2-D numeric array, got shape {node.shape} and "
                         f"dtype {node.dtype}.")
    width = node.shape[1]
    if node.shape[0] == 0:
        raise ValueError(f"{path} holds no rows.")
    if sensitive is None:
        raise ValueError(f"{path}: give the column index of the groups with --sensitive.")
    if need_label and label is None:
        raise ValueError(f"{path}: give the column index of the label with --label.")
    s_i = _index(sensitive, width, "sensitive", path)
    y_i = _index(label, width, "label", path)
    if features is None:
        cols = [i for i in range(width) if i not in {s_i, y_i}]
    else:
        cols = [_index(f, width, "features", path) for f in features]
    _same_columns(y_i, [s_i], None if features is None else cols)
    if not cols:
        raise ValueError(f"{path} has no feature columns besides the label and groups.")
    arr = da.from_zarr(node)
    X = arr[:, cols].rechunk({1: -1}).astype(np.float64)
    y = arr[:, y_i] if y_i is not None else None
    return JobData(X, y, arr[:, s_i], [f"x{i}" for i in cols], {
        "source": "zarr", "path": str(path), "label": y_i, "sensitive": s_i})


def load_input(
    *,
    dataset: str | None = None,
    path: str | os.PathLike[str] | None = None,
    label: str | None = None,
    sensitive: str | list[str] | None = None,
    features: list[str] | None = None,
    sensitive_attribute: str | None = None,
    data_dir: str | os.PathLike[str] | None = None,
    need_label: bool = False,
    encode: bool = True,
    max_levels: int = 1000,
    numeric_missing: str = "error",
    chunk_rows: int | None = 50_000,
    task: str | None = None,
) -> JobData:
    """The job's data from a named ``dataset`` or a table or zarr array at ``path``
    (exactly one). A table is never read into this process; ``task`` is checked against its
    label in its pass."""
    return _load(dataset, path, label, sensitive, features, sensitive_attribute, data_dir,
                 need_label, encode, max_levels, numeric_missing, chunk_rows, task)


def _load(dataset: str | None, path: Any, label: str | None, sensitive: Any,
          features: list[str] | None, sensitive_attribute: str | None, data_dir: Any,
          need_label: bool, encode: bool, max_levels: int, numeric_missing: str,
          chunk_rows: int | None, task: str | None) -> JobData:
    if (dataset is None) == (path is None):
        raise ValueError("give the data as exactly one of --dataset NAME or --input PATH.")
    if dataset is not None:
        from ..datasets import load_dataset

        for opt, value in (("--label", label), ("--sensitive", sensitive),
                           ("--features", features)):
            if value is not None:
                raise ValueError(f"{opt} applies to --input files; a named data set fixes its "
                                 "columns (use --sensitive-attribute to choose its groups).")
        d = load_dataset(dataset, data_dir, sensitive_attribute=sensitive_attribute)
        if need_label and d.y is None:
            raise ValueError(f"data set {dataset!r} has no label.")
        return JobData(d.X, d.y, d.sensitive, list(d.feature_names), {
            "source": "dataset", "name": dataset, "sensitive": d.sensitive_name,
            "groups": [str(g) for g in d.groups]}, d.splits)
    if sensitive_attribute is not None:
        raise ValueError("--sensitive-attribute applies to named data sets; for a file name "
                         "the column with --sensitive.")
    given = os.fspath(path)
    if is_table_path(given):  # read by an absolute path: what a worker reads, from any folder
        return table_data(read_table(os.path.abspath(given)), label, sensitive, features,
                          need_label, encode, max_levels=max_levels,
                          numeric_missing=numeric_missing, chunk_rows=chunk_rows, task=task,
                          name=given)
    p = Path(path).absolute()
    if not p.exists():
        raise FileNotFoundError(f"input {given} does not exist.")
    if p.is_dir():
        several = _sensitive_columns(sensitive)
        if several is not None and len(several) > 1:
            raise ValueError(f"{p} is a zarr array: give one column index with --sensitive "
                             "(several columns are for CSV and Parquet tables).")
        return _from_zarr(p, label, None if several is None else several[0], features,
                          need_label)
    raise ValueError(
        f"cannot tell the format of {p}: use a .csv, .tsv, .parquet file (CSV optionally "
        ".gz), a Parquet directory, a glob of them, or a zarr array (a directory).")


def to_dask(x: Any, chunk_rows: int) -> da.Array:
    """``x`` as a dask array of ``chunk_rows``-row blocks. An in-memory array becomes one
    graph literal per block, which the scheduler sends again when a worker is lost (scattered
    data would be gone)."""
    if is_dask(x):
        return x.rechunk({0: chunk_rows, **({1: -1} if x.ndim == 2 else {})})
    x = np.asarray(x)
    # one key per block, unique to this call: a key reused for other data makes the
    # scheduler warn ("different run_spec") and could hand a task the wrong block
    name = f"daskfair-input-{uuid.uuid4().hex}"
    blocks = [x[lo:lo + chunk_rows] for lo in range(0, len(x), chunk_rows)]
    rest = (0,) * (x.ndim - 1)
    graph = {(name, i, *rest): b for i, b in enumerate(blocks)}
    chunks = (tuple(len(b) for b in blocks), *((n,) for n in x.shape[1:]))
    return da.Array(graph, name, chunks, dtype=x.dtype)
