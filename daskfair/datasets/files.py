"""The data directory (kept by hand, or a cache filled on first use) and its checked files."""

from __future__ import annotations

import os
import warnings
from pathlib import Path

import dask

from .._folders import user_cache_dir
from .errors import DataIntegrityError, DataUnavailableError
from .fetch import fetch_file, matches, sha256_of
from .sources import SOURCES, files_of

__all__ = ["cache_dir", "data_dir", "fetch_data", "is_cache", "verify_data"]


def data_dir(path: str | os.PathLike[str] | None = None) -> Path:
    """The data directory the loaders read.

    In this order: ``path``; ``DASKFAIR_DATA``; the dask config key ``daskfair.data-dir``; a
    folder ``shared/data`` beside the working directory or a folder above this package; else
    :func:`cache_dir` (created here).

    Parameters
    ----------
    path : path-like, default=None
        The folder to use; overrides everything else.

    Returns
    -------
    pathlib.Path
    """
    if path is not None:
        p = Path(path)
        if not p.is_dir():
            raise FileNotFoundError(f"data directory {p} does not exist.")
        return p
    for name, value in (("DASKFAIR_DATA", os.environ.get("DASKFAIR_DATA")),
                        ("daskfair.data-dir", dask.config.get("daskfair.data-dir", None))):
        if value:
            if not Path(value).is_dir():
                raise FileNotFoundError(
                    f"the data directory {value} ({name}) does not exist: create it (an empty "
                    "folder is filled on first use) or unset it.")
            return Path(value)
    # a development checkout: ../shared/data beside the working directory or a folder above
    candidates = [Path.cwd().parent / "shared" / "data"]
    candidates += [parent / "shared" / "data" for parent in Path(__file__).resolve().parents]
    for c in candidates:
        if c.is_dir():
            return c
    cache = cache_dir()
    cache.mkdir(parents=True, exist_ok=True)
    return cache


def cache_dir() -> Path:
    """The user's cache folder for data sets (not created here).

    Returns
    -------
    pathlib.Path
        ``~/.cache/daskfair/data`` on Linux (or under an absolute ``XDG_CACHE_HOME``),
        ``~/Library/Caches/daskfair/data`` on macOS, ``%LOCALAPPDATA%\\daskfair\\Cache\\data``
        on Windows.
    """
    return user_cache_dir("data")


def is_cache(path: Path) -> bool:
    """Whether missing files are downloaded into the data folder ``path``.

    Parameters
    ----------
    path : pathlib.Path
        A data folder; one that holds ``SHA256SUMS`` is kept by hand, not a cache.

    Returns
    -------
    bool
        True when ``path`` is a cache.
    """
    return not (path / "SHA256SUMS").exists()


_VERIFIED: set[tuple[str, int, int]] = set()
_WARNED: set[str] = set()


def _checksums(root: Path) -> dict[str, str] | None:
    """``SHA256SUMS`` of ``root`` as {relative path: digest}, or None without one."""
    sums = root / "SHA256SUMS"
    if not sums.exists():
        return None
    out = {}
    for line in sums.read_text().splitlines():
        if line.strip():
            digest, name = line.split(maxsplit=1)
            out[name.strip().removeprefix("./")] = digest
    return out


def _stat_key(path: Path) -> tuple[str, int, int]:
    """What a verification is remembered by: the file, its size and modification time."""
    stat = path.stat()
    return str(path.resolve()), stat.st_size, int(stat.st_mtime)


def checked_file(root: Path, rel: str) -> Path:
    """``root / rel`` (downloaded first into a cache), checked once per process against its
    SHA-256: FileNotFoundError, DataIntegrityError or DataUnavailableError."""
    path = root / rel
    if not path.exists():
        if not is_cache(root):
            raise FileNotFoundError(
                f"data file {rel} is missing from the data directory {root}, which holds a "
                "SHA256SUMS and is used as it is. Put the file there, or point DASKFAIR_DATA "
                "(or data_dir=) at another folder: an empty one is filled on first use.")
        fetch_file(rel, root)
        _VERIFIED.add(_stat_key(path))  # fetch_file checked it against the registry
        return path
    key = _stat_key(path)
    if key in _VERIFIED:
        return path
    sums = _checksums(root)
    src = SOURCES.get(rel)
    expected = sums.get(rel) if sums is not None else None if src is None else src.sha256
    if expected is None:
        if rel not in _WARNED:
            _WARNED.add(rel)
            warnings.warn(f"{rel} has no checksum in {root / 'SHA256SUMS'}; loading it "
                          "unverified.", UserWarning, stacklevel=3)
        return path
    actual = sha256_of(path)
    # a cache is checked against the registry (which knows a publisher's other gzip)
    ok = actual == expected if sums is not None else matches(src, path, actual)
    if not ok:
        raise DataIntegrityError(
            f"{path} is corrupt or modified: SHA-256 {actual}, expected {expected}. "
            + ("Delete it: it is downloaded again on first use." if sums is None
               else "Replace it with the original file."))
    _VERIFIED.add(key)
    return path


def verify_data(path: str | os.PathLike[str] | None = None) -> dict[str, str]:
    """Check every file of the data directory's ``SHA256SUMS`` (of a cache: the registry's).

    Parameters
    ----------
    path : as in :func:`data_dir`.

    Returns
    -------
    dict of str to str
        ``{relative path: "ok" | "missing" | "corrupt"}``.
    """
    root = data_dir(path)
    sums = _checksums(root)
    status = {}
    for rel in sums if sums is not None else SOURCES:
        p = root / rel
        if not p.exists():
            status[rel] = "missing"
            continue
        good = sha256_of(p) == sums[rel] if sums is not None else matches(SOURCES[rel], p)
        status[rel] = "ok" if good else "corrupt"
    return status


def fetch_data(name: str = "all", path: str | os.PathLike[str] | None = None, *,
               progress: bool | None = None) -> list[Path]:
    """Download the missing files of data set ``name`` into the data directory.

    Every file is tried; one error at the end lists those that could not be downloaded.

    Parameters
    ----------
    name : str, default="all"
        A data set, an FCE pool, ``"mnist_usps_digits"``, or ``"all"``.
    path : as in :func:`data_dir`.
    progress : bool, default=None
        Show progress: a live line on a terminal, else one line per file (None: True).

    Returns
    -------
    list of pathlib.Path
        The files, each checked.

    Raises
    ------
    FileNotFoundError, DataUnavailableError, DataIntegrityError
        A folder kept by hand lacks a file, a download failed, or a file is corrupt.
    """
    root = data_dir(path)
    files = files_of(name)
    missing = [rel for rel in files if not (root / rel).exists()]
    if missing and not is_cache(root):
        raise FileNotFoundError(
            f"{root} holds a SHA256SUMS and is used as it is; nothing is downloaded into it. "
            "Point DASKFAIR_DATA (or data_dir=) at another folder to download into.")
    failed = []
    for rel in missing:
        try:
            fetch_file(rel, root, progress=progress)
        except (DataUnavailableError, DataIntegrityError) as exc:
            failed.append(f"{rel}: {exc}")
    if failed:
        raise DataUnavailableError(
            f"{len(failed)} of {len(files)} files could not be downloaded (the others are "
            "in place):\n  " + "\n  ".join(failed))
    return [checked_file(root, rel) for rel in files]
