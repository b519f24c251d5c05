"""Threshold and probabilities of a score by Platt's fit to its binned histogram per class."""

from __future__ import annotations

import numpy as np
from scipy.special import expit

from .statistics import Moments

__all__ = ["N_BINS", "calibrate", "platt_scaling", "score_bins", "score_spread"]

#: Bins of every score histogram (the CV's thresholds are their N_BINS + 1 edges).
N_BINS = 256


def score_spread(stats: Moments, coef: np.ndarray, intercept: np.ndarray | float
                 ) -> tuple[np.ndarray, np.ndarray]:
    """Mean and std (0 → max(|mean|, 1)) of the scores z·coef + intercept over ``stats``' rows."""
    mean = stats.mean @ coef + intercept
    var = ((stats.covariance() @ coef) * coef).sum(axis=0)
    std = np.sqrt(np.maximum(var, 0.0))
    return mean, np.where(std > 1e-12 * np.maximum(np.abs(mean), 1.0), std,
                          np.maximum(np.abs(mean), 1.0))


def score_bins(mean: np.ndarray, std: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(lo, width): ``N_BINS`` bins over mean ± 6 std (scores outside fall into the end bins)."""
    return mean - 6 * std, 12 * std / N_BINS


def calibrate(hist: np.ndarray, cell_label: np.ndarray, lo: float, width: float,
              threshold: float | None, *, default_threshold: float = 0.5) -> tuple[float, float]:
    """(a > 0, t) of P(y = 1 | f) = σ(a·(f − t)) from the per-cell counts ``hist`` (q, N_BINS): t
    at probability 1/2 (``threshold=None``; ``default_threshold`` if a ≤ 0) or given."""
    by_class = np.zeros((2, hist.shape[1]))
    np.add.at(by_class, cell_label, hist)
    centers = lo + width * (np.arange(by_class.shape[1]) + 0.5)
    if threshold is None:
        a, c = platt_scaling(by_class, centers)
        t = -c / a if a > 0 else default_threshold
    else:
        a, _ = platt_scaling(by_class, centers, slope_only_at=float(threshold))
        t = float(threshold)
    if not a > 0:
        a = 1.0 / max(width * by_class.shape[1] / 12, 1e-300)
    return float(a), float(t)


def platt_scaling(hist: np.ndarray, centers: np.ndarray, *, slope_only_at: float | None = None,
                  max_iter: int = 50) -> tuple[float, float]:
    """(a, c) of P(y = 1 | score) = σ(a·score + c) fitted by Newton (Platt 1999) to the counts
    ``hist`` (2, B) at ``centers`` (B,); with ``slope_only_at`` a alone, σ = 1/2 there."""
    neg, pos = hist
    keep = (neg + pos) > 0
    neg, pos, x = neg[keep], pos[keep], centers[keep]
    total = neg + pos
    x0 = 0.0 if slope_only_at is None else slope_only_at
    u = x - x0
    scale = max(float(np.sqrt((total * u**2).sum() / total.sum())), 1e-300)
    u = u / scale
    # Platt's targets (N+ + 1)/(N+ + 2) and 1/(N− + 2): separable bins keep a finite slope
    t_pos = (pos.sum() + 1) / (pos.sum() + 2)
    t_neg = 1 / (neg.sum() + 2)
    target_mass = pos * t_pos + neg * t_neg
    theta = np.zeros(1 if slope_only_at is not None else 2)
    design = u[:, None] if slope_only_at is not None else np.column_stack([u, np.ones_like(u)])
    for _ in range(max_iter):
        p = expit(design @ theta)
        grad = design.T @ (target_mass - total * p)
        hess = (design * (total * p * (1 - p))[:, None]).T @ design + 1e-12 * np.eye(len(theta))
        step = np.linalg.solve(hess, grad)
        theta = theta + step
        if np.abs(step).max() < 1e-10:
            break
    a = float(theta[0]) / scale
    c = -a * x0 if slope_only_at is not None else float(theta[1]) - a * x0
    return a, c
