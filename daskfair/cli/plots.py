"""Figures of stored runs (the ``plot`` extra): fronts, trade-offs, frontiers, FCE metrics;
:func:`plot_run` picks a run's figure and writes a PNG."""

from __future__ import annotations

import io
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..store import Run, open_run
from .outputs import check_output, write_output

__all__ = ["plot_fce_metrics", "plot_fronts", "plot_run", "plot_tradeoff"]


def _pyplot() -> Any:
    try:
        import matplotlib

        matplotlib.use("Agg", force=False)
        import matplotlib.pyplot as plt
    except ImportError as exc:
        raise ImportError("plots need matplotlib: pip install 'daskfair[plot]'.") from exc
    return plt


def _axes(ax: Any, size: tuple[float, float] = (5.5, 4.0)) -> Any:
    if ax is None:
        _, ax = _pyplot().subplots(figsize=size)
    return ax


def plot_fronts(
    fronts: Mapping[str, Mapping[str, Sequence[float]]],
    *,
    best_balance: float | None = None,
    ax: Any = None,
) -> Any:
    """Cost/balance fronts, e.g. ``{"SAfairKM": {"cost": ..., "balance": ...}, "VfairKM":
    {..., "fairness_weight": ...}}``; VfairKM's μ, when given, label the points."""
    ax = _axes(ax)
    styles = {"SAfairKM": {"marker": "o", "ms": 3, "ls": "none"},
              "VfairKM": {"marker": "s", "ms": 6, "ls": "--", "mfc": "none"}}
    for name, f in fronts.items():
        ax.plot(f["cost"], f["balance"], label=f"{name} ({len(f['cost'])} points)",
                **styles.get(name, {"marker": "^", "ls": "none"}))
        for mu, x, y in zip(f.get("fairness_weight") or [], f["cost"], f["balance"], strict=False):
            ax.annotate(f"μ={mu:g}", (x, y), textcoords="offset points", xytext=(4, 4),
                        fontsize=7)
    if best_balance is not None:
        ax.axhline(best_balance, color="grey", lw=0.8, ls=":",
                   label=f"best possible balance {best_balance:.3f}")
    ax.set_xlabel("clustering cost f1 (lower is better)")
    ax.set_ylabel("balance f2 (higher is fairer)")
    ax.legend(fontsize=8)
    return ax


def plot_tradeoff(results: Sequence[Mapping[str, Any]], *, error_name: str = "error",
                  ax: Any = None) -> Any:
    """Disparity against error: FKR-F²E points joined over k (labelled), one marker per
    baseline."""
    ax = _axes(ax)
    by_method: dict[str, list[Mapping[str, Any]]] = {}
    for r in results:
        by_method.setdefault(r["method"], []).append(r)
    markers = iter("s^vDP*X")
    for method, rows in by_method.items():
        sd = [r["disparity"] for r in rows]
        err = [r["error"] for r in rows]
        if method.startswith("FKR-F2E"):
            order = np.argsort([r["n_fair_features"] or 0 for r in rows])
            ax.plot(np.take(err, order), np.take(sd, order), "o-", label=method)
            for r in rows:
                ax.annotate(f"k={r['n_fair_features']}", (r["error"], r["disparity"]),
                            textcoords="offset points", xytext=(4, 4), fontsize=7)
        else:
            ax.plot(err, sd, next(markers, "o"), ms=8, mfc="none", label=method)
    from matplotlib.ticker import MaxNLocator

    ax.xaxis.set_major_locator(MaxNLocator(5))
    ax.set_xlabel(f"test {error_name}")
    ax.set_ylabel("test disparity")
    ax.legend(fontsize=8)
    return ax


