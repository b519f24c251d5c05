"""Files daskfair reads from a store or writes as an output: plain files and folders only,
reads bounded by a stated size, new files created exclusively and renamed into place
(docs/design.md#files-read-and-written)."""

from __future__ import annotations

import os
import stat
import uuid
from pathlib import Path

__all__ = ["MAX_DEPTH", "MAX_ENTRIES", "UnsafePathError", "check_output_path", "partial_name",
           "plain_folder", "read_bounded", "read_head", "walk_plain", "write_new"]

#: Folders below a store's root that a walk enters at most (daskfair writes fewer than 12).
MAX_DEPTH = 32
#: Entries a walk lists at most (a run of daskfair holds thousands at most).
MAX_ENTRIES = 1_000_000

_KINDS = {stat.S_IFLNK: "a symbolic link", stat.S_IFIFO: "a FIFO (named pipe)",
          stat.S_IFCHR: "a character device", stat.S_IFBLK: "a block device",
          stat.S_IFSOCK: "a socket"}


class UnsafePathError(ValueError):
    """A path that must be a plain file or folder is a link, a device, a FIFO or a socket,
    or a file is larger than what may be read of it."""


def _what(mode: int) -> str:
    return _KINDS.get(stat.S_IFMT(mode), "neither a file nor a folder")


def walk_plain(root: Path, *, max_depth: int = MAX_DEPTH,
               max_entries: int = MAX_ENTRIES) -> dict[str, int]:
    """Every file below ``root``, by its path relative to ``root`` (with ``/``), and its size.

    Links are never followed: an entry that is not a regular file or a folder is refused.

    Parameters
    ----------
    root : pathlib.Path
        A folder (which may itself be reached through a link: the user named it).
    max_depth, max_entries : int
        The deepest folder entered and the most entries listed.

    Returns
    -------
    dict of str to int

    Raises
    ------
    UnsafePathError
        A link, device, FIFO or socket below ``root`` (named), or the limits exceeded.
    """
    files: dict[str, int] = {}
    count = 0
    pending = [("", 0)]
    while pending:
        rel, depth = pending.pop()
        with os.scandir(root / rel if rel else root) as it:
            for entry in it:
                count += 1
                if count > max_entries:
                    raise UnsafePathError(f"{root} holds more than {max_entries:,} entries; "
                                          "no daskfair store is that large.")
                name = f"{rel}/{entry.name}" if rel else entry.name
                try:
                    info = entry.stat(follow_symlinks=False)
                except FileNotFoundError:  # removed meanwhile (a scratch file renamed)
                    continue
                mode = info.st_mode
                if stat.S_ISREG(mode):
                    files[name] = info.st_size
                elif stat.S_ISDIR(mode):
                    if depth + 1 > max_depth:
                        raise UnsafePathError(f"{root / name} is more than {max_depth} folders "
                                              "deep; no daskfair store nests that deep.")
                    pending.append((name, depth + 1))
                else:
                    raise UnsafePathError(f"{root / name} is {_what(mode)}; daskfair reads "
                                          "only plain files inside a store and never follows "
                                          "a link out of it.")
    return files


def plain_folder(root: Path, rel: str) -> Path:
    """``root / rel``, every folder of ``rel`` checked to be a folder and not a link.

    Raises
    ------
    FileNotFoundError
        A part of ``rel`` does not exist.
    UnsafePathError
        A part of ``rel`` is a link or not a folder.
    """
    here = root
    for part in rel.split("/"):
        if part in ("", ".", ".."):
            raise UnsafePathError(f"{rel!r} is not a path inside {root}.")
        here = here / part
        mode = os.lstat(here).st_mode
        if not stat.S_ISDIR(mode):
            what = "a file" if stat.S_ISREG(mode) else _what(mode)
            raise UnsafePathError(f"{here} is {what}, not a folder; daskfair never follows a "
                                  "link out of a store.")
    return here


