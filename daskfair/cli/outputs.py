"""The files a command writes beside its store (a report, a figure): written whole, never
through a link, never over an input, and over an existing file only with ``--overwrite`` when
daskfair wrote it (docs/design.md#files-read-and-written)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from .._files import UnsafePathError, check_output_path, read_head, write_new

__all__ = ["check_output", "write_output"]


def _inside(path: Path, other: Path) -> bool:
    try:
        return path == other or other in path.parents
    except OSError:
        return False


def check_output(path: str | os.PathLike[str], *, signature: bytes, what: str,
                 overwrite: bool, avoid: Sequence[str | os.PathLike[str]] = ()
                 ) -> tuple[Path, bool]:
    """Whether ``path`` may receive a file of a command (a report, a figure), before any work.

    Parameters
    ----------
    path : path-like
    signature : bytes
        What marks a file of this kind that daskfair wrote (in its first 8 KiB).
    what : str
        The file in words ("the report").
    overwrite : bool
        Replace a file of this kind that daskfair wrote (nothing else is ever replaced).
    avoid : sequence of path-like
        The command's inputs and its store: ``path`` may be none of them and lie inside none.

    Returns
    -------
    path : pathlib.Path
        ``path``, absolute.
    replace : bool
        Whether a file daskfair wrote is there, to be replaced.

    Raises
    ------
    FileExistsError
        ``path`` is an input or the store, or exists and may not be replaced.
    """
    path = Path(path).absolute()
    real = Path(os.path.realpath(path))
    for given in avoid:
        if _inside(real, Path(os.path.realpath(given))):
            raise FileExistsError(f"{path} is the command's input or store (or inside it): "
                                  f"{what} is never written there. Give another path.")
    try:
        head = read_head(path, 8192) if path.exists() and not path.is_dir() else None
        check_output_path(path, what)
    except UnsafePathError as exc:
        raise FileExistsError(f"{what} is not written: {exc}") from None
    if path.is_dir():
        raise FileExistsError(f"{path} is a folder; give the path of a file for {what}.")
    if head is not None and signature not in head:
        raise FileExistsError(f"{path} exists and is not {what} daskfair wrote; it is never "
                              "replaced, --overwrite included. Give another path.")
    if head is not None and not overwrite:
        raise FileExistsError(f"{path} holds {what} daskfair wrote: pass --overwrite to "
                              "replace it, or give another path.")
    return path, head is not None


def write_output(path: str | os.PathLike[str], data: bytes, *, signature: bytes, what: str,
                 overwrite: bool, avoid: Sequence[str | os.PathLike[str]] = ()) -> Path:
    """Write ``data`` (holding ``signature``) to ``path`` as :func:`check_output` allows it:
    whole, through a hidden file created exclusively, renamed into place.

    Parameters
    ----------
    path, signature, what, overwrite, avoid : as in :func:`check_output`.
    data : bytes

    Returns
    -------
    pathlib.Path
    """
    path, replace = check_output(path, signature=signature, what=what, overwrite=overwrite,
                                 avoid=avoid)
    try:
        return write_new(path, data, replace=replace)
    except UnsafePathError as exc:
        raise FileExistsError(f"{what} is not written: {exc}") from None
