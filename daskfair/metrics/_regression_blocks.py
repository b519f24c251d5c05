"""Per-block statistics of a regression audit (docs/design.md#audits-in-one-pass): per
group, its rows, exact integer sums of the moments of its predictions, targets and
residuals, and a histogram of its predictions. Every statistic is a sum of integers, so any
cut of the rows into blocks gives the same bits."""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from ._audit_blocks import coded_groups, merge_sorted
from ._regression_kernels import EXPONENT_SLOTS, LOWEST_EXPONENT, N_MOMENTS, accumulate

__all__ = ["MOMENTS", "VALUE_BITS", "RegressionBlock", "exact_fractions", "merge_regression",
           "regression_block", "value_bins"]

#: The per-row quantities summed: prediction p, target t and residual r = t - p, with the
#: squares their variances need, the cubes (and absolute cubes) their skewness needs and the
#: fourth powers their kurtosis needs (|r|'s powers are r², |r|³, r⁴; r²'s are r⁴, r⁶, r⁸).
MOMENTS = ("p", "p2", "p3", "abs_p3", "p4", "t", "t2", "t3", "abs_t3", "t4", "r", "abs_r",
           "r2", "r3", "abs_r3", "r4", "r6", "r8")
#: A prediction's bin is the top VALUE_BITS bits of its float64 order key: 11 bits of
#: exponent and 12 of mantissa, so a bin spans a relative width of 2**-12 (2.4e-4).
VALUE_BITS = 24
_HALF = 26  # a 53-bit mantissa is summed as two int64 halves of at most 27 bits


@dataclass(frozen=True)
class RegressionBlock:
    """One block's statistics per group key (the groups' raw values).

    ``rows[k]``: rows of key k; ``parts[k, m, 0 | 1, e]``: the high and low 26-bit halves of
    the 53-bit mantissas of moment MOMENTS[m] at binary exponent ``low + e``, summed as
    integers; ``histograms[key]``: the sorted prediction bins and their rows.
    """

    keys: tuple[tuple[Any, ...], ...]
    rows: np.ndarray
    low: int
    parts: np.ndarray
    histograms: dict[tuple[Any, ...], tuple[np.ndarray, np.ndarray]]


def value_bins(x: np.ndarray) -> np.ndarray:
    """Bins that keep the order of the values: a higher bin holds only higher values (-0.0
    and 0.0 in one)."""
    u = (np.asarray(x, dtype=np.float64) + 0.0).view(np.uint64)  # -0.0 + 0.0 is 0.0
    key = np.where(u >> np.uint64(63), ~u, u | np.uint64(1 << 63))
    return (key >> np.uint64(64 - VALUE_BITS)).astype(np.int64)


def _window(t: np.ndarray, p: np.ndarray, s: np.ndarray) -> tuple[int, int]:
    """Exponents ``[low, high]`` that hold every term of these rows' moments: from the
    smallest and largest magnitudes, generously (a term outside widens it to every
    exponent)."""
    tops, bottoms = [], []
    for x in (t, p, s):
        mag = np.abs(x[x != 0])
        if len(mag):
            tops.append(int(np.frexp(mag.max())[1]))
            bottoms.append(int(np.frexp(mag.min())[1]))
    if not tops:
        return 0, 0
    high = 8 * max(max(tops), 1) + 8  # r⁸ of the largest residual, the fourth powers
    low = 8 * min(min(bottoms), 0) - 120  # r⁸ of the smallest; two-sum errors squared
    return max(low, LOWEST_EXPONENT), min(high, LOWEST_EXPONENT + EXPONENT_SLOTS - 1)


def _check_values(t: np.ndarray, p: np.ndarray) -> np.ndarray:
    """The residuals, once every value and power the sums need is known to be finite."""
    with np.errstate(over="ignore", invalid="ignore"):
        s = t - p
        big = max(np.abs(t).max(initial=0.0), np.abs(p).max(initial=0.0))
        ok = (np.isfinite(s).all() and np.isfinite(big**4)
              and np.isfinite(np.abs(s).max(initial=0.0) ** 8))
    if not ok:
        raise ValueError("y_true or y_pred holds NaN or infinite values, or values so large "
                         "that a residual's eighth power overflows (above about 1e38): drop "
                         "those rows, or rescale the target.")
    return s


