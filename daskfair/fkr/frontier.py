"""The CV estimators' results: the choice under the bound, ``cv_results_`` and its plot."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["GRID_OF", "candidate_params", "choose", "cv_results", "frontier_table",
           "pareto_mask", "plot_frontier"]

#: A candidate's parameter (a column of the candidate table) and the grid that holds it.
GRID_OF = {"family": "families", "gamma": "gammas", "relative_alpha": "relative_alphas",
           "strength": "strengths", "n_fair_features": "fair_feature_counts",
           "fairness_weight": "fairness_weights"}

#: The candidate-table columns that define a candidate of each family.
FAMILY_PARAMS = {"reduction": ("family", "gamma", "relative_alpha", "strength"),
                 "embedding": ("family", "gamma", "relative_alpha", "n_fair_features",
                               "fairness_weight")}

#: The frontier table's columns after the parameters, from the ``cv_results_`` keys.
FRONTIER_COLUMNS = {"candidate": "candidate", "threshold_index": "threshold_index",
                    "threshold": "threshold", "disparity": "mean_test_disparity",
                    "disparity_sem": "sem_test_disparity",
                    "disparity_upper": "upper_test_disparity", "error": "mean_test_error",
                    "pareto": "pareto", "selected": "selected"}


def pareto_mask(disparity: np.ndarray, error: np.ndarray) -> np.ndarray:
    """Mask of the points no other point beats in both (ties kept once)."""
    order = np.lexsort((error, disparity))
    keep = np.zeros(len(order), dtype=bool)
    best = np.inf
    for i in order:
        if error[i] < best:
            keep[i] = True
            best = error[i]
    return keep


def choose(disparity: np.ndarray, error: np.ndarray, bound: float,
           upper: np.ndarray | None = None, margin: bool = False) -> tuple[int, ...]:
    """Index of the most accurate entry with ``upper`` ≤ ``bound`` (else the fairest, warning)."""
    upper = disparity if upper is None else upper
    u, e = upper.ravel(), error.ravel()
    u_ok = np.where(np.isfinite(u), u, np.inf)
    e_ok = np.where(np.isfinite(e), e, np.inf)
    feasible = np.isfinite(e) & (u <= bound + 1e-12)
    if feasible.any():
        order = np.lexsort((np.where(feasible, u_ok, np.inf), np.where(feasible, e_ok, np.inf)))
    else:
        what = "validation disparity plus its margin" if margin else "validation disparity"
        hint = " or lower disparity_confidence (None: no margin)" if margin else ""
        warnings.warn(
            f"no candidate reaches a {what} of {bound:g} (the fairest reaches "
            f"{u_ok.min():.4g}); the fairest candidate is used. Widen the search (larger "
            f"strengths, more fair features), raise disparity_bound{hint}.", UserWarning,
            stacklevel=4)
        order = np.lexsort((e_ok, u_ok))
    return tuple(int(i) for i in np.unravel_index(order[0], disparity.shape))


def candidate_params(table: pd.DataFrame, k: int) -> dict[str, Any]:
    """Candidate k as its CV estimator's parameters: every grid it was drawn from, one value."""
    row = table.iloc[k]
    out: dict[str, Any] = {}
    for column in FAMILY_PARAMS[row["family"]]:
        value = row[column]
        if value is None or (isinstance(value, float) and np.isnan(value)):
            value = None  # the embedding's exact constraint
        elif column == "n_fair_features":
            value = int(value)
        elif hasattr(value, "item"):
            value = value.item()
        out[GRID_OF[column]] = (value,)
    return out


