"""The result of :func:`daskfair.metrics.audit` with ``task="regression"``: per-group means
of the predictions, targets and errors with intervals, the gaps between groups, and the
distance between the groups' distributions of predictions, from the pass's exact sums and
histograms."""

from __future__ import annotations

import itertools
from fractions import Fraction
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from ._audit_counts import index_attrs, index_from, plain
from ._audit_stats import tests_table
from ._regression_blocks import MOMENTS, exact_fractions

__all__ = ["REGRESSION_METRICS", "RegressionAudit"]

#: The columns of a regression audit after ``count``, by fairlearn's and scikit-learn's
#: names where they have one; each is the mean of a per-row quantity x: (Σx, Σx², Σx³,
#: Σ|x|³, Σx⁴).
REGRESSION_METRICS = {"mean_prediction": ("p", "p2", "p3", "abs_p3", "p4"),
                      "mean_target": ("t", "t2", "t3", "abs_t3", "t4"),
                      "mean_residual": ("r", "r2", "r3", "abs_r3", "r4"),
                      "mean_absolute_error": ("abs_r", "r2", "abs_r3", "abs_r3", "r4"),
                      "mean_squared_error": ("r2", "r4", "r6", "r6", "r8")}
#: A skewness or kurtosis whose rounded powers could move its central moment by more than
#: this share of it is not used (0: the interval is then the normal one, or not widened).
_SHAPE_TRUST = 0.01
#: The metrics that cannot be negative: their intervals' lower ends are at least 0.
_NONNEGATIVE = np.array([m in ("mean_absolute_error", "mean_squared_error")
                         for m in REGRESSION_METRICS])


def _means(n: int, sums: list[Fraction]) -> np.ndarray:
    """Per metric: its mean, standard error ``sqrt(s² / n)``, skewness and excess kurtosis
    (NaN below 2 rows), the sample variance ``s²`` from the exact sums before one
    rounding."""
    by = dict(zip(MOMENTS, sums, strict=True))
    out = np.full((len(REGRESSION_METRICS), 4), np.nan)
    for k, (first, second, third, absolute, fourth) in enumerate(REGRESSION_METRICS.values()):
        if n == 0:
            continue
        mean = by[first] / n
        out[k, 0] = float(mean)
        if n < 2:
            continue
        var = max((n * by[second] - by[first] ** 2) / (n * (n - 1)), Fraction(0))
        out[k, 1] = np.sqrt(float(var) / n)
        out[k, 2:] = 0.0
        if var == 0:
            continue
        # the central moments from the raw sums, where only the third and fourth powers
        # are rounded (each by at most 2 ulp, so Σx³ by 2**-51 Σ|x|³ and Σx⁴ by 2**-51 Σx⁴):
        # a shape that rounding could move by more than _SHAPE_TRUST of itself is 0
        third_c = by[third] - 3 * mean * by[second] + 3 * mean**2 * by[first] - n * mean**3
        fourth_c = (by[fourth] - 4 * mean * by[third] + 6 * mean**2 * by[second]
                    - 4 * mean**3 * by[first] + n * mean**4)
        ulp = Fraction(2) ** -51
        if abs(third_c) * _SHAPE_TRUST > by[absolute] * ulp:
            out[k, 2] = float(third_c / n) / float(var) ** 1.5
        if fourth_c * _SHAPE_TRUST > (by[fourth] + 4 * abs(mean) * by[absolute]) * ulp:
            out[k, 3] = float(fourth_c / n) / float(var) ** 2 - 3.0
    return out


