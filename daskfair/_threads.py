"""One BLAS thread for the dense algebra daskfair does in the client process.

LAPACK's eigensolvers and solves split their work by the number of BLAS threads, and the
split changes the last bits of the result: the same FKR fit gave dual coefficients differing by
4e-11 in a client with 2 BLAS threads and in one with 1 (measured on the Crime split 3 job).
The matrices involved are r × r (r landmarks, at most a few thousand), so the client does them
on one thread, and a result does not depend on where the client runs. Dask's workers already
run with one BLAS thread each (distributed's ``nanny.pre-spawn-environ``).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def one_blas_thread() -> Iterator[None]:
    """Limit every BLAS library of this process to one thread inside the block."""
    # threadpoolctl limits the libraries loaded when the block starts: load scipy's first
    import scipy.linalg  # noqa: F401
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1, user_api="blas"):
        yield

