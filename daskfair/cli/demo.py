"""``daskfair demo``: the pool audit, FCE, FKR-F²E and SAfairKM parts of the main job."""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Sequence
from typing import Any

import distributed

from ..datasets import FCE_POOL_NAMES, FCE_POOLS, load_dataset, load_fce_pool
from ..metrics import REPORT_COLUMNS
from ..store import create_run
from .labelings import audit_labelings, subset_summary
from .paper.fce_paper import VARIANTS, pool_rows
from .paper.fkr_paper import CV_METHOD, METHODS, PAPER_KERNELS, run_method

__all__ = ["PAPER_KM_ROWS", "format_table", "run_demo"]

logger = logging.getLogger(__name__)

#: The "KM" rows the FCE paper prints for two pools (means), shown next to ours.
PAPER_KM_ROWS: dict[str, dict[str, float]] = {
    "har": {"ACC": 0.579, "NMI": 0.571, "Bal": 0.000, "MNCE": 0.812, "CCE": 0.241, "NE": 0.940},
    "mnist_usps": {"ACC": 0.371, "NMI": 0.343, "CCE": 0.320, "NE": 0.966},
}


def _fmt(x: float) -> str:
    # Three decimals without the leading zero, as the paper prints them.
    s = f"{x:.3f}"
    return s[1:] if s.startswith("0.") else s


def _row(label: str, values: dict[str, Any], width: int) -> str:
    # A labelled table row: (mean, std) pairs as "m±s", single numbers as they are.
    cells = []
    for c in REPORT_COLUMNS:
        v = values.get(c)
        if v is None:
            text = ""
        elif isinstance(v, float):
            text = _fmt(v)
        else:
            text = _fmt(v[0]) + "±" + _fmt(v[1])
        cells.append(f"{text:>12}")
    return f"{label:<{width}}" + "".join(cells)


def _header(width: int) -> list[str]:
    head = f"{'pool':<{width}}" + "".join(f"{c:>12}" for c in REPORT_COLUMNS)
    return [head, "-" * len(head)]


def format_table(rows: dict[str, dict[str, tuple[float, float]]]) -> str:
    """Text table of ``{pool: {metric: (mean, std)}}`` with the paper's rows where known."""
    lines = _header(18)
    for pool, metrics in rows.items():
        lines.append(_row(f"KM {FCE_POOL_NAMES[pool]}", metrics, 18))
        if pool in PAPER_KM_ROWS:
            lines.append(_row("  paper", PAPER_KM_ROWS[pool], 18))
    return "\n".join(lines)


#: The FCE rows the FCE paper prints (data README), for the k-means pools.
PAPER_FCE_ROWS: dict[str, dict[str, float]] = {
    "ds": {"ACC": .425, "NMI": .482, "Bal": .222, "MNCE": .920, "CCE": .387, "NE": .985,
           "f_CCE": .374},
    "har": {"ACC": .648, "NMI": .557, "Bal": .149, "MNCE": .977, "CCE": .731, "NE": .997,
            "f_CCE": .331},
    "mnist_usps": {"ACC": .419, "NMI": .385, "Bal": .105, "MNCE": .445, "CCE": .703,
                   "NE": .997, "f_CCE": .190},
}


def fce_section(
    client: distributed.Client,
    pools: Sequence[str] = ("har", "mnist_usps"),
    *,
    data_dir: str | os.PathLike[str] | None = None,
) -> dict[str, dict[str, tuple[float, float]]]:
    """FCE consensus rows (mean ± sample std over 10 subsets of 10) for ``pools``."""
    out = {}
    for pool in pools:
        base, y, groups = load_fce_pool(pool, data_dir)
        rows = pool_rows(client, base, y, groups, variants={"FCE": VARIANTS["FCE"]}, key=pool)
        mean, std = rows["FCE"].mean(axis=0), rows["FCE"].std(axis=0, ddof=1)
        out[pool] = {c: (float(mean[i]), float(std[i])) for i, c in enumerate(REPORT_COLUMNS)}
    return out


def format_fce_table(km: dict, fce: dict) -> str:
    """KM row, FCE row and the paper's FCE row per pool."""
    lines = _header(22)
    for pool, row in fce.items():
        name = FCE_POOL_NAMES[pool]
        if pool in km:
            lines.append(_row(f"KM {name}", km[pool], 22))
        lines.append(_row(f"FCE {name}", row, 22))
        if pool in PAPER_FCE_ROWS:
            lines.append(_row("  paper FCE", PAPER_FCE_ROWS[pool], 22))
    return "\n".join(lines)