def _hall(mean: np.ndarray, se: np.ndarray, skew: np.ndarray, kurtosis: np.ndarray,
          n: np.ndarray, z: float) -> tuple[np.ndarray, np.ndarray]:
    """Hall's (1992) interval of a mean: the Studentized mean's skewness γ removed by the
    monotone cubic ``g(t) = t + γt²/(3√n) + γ²t³/(27n) + γ/(6√n)``, inverted in closed form,
    at the quantile ``z - q₂(z)/n`` that also corrects the n⁻¹ term of its Edgeworth
    expansion, ``q₂(x) = x(κ(x² - 3)/12 - γ²(x⁴ + 2x² - 3)/18 - (x² + 3)/4)`` (κ the excess
    kurtosis). Where γ is 0 the cubic is the identity."""
    with np.errstate(invalid="ignore", divide="ignore"):
        root = np.sqrt(n)
        flat = np.abs(skew) < 1e-12
        q2 = z * (kurtosis * (z**2 - 3) / 12 - skew**2 * (z**4 + 2 * z**2 - 3) / 18
                  - (z**2 + 3) / 4)
        q = z - q2 / n

        def inverse(u: np.ndarray) -> np.ndarray:
            g = np.where(flat, 1.0, skew)
            cubic = 3 * root / g * (np.cbrt(1 + g * (u - g / (6 * root)) / root) - 1)
            return np.where(flat, u, cubic)

        lower = mean - se * inverse(q)
        return np.where(_NONNEGATIVE & (lower < 0), 0.0, lower), mean - se * inverse(-q)


