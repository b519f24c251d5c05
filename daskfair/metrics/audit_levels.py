"""An audit within the levels of control features: one :class:`~daskfair.metrics.Audit`
per level (a region, a period, a product line), its groups compared inside the level, as
fairlearn's ``MetricFrame`` compares them with ``control_features``."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from ._audit_counts import Counts, plain
from ._score_tables import Calibration
from .audit_result import Audit
from .regression_audit import RegressionAudit

__all__ = ["LevelAudit", "level_counts", "level_cuts"]


def level_cuts(index: pd.MultiIndex, n_control: int
               ) -> list[tuple[Any, slice, pd.Index]]:
    """A grid of groups indexed by the control columns, then the sensitive ones, cut into
    its control levels: each level's key, its slice of the grid and its groups' index (every
    level is one contiguous slice, the control columns coming first)."""
    control = [index.levels[j] for j in range(n_control)]
    per = len(index) // int(np.prod([len(lv) for lv in control]))
    out = []
    for i, key in enumerate(itertools.product(*control)):
        rows = slice(i * per, (i + 1) * per)
        out.append((key[0] if n_control == 1 else key, rows,
                    index[rows].droplevel(list(range(n_control)))))
    return out


def level_counts(whole: Counts, n_control: int,
                 auc_of: Callable[[slice], Any] | None) -> list[tuple[Any, Counts]]:
    """``whole`` (groups indexed by the control columns, then the sensitive ones) cut into
    one table per control level: (its key, its groups' counts); ``auc_of(rows)``: the
    (AUC, variance, bound) of those groups and, last, of the level's rows (None: no scores)."""
    out = []
    for key, rows, groups in level_cuts(whole.index, n_control):
        weights, squares = ((None, None) if whole.weights is None
                            else (whole.weights[rows], whole.squares[rows]))
        auc = None if auc_of is None else auc_of(rows)
        scores = None if whole.scores is None else whole.scores.cut(rows.start, rows.stop)
        out.append((key, Counts(groups, whole.rows[rows], weights, squares, auc, scores)))
    return out


def _seed(random_state: int, i: int) -> int:
    # each level's bootstrap its own stream, fixed by the seed and the level's position
    return int(np.random.SeedSequence([random_state, i]).generate_state(1, np.uint64)[0]
               >> np.uint64(2))


class LevelAudit:
    """Per-group metrics, comparisons and intervals within each level of the control
    features (made by :func:`~daskfair.metrics.audit` with ``control_features``).

    ``by_group`` is indexed by the control columns, then the sensitive ones, as fairlearn's
    ``MetricFrame`` indexes it; ``overall`` and every comparison (``difference``, ``ratio``,
    ``group_min``, ``group_max``) have one row per control level, each computed inside its
    level; their ``*_ci`` are ``[lower, upper]`` of the same shape. Each level is bootstrapped
    on its own counts (its rows fixed, as a stratum's), with a seed drawn from
    ``random_state`` and the level's position. ``levels`` holds each level's
    :class:`~daskfair.metrics.Audit`.

    Parameters
    ----------
    parts : list of (key, Counts)
        Each control level's key and its groups' counts (:func:`level_counts`).
    names : list of str
        The control columns' names.
    n_boot, confidence, min_group_size, reference_group, random_state, metrics
        As in :func:`~daskfair.metrics.audit`, for every level.
    """

    def __init__(self, parts: list[tuple[Any, Counts]], names: list[str], *, n_boot: int,
                 confidence: float, min_group_size: int, reference_group: Any = None,
                 random_state: int | None = None, metrics: Any = None) -> None:
        if random_state is None:
            random_state = int(np.random.default_rng().integers(2**62))
        self.random_state, self.names = int(random_state), list(names)
        self.n_boot, self.confidence, self.min_group_size = n_boot, confidence, min_group_size
        self.levels: dict[Any, Audit] = {}
        for i, (key, counts) in enumerate(parts):
            if counts.rows.sum() == 0:
                continue  # a combination of control values no row has
            try:
                self.levels[key] = Audit(counts, n_boot=n_boot, confidence=confidence,
                                         min_group_size=min_group_size,
                                         reference_group=reference_group,
                                         random_state=_seed(self.random_state, i),
                                         metrics=metrics)
            except ValueError as exc:
                raise ValueError(f"control level {key!r}: {exc}") from None
        first = next(iter(self.levels.values()))
        self.metrics = first.metrics

    def _keys(self) -> pd.Index:
        keys = list(self.levels)
        if len(self.names) > 1:
            return pd.MultiIndex.from_tuples(keys, names=self.names)
        return pd.Index(keys, name=self.names[0])

    def _stack(self, get: Callable[[Audit], Any]) -> Any:
        """Each level's ``get`` in one object: frames stacked under the control keys,
        series as one row per level."""
        values = [get(a) for a in self.levels.values()]
        if isinstance(values[0], pd.DataFrame):
            frame = pd.concat(values, keys=list(self.levels), names=self.names)
            return frame
        return pd.DataFrame(values, index=self._keys())

    def _ends(self, get: Callable[[Audit], list[Any]]) -> list[Any]:
        return [self._stack(lambda a, end=end: get(a)[end]) for end in (0, 1)]

    @property
    def by_group(self) -> pd.DataFrame:
        """One row per (control level, group), one column per metric."""
        return self._stack(lambda a: a.by_group)

    @property
    def overall(self) -> pd.DataFrame:
        """The metrics of each control level's rows."""
        return self._stack(lambda a: a.overall)

    @property
    def by_group_ci(self) -> list[pd.DataFrame]:
        """``[lower, upper]`` of :attr:`by_group`."""
        return self._ends(lambda a: a.by_group_ci)

    @property
    def overall_ci(self) -> list[pd.DataFrame]:
        """``[lower, upper]`` of :attr:`overall`."""
        return self._ends(lambda a: a.overall_ci)

    def difference(self, method: str = "between_groups") -> pd.DataFrame:
        """Per level and metric, the largest gap between two of its groups (or between a
        group and the level's rows: ``"to_overall"``).

        Parameters
        ----------
        method : {"between_groups", "to_overall"}, default="between_groups"

        Returns
        -------
        pandas.DataFrame
        """
        return self._stack(lambda a: a.difference(method))

    def ratio(self, method: str = "between_groups") -> pd.DataFrame:
        """Per level and metric, the smallest ratio of two of its groups' values.

        Parameters
        ----------
        method : {"between_groups", "to_overall"}, default="between_groups"

        Returns
        -------
        pandas.DataFrame
        """
        return self._stack(lambda a: a.ratio(method))

    def group_min(self) -> pd.DataFrame:
        """Per level, each metric's lowest value over its compared groups.

        Returns
        -------
        pandas.DataFrame
        """
        return self._stack(lambda a: a.group_min())

    def group_max(self) -> pd.DataFrame:
        """Per level, each metric's highest value over its compared groups.

        Returns
        -------
        pandas.DataFrame
        """
        return self._stack(lambda a: a.group_max())

    def difference_ci(self, method: str = "between_groups") -> list[pd.DataFrame]:
        """``[lower, upper]`` of :meth:`difference` (simultaneous within each level).

        Parameters
        ----------
        method : {"between_groups", "to_overall"}, default="between_groups"

        Returns
        -------
        list of pandas.DataFrame
        """
        return self._ends(lambda a: a.difference_ci(method))

    def ratio_ci(self, method: str = "between_groups") -> list[pd.DataFrame]:
        """``[lower, upper]`` of :meth:`ratio`.

        Parameters
        ----------
        method : {"between_groups", "to_overall"}, default="between_groups"

        Returns
        -------
        list of pandas.DataFrame
        """
        return self._ends(lambda a: a.ratio_ci(method))

    def group_min_ci(self) -> list[pd.DataFrame]:
        """``[lower, upper]`` of :meth:`group_min`.

        Returns
        -------
        list of pandas.DataFrame
        """
        return self._ends(lambda a: a.group_min_ci())

    def group_max_ci(self) -> list[pd.DataFrame]:
        """``[lower, upper]`` of :meth:`group_max`.

        Returns
        -------
        list of pandas.DataFrame
        """
        return self._ends(lambda a: a.group_max_ci())

    def difference_to_reference(self) -> pd.DataFrame:
        """Each group's metrics minus its level's reference group's.

        Returns
        -------
        pandas.DataFrame
        """
        return self._stack(lambda a: a.difference_to_reference())

    def ratio_to_reference(self) -> pd.DataFrame:
        """Each group's metrics over its level's reference group's (the impact ratio).

        Returns
        -------
        pandas.DataFrame
        """
        return self._stack(lambda a: a.ratio_to_reference())

    def difference_to_reference_ci(self) -> list[pd.DataFrame]:
        """``[lower, upper]`` of :meth:`difference_to_reference`.

        Returns
        -------
        list of pandas.DataFrame
        """
        return self._ends(lambda a: a.difference_to_reference_ci())

    def ratio_to_reference_ci(self) -> list[pd.DataFrame]:
        """``[lower, upper]`` of :meth:`ratio_to_reference`.

        Returns
        -------
        list of pandas.DataFrame
        """
        return self._ends(lambda a: a.ratio_to_reference_ci())

    @property
    def by_group_wilson_ci(self) -> list[pd.DataFrame]:
        """``[lower, upper]``: each level's :attr:`~daskfair.metrics.Audit.by_group_wilson_ci`
        (no bootstrap needed)."""
        return self._ends(lambda a: a.by_group_wilson_ci)

    def scoring_rate(self) -> pd.DataFrame:
        """Each level's :meth:`~daskfair.metrics.Audit.scoring_rate`, the median taken within
        the level, under the level's key.

        Returns
        -------
        pandas.DataFrame
        """
        return self._stack(lambda a: a.scoring_rate())

    def calibration(self, n_bins: int = 10, strategy: str = "uniform") -> Calibration:
        """Each level's :meth:`~daskfair.metrics.Audit.calibration`, its frames stacked
        under the level's key (``overall_ece``: one row per level).

        Parameters
        ----------
        n_bins : int, default=10
        strategy : {"uniform", "quantile"}, default="uniform"

        Returns
        -------
        Calibration
        """
        parts = {k: a.calibration(n_bins, strategy) for k, a in self.levels.items()}
        keys = list(parts)
        return Calibration(
            by_bin=pd.concat([c.by_bin for c in parts.values()], keys=keys, names=self.names),
            ece=pd.concat([c.ece for c in parts.values()], keys=keys, names=self.names),
            overall_by_bin=pd.concat([c.overall_by_bin for c in parts.values()], keys=keys,
                                     names=self.names),
            overall_ece=pd.DataFrame([c.overall_ece for c in parts.values()],
                                     index=self._keys()),
            n_bins=n_bins, strategy=strategy)

    def tests(self) -> pd.DataFrame:
        """Each level's :meth:`~daskfair.metrics.Audit.tests`, under the level's key (Holm's
        correction within each level).

        Returns
        -------
        pandas.DataFrame
        """
        return self._stack(lambda a: a.tests())

    def to_state(self) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        """``(arrays, attributes)`` from which :meth:`from_state` rebuilds this audit: each
        level's :meth:`~daskfair.metrics.Audit.to_state` under ``level_<i>/``.

        Returns
        -------
        tuple of (dict of str to ndarray, dict)
        """
        arrays, levels = {}, []
        for i, (key, a) in enumerate(self.levels.items()):
            state, attrs = a.to_state()
            arrays.update({f"level_{i}/{k}": v for k, v in state.items()})
            levels.append({"key": plain(key), **attrs})
        return arrays, {"control": self.names, "levels": levels,
                        "random_state": self.random_state}

    @classmethod
    def from_state(cls, arrays: dict[str, np.ndarray], attrs: dict[str, Any]) -> LevelAudit:
        """The audit :meth:`to_state` described.

        Parameters
        ----------
        arrays, attrs : dict
            As :meth:`to_state` returns them.

        Returns
        -------
        LevelAudit
        """
        levels = {}
        for i, level in enumerate(attrs["levels"]):
            prefix = f"level_{i}/"
            state = {k[len(prefix):]: v for k, v in arrays.items() if k.startswith(prefix)}
            key = level["key"]
            kind = RegressionAudit if level.get("task") == "regression" else Audit
            levels[tuple(key) if isinstance(key, list) else key] = kind.from_state(
                state, {k: v for k, v in level.items() if k != "key"})
        return cls.of(levels, attrs["control"], attrs["random_state"])

    @classmethod
    def of(cls, levels: dict[Any, Any], names: list[str],
           random_state: int | None = None) -> LevelAudit:
        """The audit of ``levels`` (control key → its Audit or RegressionAudit).

        Parameters
        ----------
        levels : dict
            Each control level's key and audit, all of one kind and parameters.
        names : list of str
            The control columns' names.
        random_state : int or None, default=None
            The seed the levels' bootstrap seeds were drawn from (None: no bootstrap).

        Returns
        -------
        LevelAudit
        """
        out = cls.__new__(cls)
        out.names, out.levels = list(names), dict(levels)
        out.random_state = None if random_state is None else int(random_state)
        first = next(iter(out.levels.values()))
        out.metrics, out.n_boot = first.metrics, getattr(first, "n_boot", 0)
        out.confidence, out.min_group_size = first.confidence, first.min_group_size
        return out

    def __repr__(self) -> str:
        return (f"LevelAudit({len(self.levels)} levels of {self.names}, n_boot={self.n_boot}, "
                f"confidence={self.confidence})")
