"""Progress of long work: Dask's progress bar for one-pass computations, a bar for iterations.

Quiet unless the ``daskfair.progress`` dask config key is on (:func:`show_progress`)."""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, TextIO

import dask

__all__ = ["IterationBar", "compute", "progress_enabled", "show_progress", "terminal"]

_KEY = "daskfair.progress"


def progress_enabled() -> bool:
    """Whether daskfair shows progress (the ``daskfair.progress`` dask config key).

    Returns
    -------
    bool
    """
    return bool(dask.config.get(_KEY, False))


@contextmanager
def show_progress(enabled: bool = True) -> Iterator[None]:
    """``with show_progress():`` — progress bars for the daskfair work inside the block.

    Parameters
    ----------
    enabled : bool, default=True
        Whether to show progress inside the block (the setting is restored after it).
    """
    with dask.config.set({_KEY: bool(enabled)}):
        yield


def compute(obj: Any, **kwargs: Any) -> Any:
    """``obj.compute(**kwargs)``, with Dask's bar if progress is on (a terminal, a client).

    Parameters
    ----------
    obj : dask collection
    **kwargs
        Passed to ``obj.compute``.

    Returns
    -------
    object
    """
    if progress_enabled() and sys.stdout.isatty():
        import distributed

        try:
            client = distributed.get_client()
        except ValueError:
            client = None
        if client is not None:
            future = client.compute(obj, **kwargs)
            with _terminal_stdout():  # the bar redraws its line: it writes control characters
                distributed.progress(future)
            return future.result()
    return obj.compute(**kwargs)


def terminal() -> TextIO:
    """The stream a progress bar writes to: standard output as it is, also where the
    command line escapes the control characters of what it prints.

    Returns
    -------
    file
    """
    return getattr(sys.stdout, "unescaped", sys.stdout)


@contextmanager
def _terminal_stdout() -> Iterator[None]:
    saved = sys.stdout
    sys.stdout = terminal()
    try:
        yield
    finally:
        sys.stdout = saved


class IterationBar:
    """A text bar for iterative work: ``[#####.....] 37/500 SAfairKM iterations, 412 points``.

    Redrawn in place on a terminal; elsewhere (logs) one line every tenth of the work.

    Parameters
    ----------
    total : int
        Number of iterations.
    label : str
        What is counted.
    stream : file, default=None
        Where to write; None: :func:`terminal`.
    enabled : bool, default=None
        Whether to write at all; None: :func:`progress_enabled`.
    """

    def __init__(self, total: int, label: str, *, stream: TextIO | None = None,
                 enabled: bool | None = None) -> None:
        self.total = max(1, int(total))
        self.label = label
        self.stream = stream or terminal()
        self.enabled = progress_enabled() if enabled is None else enabled
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self._start = time.perf_counter()
        self._next_line = 0
        self._last: tuple[int, str] | None = None  # an update not yet printed (logs)

    def update(self, done: int, note: str = "") -> None:
        """Report that ``done`` iterations are finished.

        Parameters
        ----------
        done : int
        note : str, default=""
            Shown after the count.
        """
        if not self.enabled:
            return
        bar = "#" * round(min(1.0, done / self.total) * 30)
        text = (f"[{bar:<30}] {done}/{self.total} {self.label}"
                f"{', ' + note if note else ''} | {time.perf_counter() - self._start:.1f} s")
        if self.tty:
            self.stream.write("\r" + text)
        elif done >= self._next_line or done >= self.total:
            self.stream.write(text + "\n")
            self._next_line = done + max(1, self.total // 10)
            done = -1
        self._last = (done, note) if done >= 0 else None
        self.stream.flush()

    def close(self) -> None:
        """End the bar's line (in logs: print the last state if it was skipped)."""
        if not self.enabled:
            return
        if self.tty:
            self.stream.write("\n")
        elif self._last is not None:
            self._next_line = 0
            self.update(*self._last)
        self.stream.flush()
