"""The stored run of an iterative method (SAfairKM's front, FCE's consensus): ``store``,
``resume`` and ``checkpoint_every`` handled once, a recovery point kept without a store."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from .recovery import count_recovery, wait_for_workers

if TYPE_CHECKING:
    from ..store import Run

__all__ = ["IterativeRun", "Recoveries", "check_resume", "crossed", "is_open_run"]


def is_open_run(store: Any) -> bool:
    """Whether ``store`` is an open :class:`~daskfair.store.Run` (zarr is imported only when
    ``store`` is neither None nor a path: a run without a store never loads it)."""
    if store is None or isinstance(store, (str, os.PathLike)):
        return False
    from ..store import Run

    return isinstance(store, Run)


def check_resume(store: Any, resume: bool, what: str = "run") -> None:
    """Refuse ``resume=True`` without a store (before any work starts)."""
    if resume and store is None:
        raise ValueError(f"resume=True needs the store of the interrupted {what}.")


def crossed(t: int, step: int, every: int) -> bool:
    """Whether the round of ``step`` iterations ending at ``t`` passed a multiple of ``every``."""
    return t // every > (t - step) // every


class Recoveries:
    """Counts the cluster's losses of work in one run (at most ``daskfair.max-recoveries``)."""

    def __init__(self, where: str) -> None:
        self.where = where
        self.count = 0

    def lost(self, exc: BaseException, client: Any) -> None:
        """Record a loss (raise once too many were made), then wait until a worker is back."""
        self.count = count_recovery(self.count, exc, self.where)
        wait_for_workers(client)


class IterativeRun:
    """An iterative method's checkpoints and result (``run``: None without a store); use
    :meth:`open` as a context manager."""

    def __init__(self, run: Run | None, *, owns: bool = False, resume: bool = False,
                 checkpoint_every: int = 1) -> None:
        self.run = run
        self.owns = owns
        self.resume = resume
        self.checkpoint_every = int(checkpoint_every)  # checked by the method's table
        self.recovery_point: tuple[int, Any] | None = None

    @classmethod
    def open(cls, store: str | os.PathLike[str] | Run | None, *, resume: bool, kind: str,
             params: Mapping[str, Any], checkpoint_every: int = 1) -> IterativeRun:
        """A new run of ``kind`` at ``store``, the one to ``resume``, a handed one, or none."""
        if is_open_run(store):
            return cls(store, resume=resume, checkpoint_every=checkpoint_every)
        if store is None:
            check_resume(store, resume)
            return cls(None, checkpoint_every=checkpoint_every)
        from ..store import create_run, resume_run

        opened = (resume_run(store, kind=kind, params=params) if resume
                  else create_run(store, kind=kind, params=params))
        return cls(opened, owns=True, resume=resume, checkpoint_every=checkpoint_every)

    @property
    def has_checkpoint(self) -> bool:
        """The store holds a checkpoint (of an interrupted run, or written by this call)."""
        return self.run is not None and bool(self.run.checkpoint)

    def save(self, t: int, step: int, done: bool, *, checkpoint: Callable[[Run], None],
             copy: Callable[[], Any] | None = None) -> None:
        """``checkpoint(run)`` (or keep ``copy()``) when the round ending at ``t`` is due."""
        due = crossed(t, step, self.checkpoint_every)
        if self.run is not None:
            if done or due:
                checkpoint(self.run)
        elif copy is not None and due:
            self.recovery_point = (t, copy())

    def finish(self, **summary: Any) -> None:
        """Record ``summary``; mark the run complete when this call owns it."""
        if self.run is None:
            return
        if self.owns:
            self.run.mark_complete(**summary)
        else:
            self.run.set_attrs(**summary)

    def close(self) -> None:
        """Release the lease of an owned run (idempotent; an unfinished run stays resumable)."""
        if self.owns and self.run is not None:
            self.run.close()

    def __enter__(self) -> IterativeRun:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
