"""The mathematics of an audit on count tables (docs/design.md#audits-in-one-pass): rates,
the multinomial bootstrap, Wilson intervals, tests with Holm's correction, and the ROC AUC
with DeLong's variance from score histograms."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pandas as pd
from scipy import special, stats

__all__ = ["COUNT_METRICS", "RATES", "auc_from_histograms", "bootstrap_tables", "group_tests",
           "holm", "own_metrics", "rate_parts", "rates", "tests_table", "wilson"]

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


#: Further metrics of a group's (tp, fp, fn, tn) by fairlearn's and scikit-learn's function
#: names (with binary labels and the favourable class positive).
COUNT_METRICS: dict[str, Callable[..., np.ndarray]] = {
    "false_negative_rate": lambda tp, fp, fn, tn: fn / (tp + fn),
    "true_negative_rate": lambda tp, fp, fn, tn: tn / (tn + fp),
    "negative_predictive_value": lambda tp, fp, fn, tn: tn / (tn + fn),
    "false_discovery_rate": lambda tp, fp, fn, tn: fp / (tp + fp),
    "false_omission_rate": lambda tp, fp, fn, tn: fn / (tn + fn),
    "accuracy_score": lambda tp, fp, fn, tn: (tp + tn) / (tp + fp + fn + tn),
    "balanced_accuracy_score": lambda tp, fp, fn, tn: (tp / (tp + fn) + tn / (tn + fp)) / 2,
    "f1_score": lambda tp, fp, fn, tn: 2 * tp / (2 * tp + fp + fn),
    "recall_score": lambda tp, fp, fn, tn: tp / (tp + fn),
    "precision_score": lambda tp, fp, fn, tn: tp / (tp + fp),
}

#: A probe of a metric of one's own: arrays of (tp, fp, fn, tn) as the bootstrap passes them.
_PROBE = tuple(np.array([[3.0, 0.0, 2.0], [1.0, 4.0, 0.0]]) + k for k in range(4))


def own_metrics(metrics: Any) -> list[tuple[str, Callable[..., np.ndarray]]]:
    """``metrics`` (a name, a function, a list of them, or a dict of names to functions or
    names) as (name, f(tp, fp, fn, tn)), each checked on arrays."""
    if metrics is None:
        return []
    if isinstance(metrics, str) or callable(metrics):
        metrics = [metrics]
    items = list(metrics.items()) if isinstance(metrics, dict) else [
        (m if isinstance(m, str) else getattr(m, "__name__", None), m) for m in metrics]
    out: list[tuple[str, Callable[..., np.ndarray]]] = []
    for name, m in items:
        if isinstance(m, str):
            if m in RATES:
                raise ValueError(f"metrics: {m!r} is reported by every audit already.")
            if m not in COUNT_METRICS:
                raise ValueError(f"metrics: unknown metric {m!r}; the named ones are "
                                 f"{sorted(COUNT_METRICS)}, or give a function "
                                 "f(tp, fp, fn, tn) of arrays.")
            m = COUNT_METRICS[m]
        elif not callable(m):
            raise TypeError(f"metrics: {m!r} is neither a metric's name nor a function.")
        if not isinstance(name, str) or not name.isidentifier():
            raise ValueError(f"metrics: name each function of your own ({name!r} is not a "
                             "name): def f1(tp, fp, fn, tn): ..., or a dict {name: function}.")
        if name in RATES or name in {n for n, _ in out} or name in ("count", "roc_auc"):
            raise ValueError(f"metrics: {name!r} names two metrics; give each its own name.")
        _probe(name, m)
        out.append((name, m))
    return out


def _probe(name: str, fn: Callable[..., Any]) -> None:
    try:
        with np.errstate(invalid="ignore", divide="ignore"):
            value = np.asarray(fn(*_PROBE), dtype=np.float64)
    except Exception as exc:  # the user's function: any failure is said the same way
        raise ValueError(f"metrics: {name} failed on arrays of counts ({type(exc).__name__}: "
                         f"{exc}); a metric takes arrays tp, fp, fn, tn (every bootstrap "
                         "replicate at once) and combines them element by element, with numpy's "
                         "operators or functions.") from exc
    if value.shape != _PROBE[0].shape:
        raise ValueError(f"metrics: {name} returned shape {value.shape} for counts of shape "
                         f"{_PROBE[0].shape}; it must return one value per element (combine "
                         "the counts element by element, without reducing them).")


def rates(table: np.ndarray, own: Sequence[tuple[str, Callable[..., Any]]] = ()
          ) -> np.ndarray:
    """``rates[..., r]`` for r in RATES, then the ``own`` metrics (NaN where a denominator
    is 0)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        columns = [num / den for num, den in rate_parts(table).values()]
        if own:
            cells = (table[..., 1, 1], table[..., 0, 1], table[..., 1, 0], table[..., 0, 0])
            columns += [np.asarray(fn(*cells), dtype=np.float64) for _, fn in own]
        return np.stack(columns, axis=-1)


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
    z = special.ndtri(0.5 + confidence / 2)  # the normal quantile (norm.ppf's own)
    with np.errstate(invalid="ignore", divide="ignore"):
        p = successes / n
        denom = 1 + z**2 / n
        center = (p + z**2 / (2 * n)) / denom
        half = z / denom * np.sqrt(p * (1 - p) / n + z**2 / (4 * n**2))
    # at p = 0 or 1 an end is exactly 0 or 1, which rounding may miss by 1e-16
    lower = np.where(p == 0, 0.0, np.clip(center - half, 0, 1))
    upper = np.where(p == 1, 1.0, np.clip(center + half, 0, 1))
    return lower, upper


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


