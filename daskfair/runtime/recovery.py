"""Recovering from lost workers: what counts as lost work, and a bounded number of retries.

Dask recomputes a lost task from its inputs; it cannot when those inputs were released or
scattered (an iterative method keeps only its latest state). The iterative methods therefore
keep a recovery point (a checkpoint in their store, or a copy on the client) and, when work is
lost, restart from it; their randomness is keyed by iteration and member, so the result is the
one an undisturbed run gives.
"""

from __future__ import annotations

import concurrent.futures
import logging

import dask
import distributed

__all__ = ["LOST_WORK", "count_recovery", "wait_for_workers"]

logger = logging.getLogger(__name__)

#: Exceptions that mean the cluster lost work (a worker died): FutureCancelledError ("lost
#: dependencies") is a CancelledError; KilledWorker ends a task that kept killing workers.
LOST_WORK = (concurrent.futures.CancelledError, distributed.KilledWorker)


def count_recovery(done: int, exc: BaseException, where: str) -> int:
    """Log a recovery and return the new count; raise once ``daskfair.max-recoveries``
    (default 5) recoveries have been made in one run."""
    limit = int(dask.config.get("daskfair.max-recoveries", 5))
    if done >= limit:
        raise RuntimeError(
            f"{where}: the Dask cluster lost work {done + 1} times ({type(exc).__name__}: "
            f"{exc}). Check the workers' logs (memory limits, crashes); with a store, resume "
            "the run once the cluster is healthy.") from exc
    logger.warning("%s: a worker was lost (%s); continuing from the last recovery point",
                   where, type(exc).__name__)
    return done + 1


def wait_for_workers(client: distributed.Client) -> None:
    """After a loss the nannies restart their workers: wait (``daskfair.recovery-wait``
    seconds, default 120) until one is back."""
    client.wait_for_workers(1, timeout=float(dask.config.get("daskfair.recovery-wait", 120)))
