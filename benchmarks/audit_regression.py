"""A regression audit (``audit(task="regression")``) at 10⁷ rows against one pass that reads
the same columns, fairlearn's ``MetricFrame`` with regression metrics, and the coverage of
its intervals by simulation.

The table: Census-Income (KDD) people's sex and race (resampled, as ``audit_at_scale.py``
resamples them), a target amount (gamma, shifted by group) and a prediction of it with
group-dependent errors, in Parquet part files of 250,000 rows. On a LocalCluster of
``--workers`` workers, best of three, alternated with the floor (one pass reading the same
four columns):

* the time of the audit by sex × race and its ratio to the floor;
* fairlearn's ``MetricFrame`` (count, mean prediction, MAE, MSE; sensitive sex and race) on
  the first ``--fairlearn-rows`` rows in pandas, without intervals, against daskfair's
  in-memory regression audit of the same rows, in the same process, and the largest
  relative gap between their tables;
* coverage by simulation: ``--coverage-runs`` data sets of four groups (100 to 3,000 rows;
  skewed targets, skewed and heteroscedastic errors), the share of 95 % intervals that hold
  each group's true mean prediction, target, residual, absolute and squared error, and the
  true largest gap of the mean predictions.

    python benchmarks/audit_regression.py [--size 10000000] [--workers 2]
        [--fairlearn-rows 100000 1000000] [--coverage-runs 400] [--data DIR]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import dask.dataframe as dd
import distributed
import numpy as np
import pandas as pd
from audit_at_scale import PART_ROWS, _census_triples

from _common import write_result
from daskfair.metrics import REGRESSION_METRICS, audit

COLUMNS = ["sex", "race", "amount", "predicted"]


def make_table(n: int, root: Path) -> Path:
    """The regression table of n rows (made once, then reused)."""
    folder = root / f"amounts_{n}"
    if (folder / "_done").exists():
        return folder
    folder.mkdir(parents=True, exist_ok=True)
    triples = _census_triples()
    shift = {g: 0.1 * i for i, g in enumerate(sorted(triples["race"].unique()))}
    for part, lo in enumerate(range(0, n, PART_ROWS)):
        rows = min(PART_ROWS, n - lo)
        rng = np.random.default_rng([2, part])
        t = triples.iloc[rng.integers(0, len(triples), rows)].reset_index(drop=True)
        scale = 1.0 + 0.2 * (t["sex"] == "Male") + t["race"].map(shift)
        t["amount"] = rng.gamma(2.0, 20_000.0, rows) * scale
        t["predicted"] = t["amount"] * rng.lognormal(0, 0.3, rows) - 1_000 * t["race"].map(
            shift)
        t[COLUMNS].to_parquet(folder / f"part.{part:05d}.parquet", index=False)
    (folder / "_done").touch()
    return folder


def _rows(part: pd.DataFrame) -> int:
    return len(part)


def floor_pass(folder: Path) -> float:
    t0 = time.perf_counter()
    dd.read_parquet(folder, columns=COLUMNS).map_partitions(
        _rows, meta=(None, "int64")).sum().compute()
    return time.perf_counter() - t0


def regression_pass(folder: Path) -> tuple[float, object]:
    t0 = time.perf_counter()
    f = dd.read_parquet(folder, columns=COLUMNS)
    a = audit(f["amount"], f["predicted"], sensitive_features=f[["sex", "race"]],
              task="regression")
    a.prediction_ks()
    return time.perf_counter() - t0, a


def at_scale(folder: Path) -> dict:
    floors, passes = [], []
    for _ in range(3):
        floors.append(floor_pass(folder))
        seconds, a = regression_pass(folder)
        passes.append(seconds)
    return {"floor_seconds": min(floors), "audit_seconds": min(passes),
            "ratio_to_floor": min(passes) / min(floors), "groups": int(a._present.sum()),
            "all": {"floor": floors, "audit": passes}}


def fairlearn_rows(folder: Path, rows: list[int]) -> list[dict]:
    from fairlearn.metrics import MetricFrame, count, mean_prediction
    from sklearn.metrics import mean_absolute_error, mean_squared_error

    metrics = {"count": count, "mean_prediction": mean_prediction,
               "mean_absolute_error": mean_absolute_error,
               "mean_squared_error": mean_squared_error}
    full = dd.read_parquet(folder, columns=COLUMNS).head(max(rows), npartitions=-1)
    out = []
    for n in rows:
        df = full.iloc[:n]
        t, p = df["amount"].to_numpy(), df["predicted"].to_numpy()
        t0 = time.perf_counter()
        mf = MetricFrame(metrics=metrics, y_true=t, y_pred=p,
                         sensitive_features=df[["sex", "race"]])
        mf.difference()
        fl = time.perf_counter() - t0
        t0 = time.perf_counter()
        a = audit(t, p, sensitive_features=df[["sex", "race"]], task="regression")
        a.difference()
        a.difference_ci()
        ours = time.perf_counter() - t0
        cols = list(mf.by_group.columns)
        gap = np.nanmax(np.abs(a.by_group[cols].to_numpy() - mf.by_group.to_numpy())
                        / np.abs(mf.by_group.to_numpy()))
        row = {"rows": n, "fairlearn_seconds": fl, "daskfair_seconds": ours,
               "max_relative_gap": float(gap)}
        print(f"fairlearn {n:,} rows: {row}", flush=True)
        out.append(row)
    return out


def coverage(runs: int) -> dict:
    """Share of 95 % intervals holding the truth, per metric; and of the largest gap."""
    sizes = np.array([100, 400, 1500, 3000])
    k, theta = 2.0, 1000.0  # targets: gamma(k, θ · scale_g)
    scales = np.array([1.0, 1.2, 0.9, 1.5])
    bias = np.array([0.0, -100.0, 50.0, 200.0])  # predictions: t · lognormal(0, σ) + bias
    sigma = 0.3
    mult_mean = np.exp(sigma**2 / 2)
    truth = {}
    mt = k * theta * scales
    truth["mean_target"] = mt
    truth["mean_prediction"] = mt * mult_mean + bias
    truth["mean_residual"] = mt * (1 - mult_mean) - bias
    # the absolute and squared error have no closed form here: a very large sample
    rng = np.random.default_rng(99)
    big = 4_000_000
    mae, mse = [], []
    for g in range(4):
        t = rng.gamma(k, theta * scales[g], big)
        r = t - (t * rng.lognormal(0, sigma, big) + bias[g])
        mae.append(np.abs(r).mean())
        mse.append((r**2).mean())
    truth["mean_absolute_error"], truth["mean_squared_error"] = np.array(mae), np.array(mse)
    gap_truth = np.ptp(truth["mean_prediction"])
    hits = {m: [] for m in REGRESSION_METRICS} | {"mean_prediction_gap": []}
    for r in range(runs):
        rng = np.random.default_rng([8, r])
        g = np.repeat(np.arange(4), sizes)
        t = rng.gamma(k, theta * scales[g])
        p = t * rng.lognormal(0, sigma, len(g)) + bias[g]
        a = audit(t, p, sensitive_features=g, task="regression")
        lo, hi = a.by_group_ci
        for m in REGRESSION_METRICS:
            hits[m].append((lo[m].to_numpy() <= truth[m]) & (truth[m] <= hi[m].to_numpy()))
        glo, ghi = a.difference_ci()
        hits["mean_prediction_gap"].append(
            float(glo["mean_prediction"] <= gap_truth <= ghi["mean_prediction"]))
    per_group = {f"{m}_by_group_rows": np.mean(hits[m], axis=0).tolist()
                 for m in REGRESSION_METRICS}
    return {m: float(np.mean(v)) for m, v in hits.items()} | per_group | {
        "runs": runs, "group_rows": sizes.tolist()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=10_000_000)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--fairlearn-rows", type=int, nargs="+", default=[100_000, 1_000_000])
    ap.add_argument("--coverage-runs", type=int, default=400)
    ap.add_argument("--data", type=Path, default=Path(tempfile.gettempdir()) / "daskfair-audit")
    args = ap.parse_args()
    folder = make_table(args.size, args.data)
    with distributed.LocalCluster(n_workers=args.workers, threads_per_worker=1,
                                  processes=True, dashboard_address=None) as cluster, \
            distributed.Client(cluster):
        scale = at_scale(folder)
        print(f"{args.size:,} rows: floor {scale['floor_seconds']:.2f} s, regression audit "
              f"{scale['audit_seconds']:.2f} s ({scale['ratio_to_floor']:.2f}x)", flush=True)
    fairlearn = fairlearn_rows(folder, args.fairlearn_rows)
    cover = coverage(args.coverage_runs)
    print(f"coverage: {cover}", flush=True)
    write_result("audit_regression", {"rows": args.size, "workers": args.workers,
                                      "at_scale": scale, "fairlearn": fairlearn,
                                      "coverage": cover})


if __name__ == "__main__":
    main()
