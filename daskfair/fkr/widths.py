"""The kernel's width chosen from the data (docs/design.md#fkr-width-from-the-data): a grid
around the median heuristic, each width searched on a sample of rows, not on a pass."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import dask
import numpy as np
import pandas as pd
from scipy.spatial.distance import pdist

from .._random import as_seed_sequence, child_rng
from ..nystroem import landmark_pool
from ._base import FitInput, _resolve

__all__ = ["SAMPLE_LANDMARKS", "SAMPLE_ROWS", "WIDTH_FACTORS", "evenly", "median_gamma",
           "sample_input", "search_widths"]

#: The widths searched: the median heuristic's gamma times each factor (4 apart: on Adult
#: the best lies far below the heuristic, on Credit near it; docs/findings.md).
WIDTH_FACTORS = (1 / 64, 1 / 16, 1 / 4, 1.0, 4.0)
#: Rows of the sample the widths are compared on, and its landmarks (at most).
SAMPLE_ROWS = 20_000
SAMPLE_LANDMARKS = 500
#: Rows whose pairwise distances give the median heuristic.
_MEDIAN_ROWS = 1_000


def evenly(rows: np.ndarray, size: int) -> np.ndarray:
    """At most ``size`` of ``rows``, evenly spaced (all of them when there are fewer)."""
    return rows[np.unique(np.linspace(0, len(rows) - 1, min(len(rows), size)).astype(int))]


def median_gamma(rows: np.ndarray) -> float | None:
    """``1 / median ‖xᵢ − xⱼ‖²`` over the distinct pairs of ``rows`` (1,000 of them, evenly
    spaced), the median heuristic of the rbf kernel's width; None when every pair is equal."""
    # each pair's difference squared (scipy), not ‖x‖² + ‖y‖² − 2x·y: that expansion loses
    # every digit to a shared offset (docs/findings.md F1.4)
    d = pdist(np.asarray(evenly(rows, _MEDIAN_ROWS), dtype=np.float64), "sqeuclidean")
    d = d[d > 0]
    return None if d.size == 0 else float(1.0 / np.median(d))


def sample_input(data: FitInput, size: int, random_state: Any, width: int) -> FitInput | None:
    """``size`` rows of ``data`` (a seeded sample of whole row blocks, as the landmarks'
    pool is: few blocks read), in memory with their groups and classes known; None when
    the sample misses a group or a class."""
    n = data.n
    if n <= size:
        idx = np.arange(n)
    else:
        rng = child_rng(as_seed_sequence(random_state), 2)
        pool = landmark_pool(n, size, "uniform", width, rng)
        idx = np.sort(rng.choice(pool, size=min(size, len(pool)), replace=False))
    columns = [data.X, data.y, data.weights, data.s, data.labels]
    taken = dask.compute(*(None if c is None else c[idx] for c in columns))
    X, y, w, s, labels = (None if c is None else np.asarray(c) for c in taken)
    part = FitInput(X=X, y=y, weights=w, s=s, labels=labels, n=len(idx), names=data.names,
                    merged=data.merged)
    try:
        part = _resolve(part, [None if s is None else pd.unique(s.astype(object)),
                               None if labels is None else pd.unique(labels.astype(object))])
    except (ValueError, TypeError):  # one class in the sample (the pass says the rest)
        return None
    if data.known and not all(
            (a is None and b is None) or (a is not None and b is not None
                                          and np.array_equal(a, b))
            for a, b in ((part.groups, data.groups), (part.classes, data.classes))):
        return None  # a group (or class) the sample misses
    return part


def search_widths(gammas: list[float], fit: Callable[[float], dict[str, Any]]
                  ) -> tuple[float, pd.DataFrame]:
    """The width of ``gammas`` whose chosen candidate has the lowest validation error
    (``fit(gamma)``: that choice's ``error`` and ``disparity``; ties go to the first), and
    the table of every width's."""
    rows = []
    for gamma in gammas:
        try:
            rows.append({"gamma": gamma, **fit(gamma)})
        except ValueError as exc:  # a width the sample cannot fit (a fold misses a group)
            rows.append({"gamma": gamma, "error": np.nan, "disparity": np.nan,
                         "problem": str(exc)})
    table = pd.DataFrame(rows)
    if table["error"].isna().all():  # the input's problem, not the widths': said as it is
        raise ValueError(table["problem"].iloc[0])
    best = int(table["error"].fillna(np.inf).to_numpy().argmin())  # a failed width: never
    table["chosen"] = np.arange(len(table)) == best
    return float(table["gamma"].iloc[best]), table
