"""One BLAS thread for the client's dense algebra: LAPACK's bits depend on the thread count
(docs/design.md#determinism); fits in several threads take turns (a lock)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

_LOCK = threading.RLock()


@contextmanager
def one_blas_thread() -> Iterator[None]:
    """Limit every BLAS library of this process to one thread inside the block."""
    # threadpoolctl limits the libraries loaded when the block starts: load scipy's first
    import scipy.linalg  # noqa: F401
    from threadpoolctl import threadpool_limits

    with _LOCK, threadpool_limits(limits=1, user_api="blas"):
        yield