def cv_results(table: pd.DataFrame, edges: np.ndarray | None, disparity: np.ndarray,
               error: np.ndarray, chosen: tuple[int, ...], classify: bool, bound: float,
               upper: np.ndarray | None = None, sem: np.ndarray | None = None
               ) -> dict[str, Any]:
    """``cv_results_``: one entry per candidate and threshold on that candidate's own front."""
    cand, idx = [], []
    for k in range(len(table)):
        d, e = disparity[k], error[k]
        ok = np.isfinite(d) & np.isfinite(e)
        keep = np.flatnonzero(ok)[pareto_mask(d[ok], e[ok])]
        if k == chosen[0] and chosen[1] not in keep:
            keep = np.sort(np.r_[keep, chosen[1]])
        cand.append(np.full(len(keep), k))
        idx.append(keep)
    cand, idx = np.concatenate(cand), np.concatenate(idx)
    d, e = disparity[cand, idx], error[cand, idx]
    u = d if upper is None else upper[cand, idx]
    selected = (cand == chosen[0]) & (idx == chosen[1])
    out: dict[str, Any] = {}
    for column in table.columns:
        values = table[column].to_numpy(dtype=object)[cand]
        missing = np.array([v is None or (isinstance(v, float) and np.isnan(v))
                            for v in values], dtype=bool)
        values[missing] = None
        out[f"param_{column}"] = values
    params = {k: candidate_params(table, k) for k in np.unique(cand)}  # once per candidate
    out["params"] = [dict(params[k]) for k in cand]
    out["candidate"] = cand
    if edges is not None:
        out["threshold_index"] = idx
        out["threshold"] = edges[cand, idx]
    out["mean_test_score"] = 1.0 - e if classify else -e
    out["mean_test_error"] = e
    out["mean_test_disparity"] = d
    out["sem_test_disparity"] = np.full(len(d), np.nan) if sem is None else sem[cand, idx]
    out["upper_test_disparity"] = u
    # the selected entry first, then the feasible ones by score, then the others
    order = np.lexsort((u, -out["mean_test_score"], ~(u <= bound + 1e-12), ~selected))
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = np.arange(1, len(order) + 1)
    out["rank_test_score"] = rank
    out["pareto"] = pareto_mask(d, e)
    out["selected"] = selected
    return out


def frontier_table(results: dict[str, Any]) -> pd.DataFrame:
    """``cv_results_`` as a table: parameters, threshold, disparity (sem, upper), error, …"""
    columns = {k[len("param_"):]: v for k, v in results.items() if k.startswith("param_")}
    columns.update({k: results[v] for k, v in FRONTIER_COLUMNS.items() if v in results})
    return pd.DataFrame(columns)


def plot_frontier(frontier: Any, *, bound: float, chosen: tuple[float, float],
                  interval: tuple[float, float] | None = None, confidence: float | None = None,
                  error_name: str = "error", ax: Any = None) -> Any:
    """Draw the validation disparity and error of every candidate, their front and the choice.

    Parameters
    ----------
    frontier : pandas.DataFrame or mapping of str to array-like
        ``disparity``, ``error``, ``pareto`` and optionally ``family``, as ``frontier_``.
    bound : float
        The disparity bound (a dashed vertical line).
    chosen : tuple of float
        (disparity, error) of the chosen entry (a star).
    interval, confidence : tuple of float, float, default=None
        The chosen entry's disparity interval (lower, upper; the upper end is the bound that
        was compared) and its confidence.
    error_name : str, default="error"
        The error's name on the axis.
    ax : matplotlib.axes.Axes, default=None
        Where to draw (None: a new figure).

    Returns
    -------
    matplotlib.axes.Axes
        The axes drawn on.
    """
    if ax is None:
        import matplotlib.pyplot as plt
        _, ax = plt.subplots(figsize=(5, 4))
    fr = pd.DataFrame({name: np.asarray(frontier[name]) for name in
                       ("disparity", "error", "pareto", "family") if name in frontier})
    if "family" in fr:
        for family, part in fr.groupby("family"):
            ax.scatter(part["disparity"], part["error"], s=6, alpha=0.35, label=family)
    else:
        ax.scatter(fr["disparity"], fr["error"], s=6, alpha=0.35, color="grey", label="candidates")
    front = fr[fr["pareto"].astype(bool)].sort_values("disparity")
    ax.step(front["disparity"], front["error"], where="post", color="black", lw=1, label="front")
    ax.scatter([chosen[0]], [chosen[1]], marker="*", s=140, color="crimson", zorder=3,
               label="selected")
    if confidence is not None and interval is not None:
        ax.plot(list(interval), [chosen[1]] * 2, "-|", color="crimson", lw=1.5,
                label=f"upper bound at {confidence:.0%}")
    ax.axvline(bound, color="grey", ls="--", lw=1, label=f"bound {bound:g}")
    ax.set_xlabel("validation disparity")
    ax.set_ylabel(f"validation {error_name}")
    ax.legend(fontsize=8)
    return ax
