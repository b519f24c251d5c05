"""An audit of decisions at 10⁷ and 10⁸ rows with 1,000 bootstrap replicates, against one
pass that only reads the same columns, and against fairlearn's ``MetricFrame``.

The table is Census-Income (KDD)-shaped: (sex, race, income) triples drawn with replacement
from the real training file (sex × race: 10 groups, their real shares, down to 0.3 % of the
rows), a score from a logistic model of income and group, and the decision ``score > 0.5``;
Parquet part files of 250,000 rows. One run, on a LocalCluster of ``--workers`` workers (one
thread each):

* for each of ``--sizes``:

  - the floor: one pass reading the five columns (each partition read, its rows counted),
    best of three (of one at 10⁸ rows);
  - ``daskfair.metrics.audit`` on the columns of ``dask.dataframe.read_parquet`` with
    ``--n-boot`` replicates, with and without scores (the ROC AUC's histograms), alike;
    goal: with scores, within 1.2 × the floor;
  - ``daskfair audit --input DIR ... --report`` as a user runs it, in a process of its own:
    wall time and that process's peak RSS (goal at 10⁸ rows: under 1 GB);

* fairlearn's ``MetricFrame`` (selection rate, TPR, FPR, accuracy, count; sex and race) on
  the first ``--fairlearn-rows`` rows in pandas, without intervals and (at the smallest) with
  ``--fairlearn-boot`` replicates, per replicate extrapolated; daskfair's in-memory audit of
  the same pandas rows with ``--n-boot`` replicates, in the same process;
* coverage by simulation: ``--coverage-runs`` data sets of six groups (50 to 3,000 rows) in
  three scenarios (rates far apart, nearly equal, equal), the share of 95 % intervals that
  hold the true value: each group's rate, its difference to the reference group, the
  largest gap (daskfair's simultaneous interval, and a plain percentile interval for
  comparison), the smallest ratio, the highest group.

    python benchmarks/audit_at_scale.py [--sizes 10000000 100000000] [--n-boot 1000]
        [--workers 2] [--fairlearn-rows 100000 1000000] [--fairlearn-boot 20]
        [--coverage-runs 400] [--data DIR]

``--sizes 1000000 --fairlearn-rows 100000 --fairlearn-boot 2 --coverage-runs 50`` is the
smoke test (about a minute).
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
from distributed.diagnostics import MemorySampler
from tables_at_scale import CENSUS, NAMES, run_cli

from _common import RESULTS, pyplot, write_result
from daskfair.metrics import audit

NAME = "audit_at_scale"
PART_ROWS = 250_000
COLUMNS = ["sex", "race", "income", "decision", "score"]


def _census_triples() -> pd.DataFrame:
    df = pd.read_csv(CENSUS, header=None, names=NAMES, usecols=["sex", "race", "income"],
                     skipinitialspace=True)
    df["income"] = (df["income"].str.strip(" .") == "50000+").astype(np.int8)
    return df


def make_table(n: int, root: Path) -> Path:
    """The prediction table of n rows (made once, then reused)."""
    folder = root / f"decisions_{n}"
    if (folder / "_done").exists():
        return folder
    folder.mkdir(parents=True, exist_ok=True)
    triples = _census_triples()
    shift = {g: 0.3 * i for i, g in enumerate(sorted(triples["race"].unique()))}
    for part, lo in enumerate(range(0, n, PART_ROWS)):
        rows = min(PART_ROWS, n - lo)
        rng = np.random.default_rng([1, part])
        t = triples.iloc[rng.integers(0, len(triples), rows)].reset_index(drop=True)
        z = (-2.0 + 3.0 * t["income"] + 0.4 * (t["sex"] == "Male")
             + t["race"].map(shift) * 0.3 + rng.normal(0, 1, rows))
        t["score"] = 1 / (1 + np.exp(-z))
        t["decision"] = (t["score"] > 0.5).astype(np.int8)
        t[COLUMNS].to_parquet(folder / f"part.{part:05d}.parquet", index=False)
    (folder / "_done").touch()
    return folder


def _rows(part: pd.DataFrame) -> int:
    return len(part)


def floor_pass(folder: Path) -> float:
    """One pass that reads the five columns and counts each partition's rows."""
    t0 = time.perf_counter()
    frame = dd.read_parquet(folder, columns=COLUMNS)
    frame.map_partitions(_rows, meta=(None, "int64")).sum().compute()
    return time.perf_counter() - t0


def audit_pass(folder: Path, n_boot: int, scores: bool) -> tuple[float, object]:
    t0 = time.perf_counter()
    f = dd.read_parquet(folder, columns=COLUMNS)
    a = audit(f["income"], f["decision"], sensitive_features=f[["sex", "race"]],
              y_score=f["score"] if scores else None, n_boot=n_boot, random_state=0)
    return time.perf_counter() - t0, a