def _open_plain(path: Path) -> int:
    """A descriptor of the regular file ``path``, opened without following a link and without
    blocking on a FIFO."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        if isinstance(exc, FileNotFoundError):
            raise
        if path.is_symlink():  # O_NOFOLLOW's ELOOP
            raise UnsafePathError(f"{path} is a symbolic link; daskfair does not follow it."
                                  ) from None
        raise
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise UnsafePathError(f"{path} is {_what(mode)}, not a file.")
    return fd


def read_head(path: Path, n: int) -> bytes:
    """The first ``n`` bytes (or fewer) of the regular file ``path`` (no link followed)."""
    fd = _open_plain(path)
    try:
        return os.read(fd, n)
    finally:
        os.close(fd)


def read_bounded(path: Path, limit: int) -> bytes:
    """The bytes of the regular file ``path``, refused when larger than ``limit``.

    The file is opened without following a link and without blocking (a FIFO), and checked
    to be a regular file before anything is read.

    Parameters
    ----------
    path : pathlib.Path
    limit : int
        The most bytes the file may hold.

    Returns
    -------
    bytes

    Raises
    ------
    FileNotFoundError
        No such file.
    UnsafePathError
        A link, device, FIFO or socket, or a file larger than ``limit``.
    """
    fd = _open_plain(path)
    try:
        info = os.fstat(fd)
        if info.st_size > limit:
            raise UnsafePathError(f"{path} holds {info.st_size:,} bytes, more than the "
                                  f"{limit:,} such a file may hold.")
        chunks, left = [], info.st_size + 1  # one more byte: a file that grew is refused
        while left > 0 and (block := os.read(fd, min(left, 1 << 20))):
            chunks.append(block)
            left -= len(block)
        data = b"".join(chunks)
        if len(data) > info.st_size:
            raise UnsafePathError(f"{path} grew while it was read.")
        return data
    finally:
        os.close(fd)


def check_output_path(path: Path, what: str) -> None:
    """Refuse an output whose own name is a link (its folders may be links: the user's).

    Parameters
    ----------
    path : pathlib.Path
        Where the output goes.
    what : str
        The output in words, for the message ("the report", "the run store").

    Raises
    ------
    UnsafePathError
        ``path`` is a symbolic link, a device, a FIFO or a socket.
    """
    try:
        mode = os.lstat(path).st_mode
    except (FileNotFoundError, NotADirectoryError):  # nothing there (checked later)
        return
    if stat.S_ISLNK(mode) or not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
        raise UnsafePathError(
            f"{path} is {_what(mode)}: {what} is never written through one (it could replace "
            "a file elsewhere). Give the path of a new file or folder.")


def partial_name(path: Path) -> Path:
    """A new hidden name next to ``path`` for writing it before it is renamed into place."""
    return path.with_name(f".{path.name}.partial-{uuid.uuid4().hex[:12]}")


def write_new(path: Path, data: bytes, *, replace: bool = False) -> Path:
    """Write ``data`` to ``path`` whole: into a hidden file created exclusively (never through
    a link someone left), flushed, then renamed over ``path``.

    Parameters
    ----------
    path : pathlib.Path
    data : bytes
    replace : bool, default=False
        Replace an existing regular file at ``path`` (the caller checked that it may).

    Returns
    -------
    pathlib.Path
        ``path``.

    Raises
    ------
    FileExistsError
        ``path`` exists and ``replace`` is False.
    UnsafePathError
        ``path`` is a link, a device, a FIFO, a socket or a folder.
    """
    check_output_path(path, "the file")
    if path.is_dir():
        raise UnsafePathError(f"{path} is a folder; give the path of a file.")
    if path.exists() and not replace:
        raise FileExistsError(f"{path} exists; it is not replaced. Choose another path.")
    tmp = partial_name(path)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(tmp, flags | getattr(os, "O_CLOEXEC", 0), 0o644)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return path
