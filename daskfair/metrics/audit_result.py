"""The result of :func:`daskfair.metrics.audit`: per-group metrics, comparisons, intervals
and tests, all computed from the pass's count tables."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from .._params import Integer, Options, checked
from ._audit_blocks import UNIT_BINS
from ._audit_counts import Counts, index_attrs, index_from, plain
from ._audit_stats import (
    COUNT_METRICS,
    RATES,
    bootstrap_tables,
    group_tests,
    own_metrics,
    rate_parts,
    rates,
    wilson,
)
from ._extremes import extreme_interval, pair_interval
from ._score_tables import Calibration, Histograms, calibration_frames, scoring_counts

__all__ = ["Audit"]

_METHODS = ("between_groups", "to_overall")


def _nan_reduce(fn: Any, x: np.ndarray, axis: int) -> np.ndarray:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN columns stay NaN
        return fn(x, axis=axis)


class Audit:
    """Per-group metrics of binary decisions, their comparisons, intervals and tests.

    Made by :func:`daskfair.metrics.audit`; named after fairlearn's ``MetricFrame``. Metrics
    are the columns :attr:`metrics`: ``count`` (rows), the rates of
    :data:`~daskfair.metrics.AUDIT_RATES`, the ``metrics`` asked for and, with scores,
    ``roc_auc``. A rate whose
    denominator is empty is NaN (fairlearn reports 0 for some). Comparisons (``difference``,
    ``ratio``, ``group_min``, ``group_max``, the reference columns) cover the rates and
    ``roc_auc`` of the groups that are present and not suppressed.

    Every ``*_ci`` is a list ``[lower, upper]`` of objects shaped as the point estimate, as
    fairlearn's are: bootstrap percentiles at ``(1 ∓ confidence) / 2`` (``roc_auc``: a normal
    draw with DeLong's variance per group). They need ``n_boot > 0``.

    Parameters
    ----------
    counts : Counts
        What the pass counted.
    n_boot, confidence, min_group_size, reference_group, random_state, metrics
        As in :func:`~daskfair.metrics.audit` (``random_state=None`` draws a seed, kept in
        ``random_state``).
    """

    def __init__(self, counts: Counts, *, n_boot: int, confidence: float,
                 min_group_size: int, reference_group: Any = None,
                 random_state: int | None = None, metrics: Any = None) -> None:
        self._own = own_metrics(metrics)
        self.counts = counts
        self.n_boot, self.confidence, self.min_group_size = n_boot, confidence, min_group_size
        if random_state is None:
            random_state = int(np.random.default_rng().integers(2**62))
        self.random_state = int(random_state)
        sizes = counts.rows.sum(axis=(1, 2))
        self._present = sizes > 0
        self._eligible = self._present & (sizes >= min_group_size)
        if self._eligible.sum() < 2:
            raise ValueError(
                f"{int(self._eligible.sum())} group(s) have at least min_group_size="
                f"{min_group_size} rows (of {int(self._present.sum())} present): an audit "
                "compares two or more; lower min_group_size or combine fewer columns.")
        self.metrics = ["count", *RATES, *(name for name, _ in self._own),
                        *(["roc_auc"] if counts.auc is not None else [])]
        self._values, self._overall = self._point()
        self.reference_group = self._reference(reference_group, sizes)
        self._ref = counts.index.get_loc(self.reference_group)
        self._boot = self._bootstrap() if n_boot > 0 else None

    # -- the pass's tables as metrics ---------------------------------------------------
    def _table(self) -> np.ndarray:
        c = self.counts
        return c.weights if c.weights is not None else c.rows.astype(np.float64)

    def _point(self) -> tuple[np.ndarray, np.ndarray]:
        table = self._table()
        groups = np.column_stack([self.counts.rows.sum(axis=(1, 2)), rates(table, self._own)])
        overall = np.r_[self.counts.rows.sum(), rates(table.sum(axis=0), self._own)]
        if self.counts.auc is not None:
            groups = np.column_stack([groups, self.counts.auc[0][:-1]])
            overall = np.r_[overall, self.counts.auc[0][-1]]
        groups = groups.astype(np.float64)
        groups[~self._present, :] = np.nan  # absent combinations, as fairlearn shows them
        groups[~self._eligible, 1:] = np.nan
        return groups, overall

    def _reference(self, group: Any, sizes: np.ndarray) -> Any:
        index = self.counts.index
        if group is None:
            return index[int(np.argmax(np.where(self._eligible, sizes, -1)))]
        try:
            pos = index.get_loc(group)
        except (KeyError, TypeError):
            raise ValueError(f"reference_group={group!r} is not a group; the groups are "
                             f"{list(index[self._present])}.") from None
        if not isinstance(pos, int) or not self._eligible[pos]:
            raise ValueError(f"reference_group={group!r} has {int(sizes[pos])} rows, fewer "
                             f"than min_group_size={self.min_group_size}; choose another.")
        return index[pos]

    def _bootstrap(self) -> tuple[np.ndarray, np.ndarray]:
        c = self.counts
        rng = np.random.default_rng(self.random_state)
        draws, table = bootstrap_tables(c.rows, self.n_boot, rng, c.weights, c.squares)
        groups = np.concatenate([draws.sum(axis=(2, 3))[..., None], rates(table, self._own)],
                                axis=-1)
        overall = np.concatenate([draws.sum(axis=(1, 2, 3))[:, None],
                                  rates(table.sum(axis=1), self._own)], axis=-1)
        if c.auc is not None:
            auc, var, _ = c.auc
            z = rng.standard_normal((self.n_boot, len(auc)))
            sample = np.clip(auc + np.sqrt(var) * z, 0, 1)
            groups = np.concatenate([groups, sample[:, :-1, None]], axis=-1)
            overall = np.concatenate([overall, sample[:, -1:]], axis=-1)
        groups = groups.astype(np.float64)
        groups[:, ~self._present, :] = np.nan
        groups[:, ~self._eligible, 1:] = np.nan
        return groups, overall

    # -- pandas views ---------------------------------------------------------------------
    def _frame(self, values: np.ndarray) -> pd.DataFrame:
        return pd.DataFrame(values, index=self.counts.index, columns=self.metrics)

    def _compared(self) -> list[str]:
        return self.metrics[1:]

    def _replicates(self) -> tuple[np.ndarray, np.ndarray]:
        """The bootstrap's groups (B, G, M) and all rows (B, M)."""
        if self._boot is None:
            raise ValueError("intervals need the bootstrap: call audit(..., n_boot=1000).")
        return self._boot

    def _ci(self, fn: Any) -> list[Any]:
        sample = fn(*self._replicates())
        q = [(1 - self.confidence) / 2, (1 + self.confidence) / 2]
        ends = _nan_reduce(lambda x, axis: np.nanquantile(x, q, axis=axis), sample, 0)
        point = fn(self._values, self._overall)
        return [_like(point, e) for e in ends]

    @property
    def by_group(self) -> pd.DataFrame:
        """One row per group (every combination of levels), one column per metric."""
        return self._frame(self._values)

    @property
    def overall(self) -> pd.Series:
        """The metrics of all rows together."""
        return pd.Series(self._overall, index=self.metrics)

    @property
    def by_group_ci(self) -> list[pd.DataFrame]:
        """``[lower, upper]`` of :attr:`by_group`."""
        return self._ci(lambda g, o: self._frame(g) if g.ndim == 2 else g)

    @property
    def overall_ci(self) -> list[pd.Series]:
        """``[lower, upper]`` of :attr:`overall`."""
        return self._ci(lambda g, o: pd.Series(o, index=self.metrics) if o.ndim == 1 else o)

    def _extremes(self, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        x = values[..., self._eligible, 1:]
        return _nan_reduce(np.nanmin, x, -2), _nan_reduce(np.nanmax, x, -2)

    def _series(self, values: np.ndarray) -> Any:
        return pd.Series(values, index=self._compared()) if values.ndim == 1 else values

    def group_min(self) -> pd.Series:
        """The lowest value of each metric over the compared groups.

        Returns
        -------
        pandas.Series
        """
        return self._series(self._extremes(self._values)[0])

    def group_max(self) -> pd.Series:
        """The highest value of each metric over the compared groups.

        Returns
        -------
        pandas.Series
        """
        return self._series(self._extremes(self._values)[1])

    def _family(self, log: bool = False, to_overall: bool = False
                ) -> tuple[np.ndarray, np.ndarray]:
        """The compared groups' values (K, M) and replicates (B, K, M); on a log scale, or
        as each group's difference to all rows (and its negative)."""
        (g, o), (bg, bo) = (self._values, self._overall), self._replicates()
        point, boot = g[self._eligible, 1:], bg[:, self._eligible, 1:]
        if log:
            with np.errstate(divide="ignore", invalid="ignore"):
                point, boot, o, bo = np.log(point), np.log(boot), np.log(o), np.log(bo)
            point, boot = (np.where(np.isfinite(x), x, np.nan) for x in (point, boot))
        if to_overall:
            point, boot = point - o[None, 1:], boot - bo[:, None, 1:]
            point, boot = np.concatenate([point, -point]), np.concatenate([boot, -boot], 1)
        return point, boot

    def _pair(self, ends: tuple[np.ndarray, np.ndarray]) -> list[pd.Series]:
        return [self._series(e) for e in ends]

    def group_min_ci(self) -> list[pd.Series]:
        """``[lower, upper]`` of :meth:`group_min` (simultaneous intervals of the groups).

        Returns
        -------
        list of pandas.Series
        """
        return self._pair(extreme_interval(*self._family(), self.confidence)[:2])

    def group_max_ci(self) -> list[pd.Series]:
        """``[lower, upper]`` of :meth:`group_max` (simultaneous intervals of the groups).

        Returns
        -------
        list of pandas.Series
        """
        return self._pair(extreme_interval(*self._family(), self.confidence)[2:])

    def _difference(self, g: np.ndarray, o: np.ndarray, method: str) -> np.ndarray:
        _check_method(method)
        if method == "between_groups":
            low, high = self._extremes(g)
            return high - low
        gap = np.abs(g[..., self._eligible, 1:] - o[..., None, 1:])
        return _nan_reduce(np.nanmax, gap, -2)

    def _ratio(self, g: np.ndarray, o: np.ndarray, method: str) -> np.ndarray:
        _check_method(method)
        with np.errstate(invalid="ignore", divide="ignore"):
            if method == "between_groups":
                low, high = self._extremes(g)
                return low / high
            x, ov = g[..., self._eligible, 1:], o[..., None, 1:]
            return _nan_reduce(np.nanmin, np.minimum(x / ov, ov / x), -2)

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
        return self._series(self._difference(self._values, self._overall, method))

    def ratio(self, method: str = "between_groups") -> pd.Series:
        """Per metric, the smallest group's value over the largest's ("between_groups") or
        the smallest ratio of a group to all rows, either way up ("to_overall").

        Parameters
        ----------
        method : {"between_groups", "to_overall"}, default="between_groups"

        Returns
        -------
        pandas.Series
        """
        return self._series(self._ratio(self._values, self._overall, method))

    def difference_ci(self, method: str = "between_groups") -> list[pd.Series]:
        """``[lower, upper]`` of :meth:`difference`, from simultaneous intervals of every
        pair of groups (or of every group's difference to all rows): a percentile interval
        of a largest gap misses nearly equal groups' (docs/design.md#audits-in-one-pass).

        Parameters
        ----------
        method : {"between_groups", "to_overall"}, default="between_groups"

        Returns
        -------
        list of pandas.Series
        """
        return self._pair(self._gap_interval(method, log=False))

    def ratio_ci(self, method: str = "between_groups") -> list[pd.Series]:
        """``[lower, upper]`` of :meth:`ratio`, as :meth:`difference_ci` on the logarithm
        of the metrics (a ratio is ``exp(-largest log gap)``).

        Parameters
        ----------
        method : {"between_groups", "to_overall"}, default="between_groups"

        Returns
        -------
        list of pandas.Series
        """
        lo, hi = self._gap_interval(method, log=True)
        return self._pair((np.exp(-hi), np.exp(-lo)))

    def _gap_interval(self, method: str, log: bool) -> tuple[np.ndarray, np.ndarray]:
        """``(lower, upper)`` of the largest gap, between two groups or a group and all rows
        (of the metrics, or of their logarithms), from simultaneous intervals."""
        _check_method(method)
        if method == "between_groups":
            return pair_interval(*self._family(log=log), self.confidence)
        _, _, high_lo, high_hi = extreme_interval(*self._family(log=log, to_overall=True),
                                                   self.confidence)
        return np.maximum(high_lo, 0.0), high_hi

    def _to_reference(self, g: np.ndarray, kind: str) -> Any:
        x, ref = g[..., :, 1:], g[..., self._ref, None, 1:]
        with np.errstate(invalid="ignore", divide="ignore"):
            out = x - ref if kind == "difference" else x / ref  # a new array
        out[..., ~self._eligible, :] = np.nan
        if g.ndim == 2:
            return pd.DataFrame(out, index=self.counts.index, columns=self._compared())
        return out

    def difference_to_reference(self) -> pd.DataFrame:
        """Each group's metric minus the reference group's.

        Returns
        -------
        pandas.DataFrame
        """
        return self._to_reference(self._values, "difference")

    def ratio_to_reference(self) -> pd.DataFrame:
        """Each group's metric over the reference group's (the impact ratio for
        ``selection_rate``).

        Returns
        -------
        pandas.DataFrame
        """
        return self._to_reference(self._values, "ratio")

    def difference_to_reference_ci(self) -> list[pd.DataFrame]:
        """``[lower, upper]`` of :meth:`difference_to_reference`.

        Returns
        -------
        list of pandas.DataFrame
        """
        return self._ci(lambda g, o: self._to_reference(g, "difference"))

    def ratio_to_reference_ci(self) -> list[pd.DataFrame]:
        """``[lower, upper]`` of :meth:`ratio_to_reference`.

        Returns
        -------
        list of pandas.DataFrame
        """
        return self._ci(lambda g, o: self._to_reference(g, "ratio"))

    # -- closed-form intervals and tests --------------------------------------------------
    def _effective(self) -> tuple[dict[str, Any], dict[str, Any]]:
        """Per rate: (numerator, denominator) in weight, and Kish's effective rows."""
        c = self.counts
        parts = rate_parts(self._table())
        if c.squares is None:
            return parts, {k: den for k, (_, den) in parts.items()}
        sq = rate_parts(c.squares)
        with np.errstate(invalid="ignore", divide="ignore"):
            return parts, {k: parts[k][1] ** 2 / sq[k][1] for k in parts}

    @property
    def by_group_wilson_ci(self) -> list[pd.DataFrame]:
        """``[lower, upper]``: Wilson's interval of every group's rates (Kish's effective rows
        with weights) and, with scores, DeLong's normal interval of ``roc_auc``; NaN for the
        ``metrics`` asked for, which are not proportions of rows (the bootstrap's
        :attr:`by_group_ci` covers them)."""
        parts, n = self._effective()
        lower, upper = [], []
        for r in RATES:
            num, den = parts[r]
            with np.errstate(invalid="ignore", divide="ignore"):
                lo, hi = wilson(num / den * n[r], n[r], self.confidence)
            lower.append(lo)
            upper.append(hi)
        for _ in self._own:
            lower.append(np.full(len(self.counts.index), np.nan))
            upper.append(np.full(len(self.counts.index), np.nan))
        if self.counts.auc is not None:
            auc, var, _ = self.counts.auc
            half = stats.norm.ppf(0.5 + self.confidence / 2) * np.sqrt(var[:-1])
            lower.append(np.clip(auc[:-1] - half, 0, 1))
            upper.append(np.clip(auc[:-1] + half, 0, 1))
        out = []
        for ends in (lower, upper):
            values = np.column_stack(ends)
            values[~self._eligible] = np.nan
            out.append(pd.DataFrame(values, index=self.counts.index, columns=self._compared()))
        return out

    @property
    def roc_auc_error_bound(self) -> pd.Series:
        """Per group: ``|roc_auc - exact AUC|`` is at most this (the scores' binning)."""
        if self.counts.auc is None:
            raise ValueError("roc_auc needs scores: call audit(..., y_score=...).")
        return pd.Series(self.counts.auc[2][:-1], index=self.counts.index, name="roc_auc")

    def _scores(self, what: str) -> Histograms:
        if self.counts.scores is None:
            raise ValueError(f"{what} needs scores: call audit(..., y_score=...).")
        return self.counts.scores

    @checked(n_bins=[Integer(1, UNIT_BINS)], strategy=[Options(("uniform", "quantile"))])
    def calibration(self, n_bins: int = 10, strategy: str = "uniform") -> Calibration:
        """Calibration within groups (sufficiency): per group and bin of the scores, the
        rows, the mean score and the observed rate of positive labels, as scikit-learn's
        ``calibration_curve`` bins each group's rows, with intervals; and each group's
        expected calibration error. From the pass's score histograms: no row is read again.

        Bins are runs of the histogram's unit bins (1/25200 wide, closed on the right as
        ``calibration_curve``'s bins are). With ``"uniform"`` and ``n_bins`` dividing 25200
        (1 to 10, 12, 14, 15, 16, 20, 25, 50, 100, ...) the bins are ``calibration_curve``'s;
        otherwise, and for each group's ``"quantile"`` edges, an edge closes the bin below it
        with the unit bin that holds it, so a score less than 1/25200 above an edge may fall
        below it (the edges used are in ``by_bin``). A bin's mean score is its rows'
        unit-bin centres' mean, within 1/50400 of the exact mean. The positive rates'
        intervals are Wilson's; the ECE's holds every bin's Wilson interval at once
        (conservative: docs/design.md). Rows count one each (an audit with scores has no
        weights).

        Parameters
        ----------
        n_bins : int, default=10
        strategy : {"uniform", "quantile"}, default="uniform"
            Equal-width bins on [0, 1], or bins holding equal shares of each group's rows.

        Returns
        -------
        Calibration
        """
        return calibration_frames(self._scores("calibration"), self.counts.index,
                                  np.flatnonzero(self._eligible), n_bins, strategy,
                                  self.confidence)

    def scoring_rate(self) -> pd.DataFrame:
        """New York City Local Law 144's scoring rate per compared group: the share of its
        rows scored above the median score of all rows, from the score histograms.

        Returns
        -------
        pandas.DataFrame
            Per group: ``scoring_rate``; ``lower``, ``upper``: Wilson's interval (the
            median taken as fixed); ``impact_ratio``: over the highest group's rate, as the
            law defines it; ``ratio_to_reference``; ``error_bound``: the share of the group's
            rows in the median's bin (within 1/25200 of the median for scores in [0, 1]),
            counted as not above, so the exact rate lies within ``[scoring_rate,
            scoring_rate + error_bound]``.
        """
        above, rows, unsure = scoring_counts(self._scores("the scoring rate"),
                                             len(self.counts.index))
        keep = np.flatnonzero(self._eligible)
        with np.errstate(invalid="ignore", divide="ignore"):
            rate = above / rows
            lower, upper = wilson(above.astype(np.float64), rows.astype(np.float64),
                                  self.confidence)
            frame = pd.DataFrame({"scoring_rate": rate, "lower": lower, "upper": upper,
                                  "impact_ratio": rate / rate[keep].max(),
                                  "ratio_to_reference": rate / rate[self._ref],
                                  "error_bound": unsure / rows}, index=self.counts.index)
        return frame.iloc[keep]

    def tests(self) -> pd.DataFrame:
        """Every compared group against the reference group, rate by rate: a two-sided
        two-proportion z-test (pooled; ``roc_auc``: DeLong), p-values adjusted by Holm's
        method over the whole table, ``significant`` at level ``1 - confidence``. The
        ``metrics`` asked for are not tested (their intervals are the bootstrap's).

        Returns
        -------
        pandas.DataFrame
            Indexed by (metric, group): ``difference``, ``p_value``, ``p_holm``,
            ``significant``.
        """
        return group_tests(self)

    @property
    def suppressed(self) -> dict[Any, int]:
        """Present groups with fewer than ``min_group_size`` rows, and their rows."""
        sizes = self.counts.rows.sum(axis=(1, 2))
        hidden = self._present & ~self._eligible
        return {self.counts.index[i]: int(sizes[i]) for i in np.flatnonzero(hidden)}

    def to_state(self) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        """``(arrays, attributes)`` from which :meth:`from_state` rebuilds this audit, bit
        for bit (the bootstrap is drawn again from the stored counts and seed).

        Returns
        -------
        tuple of (dict of str to ndarray, dict)
        """
        c = self.counts
        arrays = {"cell_rows": c.rows}
        if c.weights is not None:
            arrays.update(weights=c.weights, squares=c.squares)
        if c.auc is not None:
            arrays.update(auc=np.stack(c.auc), score_owner=c.scores.owner,
                          score_bins=c.scores.bins, score_rows=c.scores.rows)
        attrs = {**index_attrs(c.index),
                 "reference_group": plain(self.reference_group), "n_boot": self.n_boot,
                 "confidence": self.confidence, "min_group_size": self.min_group_size,
                 "random_state": self.random_state, "metrics": self._stored_metrics()}
        return arrays, attrs

    def _stored_metrics(self) -> list[str]:
        names = [name for name, _ in self._own]
        mine = [n for n, fn in self._own if COUNT_METRICS.get(n) is not fn]
        if mine:
            raise ValueError(f"an audit with metrics of your own functions ({mine}) cannot be "
                             "stored: a store holds names, not code; store the named metrics "
                             "(daskfair.metrics.COUNT_METRICS) and compute yours from "
                             "Audit.counts.")
        return names

    @classmethod
    def from_state(cls, arrays: dict[str, np.ndarray], attrs: dict[str, Any]) -> Audit:
        """The audit :meth:`to_state` described.

        Parameters
        ----------
        arrays, attrs : dict
            As :meth:`to_state` returns them.

        Returns
        -------
        Audit
        """
        index = index_from(attrs)
        auc = scores = None
        if "auc" in arrays:
            auc = tuple(arrays["auc"])
            scores = Histograms(*(np.asarray(arrays[f"score_{k}"], dtype=np.int64)
                                  for k in ("owner", "bins", "rows")))
        counts = Counts(index, np.asarray(arrays["cell_rows"]), arrays.get("weights"),
                        arrays.get("squares"), auc, scores)
        ref = attrs["reference_group"]
        return cls(counts, n_boot=attrs["n_boot"], confidence=attrs["confidence"],
                   min_group_size=attrs["min_group_size"],
                   reference_group=tuple(ref) if isinstance(ref, list) else ref,
                   random_state=attrs["random_state"], metrics=attrs["metrics"] or None)

    def __repr__(self) -> str:
        return (f"Audit({int(self._present.sum())} groups, {int(self.counts.rows.sum()):,} "
                f"rows, n_boot={self.n_boot}, confidence={self.confidence})")


def _check_method(method: str) -> None:
    if method not in _METHODS:
        raise ValueError(f"method must be one of {_METHODS}, got {method!r}.")


def _like(point: Any, values: np.ndarray) -> Any:
    if isinstance(point, pd.DataFrame):
        return pd.DataFrame(values, index=point.index, columns=point.columns)
    if isinstance(point, pd.Series):
        return pd.Series(values, index=point.index)
    return values
