"""What an audit's score histograms answer beyond ``roc_auc`` (docs/design.md#audits-in-one-
pass, "Calibration and the scoring rate"): calibration within groups and the scoring rate of
New York City's Local Law 144. Everything here reads the histograms the pass kept; no row is
read again."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ._audit_blocks import SCORE_BITS, UNIT_BINS
from ._audit_stats import wilson

__all__ = ["BIN_COLUMNS", "Calibration", "Histograms", "calibrate", "calibration_frames",
           "scoring_counts"]

#: Where :func:`~daskfair.metrics._audit_blocks.score_bins` numbers the unit bins of [0, 1].
_UNIT_START = 2**15


@dataclass(frozen=True)
class Histograms:
    """Score histograms on an audit's grid of groups: ``owner = 2 * group + label``, ``bins``
    as :func:`~daskfair.metrics._audit_blocks.score_bins` numbers them, ``rows`` in each;
    sorted by owner, then bin."""

    owner: np.ndarray
    bins: np.ndarray
    rows: np.ndarray

    def cut(self, first: int, stop: int) -> Histograms:
        """Groups ``first`` to ``stop - 1`` alone, numbered from 0."""
        lo, hi = np.searchsorted(self.owner, [2 * first, 2 * stop])
        return Histograms(self.owner[lo:hi] - 2 * first, self.bins[lo:hi], self.rows[lo:hi])

    def pooled(self, first: int, stop: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The rows of groups ``first`` to ``stop - 1`` pooled: the distinct bins, and their
        negatives and positives."""
        part = self.cut(first, stop)
        if len(part.bins) == 0:
            return part.bins, part.rows, part.rows
        # bins are below 2**SCORE_BITS: counted densely over their range, which is cheaper
        # than sorting (float64 sums of counts below 2**53 are exact)
        lo = int(part.bins.min())
        at, width = part.bins - lo, int(part.bins.max()) - lo + 1
        positive = part.owner % 2 == 1
        pos = np.bincount(at[positive], part.rows[positive], width)
        every = np.bincount(at, part.rows, width)
        bins = np.flatnonzero(every)
        pos = pos[bins].astype(np.int64)
        return bins + lo, every[bins].astype(np.int64) - pos, pos


