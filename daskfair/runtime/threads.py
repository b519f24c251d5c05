"""One BLAS thread for the dense algebra daskfair does in the client process.

LAPACK's eigensolvers and solves split their work by the number of BLAS threads, and the
split changes the last bits of the result: the same FKR fit gave dual coefficients differing by
4e-11 in a client with 2 BLAS threads and in one with 1 (measured on the Crime split 3 job).
FKR's fits therefore run their client-side work on one BLAS thread, and a result does not
depend on where the client runs. The dense matrices there are r × r (r landmarks, at most a
few thousand); row blocks are computed by dask's threads or workers side by side, each on one
BLAS thread as Dask's workers already are (distributed's ``nanny.pre-spawn-environ``).

threadpoolctl's limit holds for the whole process, so fits in several threads of one process
take turns (a lock): a limit set by one must not be lifted by another mid-fit.
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

