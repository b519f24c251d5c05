"""Ridge regressions solved from moments (docs/design.md#fkr-relative-penalties)."""

from __future__ import annotations

import numpy as np
import scipy.linalg

from .statistics import Moments

__all__ = ["cell_weighted_fit", "fkrr_penalty", "penalty_scale", "ridge_fit", "solve_spd"]


def penalty_scale(stats: Moments) -> float:
    """tr(ZᵀZ) ≈ tr(K), uncentred (docs/design.md#fkr-relative-penalties)."""
    scale = float(np.trace(stats.gram))
    return scale if scale > 0 else 1.0


def solve_spd(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """Solve the symmetric positive (semi-)definite system A X = B (least squares if singular)."""
    A = 0.5 * (A + A.T)
    try:
        return scipy.linalg.solve(A, B, assume_a="pos")
    except (np.linalg.LinAlgError, scipy.linalg.LinAlgError):
        return np.linalg.lstsq(A, B, rcond=None)[0]


def _normal_equations(stats: Moments, fit_intercept: bool) -> tuple[np.ndarray, np.ndarray]:
    """(ZᵀHZ, mean) with H = I − 11ᵀ/n when an intercept is fitted, else (ZᵀZ, 0)."""
    gram, mean = stats.gram, stats.mean
    if fit_intercept:
        return gram - stats.n * np.outer(mean, mean), mean
    return gram, np.zeros_like(mean)


def ridge_fit(stats: Moments, alpha: float, *, targets: str = "y", fit_intercept: bool = True,
              penalty: np.ndarray | None = None, scale: float | None = None
              ) -> tuple[np.ndarray, np.ndarray]:
    """(β, b): β = (ZᵀHZ + α·scale·I + penalty)⁻¹ ZᵀH t for the label (``targets="y"``) or
    every cell's indicator ("cells": β of shape (p, q)); ``scale`` defaults to tr(ZᵀZ)."""
    A, mean = _normal_equations(stats, fit_intercept)
    n = stats.n
    if targets == "y":
        rhs, t_mean = stats.total_fy, stats.total_y / n
    else:
        rhs, t_mean = stats.sums.T, stats.counts / n
    if not fit_intercept:
        t_mean = np.zeros_like(t_mean) if targets == "cells" else 0.0
    rhs = rhs - n * (np.multiply.outer(mean, t_mean) if targets == "cells" else mean * t_mean)
    A = A + alpha * (penalty_scale(stats) if scale is None else scale) * np.eye(A.shape[0])
    if penalty is not None:
        A = A + penalty
    coef = solve_spd(A, rhs)
    intercept = t_mean - mean @ coef
    return coef, (float(intercept) if targets == "y" else intercept)


def fkrr_penalty(stats: Moments, mu: float) -> np.ndarray:
    """FKRR's penalty μ_eff Σ_g v_g v_gᵀ, v_g = ZᵀH 1_g (docs/design.md#fkrr-baseline)."""
    V = (stats.group_sums - np.outer(stats.group_counts, stats.mean)).T  # (p, J)
    size = float((V * V).sum())
    if mu == 0 or size == 0:
        return np.zeros((V.shape[0], V.shape[0]))
    A, _ = _normal_equations(stats, True)
    return mu * float(np.trace(V.T @ A @ V)) / size**2 * (V @ V.T)


def cell_weighted_fit(stats: Moments, weights: np.ndarray, targets: np.ndarray, alpha: float, *,
                      scale: float | None = None) -> tuple[np.ndarray, float]:
    """(β, b) minimising Σ_i w(cell_i) (t(cell_i) − zᵢᵀβ − b)² + α·scale·‖β‖², no pass."""
    if not stats.has_cell_grams:
        raise ValueError("cell-weighted fits need the moments of every cell (cell_grams=True).")
    weights, targets = np.asarray(weights, float), np.asarray(targets, float)
    sw = float(weights @ stats.counts)
    mean = (weights @ stats.sums) / sw
    t_mean = float(weights @ (stats.counts * targets)) / sw
    A = np.einsum("q,qij->ij", weights, stats.grams) - sw * np.outer(mean, mean)
    rhs = (weights * targets) @ stats.sums - sw * mean * t_mean
    A = A + alpha * (penalty_scale(stats) if scale is None else scale) * np.eye(A.shape[0])
    coef = solve_spd(A, rhs)
    return coef, t_mean - float(mean @ coef)