def scoring_counts(h: Histograms, n_groups: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per group: rows above the median score of all rows, rows, and rows whose side of the
    median the bins cannot tell (those in the median's bin, counted as not above).

    The median is numpy's (the mean of the two middle scores for an even count). When the
    two middle scores fall in different bins, every row is on a known side: the bins in
    between are empty.
    """
    bins, neg, pos = h.pooled(0, n_groups)
    total = neg + pos
    n = int(total.sum())
    cum = np.cumsum(total)
    low, high = (int(np.searchsorted(cum, r, side="right")) for r in ((n - 1) // 2, n // 2))
    group = h.owner // 2
    rows = np.bincount(group, weights=h.rows, minlength=n_groups).astype(np.int64)
    # each entry's position among the pooled bins, which hold all of its bins
    place = np.zeros(2**SCORE_BITS, dtype=np.int64)
    place[bins] = np.arange(len(bins))
    where = place[h.bins]
    above = np.bincount(group, weights=h.rows * (where >= high if low < high else where > high),
                        minlength=n_groups).astype(np.int64)
    unsure = np.zeros(n_groups, dtype=np.int64)
    if low == high:
        unsure = np.bincount(group, weights=h.rows * (where == high),
                             minlength=n_groups).astype(np.int64)
    return above, rows, unsure


def _edges(units: np.ndarray, counts: np.ndarray, n_bins: int, strategy: str) -> np.ndarray:
    """The calibration bins' first unit bins, ``n_bins + 1`` of them (the last past the end).

    Unit bins are closed on the right, as ``calibration_curve``'s bins are. An inner edge
    (``k / n_bins`` for ``"uniform"``; for ``"quantile"``, the order statistic ``floor((n -
    1) k / n_bins)`` of the rows, where :func:`numpy.percentile`'s ``k / n_bins`` quantile
    lies) closes the bin below it with the unit bin that holds it: a score equal to the edge
    falls below it, as in ``calibration_curve``, and so does a score of that unit bin above
    the edge (none when the edge is a unit boundary: ``n_bins`` divides UNIT_BINS).
    """
    if strategy == "uniform":  # ceil(k U / n): k U / n itself when n divides U
        inner = (np.arange(1, n_bins) * UNIT_BINS + n_bins - 1) // n_bins
    else:
        n = int(counts.sum())
        ranks = (n - 1) * np.arange(1, n_bins) // n_bins
        inner = units[np.searchsorted(np.cumsum(counts), ranks, side="right")] + 1
    return np.r_[0, inner, UNIT_BINS]


def calibrate(bins: np.ndarray, neg: np.ndarray, pos: np.ndarray, n_bins: int, strategy: str,
              confidence: float) -> dict[str, np.ndarray]:
    """One group's reliability table and expected calibration error, from its histogram.

    Returns the occupied calibration bins' ``bin``, ``lower_edge``, ``upper_edge``,
    ``count``, ``mean_score``, ``positive_rate`` with Wilson's ``positive_rate_lower`` and
    ``_upper``, and ``ece`` with ``ece_lower`` and ``ece_upper`` (:func:`_ece_interval`).
    """
    units = bins.astype(np.int64) - _UNIT_START
    total = neg + pos
    edges = _edges(units, total, n_bins, strategy)
    which = np.searchsorted(edges[1:-1], units, side="right")
    centre = (units + 0.5) / UNIT_BINS
    count = np.bincount(which, weights=total, minlength=n_bins)
    positives = np.bincount(which, weights=pos, minlength=n_bins)
    sums = np.bincount(which, weights=total * centre, minlength=n_bins)
    full = np.flatnonzero(count)
    count, positives, sums = (x[full] for x in (count, positives, sums))
    mean, rate = sums / count, positives / count
    n = count.sum()
    ece = float(np.sum(count / n * np.abs(rate - mean)))
    lower, upper = wilson(positives, count, confidence)
    out = {"bin": full, "lower_edge": edges[full] / UNIT_BINS,
           "upper_edge": edges[full + 1] / UNIT_BINS, "count": count,
           "mean_score": mean, "positive_rate": rate, "positive_rate_lower": lower,
           "positive_rate_upper": upper, "ece": ece}
    out["ece_lower"], out["ece_upper"] = _ece_interval(count, positives, mean, confidence)
    return out


def _ece_interval(count: np.ndarray, positives: np.ndarray, mean: np.ndarray,
                  confidence: float) -> tuple[float, float]:
    """An interval of the expected calibration error from simultaneous intervals of the
    bins' positive rates.

    Each bin's rate gets Wilson's interval at ``1 - (1 - confidence) / K`` (Bonferroni over
    the K occupied bins), so that with ``confidence`` every bin's gap ``rate - mean score``
    lies in its interval at once; the ECE's ends are the least and the largest weighted sum
    of absolute gaps those allow. A bootstrap of the ECE misses a well calibrated score's
    ECE of 0 (the absolute value biases every replicate above it; docs/design.md).
    """
    level = 1 - (1 - confidence) / len(count)
    low, high = wilson(positives, count, level)
    share = count / count.sum()
    gap_low, gap_high = low - mean, high - mean
    nearest = np.where((gap_low <= 0) & (gap_high >= 0), 0.0,
                       np.minimum(np.abs(gap_low), np.abs(gap_high)))
    farthest = np.maximum(np.abs(gap_low), np.abs(gap_high))
    return float(share @ nearest), float(share @ farthest)


@dataclass(frozen=True)
class Calibration:
    """Reliability of the scores within each group: made by
    :meth:`~daskfair.metrics.Audit.calibration`.

    Parameters
    ----------
    by_bin : pandas.DataFrame
        Indexed by (group, ``bin``), occupied bins only (as ``calibration_curve`` returns
        them): ``lower_edge``, ``upper_edge``, ``count``, ``mean_score``, ``positive_rate``
        and its Wilson interval ``positive_rate_lower``, ``positive_rate_upper``.
    ece : pandas.DataFrame
        Per group: the expected calibration error ``Σ_b (n_b / n) |positive_rate_b -
        mean_score_b|`` and its interval ``lower``, ``upper``.
    overall_by_bin : pandas.DataFrame
        ``by_bin`` of all rows.
    overall_ece : pandas.Series or pandas.DataFrame
        ``ece`` of all rows (of each control level's rows, one row per level, for a
        :class:`~daskfair.metrics.LevelAudit`).
    n_bins : int
        Bins asked for (the occupied ones are reported).
    strategy : {"uniform", "quantile"}
        How the bins were cut.
    """

    by_bin: pd.DataFrame
    ece: pd.DataFrame
    overall_by_bin: pd.DataFrame
    overall_ece: pd.Series | pd.DataFrame
    n_bins: int
    strategy: str


#: The columns of :attr:`Calibration.by_bin`.
BIN_COLUMNS = ("lower_edge", "upper_edge", "count", "mean_score", "positive_rate",
               "positive_rate_lower", "positive_rate_upper")


def calibration_frames(h: Histograms, index: pd.Index, groups: np.ndarray, n_bins: int,
                       strategy: str, confidence: float) -> Calibration:
    """:class:`Calibration` of the ``groups`` (positions in ``index``) and of all rows."""
    if len(h.bins) and (h.bins.min() < _UNIT_START or h.bins.max() >= _UNIT_START + UNIT_BINS):
        raise ValueError("calibration needs probabilities: some scores lie outside [0, 1]; "
                         "audit with y_score=predict_proba(...)[:, 1] or scores mapped to "
                         "[0, 1].")
    tables = [calibrate(*h.pooled(g, g + 1), n_bins, strategy, confidence) for g in groups]
    # one frame for every group: each group's rows point at its index entry
    at = np.repeat(np.asarray(groups, dtype=np.int64), [len(t["bin"]) for t in tables])
    empty = np.zeros(0)
    columns = {c: np.concatenate([empty, *(t[c] for t in tables)]) for c in BIN_COLUMNS}
    codes = index.codes if isinstance(index, pd.MultiIndex) else [np.arange(len(index))]
    levels = index.levels if isinstance(index, pd.MultiIndex) else [index]
    bins = np.concatenate([np.zeros(0, dtype=np.int64), *(t["bin"] for t in tables)])
    by_bin = pd.DataFrame(columns, index=pd.MultiIndex(
        levels=[*levels, np.arange(n_bins)], codes=[*(c[at] for c in codes), bins],
        names=[*index.names, "bin"]).remove_unused_levels())
    errors = [(t["ece"], t["ece_lower"], t["ece_upper"]) for t in tables]
    whole = calibrate(*h.pooled(0, len(index)), n_bins, strategy, confidence)
    return Calibration(
        by_bin=by_bin,
        ece=pd.DataFrame(errors, index=index[groups], columns=["ece", "lower", "upper"]),
        overall_by_bin=pd.DataFrame({c: whole[c] for c in BIN_COLUMNS},
                                    index=pd.Index(whole["bin"], name="bin")),
        overall_ece=pd.Series([whole["ece"], whole["ece_lower"], whole["ece_upper"]],
                              index=["ece", "lower", "upper"]),
        n_bins=n_bins, strategy=strategy)
