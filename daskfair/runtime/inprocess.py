"""The part of ``distributed.Client`` that SAfairKM, VfairKM and SA2GD use, on a thread pool
of this process: the same tasks, the same bits (docs/design.md#safairkm-execution)."""

from __future__ import annotations

import os
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

__all__ = ["InProcessClient", "Task"]


class Task:
    """A task's result to come, standing in for a ``distributed.Future``."""

    __slots__ = ("_future",)

    def __init__(self, future: Future) -> None:
        self._future = future

    def result(self) -> Any:
        """The task's value (waits for it; raises what the task raised)."""
        return self._future.result()

    @classmethod
    def done(cls, value: Any) -> Task:
        """A task already finished with ``value``."""
        future: Future = Future()
        future.set_result(value)
        return cls(future)


def _resolve(value: Any) -> Any:
    # tasks nested in lists, tuples and dicts become their results, as futures in distributed
    if isinstance(value, Task):
        return value.result()
    if isinstance(value, list | tuple):
        return type(value)(_resolve(v) for v in value)
    if isinstance(value, dict):
        return {k: _resolve(v) for k, v in value.items()}
    return value


class InProcessClient:
    """Run submitted tasks on ``n_threads`` threads of this process (None: one per core)."""

    def __init__(self, n_threads: int | None = None) -> None:
        self.n_threads = max(1, n_threads or os.cpu_count() or 1)
        self._pool = ThreadPoolExecutor(self.n_threads, thread_name_prefix="daskfair")

    def nthreads(self) -> dict[str, int]:
        """Threads per worker, as ``distributed.Client.nthreads``: one worker, this process."""
        return {"in-process": self.n_threads}

    def scheduler_info(self) -> dict[str, Any]:
        """No workers, so no worker memory limits: this process holds the data."""
        return {"workers": {}}

    def scatter(self, data: Any, **_: Any) -> Any:
        """``data`` as finished tasks (a list as a list of them)."""
        if isinstance(data, list):
            return [Task.done(d) for d in data]
        return Task.done(data)

    def submit(self, func: Callable[..., Any], *args: Any, **kwargs: Any) -> Task:
        """Run ``func(*args, **kwargs)`` on the pool, tasks in the arguments resolved here."""
        # placement and key arguments of distributed.Client.submit mean nothing here
        for name in ("key", "pure", "workers", "allow_other_workers", "retries", "priority"):
            kwargs.pop(name, None)
        return Task(self._pool.submit(func, *_resolve(args), **_resolve(kwargs)))

    def gather(self, futures: Any) -> Any:
        """The results of ``futures`` (tasks nested in lists, tuples and dicts)."""
        return _resolve(futures)

    def close(self) -> None:
        """Wait for the running tasks and stop the pool."""
        self._pool.shutdown(wait=True)

    def __enter__(self) -> InProcessClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
