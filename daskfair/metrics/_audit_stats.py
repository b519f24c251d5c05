"""The mathematics of an audit on count tables (docs/design.md#audits-in-one-pass): rates,
the multinomial bootstrap, Wilson intervals, tests with Holm's correction, and the ROC AUC
with DeLong's variance from score histograms."""

from __future__ import annotations

import numpy as np
from scipy import stats

__all__ = ["RATES", "auc_from_histograms", "bootstrap_tables", "holm", "rate_parts", "rates",
           "wilson"]

#: The rates an audit reports, fairlearn's names; each is numerator / denominator of the
#: (label, decision) table ``T[..., y, d]``.
RATES = ("selection_rate", "true_positive_rate", "false_positive_rate", "error_rate",
         "precision")


def rate_parts(table: np.ndarray) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """``{rate: (numerator, denominator)}`` of tables ``T[..., y, d]`` (any leading shape)."""
    t00, t01, t10, t11 = (table[..., y, d] for y in (0, 1) for d in (0, 1))
    total = t00 + t01 + t10 + t11
    return {"selection_rate": (t01 + t11, total),
            "true_positive_rate": (t11, t10 + t11),
            "false_positive_rate": (t01, t00 + t01),
            "error_rate": (t01 + t10, total),
            "precision": (t11, t01 + t11)}


def rates(table: np.ndarray) -> np.ndarray:
    """``rates[..., r]`` for r in RATES (NaN where a denominator is 0)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.stack([num / den for num, den in rate_parts(table).values()], axis=-1)


def bootstrap_tables(rows: np.ndarray, n_boot: int, rng: np.random.Generator,
                     weights: np.ndarray | None = None,
                     squares: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Tables of ``n_boot`` bootstrap samples: rows drawn with replacement, as counts.

    Drawing n rows with replacement and tallying them by cell is one multinomial draw of n
    with the cells' shares as probabilities, so the rows are never read again. With weights,
    a cell's resampled weight given its resampled rows m is Σ of m weights drawn from the
    cell: mean m·μ and variance m·σ² (μ, σ² the cell's weight mean and variance), drawn as a
    normal (an approximation by the central limit theorem; exact in mean and variance).

    Returns ``(rows*, weights*)`` of shape (n_boot, *rows.shape); ``weights*`` is ``rows*``
    as float without weights.
    """
    flat = rows.ravel().astype(np.int64)
    n = int(flat.sum())
    draws = rng.multinomial(n, flat / n, size=n_boot)
    if weights is None:
        return draws.reshape(n_boot, *rows.shape), draws.reshape(n_boot, *rows.shape) * 1.0
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(flat > 0, weights.ravel() / flat, 0.0)
        var = np.where(flat > 0, squares.ravel() / flat - mean**2, 0.0)
    var = np.maximum(var, 0.0)  # rounding may leave -1e-17 for equal weights
    noise = rng.standard_normal(draws.shape)
    w = np.maximum(draws * mean + np.sqrt(draws * var) * noise, 0.0)
    return draws.reshape(n_boot, *rows.shape), w.reshape(n_boot, *rows.shape)


def wilson(successes: np.ndarray, n: np.ndarray, confidence: float
           ) -> tuple[np.ndarray, np.ndarray]:
    """Wilson's score interval of a proportion ``successes / n`` (NaN where n is 0); ``n``
    may be an effective number of rows (Kish's, for weights)."""
    z = stats.norm.ppf(0.5 + confidence / 2)
    with np.errstate(invalid="ignore", divide="ignore"):
        p = successes / n
        denom = 1 + z**2 / n
        center = (p + z**2 / (2 * n)) / denom
        half = z / denom * np.sqrt(p * (1 - p) / n + z**2 / (4 * n**2))
    return np.clip(center - half, 0, 1), np.clip(center + half, 0, 1)


def holm(p: np.ndarray) -> np.ndarray:
    """Holm's step-down adjusted p-values (family-wise error over all of ``p``, NaN kept)."""
    p = np.asarray(p, dtype=np.float64)
    out = np.full_like(p, np.nan)
    ok = np.flatnonzero(~np.isnan(p))
    order = ok[np.argsort(p[ok], kind="stable")]
    m = len(order)
    adjusted = np.maximum.accumulate((m - np.arange(m)) * p[order]) if m else order
    out[order] = np.minimum(adjusted, 1.0)
    return out


def auc_from_histograms(negative: tuple[np.ndarray, np.ndarray],
                        positive: tuple[np.ndarray, np.ndarray]) -> tuple[float, float, float]:
    """``(auc, variance, bound)`` from the score bins of negative and positive rows.

    Pairs in different bins are ordered exactly (bins keep the scores' order); a pair in one
    bin counts one half, as a tie does, so ``|auc - exact AUC| <= bound``, with ``bound =
    Σ_b n⁺_b n⁻_b / (2 n⁺ n⁻)``. The variance is DeLong's, from the same placements.
    """
    (nb, nc), (pb, pc) = negative, positive
    n_neg, n_pos = nc.sum(), pc.sum()
    if n_neg == 0 or n_pos == 0:
        return np.nan, np.nan, np.nan
    bins = np.union1d(nb, pb)
    neg = np.zeros(len(bins))
    pos = np.zeros(len(bins))
    neg[np.searchsorted(bins, nb)] = nc
    pos[np.searchsorted(bins, pb)] = pc
    below = np.cumsum(neg) - neg  # negatives in lower bins
    above = n_pos - np.cumsum(pos)  # positives in higher bins
    v10 = (below + neg / 2) / n_neg  # each positive's share of negatives beneath it
    v01 = (above + pos / 2) / n_pos  # each negative's share of positives above it
    auc = float((pos * v10).sum() / n_pos)
    s10 = (pos * (v10 - auc) ** 2).sum() / max(n_pos - 1, 1)
    s01 = (neg * (v01 - auc) ** 2).sum() / max(n_neg - 1, 1)
    bound = float((pos * neg).sum() / (2 * n_pos * n_neg))
    return auc, float(s10 / n_pos + s01 / n_neg), bound
