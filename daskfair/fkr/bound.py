"""Upper confidence bounds of a classifier's disparity over any number of groups, from the
validation rows' per-group rates (docs/design.md#fkr-selection-margin)."""

from __future__ import annotations

import numpy as np
from scipy.stats import norm

__all__ = ["disparity_upper"]


def _pairs(rate: np.ndarray, rows: np.ndarray, n_all: float, new_rows: int | None
           ) -> tuple[np.ndarray, np.ndarray]:
    """Every ordered pair's gap r_a − r_b and its standard error: (K, J(J−1), T) each."""
    J = rate.shape[1]
    with np.errstate(invalid="ignore", divide="ignore"):
        var = rate * (1 - rate) / rows
        if new_rows is not None:
            # a new sample of new_rows rows holds about new_rows · rows / n_all of the group
            var = var + rate * (1 - rate) / (new_rows * rows / n_all)
    a, b = (i.ravel() for i in np.meshgrid(np.arange(J), np.arange(J), indexing="ij"))
    keep = a != b
    a, b = a[keep], b[keep]
    return rate[:, a] - rate[:, b], np.sqrt(var[:, a] + var[:, b])


def _critical(confidence: float, members: np.ndarray) -> np.ndarray:
    """Šidák's constant: ``members`` one-sided bounds that hold together at ``confidence``."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return norm.ppf(np.power(confidence, 1.0 / np.maximum(members, 1)))


def disparity_upper(families: list[tuple[np.ndarray, np.ndarray]], confidence: float,
                    new_rows: int | None = None) -> np.ndarray:
    """An upper confidence bound (K, T) of the largest gap between groups' rates.

    Parameters
    ----------
    families : list of (rate (K, J, T), rows (K, J, 1))
        The groups' rates at every candidate and threshold, and their rows; several entries
        for equalized odds (one per class), whose disparity is the largest gap of any.
    confidence : float
        The bound holds with about this probability for the population the validation rows
        were drawn from (the rates' own noise), or, with ``new_rows``, for a sample of that
        many new rows (the new sample's noise added).
    new_rows : int, default=None

    Returns
    -------
    ndarray of shape (K, T)

    Notes
    -----
    The disparity is the largest gap δ_ab = ρ_a − ρ_b over ordered pairs of groups. If every
    pair's one-sided bound δ_ab ≤ d_ab + c·s_ab holds, so does δ ≤ max (d_ab + c·s_ab). The
    groups' rows are disjoint, and c is Šidák's for the pairs that may be the largest (upper
    end at least the largest lower end, found with c for every pair): with two groups and a
    clear gap that is one pair, and the bound is d + z·s; with many groups the bound grows
    with the number of gaps that compete for the largest, as the largest of them is biased
    upwards.
    """
    K = families[0][0].shape[0]  # a few candidates at a time: pairs grow with J²
    size = sum(r.shape[1] * (r.shape[1] - 1) * r.shape[2] for r, _ in families)
    step = max(1, 2**22 // max(size, 1))
    return np.concatenate([
        _upper([(r[k:k + step], n[k:k + step]) for r, n in families], confidence, new_rows,
               _n_all(families)) for k in range(0, K, step)])


def _upper(families: list[tuple[np.ndarray, np.ndarray]], confidence: float,
           new_rows: int | None, n_all: float) -> np.ndarray:
    """:func:`disparity_upper` of a few candidates."""
    gaps, ses = zip(*(_pairs(rate, rows, n_all, new_rows) for rate, rows in families),
                    strict=True)
    d, s = np.concatenate(gaps, axis=1), np.concatenate(ses, axis=1)
    ok = np.isfinite(d) & np.isfinite(s)
    d, s = np.where(ok, d, -np.inf), np.where(ok, s, 0.0)
    c0 = _critical(confidence, ok.sum(axis=1))[:, None, :]
    lower = np.max(d - c0 * s, axis=1, keepdims=True)
    may_be_largest = ok & (d + c0 * s >= lower)
    c = _critical(confidence, may_be_largest.sum(axis=1))[:, None, :]
    upper = np.max(np.where(may_be_largest, d + c * s, -np.inf), axis=1)
    return np.where(np.isfinite(upper), upper, np.nan)


def _n_all(families: list[tuple[np.ndarray, np.ndarray]]) -> float:
    """All validation rows (of every family: equalized odds' are the two classes)."""
    return float(sum(np.nansum(rows[0]) for _, rows in families))