def size(n: int, args: argparse.Namespace, client: distributed.Client,
         sampler: MemorySampler, address: str, work: Path) -> dict:
    folder = make_table(n, args.data)
    out = {"rows": n, "partitions": -(-n // PART_ROWS)}
    repeats = 1 if n > 20_000_000 else 3
    floors, with_scores, without = [], [], []
    for _ in range(repeats):  # alternated: the page cache serves both alike
        floors.append(floor_pass(folder))
        seconds, a = audit_pass(folder, args.n_boot, scores=True)
        with_scores.append(seconds)
        without.append(audit_pass(folder, args.n_boot, scores=False)[0])
    out.update(floor_seconds=min(floors), audit_seconds=min(with_scores),
               audit_no_scores_seconds=min(without),
               ratio_to_floor=min(with_scores) / min(floors),
               ratio_no_scores=min(without) / min(floors), goal_ratio=1.2,
               rows_counted=int(a.counts.rows.sum()), groups=int(a.by_group["count"].notna()
                                                                   .sum()),
               auc_error_bound_max=float(a.roc_auc_error_bound.max()))
    print(f"{n:,} rows: floor {out['floor_seconds']:.1f} s, audit "
          f"{out['audit_seconds']:.1f} s ({out['ratio_to_floor']:.2f}x)", flush=True)
    out["cli"] = run_cli(
        ["audit", "--input", str(folder), "--label", "income", "--prediction", "decision",
         "--score", "score", "--sensitive", "sex", "race", "--n-boot", str(args.n_boot),
         "--store", str(work / f"audit-{n}.zarr"), "--report", str(work / f"audit-{n}.html"),
         "--scheduler", address, "--no-progress"], client, sampler, f"cli-{n}")
    out["cli"].pop("output", None)
    print(f"  cli {out['cli']['seconds']:.1f} s, client "
          f"{out['cli']['client_peak_rss_gb']:.2f} GB", flush=True)
    return out


def fairlearn_rows(folder: Path, rows: list[int], n_boot: int, fl_boot: int) -> list[dict]:
    from fairlearn.metrics import (
        MetricFrame,
        count,
        false_positive_rate,
        selection_rate,
        true_positive_rate,
    )
    from sklearn.metrics import accuracy_score

    metrics = {"selection_rate": selection_rate, "true_positive_rate": true_positive_rate,
               "false_positive_rate": false_positive_rate, "accuracy": accuracy_score,
               "count": count}
    full = dd.read_parquet(folder, columns=COLUMNS).head(max(rows), npartitions=-1)
    out = []
    for n in rows:
        df = full.iloc[:n]
        s, y, p = df[["sex", "race"]], df["income"].to_numpy(), df["decision"].to_numpy()
        t0 = time.perf_counter()
        MetricFrame(metrics=metrics, y_true=y, y_pred=p, sensitive_features=s)
        plain = time.perf_counter() - t0
        row = {"rows": n, "fairlearn_seconds": plain}
        if n == min(rows) and fl_boot:
            t0 = time.perf_counter()
            MetricFrame(metrics=metrics, y_true=y, y_pred=p, sensitive_features=s,
                        n_boot=fl_boot, ci_quantiles=[0.025, 0.975], random_state=0)
            boot = time.perf_counter() - t0
            row.update(fairlearn_boot=fl_boot, fairlearn_boot_seconds=boot,
                       fairlearn_seconds_per_replicate=(boot - plain) / fl_boot,
                       fairlearn_100_replicates_extrapolated=plain + 100 * (boot - plain)
                       / fl_boot)
        t0 = time.perf_counter()
        audit(y, p, sensitive_features=s, n_boot=n_boot, random_state=0)
        row["daskfair_seconds"] = time.perf_counter() - t0
        row["daskfair_n_boot"] = n_boot
        print(f"fairlearn {n:,} rows: {row}", flush=True)
        out.append(row)
    return out


SCENARIOS = {"far apart": [0.3, 0.45, 0.5, 0.35, 0.6, 0.4],
             "nearly equal": [0.4, 0.42, 0.4, 0.41, 0.4, 0.43],
             "equal": [0.4] * 6}
SIZES = np.array([50, 150, 400, 800, 1500, 3000])


def _covered(ends: list, truth: np.ndarray) -> np.ndarray:
    lo, hi = (np.asarray(e["selection_rate"]) for e in ends)
    return (lo <= truth) & (truth <= hi)


def coverage(runs: int, n_boot: int) -> dict:
    rng = np.random.default_rng(2026)
    g = np.repeat(np.arange(6), SIZES)
    out = {}
    for name, rate in SCENARIOS.items():
        rate = np.asarray(rate)
        hits = {k: 0.0 for k in ("group_rate", "difference_to_reference", "largest_gap",
                                 "largest_gap_percentile", "smallest_ratio", "highest_group")}
        for _ in range(runs):
            p = (rng.random(len(g)) < rate[g]).astype(int)
            a = audit(p, p, sensitive_features=g, n_boot=n_boot, reference_group=5,
                      random_state=int(rng.integers(2**31)))
            hits["group_rate"] += _covered(a.by_group_ci, rate).mean()
            hits["difference_to_reference"] += _covered(
                a.difference_to_reference_ci(), rate - rate[5])[:5].mean()
            gap = rate.max() - rate.min()
            hits["largest_gap"] += bool(_covered(a.difference_ci(), gap))
            boot = a._difference(*a._boot, "between_groups")[:, 0]
            lo, hi = np.quantile(boot, [0.025, 0.975])
            hits["largest_gap_percentile"] += bool(lo <= gap <= hi)
            hits["smallest_ratio"] += bool(_covered(a.ratio_ci(), rate.min() / rate.max()))
            hits["highest_group"] += bool(_covered(a.group_max_ci(), rate.max()))
        out[name] = {k: v / runs for k, v in hits.items()}
        print(f"coverage, {name}: {out[name]}", flush=True)
    return {"runs": runs, "n_boot": n_boot, "group_rows": SIZES.tolist(),
            "confidence": 0.95, "goal": [0.93, 0.97], "scenarios": out}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[10_000_000, 100_000_000])
    ap.add_argument("--n-boot", type=int, default=1000)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--fairlearn-rows", type=int, nargs="+", default=[100_000, 1_000_000])
    ap.add_argument("--fairlearn-boot", type=int, default=20)
    ap.add_argument("--coverage-runs", type=int, default=400)
    ap.add_argument("--data", type=Path, default=Path(tempfile.gettempdir()) / "daskfair-audit")
    args = ap.parse_args()
    args.data.mkdir(parents=True, exist_ok=True)
    results = {"n_boot": args.n_boot, "workers": args.workers, "sizes": {}}
    results["coverage"] = coverage(args.coverage_runs, args.n_boot)
    results["fairlearn"] = fairlearn_rows(make_table(min(args.sizes), args.data),
                                          args.fairlearn_rows, args.n_boot,
                                          args.fairlearn_boot)
    write_result(NAME, results)
    with (tempfile.TemporaryDirectory(dir=args.data) as tmp,
          distributed.LocalCluster(n_workers=args.workers, threads_per_worker=1,
                                   dashboard_address=None) as cluster,
          distributed.Client(cluster) as client):
        sampler = MemorySampler()
        for n in args.sizes:
            results["sizes"][str(n)] = size(n, args, client, sampler, cluster.scheduler_address,
                                            Path(tmp))
            write_result(NAME, results)
    plot(results)


def plot(results: dict) -> None:
    plt = pyplot()
    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 3.8))
    sizes = list(results["sizes"])
    x = np.arange(len(sizes))
    rows = [results["sizes"][k] for k in sizes]
    for i, (label, key) in enumerate([("floor: read the columns", "floor_seconds"),
                                      ("audit, 1,000 replicates, with scores", "audit_seconds"),
                                      ("audit without scores", "audit_no_scores_seconds")]):
        a.bar(x + (i - 1) * 0.25, [r[key] for r in rows], 0.25, label=label)
    a.scatter(x, [1.2 * r["floor_seconds"] for r in rows], marker="_", s=300, color="black",
              zorder=3, label="goal: 1.2 × floor")
    a.set_xticks(x, [f"{int(k):,} rows" for k in sizes])
    a.set_ylabel("seconds")
    a.set_yscale("log")
    a.legend(fontsize=8)
    fl = results["fairlearn"]
    labels = [f"{r['rows']:,}" for r in fl]
    xs = np.arange(len(fl))
    b.bar(xs - 0.2, [r["fairlearn_seconds"] for r in fl], 0.4,
          label="fairlearn MetricFrame, no intervals")
    b.bar(xs + 0.2, [r["daskfair_seconds"] for r in fl], 0.4,
          label="daskfair audit, 1,000 replicates")
    b.set_xticks(xs, [f"{t} rows (pandas)" for t in labels])
    b.set_yscale("log")
    b.set_ylabel("seconds")
    b.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(RESULTS / f"{NAME}.png", dpi=120)


if __name__ == "__main__":
    main()