def _stored_frontier(run: Run, attrs: Mapping[str, Any]) -> Any:
    """A stored fkr run's frontier, drawn as the estimator draws its own."""
    from ..fkr.frontier import plot_frontier

    sel = attrs["selection"]
    return plot_frontier(
        {k: run.read_array(f"frontier/{k}") for k in ("disparity", "error", "pareto")},
        bound=sel["disparity_bound"],
        chosen=(sel["validation_disparity"], sel["validation_error"]),
        interval=sel["validation_disparity_interval"],
        confidence=sel["disparity_confidence"],
        error_name="error" if attrs.get("task") == "classification" else "RMSE",
        ax=_axes(None))


def plot_fce_metrics(report: Mapping[str, Any], *, ax: Any = None) -> Any:
    """Bars of every metric: base clusterings (mean ± sample std) and the FCE consensus."""
    ax = _axes(ax, (7.0, 3.8))
    cols = list(report["columns"])
    x = np.arange(len(cols))
    ax.bar(x - 0.2, [report["base_mean"][c] for c in cols], 0.4,
           yerr=[report["base_std"][c] for c in cols], capsize=3, label="base clusterings")
    ax.bar(x + 0.2, [report["consensus"][c] for c in cols], 0.4, label="FCE consensus")
    ax.set_xticks(x, cols)
    ax.set_ylim(0, 1.05)
    ax.legend(fontsize=8)
    return ax


#: The PNG text chunk that marks a figure daskfair wrote (``--overwrite`` replaces only those).
SOFTWARE = "daskfair plot"


def plot_run(run: Run | str | os.PathLike[str], output: str | os.PathLike[str] | None = None,
             *, overwrite: bool = False) -> Path:
    """Draw a finished run's figure into ``output`` (default: the store's path with
    ``.png``) and return that path; an existing file is replaced only with ``overwrite``, and
    only a figure daskfair wrote."""
    if not isinstance(run, Run):
        run = open_run(run, verify="contents")
    elif not run.is_complete:
        open_run(run.path)  # raises the incomplete-run error
    out = Path(output) if output is not None else run.path.with_suffix(".png")
    target = {"signature": b"Software\x00" + SOFTWARE.encode(), "what": "the figure",
              "overwrite": overwrite, "avoid": [run.path]}
    check_output(out, **target)  # before anything is drawn
    plt = _pyplot()
    if run.kind == "fce" and "report" not in run.attrs:
        raise ValueError(f"{run.path} holds an FCE consensus without metrics (stored by "
                         "the estimator); plot runs of `daskfair fce`.")
    with run.reading("the figure's results"):
        ax = _figure(run)
    if ax is None:
        raise ValueError(f"no figure for runs of kind {run.kind!r}.")
    ax.set_title(f"{run.kind}: {run.path.name}", fontsize=9)
    ax.figure.tight_layout()
    png = io.BytesIO()
    ax.figure.savefig(png, format="png", dpi=120, metadata={"Software": SOFTWARE})
    plt.close(ax.figure)
    return write_output(out, png.getvalue(), **target)


def _figure(run: Run) -> Any:
    """The axes of a run's figure, by its kind (None: it has none)."""
    attrs = run.attrs
    if run.kind == "safairkm" or (run.kind == "demo" and "safairkm" in attrs):
        if run.kind == "demo":
            sa = attrs["safairkm"]
            fronts = {k: sa[k] for k in ("SAfairKM", "VfairKM")}
            best = sa["reference"]["best_balance"]
        elif "fronts" in attrs:
            fronts, best = attrs["fronts"], attrs.get("best_balance")
        else:  # a front stored by pareto_front(store=...)
            fronts = {"SAfairKM": {"cost": run.read_array("cost").tolist(),
                                   "balance": run.read_array("balance").tolist()}}
            best = None
        ax = plot_fronts(fronts, best_balance=best)
    elif run.kind == "fkr" and "selection" in attrs:
        ax = _stored_frontier(run, attrs)
    elif run.kind == "fkr":
        ax = plot_tradeoff(attrs["results"], error_name="error"
                           if attrs.get("task") == "classification" else "RMSE")
    elif run.kind == "fce":
        ax = plot_fce_metrics(attrs["report"])
    else:
        ax = None
    return ax
