"""What an audit's pass counted, on the grid of the groups' levels, and how the grid is
stored."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ._audit_blocks import SCORE_BITS
from ._score_tables import Histograms

__all__ = ["Counts", "index_attrs", "index_from", "plain"]


@dataclass(frozen=True)
class Counts:
    """What the pass counted, on the grid of every combination of the groups' levels.

    ``rows[g, y, d]``: rows of group g with label y and decision d (1: ``pos_label``);
    ``weights`` and ``squares``: Σw and Σw² in the same cells (None: no weights); ``auc``:
    per group and overall, (ROC AUC, DeLong variance, bound on the binning error), each of
    shape (n_groups + 1,), overall last; ``scores``: the histograms of the scores per
    (group, label) (None for both: no scores).
    """

    index: pd.Index
    rows: np.ndarray
    weights: np.ndarray | None = None
    squares: np.ndarray | None = None
    auc: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
    scores: Histograms | None = None

    def __post_init__(self) -> None:
        h = self.scores
        if h is None:
            return
        # a stored audit's histograms are read back: each (group, label) must hold exactly
        # the rows of its cells, in sorted distinct bins
        n = self.rows.shape[0] * 2
        ok = (h.owner.ndim == h.bins.ndim == h.rows.ndim == 1
              and len(h.owner) == len(h.bins) == len(h.rows)
              and (not len(h.owner) or (0 <= h.owner.min() and h.owner.max() < n))
              and bool(np.all((np.diff(h.owner) > 0) | ((np.diff(h.owner) == 0)
                                                         & (np.diff(h.bins) > 0))))
              and (not len(h.bins) or (0 <= h.bins.min() and h.bins.max() < 2**SCORE_BITS))
              and (not len(h.rows) or h.rows.min() > 0))
        if not ok or not np.array_equal(
                np.bincount(h.owner, weights=h.rows, minlength=n),
                self.rows.sum(axis=2).ravel()):
            raise ValueError("the score histograms do not hold the rows of the count table.")


def index_attrs(index: pd.Index) -> dict[str, Any]:
    """The groups' index as stored attributes: each column's levels and its name."""
    levels = [list(lv) for lv in index.levels] if isinstance(index, pd.MultiIndex) \
        else [list(index)]
    return {"levels": [[v.item() if isinstance(v, np.generic) else v for v in lv]
                       for lv in levels],
            "names": [str(n) for n in index.names]}


def index_from(attrs: dict[str, Any]) -> pd.Index:
    """The index :func:`index_attrs` stored."""
    levels, names = attrs["levels"], attrs["names"]
    return (pd.MultiIndex.from_product(levels, names=names) if len(names) > 1
            else pd.Index(levels[0], name=names[0]))


def plain(value: Any) -> Any:
    if isinstance(value, tuple):
        return [plain(v) for v in value]
    return value.item() if isinstance(value, np.generic) else value
