"""Inputs of the command-line jobs: a named data set, a CSV/Parquet table or a zarr array.

A table names its label and sensitive columns (``--label``, ``--sensitive``); the features are
the other columns (or ``--features``). A zarr array is 2-D and numeric; its label and sensitive
columns are given by index and it is read lazily, block by block, so it may be larger than
memory. Whatever the source, the job gets a :class:`JobData`, and :func:`to_dask` cuts an
in-memory array into row blocks that a lost worker cannot take with it.
"""

from __future__ import annotations

import os
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import dask.array as da
import numpy as np
import pandas as pd

from .._validation import is_dask

__all__ = ["JobData", "load_input", "read_table", "to_dask"]

_TABLE_SUFFIXES = {".csv": "csv", ".tsv": "csv", ".txt": "csv", ".parquet": "parquet",
                   ".pq": "parquet"}


@dataclass
class JobData:
    """Features, label, groups and a description of where they came from.

    Attributes
    ----------
    X : ndarray or dask array of shape (n_samples, n_features)
    y : ndarray, dask array or None
        The label (None when the source has none).
    sensitive : ndarray or dask array of shape (n_samples,)
        Group of every row (raw values; the estimators encode them).
    feature_names : list of str
    description : dict
        JSON-able: source, name, rows, features, label and sensitive column names.
    splits : list of ndarray or None
        Published training-row indices (the FKR-F²E authors' files), if any.
    """

    X: Any
    y: Any
    sensitive: Any
    feature_names: list[str]
    description: dict[str, Any] = field(default_factory=dict)
    splits: list[np.ndarray] | None = None


def read_table(path: str | os.PathLike[str]) -> pd.DataFrame:
    """Read a CSV (``.csv``, ``.tsv``, ``.txt``, optionally ``.gz``) or Parquet file."""
    p = Path(path)
    suffixes = [s.lower() for s in p.suffixes]
    if suffixes and suffixes[-1] == ".gz":
        suffixes = suffixes[:-1]
    kind = _TABLE_SUFFIXES.get(suffixes[-1] if suffixes else "")
    if kind is None:
        raise ValueError(
            f"cannot tell the format of {p}: use a .csv, .tsv, .parquet file or a zarr array "
            "(a directory).")
    if kind == "parquet":
        try:
            return pd.read_parquet(p)
        except ImportError as exc:
            raise ImportError(
                f"reading {p} needs pyarrow: pip install 'daskfair[parquet]'.") from exc
        except (OSError, ValueError) as exc:  # pyarrow's ArrowInvalid is a ValueError
            raise ValueError(
                f"{p} is not a readable Parquet file ({type(exc).__name__}: {str(exc).strip()}). "
                "Check the file, or give a .csv table instead.") from exc
    tsv = suffixes[-1] == ".tsv"
    try:
        return pd.read_csv(p, sep="\t" if tsv else ",")
    except pd.errors.EmptyDataError:
        raise ValueError(f"{p} is empty: a table needs a header line and rows.") from None
    except (pd.errors.ParserError, UnicodeDecodeError) as exc:
        raise ValueError(
            f"{p} is not a readable {'tab' if tsv else 'comma'}-separated table "
            f"({type(exc).__name__}: {str(exc).strip()}). Every line needs the same fields as "
            "the header, in UTF-8 text.") from exc


def _same_columns(label: Any, sensitive: Any, features: list[Any] | None) -> None:
    if label is not None and label == sensitive:
        raise ValueError(
            f"--label and --sensitive name the same column ({label!r}); the groups must be a "
            "column of their own.")
    if features is not None:
        twice = sorted({str(c) for c in features if features.count(c) > 1})
        if twice:
            raise ValueError(f"--features lists {twice} more than once; name each column once.")
        overlap = {sensitive, label} & set(features)
        if overlap:
            raise ValueError(f"--features must not include the label or sensitive column "
                             f"({sorted(str(c) for c in overlap)}).")


def _column(df: pd.DataFrame, name: str | None, what: str, path: Path) -> str:
    if name is None:
        raise ValueError(f"{path} is a table: name its {what} column with --{what} COLUMN.")
    if name not in df.columns:
        raise ValueError(
            f"{path} has no column {name!r} (--{what}); its columns are {list(df.columns)}.")
    return name


