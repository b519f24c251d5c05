"""Recovering from lost workers: what counts as lost work, and a bounded number of retries
(docs/design.md#fce-recovery)."""

from __future__ import annotations

import concurrent.futures
import logging

import dask
import distributed

__all__ = ["LOST_WORK", "count_recovery", "wait_for_workers"]

logger = logging.getLogger(__name__)

# a worker died: FutureCancelledError ("lost dependencies") is a CancelledError
LOST_WORK = (concurrent.futures.CancelledError, distributed.KilledWorker)


def count_recovery(done: int, exc: BaseException, where: str) -> int:
    """Log a recovery; return the new count, or raise after ``daskfair.max-recoveries`` (5)."""
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
    """Wait until a worker is back (``daskfair.recovery-wait`` seconds, default 120)."""
    client.wait_for_workers(1, timeout=float(dask.config.get("daskfair.recovery-wait", 120)))
