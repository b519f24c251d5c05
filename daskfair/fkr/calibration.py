"""Decision threshold and probabilities of a score, from its histogram per class on
``N_BINS`` bins over the scores' mean ± 6 standard deviations (known from the moments): Platt's
logistic fit on the bins (docs/design.md#fkr-scores-and-histograms)."""

from __future__ import annotations

import numpy as np
from scipy.special import expit

from .statistics import Moments

__all__ = ["N_BINS", "calibrate", "platt_scaling", "score_bins", "score_spread"]

#: Bins of every score histogram (the CV's thresholds are their N_BINS + 1 edges).
N_BINS = 256


def score_spread(stats: Moments, coef: np.ndarray, intercept: np.ndarray | float
                 ) -> tuple[np.ndarray, np.ndarray]:
    """Mean and standard deviation of the scores z·coef + intercept over the rows of ``stats``
    (one column of ``coef`` per score); a zero spread becomes max(|mean|, 1)."""
    mean = stats.mean @ coef + intercept
    var = ((stats.covariance() @ coef) * coef).sum(axis=0)
    std = np.sqrt(np.maximum(var, 0.0))
    return mean, np.where(std > 1e-12 * np.maximum(np.abs(mean), 1.0), std,
                          np.maximum(np.abs(mean), 1.0))


def score_bins(mean: np.ndarray, std: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(lo, width): ``N_BINS`` bins over mean ± 6 std (scores outside fall into the end bins)."""
    return mean - 6 * std, 12 * std / N_BINS


def calibrate(by_class: np.ndarray, lo: float, width: float, threshold: float | None, *,
              default_threshold: float = 0.5) -> tuple[float, float]:
    """Slope a > 0 and threshold t of P(y = 1 | f) = σ(a·(f − t)) from the weighted counts
    ``by_class`` (2, N_BINS): Platt's fit places t at probability 1/2 (``threshold=None``) or
    fits a alone at a given t. A slope that does not order the classes is replaced by
    1/std of the scores (and a free t by ``default_threshold``)."""
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
    """Fit P(y = 1 | score) = σ(a·score + c) to binned scores (Platt 1999) by Newton: ``hist``
    (2, B) the weighted counts of class 0 and 1 per bin, ``centers`` (B,) the bins' centres;
    with ``slope_only_at`` the slope alone, probability 1/2 fixed at that score. Returns (a, c).
    """
    neg, pos = hist
    keep = (neg + pos) > 0
    neg, pos, x = neg[keep], pos[keep], centers[keep]
    total = neg + pos
    x0 = 0.0 if slope_only_at is None else slope_only_at
    u = x - x0
    scale = max(float(np.sqrt((total * u**2).sum() / total.sum())), 1e-300)
    u = u / scale
    # Platt's targets: (N+ + 1)/(N+ + 2) and 1/(N− + 2) instead of 1 and 0, so that separable
    # bins do not send the slope to infinity
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
