"""Tasks run in this process: the part of ``distributed.Client`` that SAfairKM, VfairKM and
SA2GD use, on a thread pool.

Those methods hold all rows in every task (points move one at a time), so for data that fits
in this process a cluster adds only its costs: starting worker processes, a scheduler round
trip per iteration, pickling every member list. Without a running client they run here
instead: the same task functions on the same inputs (each a pure function of its arguments,
the numba block functions release the GIL), so the results are the cluster's bit for bit. A client
(or ``--scheduler``) still spreads the work over a cluster.
"""

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
        return self._future.result()

    @classmethod
    def done(cls, value: Any) -> Task:
        future: Future = Future()
        future.set_result(value)
        return cls(future)


def _resolve(value: Any) -> Any:
    # tasks nested in lists, tuples and dicts are replaced by their results, as distributed
    # does for futures in a task's arguments
    if isinstance(value, Task):
        return value.result()
    if isinstance(value, list | tuple):
        return type(value)(_resolve(v) for v in value)
    if isinstance(value, dict):
        return {k: _resolve(v) for k, v in value.items()}
    return value


class InProcessClient:
    """Run submitted tasks on ``n_threads`` threads of this process.

    Parameters
    ----------
    n_threads : int, optional
        Default: the machine's cores.
    """

    def __init__(self, n_threads: int | None = None) -> None:
        self.n_threads = max(1, n_threads or os.cpu_count() or 1)
        self._pool = ThreadPoolExecutor(self.n_threads, thread_name_prefix="daskfair")

    def nthreads(self) -> dict[str, int]:
        return {"in-process": self.n_threads}

    def scheduler_info(self) -> dict[str, Any]:
        return {"workers": {}}  # no worker memory limits: this process holds the data

    def scatter(self, data: Any, **_: Any) -> Any:
        if isinstance(data, list):
            return [Task.done(d) for d in data]
        return Task.done(data)

    def submit(self, func: Callable[..., Any], *args: Any, **kwargs: Any) -> Task:
        # placement and key arguments of distributed.Client.submit mean nothing here
        for name in ("key", "pure", "workers", "allow_other_workers", "retries", "priority"):
            kwargs.pop(name, None)
        # dependencies are waited for here, in the submitting thread, so a task never
        # blocks a pool thread on another task
        return Task(self._pool.submit(func, *_resolve(args), **_resolve(kwargs)))

    def gather(self, futures: Any) -> Any:
        return _resolve(futures)

    def close(self) -> None:
        self._pool.shutdown(wait=True)

    def __enter__(self) -> InProcessClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
