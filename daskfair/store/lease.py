"""One writer per run store: the lease ``daskfair-lock.json``, refreshed every
``daskfair.lease-refresh`` seconds (30), dead when its process is gone or, from another host,
after ``daskfair.lease-stale`` seconds (300) without a refresh; :func:`break_lock` removes it."""

from __future__ import annotations

import contextlib
import json
import os
import socket
import sys
import threading
import time
import uuid
import warnings
import weakref
from pathlib import Path
from typing import Any

import dask

from .._files import UnsafePathError, read_bounded
from .errors import StoreLockedError

__all__ = ["LEASE_NAME", "SCRATCH_PREFIX", "Lease", "break_lock", "holder_state", "lease_status",
           "locked_error", "read_lease"]

LEASE_NAME = "daskfair-lock.json"
#: The most bytes a lease file may hold (daskfair's hold a few hundred).
LEASE_LIMIT = 64 * 1024
#: Prefix of the lease's scratch files: a lease before it is linked, a broken one before deletion.
SCRATCH_PREFIX = f".{LEASE_NAME}."


def refresh_seconds() -> float:
    """Seconds between a lease's refreshes (``daskfair.lease-refresh``, default 30)."""
    return float(dask.config.get("daskfair.lease-refresh", 30.0))


def stale_seconds() -> float:
    """Seconds without a refresh after which a lease is dead (``daskfair.lease-stale``)."""
    return float(dask.config.get("daskfair.lease-stale", 300.0))


def _process_start(pid: int) -> str | None:
    """The process's start time in clock ticks since boot (Linux), to tell a reused pid."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # field 22, counted after the command name, which is in parentheses and may hold spaces
    return stat.rsplit(")", 1)[1].split()[19]


def _pid_alive(pid: int) -> bool:
    """Whether a process of this id runs on this host."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # it exists, as another user's process
        return True
    return True