def _from_table(path: Path, label: str | None, sensitive: str | None,
                features: list[str] | None, need_label: bool, encode: bool = True) -> JobData:
    df = read_table(path)
    if df.empty:
        raise ValueError(f"{path} holds no rows.")
    s_col = _column(df, sensitive, "sensitive", path)
    y_col = _column(df, label, "label", path) if (need_label or label is not None) else None
    _same_columns(y_col, s_col, features)
    if features is None:
        features = [c for c in df.columns if c not in {s_col, y_col}]
    else:
        for c in features:
            _column(df, c, "features", path)
    if not features:
        raise ValueError(f"{path} has no feature columns besides the label and groups.")
    bad = [c for c in features if not (pd.api.types.is_numeric_dtype(df[c])
                                       or pd.api.types.is_bool_dtype(df[c]))]
    if bad and not encode:
        raise ValueError(
            f"feature columns {bad} of {path} are not numeric. Leave out --no-encode to "
            "one-hot encode them, encode them yourself, or leave them out with --features.")
    missing = {c: int(n) for c, n in df[[*features, s_col] + ([y_col] if y_col else [])]
               .isna().sum().items() if n}
    if missing:
        raise ValueError(
            f"{path} has missing values {missing} (column: count); drop or impute those rows "
            "first.")
    encoded = {str(c): int(df[c].nunique()) for c in bad}
    frame = df[features]
    if bad:
        # one indicator column per level, in the columns' order (levels sorted)
        frame = pd.get_dummies(frame, columns=bad, prefix_sep="=", dtype=np.float64)
    checked = [frame[c] for c in frame.columns] + ([df[y_col]] if y_col else [])
    infinite = {col.name: int(n) for col in checked
                if pd.api.types.is_numeric_dtype(col) and not pd.api.types.is_bool_dtype(col)
                and (n := np.isinf(col.astype(np.float64)).sum())}
    if infinite:
        raise ValueError(
            f"{path} has infinite values {infinite} (column: count); drop or clip those rows "
            "first.")
    X = frame.to_numpy(dtype=np.float64)
    y = df[y_col].to_numpy() if y_col else None
    return JobData(X, y, df[s_col].to_numpy(), [str(c) for c in frame.columns], {
        "source": "table", "path": str(path), "label": label, "sensitive": sensitive,
        "encoded": encoded})


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
    _same_columns(y_i, s_i, None if features is None else cols)
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
    sensitive: str | None = None,
    features: list[str] | None = None,
    sensitive_attribute: str | None = None,
    data_dir: str | os.PathLike[str] | None = None,
    need_label: bool = False,
    encode: bool = True,
) -> JobData:
    """Load a job's data from a named data set or a file.

    Parameters
    ----------
    dataset : str, optional
        One of :data:`daskfair.datasets.DATASETS`.
    path : path-like, optional
        A CSV/Parquet table or a zarr array (exactly one of ``dataset`` and ``path``).
    label, sensitive : str, optional
        Column names (tables) or indices (zarr arrays).
    features : list of str, optional
        Feature columns (default: all others).
    sensitive_attribute : str, optional
        Which attribute of a named data set is sensitive, where it offers a choice.
    data_dir : path-like, optional
        Where the named data sets live.
    need_label : bool
        The job needs a label: a missing one is an error.
    encode : bool
        One-hot encode a table's non-numeric feature columns (one 0/1 column per level,
        named ``column=level``; ``description["encoded"]`` counts the levels). ``False``
        makes them an error.
    """
    if (dataset is None) == (path is None):
        raise ValueError("give the data as exactly one of --dataset NAME or --input PATH.")
    if dataset is not None:
        from ..datasets import load_dataset

        for opt, value in (("--label", label), ("--sensitive", sensitive),
                           ("--features", features)):
            if value is not None:
                raise ValueError(f"{opt} applies to --input files; a named data set fixes its "
                                 "columns (use --sensitive-attribute to choose its groups).")
        d = load_dataset(dataset, data_dir, sensitive=sensitive_attribute)
        if need_label and d.y is None:
            raise ValueError(f"data set {dataset!r} has no label.")
        return JobData(d.X, d.y, d.sensitive, list(d.feature_names), {
            "source": "dataset", "name": dataset, "sensitive": d.sensitive_name,
            "groups": [str(g) for g in d.groups]}, d.splits)
    p = Path(path)
    if not p.exists():
        raise FileNotFoundError(f"input {p} does not exist.")
    if sensitive_attribute is not None:
        raise ValueError("--sensitive-attribute applies to named data sets; for a file name "
                         "the column with --sensitive.")
    if p.is_dir():
        return _from_zarr(p, label, sensitive, features, need_label)
    return _from_table(p, label, sensitive, features, need_label, encode)


def to_dask(x: Any, chunk_rows: int) -> da.Array:
    """``x`` as a dask array of ``chunk_rows``-row blocks.

    An in-memory array becomes one graph literal per block: the scheduler keeps the blocks,
    so a block lost with a worker is sent again instead of failing the job (scattered data
    would be gone). Dask arrays are rechunked to the same row blocks.
    """
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