def _placed(bins: np.ndarray, rows: np.ndarray, at: np.ndarray
            ) -> tuple[np.ndarray, np.ndarray]:
    """For each of the sorted bins ``at``: the rows of the histogram ``(bins, rows)`` in lower
    bins, and in the same bin."""
    if len(bins) == 0 or len(at) == 0:
        return np.zeros(len(at), dtype=rows.dtype), np.zeros(len(at), dtype=rows.dtype)
    lo, hi = min(int(bins[0]), int(at[0])), max(int(bins[-1]), int(at[-1]))
    if hi - lo < 4 * (len(bins) + len(at)):  # a narrow range (probabilities): looked up
        dense = np.zeros(hi - lo + 1, dtype=rows.dtype)
        dense[bins - lo] = rows
        return np.r_[0, np.cumsum(dense)][at - lo], dense[at - lo]
    where = np.searchsorted(bins, at)
    below = np.r_[0, np.cumsum(rows)][where]
    inside = where < len(bins)
    same = np.zeros(len(at), dtype=rows.dtype)
    hit = np.flatnonzero(inside)[bins[where[inside]] == at[inside]]
    same[hit] = rows[where[hit]]
    return below, same


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
    # each side's bins placed among the other's (both sorted): rows strictly beyond, and
    # rows sharing the bin
    below, tie_p = _placed(nb, nc, pb)
    beneath, tie_n = _placed(pb, pc, nb)
    above = n_pos - beneath - tie_n
    v10 = (below + tie_p / 2) / n_neg  # each positive's share of negatives beneath it
    v01 = (above + tie_n / 2) / n_pos  # each negative's share of positives above it
    auc = float((pc * v10).sum() / n_pos)
    s10 = (pc * (v10 - auc) ** 2).sum() / max(n_pos - 1, 1)
    s01 = (nc * (v01 - auc) ** 2).sum() / max(n_neg - 1, 1)
    bound = float((pc * tie_p).sum() / (2 * n_pos * n_neg))
    return auc, float(s10 / n_pos + s01 / n_neg), bound


def group_tests(a: Any) -> pd.DataFrame:
    """The table of :meth:`Audit.tests` (its docstring says what it holds)."""
    parts, n = a._effective()
    ref, rows = a._ref, []
    others = [i for i in np.flatnonzero(a._eligible) if i != ref]
    own = {name for name, _ in a._own}
    for r in (m for m in a._compared() if m not in own):
        for i in others:
            if r == "roc_auc":
                auc, var, _ = a.counts.auc
                diff, se = auc[i] - auc[ref], np.sqrt(var[i] + var[ref])
            else:
                num, den = parts[r]
                p = num / np.where(den > 0, den, np.nan)
                pooled = (p[i] * n[r][i] + p[ref] * n[r][ref]) / (n[r][i] + n[r][ref])
                diff = p[i] - p[ref]
                se = np.sqrt(pooled * (1 - pooled) * (1 / n[r][i] + 1 / n[r][ref]))
            if np.isnan(diff):
                pvalue = np.nan
            elif se > 0:
                pvalue = 2 * stats.norm.sf(abs(diff) / se)
            else:
                pvalue = 1.0 if diff == 0 else 0.0
            group = a.counts.index[i]
            rows.append((r, *(group if isinstance(group, tuple) else (group,)), diff, pvalue))
    return tests_table(rows, a.counts.index.names, a.confidence)


def tests_table(rows: list[tuple[Any, ...]], names: Sequence[Any], confidence: float
               ) -> pd.DataFrame:
    """Tests as a table indexed by (metric, group): ``rows`` of (metric, *group, difference,
    p-value), Holm's adjusted p-values over all of them, and ``significant`` at level
    ``1 - confidence``."""
    index = ["metric", *names]
    frame = pd.DataFrame(rows, columns=[*index, "difference", "p_value"]).set_index(index)
    frame["p_holm"] = holm(frame["p_value"].to_numpy())
    frame["significant"] = frame["p_holm"] < 1 - confidence
    return frame
