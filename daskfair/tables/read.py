"""Tables (CSV, Parquet, directories, globs) read lazily with ``dask.dataframe``."""

from __future__ import annotations

import glob
import os
from pathlib import Path
from typing import Any

__all__ = ["is_table_path", "read_table", "reason"]

_CSV = {".csv": ",", ".tsv": "\t", ".txt": ","}
_PARQUET = {".parquet", ".pq", ".parq"}
_GLOB = set("*?[")


def _suffix(path: str) -> str:
    """The format's suffix of ``path``, lower case, a compression suffix skipped."""
    suffixes = [s.lower() for s in Path(path).suffixes]
    if suffixes and suffixes[-1] in (".gz", ".bz2", ".xz"):
        suffixes = suffixes[:-1]
    return suffixes[-1] if suffixes else ""


def _is_zarr(path: Path) -> bool:
    """Whether the directory is a zarr array or group (v2 or v3)."""
    return (path / "zarr.json").exists() or (path / ".zarray").exists() or (
        path / ".zgroup").exists()


def is_table_path(path: str | os.PathLike[str]) -> bool:
    """True for what :func:`read_table` reads (a zarr array's directory is not a table).

    Parameters
    ----------
    path : path-like
        A file, directory or glob.

    Returns
    -------
    bool
    """
    text = str(path)
    if _GLOB & set(text):
        return True
    p = Path(text)
    if p.is_dir():
        return not _is_zarr(p)
    return _suffix(text) in _CSV or _suffix(text) in _PARQUET


def _files(text: str) -> list[str]:
    """The files a path or glob names; FileNotFoundError when none."""
    if _GLOB & set(text):
        found = sorted(glob.glob(text))
        if not found:
            raise FileNotFoundError(f"no file matches {text}.")
        return found
    if not Path(text).exists():
        raise FileNotFoundError(f"input {text} does not exist.")
    return [text]


def read_table(path: str | os.PathLike[str], *, blocksize: str | int = "64MB") -> Any:
    """A lazy ``dask.dataframe.DataFrame`` of the table at ``path``.

    Parameters
    ----------
    path : path-like
        A CSV file (``.csv``, ``.tsv``, ``.txt``, optionally ``.gz``/``.bz2``/``.xz``), a Parquet
        file or directory (hive partitions become columns), or a glob of either kind.
    blocksize : str or int, default="64MB"
        Bytes of uncompressed CSV per partition (a compressed file is one partition).

    Returns
    -------
    dask.dataframe.DataFrame

    Raises
    ------
    FileNotFoundError
        Nothing at ``path``, or a glob that matches no file.
    ValueError
        An unknown or mixed format, a zarr store, or a file that is not a readable table.
    ImportError
        Parquet without pyarrow (``pip install 'daskfair[parquet]'``).

    Examples
    --------
    >>> import pathlib, tempfile
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "people.csv"
    >>> _ = path.write_text("age,job\\n30,nurse\\n40,\\n")
    >>> table = read_table(path)  # lazy: nothing is read yet
    >>> list(table.columns), int(table["job"].isna().sum().compute())
    (['age', 'job'], 1)
    """
    import dask.dataframe as dd

    text = os.fspath(path)
    files = _files(text)
    if len(files) == 1 and Path(files[0]).is_dir():
        if _is_zarr(Path(files[0])):
            raise ValueError(f"{text} is a zarr store, not a table.")
        return _parquet(dd, files[0], text)
    kinds = {"csv" if _suffix(f) in _CSV else "parquet" if _suffix(f) in _PARQUET else None
             for f in files}
    if None in kinds:
        raise ValueError(
            f"cannot tell the format of {text}: use a .csv, .tsv, .parquet file (CSV "
            "optionally .gz), a Parquet directory, a glob of them, or a zarr array (a "
            "directory).")
    if len(kinds) > 1:
        raise ValueError(f"{text} matches both CSV and Parquet files; read one format at a time.")
    if kinds == {"parquet"}:
        return _parquet(dd, files if len(files) > 1 else files[0], text)
    seps = {_CSV[_suffix(f)] for f in files}
    if len(seps) > 1:
        raise ValueError(f"{text} matches comma- and tab-separated files; read one at a time.")
    compressed = any(f.lower().endswith((".gz", ".bz2", ".xz")) for f in files)
    sep = seps.pop()
    try:
        return dd.read_csv(files, sep=sep, blocksize=None if compressed else blocksize,
                           compression="infer", assume_missing=True)
    except (ValueError, UnicodeDecodeError) as exc:  # pandas' EmptyDataError is a ValueError
        if type(exc).__name__ == "EmptyDataError":
            raise ValueError(f"{text} is empty: a table needs a header line and rows.") \
                from None
        kind = "tab" if sep == "\t" else "comma"
        raise ValueError(
            f"{text} is not a readable {kind}-separated table ({reason(exc)}). Every line "
            "needs the same fields as the header, in UTF-8 text.") from exc


def reason(exc: BaseException) -> str:
    """``Type: message`` of an error, without the wrapping dask adds around pandas' own."""
    message = str(exc).strip()
    if "Original Message:" in message:
        message = message.split("Original Message:", 1)[1].strip()
    return f"{type(exc).__name__}: {message}"


def _parquet(dd: Any, files: Any, text: str) -> Any:
    """``dd.read_parquet(files)`` with errors that say what to do."""
    try:
        return dd.read_parquet(files)
    except ImportError as exc:
        raise ImportError(f"reading {text} needs pyarrow: pip install 'daskfair[parquet]'.") \
            from exc
    except (OSError, ValueError) as exc:  # pyarrow's ArrowInvalid is a ValueError
        raise ValueError(
            f"{text} is not a readable Parquet file or dataset ({reason(exc)}). Check the "
            "files, or give a CSV table instead.") from exc