def fkr_section(
    client: distributed.Client,
    *,
    data_dir: str | os.PathLike[str] | None = None,
    dataset: str = "ffe_credit",
    split: int = 0,
) -> dict[str, dict[str, float]]:
    """FairKernelClassifierCV, FKR-F²E and its baselines on an authors' split, a task each."""
    data = load_dataset(dataset, data_dir)
    X, y, s = client.scatter([data.X, data.y, data.sensitive], broadcast=True,
                             hash=False)
    futures = [
        client.submit(run_method, method, X, y, s, data.splits[split],
                      kernel=PAPER_KERNELS[dataset], random_state=split,
                      key=f"demo-fkr-{dataset}-{split}-{i}")
        for i, method in enumerate((CV_METHOD, *METHODS))
    ]
    return dict(zip((CV_METHOD, *METHODS), client.gather(futures), strict=True))


def format_fkr_table(rows: dict[str, dict[str, float]]) -> str:
    """Text table of ``{method: {"disparity": ..., "error": ...}}``."""
    lines = [f"{'method':<34}{'disparity':>11}{'error':>8}", "-" * 53]
    lines += [f"{m:<34}{r['disparity']:>11.4f}{r['error']:>8.4f}" for m, r in rows.items()]
    return "\n".join(lines)


def safairkm_section(
    client: distributed.Client,
    *,
    data_dir: str | os.PathLike[str] | None = None,
    max_iter: int = 150,
    fairness_weights: Sequence[float] = (0.0, 200.0, 400.0, 800.0),
) -> dict[str, dict[str, Any]]:
    """SAfairKM and VfairKM fronts in the SAfairKM paper's Adult setting (5,000 rows, K = 10)."""
    import numpy as np

    from ..datasets import preprocess_safairkm
    from ..safairkm import pareto_front, vfairkm_front
    from .safairkm_job import add_hypervolumes, front_row

    d = load_dataset("safairkm_adult", data_dir)
    X, s = preprocess_safairkm(d.X, d.sensitive)
    out = {}
    for name, make in (
        ("SAfairKM", lambda: pareto_front(X, sensitive_features=s, n_clusters=10,
                                          max_iter=max_iter, random_state=0, client=client)),
        ("VfairKM", lambda: vfairkm_front(X, sensitive_features=s, n_clusters=10,
                                          fairness_weights=fairness_weights, random_state=0,
                                          client=client)),
    ):
        t0 = time.perf_counter()
        front = make()
        out[name] = front_row(front, time.perf_counter() - t0)
    ref = add_hypervolumes(out)
    out["reference"] = {"cost": ref[0], "balance": ref[1],
                        "best_balance": float(np.bincount(s).min() / np.bincount(s).max())}
    return out


def format_safairkm_table(rows: dict[str, dict[str, Any]]) -> str:
    """Points, cost and balance ranges, hypervolume and time per front."""
    lines = [f"{'front':<10}{'points':>7}{'cost':>18}{'balance':>16}{'hypervol.':>11}"
             f"{'seconds':>9}", "-" * 71]
    for name in ("SAfairKM", "VfairKM"):
        if name not in rows:
            continue
        r = rows[name]
        lines.append(f"{name:<10}{r['points']:>7}"
                     f"{r['cost'][0]:>9.4f}-{r['cost'][-1]:.4f}"
                     f"{r['balance'][0]:>9.3f}-{r['balance'][-1]:.3f}"
                     f"{r['hypervolume']:>11.5f}{r['seconds']:>9.1f}")
    return "\n".join(lines)