def _exact_sums(group: np.ndarray, t: np.ndarray, p: np.ndarray, n_cells: int
                ) -> tuple[int, np.ndarray]:
    """``(low, parts[cell, m, 0 | 1, e])``: Σ of each moment per cell, as integer sums of
    mantissa halves at exponents ``low + e`` (trimmed to those present)."""
    low, high = _window(t, p, _check_values(t, p))
    acc = np.zeros((n_cells, N_MOMENTS, 2, high - low + 1), dtype=np.int64)
    if not accumulate(group, t, p, low, acc):
        low = LOWEST_EXPONENT
        acc = np.zeros((n_cells, N_MOMENTS, 2, EXPONENT_SLOTS), dtype=np.int64)
        accumulate(group, t, p, low, acc)
    used = np.flatnonzero(acc.any(axis=(0, 1, 2)))
    if not len(used):
        return 0, acc[..., :1]
    return low + int(used[0]), np.ascontiguousarray(acc[..., used[0]:used[-1] + 1])


def exact_fractions(low: int, parts: np.ndarray) -> list[list[Fraction]]:
    """``parts[k, m, 0 | 1, e]`` as the exact sums, one Fraction per key and moment."""
    out = []
    for per_key in parts:
        row = []
        for high, lo in per_key:
            total = 0
            for k in np.flatnonzero(high | lo):
                total += ((int(high[k]) << _HALF) + int(lo[k])) << int(k)
            row.append(Fraction(total) * Fraction(2) ** (int(low) - 53))
        out.append(row)
    return out


def regression_block(groups: list[Any], y_true: Any, y_pred: Any) -> RegressionBlock:
    """Block function: the statistics of one block of rows."""
    t = np.ascontiguousarray(y_true, dtype=np.float64).ravel()
    p = np.ascontiguousarray(y_pred, dtype=np.float64).ravel()
    if len(t) != len(p):
        raise ValueError(f"every input needs one value per row; got {len(t)} targets and "
                         f"{len(p)} predictions.")
    codes, strides, keys = coded_groups(groups, len(t))  # codes of len(t) rows: in range
    group = strides @ codes if len(t) else np.zeros(0, dtype=np.int64)
    low, parts = _exact_sums(group, t, p, len(keys))
    rows = np.bincount(group, minlength=len(keys)).astype(np.int64)
    present = np.flatnonzero(rows)
    joint = np.sort(group << VALUE_BITS | value_bins(p))
    first = np.r_[0, np.flatnonzero(np.diff(joint)) + 1] if len(joint) else np.zeros(0, int)
    uniq, counts = joint[first], np.diff(np.r_[first, len(joint)])
    owner = uniq >> VALUE_BITS
    cuts = np.searchsorted(owner, present)
    ends = np.searchsorted(owner, present, side="right")
    histograms = {keys[g]: ((uniq[a:b] & ((1 << VALUE_BITS) - 1)).astype(np.int32),
                            counts[a:b].astype(np.int64))
                  for g, a, b in zip(present, cuts, ends, strict=True)}
    return RegressionBlock(tuple(keys[g] for g in present), rows[present], low,
                           parts[present], histograms)


def merge_regression(a: RegressionBlock, b: RegressionBlock) -> RegressionBlock:
    """``a + b``: key by key, exponent by exponent, bin by bin."""
    if not a.keys:
        return b
    if not b.keys:
        return a
    keys = list(dict.fromkeys(a.keys + b.keys))
    where = {k: i for i, k in enumerate(keys)}
    low = min(a.low, b.low)
    width = max(a.low + a.parts.shape[-1], b.low + b.parts.shape[-1]) - low
    parts = np.zeros((len(keys), len(MOMENTS), 2, width), dtype=np.int64)
    rows = np.zeros(len(keys), dtype=np.int64)
    for block in (a, b):
        at = [where[k] for k in block.keys]
        shift = block.low - low
        parts[at, :, :, shift:shift + block.parts.shape[-1]] += block.parts
        rows[at] += block.rows
    histograms = dict(a.histograms)
    for key, hist in b.histograms.items():
        histograms[key] = merge_sorted(histograms[key], hist) if key in histograms else hist
    return RegressionBlock(tuple(keys), rows, low, parts, histograms)