class RegressionAudit:
    """Per-group means of a regression's predictions, targets and errors, their gaps and
    intervals (made by :func:`~daskfair.metrics.audit` with ``task="regression"``).

    Metrics are the columns :attr:`metrics`: ``count`` (rows), then
    :data:`~daskfair.metrics.REGRESSION_METRICS`: ``mean_prediction`` (the statistical
    disparity of fair regression compares these), ``mean_target``, ``mean_residual`` (target
    minus prediction), ``mean_absolute_error`` and ``mean_squared_error``. Each metric is the
    mean of a per-row quantity, so its interval needs the quantity's sums of powers only:
    ``by_group_ci`` and ``overall_ci`` are Hall's (1992) skewness-corrected intervals of a
    mean at a quantile corrected for the kurtosis (:func:`_hall`; the errors' lower ends at
    least 0): a squared error is very skewed, and the normal interval held its mean in 88 %
    of simulated data sets, this one in 94 % (docs/design.md); the differences' are
    normal. ``*_ci`` are ``[lower, upper]``
    shaped as the estimate. The sums are exact integers, so any partitioning gives the same
    bits.

    Parameters
    ----------
    index : pandas.Index
        The groups (every combination of the sensitive columns' levels).
    rows : ndarray of shape (n_groups,)
        Rows per group.
    low : int
        Binary exponent of ``parts[..., 0]``.
    parts : ndarray of shape (n_groups, 8, 2, width)
        The exact sums of the moments per group (as a block's ``parts``).
    histograms : list of (bins, rows) or None
        Each group's histogram of predictions (None: no rows).
    confidence, min_group_size, reference_group
        As in :func:`~daskfair.metrics.audit`.
    """

    def __init__(self, index: pd.Index, rows: np.ndarray, low: int, parts: np.ndarray,
                 histograms: list[Any], *, confidence: float, min_group_size: int,
                 reference_group: Any = None) -> None:
        # a stored audit is read back: every group's histogram holds its rows exactly
        ok = (rows.shape == (len(index),) and parts.ndim == 4
              and parts.shape[:3] == (len(index), len(MOMENTS), 2)
              and len(histograms) == len(index)
              and all((h is None and n == 0) or (h is not None and int(np.sum(h[1])) == n
                                                 and bool(np.all(np.diff(h[0]) > 0)))
                      for h, n in zip(histograms, rows, strict=True)))
        if not ok:
            raise ValueError("the regression audit's sums and histograms do not agree with "
                             "its rows per group.")
        self.index, self.rows, self.low, self.parts = index, rows, low, parts
        self.histograms = histograms
        self.confidence, self.min_group_size = confidence, min_group_size
        self.metrics = ["count", *REGRESSION_METRICS]
        self._present = rows > 0
        self._eligible = self._present & (rows >= min_group_size)
        if self._eligible.sum() < 2:
            raise ValueError(
                f"{int(self._eligible.sum())} group(s) have at least min_group_size="
                f"{min_group_size} rows (of {int(self._present.sum())} present): an audit "
                "compares two or more; lower min_group_size or combine fewer columns.")
        sums = exact_fractions(low, parts)
        point = np.array([_means(int(n), s) for n, s in zip(rows, sums, strict=True)])
        point[~self._eligible] = np.nan
        self._values, self._se, self._skew, self._kurtosis = (point[..., j] for j in range(4))
        total = [sum((s[m] for s in sums), Fraction(0)) for m in range(len(MOMENTS))]
        self._overall, self._overall_se, self._overall_skew, self._overall_kurtosis = _means(
            int(rows.sum()), total).T
        if reference_group is None:
            reference_group = index[int(np.argmax(np.where(self._eligible, rows, -1)))]
        try:
            self._ref = index.get_loc(reference_group)
        except (KeyError, TypeError):
            raise ValueError(f"reference_group={reference_group!r} is not a group; the groups "
                             f"are {list(index[self._present])}.") from None
        if not isinstance(self._ref, int) or not self._eligible[self._ref]:
            raise ValueError(f"reference_group={reference_group!r} has fewer than "
                             f"min_group_size={min_group_size} rows; choose another.")
        self.reference_group = index[self._ref]

    def _z(self, tests: int = 1) -> float:
        return float(stats.norm.ppf(1 - (1 - self.confidence) / (2 * tests)))

    def _frame(self, values: np.ndarray) -> pd.DataFrame:
        return pd.DataFrame(values, index=self.index, columns=self.metrics[1:])

    @property
    def by_group(self) -> pd.DataFrame:
        """One row per group, one column per metric (NaN: absent or suppressed)."""
        frame = self._frame(self._values)
        frame.insert(0, "count", np.where(self._present, self.rows, np.nan))
        return frame

    @property
    def overall(self) -> pd.Series:
        """The metrics of all rows together."""
        return pd.Series([float(self.rows.sum()), *self._overall], index=self.metrics)

    @property
    def by_group_ci(self) -> list[pd.DataFrame]:
        """``[lower, upper]`` of :attr:`by_group`'s metrics (Hall's intervals of means)."""
        ends = _hall(self._values, self._se, self._skew, self._kurtosis, self.rows[:, None],
                     self._z())
        return [self._frame(e) for e in ends]

    @property
    def overall_ci(self) -> list[pd.Series]:
        """``[lower, upper]`` of :attr:`overall`'s metrics."""
        ends = _hall(self._overall, self._overall_se, self._overall_skew,
                     self._overall_kurtosis, np.array(float(self.rows.sum())), self._z())
        return [pd.Series(e, index=self.metrics[1:]) for e in ends]

    def _kept(self) -> np.ndarray:
        return np.flatnonzero(self._eligible)

    def group_min(self) -> pd.Series:
        """Each metric's lowest value over the compared groups.

        Returns
        -------
        pandas.Series
        """
        return pd.Series(self._values[self._kept()].min(axis=0), index=self.metrics[1:])

    def group_max(self) -> pd.Series:
        """Each metric's highest value over the compared groups.

        Returns
        -------
        pandas.Series
        """
        return pd.Series(self._values[self._kept()].max(axis=0), index=self.metrics[1:])

    def difference(self, method: str = "between_groups") -> pd.Series:
        """Per metric, the largest gap between two groups ("between_groups") or between a
        group and all rows ("to_overall"), as fairlearn defines them.

        Parameters
        ----------
        method : {"between_groups", "to_overall"}, default="between_groups"

        Returns
        -------
        pandas.Series
        """
        if method == "between_groups":
            return self.group_max() - self.group_min()
        if method == "to_overall":
            gap = np.abs(self._values[self._kept()] - self._overall)
            return pd.Series(gap.max(axis=0), index=self.metrics[1:])
        raise ValueError(f"method must be one of ('between_groups', 'to_overall'), got "
                         f"{method!r}.")

    def difference_ci(self, method: str = "between_groups") -> list[pd.Series]:
        """``[lower, upper]`` of ``difference("between_groups")``, from simultaneous normal
        intervals of every pair's difference (Bonferroni over the pairs): the largest gap
        lies between the largest distance from 0 of a pair's interval and the largest
        absolute end of one (docs/design.md#audits-in-one-pass).

        Parameters
        ----------
        method : {"between_groups"}, default="between_groups"
            The only one with an interval here (a group is part of all rows, so its gap to
            them is not a difference of independent means).

        Returns
        -------
        list of pandas.Series
        """
        if method != "between_groups":
            raise ValueError(f"a regression audit's difference_ci has method "
                             f"'between_groups' only, got {method!r}.")
        kept = self._kept()
        pairs = list(itertools.combinations(kept, 2))
        z = self._z(len(pairs))
        d = np.array([self._values[i] - self._values[j] for i, j in pairs])
        half = z * np.sqrt(np.array([self._se[i] ** 2 + self._se[j] ** 2 for i, j in pairs]))
        lo, hi = d - half, d + half
        nearest = np.where((lo <= 0) & (hi >= 0), 0.0, np.minimum(np.abs(lo), np.abs(hi)))
        farthest = np.maximum(np.abs(lo), np.abs(hi))
        return [pd.Series(x.max(axis=0), index=self.metrics[1:]) for x in (nearest, farthest)]

    def difference_to_reference(self) -> pd.DataFrame:
        """Each group's metrics minus the reference group's.

        Returns
        -------
        pandas.DataFrame
        """
        return self._frame(self._values - self._values[self._ref])

    def difference_to_reference_ci(self) -> list[pd.DataFrame]:
        """``[lower, upper]`` of :meth:`difference_to_reference` (normal, each group on its
        own; 0 for the reference group itself).

        Returns
        -------
        list of pandas.DataFrame
        """
        d = self._values - self._values[self._ref]
        se = np.sqrt(self._se**2 + self._se[self._ref] ** 2)
        se[self._ref] = 0.0
        half = self._z() * se
        return [self._frame(d - half), self._frame(d + half)]

    def tests(self) -> pd.DataFrame:
        """Every compared group against the reference group, metric by metric: a two-sided
        z-test of the difference of two means (Welch's standard error), p-values adjusted
        by Holm's method over the whole table, ``significant`` at level ``1 - confidence``.

        Returns
        -------
        pandas.DataFrame
            Indexed by (metric, group): ``difference``, ``p_value``, ``p_holm``,
            ``significant``.
        """
        rows = []
        d = self.difference_to_reference().to_numpy()
        se = np.sqrt(self._se**2 + self._se[self._ref] ** 2)
        for m, metric in enumerate(self.metrics[1:]):
            for i in self._kept():
                if i == self._ref:
                    continue
                if se[i, m] > 0:
                    p = 2 * stats.norm.sf(abs(d[i, m]) / se[i, m])
                else:  # both groups' values constant: a difference is certain
                    p = 1.0 if d[i, m] == 0 else 0.0
                g = self.index[i]
                rows.append((metric, *(g if isinstance(g, tuple) else (g,)), d[i, m], p))
        return tests_table(rows, self.index.names, self.confidence)

    def prediction_ks(self) -> pd.DataFrame:
        """The Kolmogorov–Smirnov distance between every two compared groups' distributions
        of predictions, from their histograms.

        The histograms' bins span a relative width of 2**-12; the distance evaluated at the
        bins' ends is ``ks``, and the exact distance (as ``scipy.stats.ks_2samp`` computes
        it) lies in ``[ks, ks_upper]``, where ``ks_upper`` adds what the rows inside one
        bin could change.

        Returns
        -------
        pandas.DataFrame
            Indexed by the pair (``group_a``, ``group_b``): ``ks``, ``ks_upper``.
        """
        out = {}
        for i, j in itertools.combinations(self._kept(), 2):
            out[(self.index[i], self.index[j])] = _ks(self.histograms[i], self.histograms[j])
        frame = pd.DataFrame.from_dict(out, orient="index", columns=["ks", "ks_upper"])
        frame.index = pd.MultiIndex.from_tuples(list(out), names=["group_a", "group_b"])
        return frame

    @property
    def suppressed(self) -> dict[Any, int]:
        """Present groups with fewer than ``min_group_size`` rows, and their rows."""
        hidden = self._present & ~self._eligible
        return {self.index[i]: int(self.rows[i]) for i in np.flatnonzero(hidden)}

    def to_state(self) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        """``(arrays, attributes)`` from which :meth:`from_state` rebuilds this audit, bit
        for bit.

        Returns
        -------
        tuple of (dict of str to ndarray, dict)
        """
        kept = [i for i, h in enumerate(self.histograms) if h is not None]
        arrays = {"group_rows": self.rows, "moment_parts": self.parts,
                  "value_owner": np.concatenate([np.full(len(self.histograms[i][0]), i)
                                                 for i in kept]).astype(np.int64),
                  "value_bins": np.concatenate([self.histograms[i][0] for i in kept]),
                  "value_rows": np.concatenate([self.histograms[i][1] for i in kept])}
        attrs = {"task": "regression", **index_attrs(self.index), "low": self.low,
                 "reference_group": plain(self.reference_group),
                 "confidence": self.confidence, "min_group_size": self.min_group_size}
        return arrays, attrs

    @classmethod
    def from_state(cls, arrays: dict[str, np.ndarray], attrs: dict[str, Any]
                   ) -> RegressionAudit:
        """The audit :meth:`to_state` described.

        Parameters
        ----------
        arrays, attrs : dict
            As :meth:`to_state` returns them.

        Returns
        -------
        RegressionAudit
        """
        index = index_from(attrs)
        owner = np.asarray(arrays["value_owner"], dtype=np.int64)
        bins = np.asarray(arrays["value_bins"], dtype=np.int32)
        counts = np.asarray(arrays["value_rows"], dtype=np.int64)
        if not (len(owner) == len(bins) == len(counts)) or (
                len(owner) and not 0 <= owner.min() <= owner.max() < len(index)):
            raise ValueError("the prediction histograms name groups the audit does not have.")
        histograms: list[Any] = [None] * len(index)
        for g in np.unique(owner):
            take = owner == g
            histograms[int(g)] = (bins[take], counts[take])
        ref = attrs["reference_group"]
        return cls(index, np.asarray(arrays["group_rows"], dtype=np.int64), int(attrs["low"]),
                   np.asarray(arrays["moment_parts"], dtype=np.int64), histograms,
                   confidence=attrs["confidence"], min_group_size=attrs["min_group_size"],
                   reference_group=tuple(ref) if isinstance(ref, list) else ref)

    def __repr__(self) -> str:
        return (f"RegressionAudit({int(self._present.sum())} groups, {int(self.rows.sum()):,} "
                f"rows, confidence={self.confidence})")


def _ks(a: tuple[np.ndarray, np.ndarray], b: tuple[np.ndarray, np.ndarray]
        ) -> tuple[float, float]:
    """(distance at the bins' ends, and its bound) of two histograms (bins, rows)."""
    bins = np.union1d(a[0], b[0])
    mass = np.zeros((2, len(bins)))
    for k, (hb, hc) in enumerate((a, b)):
        mass[k, np.searchsorted(bins, hb)] = hc / hc.sum()
    before = np.r_[0.0, np.cumsum(mass[0] - mass[1])[:-1]]  # F_a - F_b below each bin
    ends = np.abs(before + mass[0] - mass[1])
    # inside a bin, F_a rises by at most its mass there and F_b by at most its own
    inside = np.maximum(np.abs(before + mass[0]), np.abs(before - mass[1]))
    return float(ends.max()), float(max(ends.max(), inside.max()))
