"""One BLAS thread for the dense algebra daskfair does in the client process.

LAPACK splits its work by the number of BLAS threads, which changes the last bits of a
result: on one thread, a fit does not depend on where its client runs
(docs/design.md#determinism). threadpoolctl's limit holds for the whole process, so fits in
several threads take turns (a lock).
"""

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

