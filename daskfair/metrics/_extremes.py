"""Intervals for the extremes over groups (the largest gap, the smallest ratio, the lowest
and highest group) from simultaneous bootstrap intervals (docs/design.md#audits-in-one-pass).

The percentile interval of a maximum of noisy estimates is biased: where the groups are
nearly equal, every replicate's largest gap exceeds the true one and the interval misses it.
Instead, one constant c is chosen (per metric) so that the intervals ``estimate ± c·se`` of
a family (every group, or every ordered pair of groups) hold together in a ``confidence``
share of the replicates (the bootstrap's max-t); the maximum of the family then lies between
the largest lower and the largest upper end whenever they all hold. A second step takes c
again over the members that may be the maximum (upper end at least the largest lower end):
with groups far apart the family shrinks to the few that matter and the interval to its
nominal width.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator

import numpy as np

__all__ = ["extreme_interval", "pair_interval"]


def _quiet(fn: Callable[..., np.ndarray], *args: object, **kwargs: object) -> np.ndarray:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN slices stay NaN
        return fn(*args, **kwargs)


Members = Callable[[], Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]]


def _max_interval(members: Members, n_boot: int, m: int, confidence: float
                  ) -> tuple[np.ndarray, np.ndarray]:
    """The interval of the family's maximum; ``members()`` yields blocks ``(point (K, M),
    replicates (B, K, M), se (K, M))``, se NaN for a member that is not one."""
    keep = None
    for _ in range(2):  # all members, then those that may be the maximum
        deviation = np.full((n_boot, m), np.nan)
        for j, (point, boot, se) in enumerate(members()):
            scaled = np.abs(boot - point) / se
            if keep is not None:
                scaled = np.where(keep[j], scaled, np.nan)
            deviation = _quiet(np.fmax, deviation, _quiet(np.nanmax, scaled, axis=1))
        c = _quiet(np.nanquantile, deviation, confidence, axis=0)
        lower, upper, ends = np.full(m, np.nan), np.full(m, np.nan), []
        for point, _, se in members():
            # a member with no spread (a rate of 0 or 1 in every replicate) is exact
            flat = np.isnan(se) & ~np.isnan(point)
            lo = np.where(flat, point, point - c * se)
            hi = np.where(flat, point, point + c * se)
            ends.append(hi)
            lower = _quiet(np.fmax, lower, _quiet(np.nanmax, lo, axis=0))
            upper = _quiet(np.fmax, upper, _quiet(np.nanmax, hi, axis=0))
        keep = [hi >= lower for hi in ends]
    return lower, upper


def _spread(boot: np.ndarray) -> np.ndarray:
    se = _quiet(np.nanstd, boot, axis=0)
    return np.where(se > 0, se, np.nan)


def extreme_interval(point: np.ndarray, boot: np.ndarray, confidence: float
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Intervals of ``min_k`` and ``max_k`` of a family: ``point`` (K, M), ``boot`` (B, K,
    M); returns ``(min lower, min upper, max lower, max upper)``, each of shape (M,)."""
    se = _spread(boot)
    n_boot, m = boot.shape[0], point.shape[1]
    max_lo, max_hi = _max_interval(lambda: iter([(point, boot, se)]), n_boot, m, confidence)
    neg_lo, neg_hi = _max_interval(lambda: iter([(-point, -boot, se)]), n_boot, m,
                                   confidence)
    return -neg_hi, -neg_lo, max_lo, max_hi


def pair_interval(point: np.ndarray, boot: np.ndarray, confidence: float
                  ) -> tuple[np.ndarray, np.ndarray]:
    """The interval of ``max_{i,j} (x_i - x_j)`` over ordered pairs of a family: ``point``
    (K, M), ``boot`` (B, K, M) → ``(lower, upper)`` of shape (M,), lower at least 0. Pairs
    come one group at a time (memory B·K·M)."""
    k = point.shape[0]
    ses = []
    for i in range(k):
        se = _spread(boot[:, i, None, :] - boot)
        se[i] = np.nan  # (i, i) is no pair
        ses.append(se)

    def members() -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        for i in range(k):
            d = point[i] - point
            d[i] = np.nan
            yield d, boot[:, i, None, :] - boot, ses[i]

    lower, upper = _max_interval(members, boot.shape[0], point.shape[1], confidence)
    return np.maximum(lower, 0.0), upper