def run_demo(
    *,
    store: str | os.PathLike[str] = "daskfair-demo.zarr",
    pools: Sequence[str] = FCE_POOLS,
    fce_pools: Sequence[str] = ("har", "mnist_usps"),
    fkr: bool = True,
    safairkm: bool = True,
    data_dir: str | os.PathLike[str] | None = None,
    client: distributed.Client | None = None,
    progress: bool = True,
    echo: Callable[[str], Any] = print,
) -> dict[str, dict[str, tuple[float, float]]]:
    """Run the demo's parts on ``client`` (default: :func:`daskfair.get_client`), print
    their tables and write them into a demo run at ``store`` (replacing a demo run there).
    Returns ``{"km": …, "fce": …, "fkr": …, "safairkm": …}``, each part's rows."""
    from ..runtime.clients import get_client

    unknown = sorted((set(pools) | set(fce_pools)) - set(FCE_POOLS))
    if unknown:
        raise ValueError(f"unknown pool(s) {unknown}; choose from {list(FCE_POOLS)}.")
    client = client or get_client()
    params = {"pools": list(pools)}
    with create_run(store, kind="demo", params=params, overwrite="demo") as run:
        rows = _km_section(run, client, pools, data_dir, progress, echo)
        fce_rows: dict[str, dict[str, tuple[float, float]]] = {}
        if fce_pools:
            t0 = time.perf_counter()
            fce_rows = fce_section(client, fce_pools, data_dir=data_dir)
            run.set_attrs(fce_table={p: {c: list(v) for c, v in r.items()}
                                     for p, r in fce_rows.items()},
                          fce_seconds=time.perf_counter() - t0)
            echo("\nFCE consensus (fairness_weight='auto') of 10 subsets of 10 base clusterings "
                 "per pool")
            echo("against the base clusterings (KM), mean ± sample std over the subsets:")
            echo(format_fce_table(rows, fce_rows))
        fkr_rows: dict[str, dict[str, float]] = {}
        if fkr:
            t0 = time.perf_counter()
            fkr_rows = fkr_section(client, data_dir=data_dir)
            run.set_attrs(fkr_table=fkr_rows, fkr_seconds=time.perf_counter() - t0)
            echo("\nFKR-F²E on the authors' Credit Default split 0 (their training indices; "
                 "the other")
            echo("5,039 rows test; polynomial kernel degree 4, coef0 0.1; k = n/250; "
                 "demographic parity")
            echo("difference and error):")
            echo(format_fkr_table(fkr_rows))
        sa_rows: dict[str, dict[str, Any]] = {}
        if safairkm:
            sa_rows = safairkm_section(client, data_dir=data_dir)
            run.set_attrs(safairkm=sa_rows)
            best = sa_rows["reference"]["best_balance"]
            echo("\nSAfairKM Pareto front (30 starts, 4 pairs, 150 iterations) and VfairKM "
                 "(μ = 0,")
            echo(f"200, 400, 800) on Adult: 5,000 rows, K = 10, sex (best possible balance "
                 f"{best:.3f}):")
            echo(format_safairkm_table(sa_rows))
        run.mark_complete()
    echo(f"\nwritten to {run.path}")
    return {"km": rows, "fce": fce_rows, "fkr": fkr_rows, "safairkm": sa_rows}


def _km_section(run: Any, client: Any, pools: Sequence[str], data_dir: Any, progress: bool,
                echo: Callable[[str], Any]) -> dict[str, dict[str, tuple[float, float]]]:
    """Part 1: every pool's base clusterings audited on the cluster; the KM table."""
    rows: dict[str, dict[str, tuple[float, float]]] = {}
    t0 = time.perf_counter()
    for pool in pools:
        base, y, groups = load_fce_pool(pool, data_dir)
        echo(f"{FCE_POOL_NAMES[pool]}: {base.shape[0]} rows, {base.shape[1]} base clusterings")
        reports = audit_labelings(
            base, y, sensitive_features=groups, client=client, progress=progress
        )
        if progress:
            echo("")
        mean, std = subset_summary(reports)
        rows[pool] = {c: (float(m), float(s)) for c, m, s in zip(REPORT_COLUMNS, mean, std,
                                                                 strict=True)}
        run.write_array(f"km/{pool}/reports", reports)
    elapsed = time.perf_counter() - t0
    run.set_attrs(km_table={p: {c: list(v) for c, v in r.items()} for p, r in rows.items()},
                  columns=list(REPORT_COLUMNS), km_seconds=elapsed)
    echo("")
    echo("KM rows of the FCE paper: metrics of the 100 k-means base clusterings of each pool,")
    echo("mean ± sample std over 10 disjoint subsets of 10 (the paper's printed means below).")
    echo(format_table(rows))
    echo(f"\n{len(pools) * 100} labelings audited in {elapsed:.1f} s")
    return rows