def _holder(run_id: str) -> dict[str, Any]:
    """What a lease records of its holder: run id, host, pid, start time, command."""
    return {"run_id": run_id, "host": socket.gethostname(), "pid": os.getpid(),
            "pid_start": _process_start(os.getpid()),
            "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            "command": _command()}


def _command() -> str:
    """The command line, its program named as a user typed it (not ``__main__.py``)."""
    program = Path(sys.argv[0]).name if sys.argv and sys.argv[0] else "python"
    if "daskfair" in (sys.argv[0] if sys.argv else ""):
        program = "daskfair"
    return " ".join([program, *sys.argv[1:]])[:300]


def read_lease(store: str | os.PathLike[str]) -> tuple[dict[str, Any], float] | None:
    """The holder recorded in ``store``'s lease and the lease's age in seconds, or None."""
    return _read_holder(Path(store) / LEASE_NAME)


def _read_holder(path: Path) -> tuple[dict[str, Any], float] | None:
    """The holder recorded in the lease file ``path`` and its age, or None without one."""
    try:
        age = time.time() - path.lstat().st_mtime
        text = read_bounded(path, LEASE_LIMIT).decode("utf-8", errors="replace")
    except FileNotFoundError:
        return None
    except UnsafePathError as exc:  # a link, a device: never followed or read
        return {"unreadable": str(exc)}, age
    try:
        holder = json.loads(text)
    except (ValueError, RecursionError):
        holder = None
    if not isinstance(holder, dict):  # not written by a lease of this module
        holder = {"unreadable": text[:80]}
    return holder, age


def holder_state(holder: dict[str, Any], age: float) -> tuple[bool, str]:
    """Whether the lease's holder is alive, and the evidence, in words."""
    if holder.get("host") == socket.gethostname() and isinstance(holder.get("pid"), int):
        pid = holder["pid"]
        if not _pid_alive(pid):
            return False, f"process {pid} is no longer running"
        start = _process_start(pid)
        if holder.get("pid_start") and start and start != holder["pid_start"]:
            return False, f"process {pid} ended (its pid now belongs to a later process)"
        return True, f"process {pid} is running"
    stale = stale_seconds()
    if age > stale:
        return False, (f"no refresh for {age:.0f} s (a live run refreshes it every "
                       f"{refresh_seconds():.0f} s; stale after {stale:.0f} s)")
    return True, (f"refreshed {age:.0f} s ago; from another host it counts as dead only "
                  f"after {stale:.0f} s without a refresh")


def describe(holder: dict[str, Any]) -> str:
    """The holder in words: host, pid, start, command."""
    if "unreadable" in holder:
        return f"an unreadable lease file ({holder['unreadable']!r})"
    return (f"host {holder.get('host')}, pid {holder.get('pid')}, started "
            f"{holder.get('started')}, command {holder.get('command')!r}")


def _judged(store: str | os.PathLike[str]) -> tuple[dict[str, Any], bool, str] | None:
    """The store's lease holder, whether it is alive and why, or None without a lease."""
    found = read_lease(store)
    return None if found is None else (found[0], *holder_state(*found))


def lease_status(store: str | os.PathLike[str]) -> str | None:
    """One line on the store's lease for ``daskfair show``, or None when it has none."""
    judged = _judged(store)
    if judged is None:
        return None
    holder, alive, why = judged
    if alive:
        return f"held by a live run ({describe(holder)}; {why})"
    return (f"left by a run that is no longer running ({describe(holder)}; {why}); "
            "daskfair.store.break_lock(path) removes it")


def locked_error(store: Path, holder: dict[str, Any], age: float) -> StoreLockedError:
    """The error for a store whose lease ``holder`` holds: wait, or break a dead lease."""
    alive, why = holder_state(holder, age)
    if alive:
        return StoreLockedError(
            f"the store {store} is being written by another run ({describe(holder)}; {why}). "
            "Two runs on one store would corrupt it: wait for that run to finish, or choose "
            "another path for store=.")
    return StoreLockedError(
        f"the store {store} is locked by a run that is no longer running ({describe(holder)}; "
        f"{why}). If no run is writing to it, break the lock with "
        "daskfair.store.break_lock(path), then resume=True or overwrite=True.")


def _write_new(path: Path, text: str) -> None:
    """Write a file that must not exist yet (``O_EXCL``), flushed to disk."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    try:
        os.write(fd, text.encode())
        os.fsync(fd)
    finally:
        os.close(fd)


def _link(scratch: Path, lease: Path) -> None:
    """Give ``scratch`` the lease's name; FileExistsError when a lease exists."""
    try:
        os.link(scratch, lease)
    except OSError as exc:
        # NFS may report a link made as failed (a lost reply), or as existing (a retry)
        if scratch.stat().st_nlink == 2:
            return
        if isinstance(exc, FileExistsError):
            raise
        _write_new(lease, scratch.read_text())  # no hard links: O_EXCL (atomic on NFSv3+)


def _refresh(stop: threading.Event, path: Path, run_id: str, every: float,
             lost: list[str]) -> None:
    """The refresh thread: touch the lease every ``every`` seconds; say in ``lost`` why it
    stopped being ours."""
    # plain values, not the Lease: dropping a Run must release its lease (weakref.finalize)
    failures = 0
    while not stop.wait(every):
        try:
            found = read_lease(path.parent)
        except OSError as exc:  # a network file system's hiccup (ESTALE, EIO): try again
            failures += 1
            if failures * every >= stale_seconds() / 2:  # before others may call it dead
                lost.append(f"the lease could not be read for {failures * every:.0f} s "
                            f"({exc})")
                return
            continue
        failures = 0
        if found is None or found[0].get("run_id") != run_id:
            lost.append("the lease file was removed or replaced" if found is None
                        else f"the lease is now held by {describe(found[0])}")
            return
        with contextlib.suppress(OSError):
            os.utime(path)


def _release(stop: threading.Event, path: Path, run_id: str) -> None:
    """Stop the refresh thread and remove the lease file if it is still ours."""
    stop.set()
    found = read_lease(path.parent)
    if found is not None and found[0].get("run_id") == run_id:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()


class Lease:
    """The exclusive lease of one run on one store (made by :meth:`acquire`); released by
    :meth:`release`, garbage collection or the interpreter's exit."""

    def __init__(self, store: Path, run_id: str) -> None:
        self.store = store
        self.path = store / LEASE_NAME
        self.run_id = run_id
        self._stop = threading.Event()
        self._lost: list[str] = []
        self._finalizer = weakref.finalize(self, _release, self._stop, self.path, run_id)
        threading.Thread(target=_refresh, name=f"daskfair-lease-{run_id[:8]}", daemon=True,
                         args=(self._stop, self.path, run_id, refresh_seconds(),
                               self._lost)).start()

    @classmethod
    def acquire(cls, store: str | os.PathLike[str]) -> Lease:
        """Take the lease of ``store`` (creating the directory), or raise
        :class:`StoreLockedError` naming its holder."""
        store = Path(store)
        store.mkdir(parents=True, exist_ok=True)
        run_id = uuid.uuid4().hex
        scratch = store / f"{SCRATCH_PREFIX}{run_id}"
        _write_new(scratch, json.dumps(_holder(run_id), indent=1))
        try:
            _link(scratch, store / LEASE_NAME)
        except FileExistsError:
            found = read_lease(store)
            if found is None:  # released in between: try once more
                return cls.acquire(store)
            raise locked_error(store, *found) from None
        finally:
            scratch.unlink(missing_ok=True)
        return cls(store, run_id)

    def check(self) -> None:
        """Raise :class:`StoreLockedError` unless this lease is still the store's."""
        if not self._finalizer.alive:
            raise StoreLockedError(
                f"this run released its lease on {self.store}: it writes nothing more. Open "
                "the store again (daskfair.open_run) to read it.")
        found = read_lease(self.store)
        if self._lost or found is None or found[0].get("run_id") != self.run_id:
            why = self._lost[0] if self._lost else (
                "the lease file was removed" if found is None
                else f"the lease is now held by {describe(found[0])}")
            raise StoreLockedError(
                f"this run lost its lease on {self.store} ({why}): another run broke it "
                "(daskfair.store.break_lock) or the file was removed. It stops before writing "
                "more; its results in that store are incomplete.")

    def release(self) -> None:
        """Give the lease up (idempotent)."""
        self._finalizer()


def break_lock(path: str | os.PathLike[str]) -> dict[str, Any] | None:
    """Remove the lease a dead run left in the store at ``path``, with a warning.

    Parameters
    ----------
    path : path-like

    Returns
    -------
    dict or None
        The holder that was removed (None: the store had no lease).

    Raises
    ------
    StoreLockedError
        The holder is alive (or a live run took the lease meanwhile).
    """
    store = Path(path)
    judged = _judged(store)
    if judged is None:
        return None
    holder, alive, why = judged
    if alive:
        raise StoreLockedError(
            f"not breaking the lock of {store}: its holder is alive ({describe(holder)}; "
            f"{why}). Wait for that run to finish, or stop it first.")
    aside = store / f"{SCRATCH_PREFIX}broken-{uuid.uuid4().hex}"
    try:
        os.rename(store / LEASE_NAME, aside)  # atomic: of two breakers only one moves it
    except FileNotFoundError:
        return holder
    moved = (_read_holder(aside) or ({}, 0.0))[0]
    if moved.get("run_id") != holder.get("run_id"):
        # broken and taken again by a live run between the read and the rename: give it back
        with contextlib.suppress(FileExistsError):
            os.link(aside, store / LEASE_NAME)
        aside.unlink()
        raise StoreLockedError(
            f"not breaking the lock of {store}: a new run took it meanwhile "
            f"({describe(moved)}).")
    aside.unlink()
    warnings.warn(
        f"broke the lock of {store} left by a run that is no longer running "
        f"({describe(holder)}; {why}). Its results there are incomplete.",
        UserWarning, stacklevel=2)
    return holder

