"""A saved model predicting a table of 10⁷ rows: ``daskfair.load`` and
``daskfair.predict_table`` against the model's own ``decision_function`` on rows already in
the workers' memory.

One run on a LocalCluster of ``--workers`` workers (one thread each) that every step joins:

* train once: ``daskfair fkr --input`` on ``--train-rows`` rows of the Census-KDD-like
  Parquet table of ``tables_at_scale.py`` (label ``income``, sensitive ``sex``, as that
  script runs it; ``--n-landmarks`` and ``--cv`` kept small), stored in ``model.zarr``;
* load: ``daskfair.load(model.zarr)``, best of 5 (goal: under 1 s);
* bits: on ``--bits-rows`` rows as a pandas frame, ``predict`` and ``decision_function`` of
  the loaded pipeline against the same pipeline saved with ``daskfair.save`` and loaded
  again (must be identical), and against the first rows ``predict_table`` writes;
* for each of ``--sizes`` (a table made by ``tables_at_scale.make_table``):

  - ``daskfair.predict_table(model, DIR, OUT, keep=["age"])`` in this process: wall time,
    this process's peak RSS (sampled every 0.1 s; it holds the LocalCluster's scheduler),
    the workers' peak memory, bytes spilled, workers restarted, and the rows in the written
    Parquet files (from their footers) against the table's;
  - ``daskfair predict STORE --input DIR --output OUT --keep age`` as a user runs it, in a
    process of its own joining the cluster: the same figures, that process's peak RSS alone;
  - the pipeline on the streamed table without writing (read, encode, scale,
    ``decision_function``, summed): what the writing and the per-partition scoring add;
  - the floor: ``model[-1].decision_function`` (every row's score, summed with the count of
    positives) on rows already encoded, scaled and persisted in the workers' memory, best of
    3. The encoded rows are ``n_features_out_`` × 8 bytes each: when all ``n`` do not fit in
    ``--floor-fraction`` of the workers' memory (10⁷ rows of this table do not), the floor
    is measured on the first whole part files that do (at most ``--floor-rows``) and scaled
    linearly to ``n``; the JSON says so. Goal: ``predict_table`` ≤ 1.3 × the floor.

    python benchmarks/predict_at_scale.py [--sizes 10000000] [--train-rows 200000]
        [--landmarks 300] [--cv 2] [--workers 2] [--memory-limit 8GB] [--data DIR]

``--sizes 200000`` is the smoke test (about a minute).
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time
from pathlib import Path

import dask.array as da
import distributed
import numpy as np
import pandas as pd
import psutil
import pyarrow.parquet as pq
from dask.utils import parse_bytes
from distributed.diagnostics import MemorySampler
from tables_at_scale import _PeakRSS, _spilled, make_table, run_cli

import daskfair
from _common import RESULTS, pyplot, write_result

NAME = "predict_at_scale"
LABEL, SENSITIVE, KEEP = "income", "sex", "age"


def parquet_rows(folder: Path) -> list[int]:
    """Rows of each ``*.parquet`` file in ``folder``, in name order, from the footers."""
    return [pq.read_metadata(f).num_rows for f in sorted(folder.glob("*.parquet"))]


def train(table: Path, store: Path, args: argparse.Namespace, client: distributed.Client,
          sampler: MemorySampler, address: str) -> dict:
    """``daskfair fkr --input`` once, as a user runs it."""
    flags = ["fkr", "--input", str(table), "--label", LABEL, "--sensitive", SENSITIVE,
             "--n-landmarks", str(args.landmarks), "--cv", str(args.cv),
             "--store", str(store)]
    run = run_cli([*flags, "--scheduler", address, "--no-progress", "--overwrite"],
                  client, sampler, "train")
    return {"command": "daskfair " + " ".join(flags), "rows": args.train_rows,
            "seconds": run["seconds"], "client_peak_rss_gb": run["client_peak_rss_gb"],
            "cluster_peak_gb": run["cluster_peak_gb"]}


def load_time(store: Path, repeats: int) -> tuple[dict, object]:
    """``daskfair.load`` ``repeats`` times: every time, the best and the model."""
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        model = daskfair.load(store)
        times.append(time.perf_counter() - t0)
    steps = [(name, type(step).__name__) for name, step in model.steps]
    return {"seconds_best": min(times), "seconds_all": times, "goal_seconds": 1.0,
            "goal_met": min(times) < 1.0, "steps": steps,
            "encoded_width": int(model[0].n_features_out_),
            "landmarks": int(getattr(model[-1], "n_landmarks", -1) or -1)}, model


def bits(model, rows: pd.DataFrame, work: Path) -> tuple[dict, np.ndarray]:
    """The loaded pipeline against itself saved and loaded again, on pandas rows."""
    path = daskfair.save(model, work / "resaved.zarr")
    again = daskfair.load(path)
    d1, d2 = model.decision_function(rows), again.decision_function(rows)
    p1, p2 = model.predict(rows), again.predict(rows)
    return {"rows": len(rows), "decision_identical": bool(np.array_equal(d1, d2)),
            "predict_identical": bool(np.array_equal(p1, p2)),
            "positive_rate": float(np.mean(d1 >= 0))}, d1


def first_rows(table: Path, n: int) -> pd.DataFrame:
    """The first ``n`` rows of a partitioned table, read with pandas."""
    frames, have = [], 0
    for f in sorted(table.glob("*.parquet")):
        frames.append(pd.read_parquet(f))
        have += len(frames[-1])
        if have >= n:
            break
    return pd.concat(frames, ignore_index=True).iloc[:n]


class Watch:
    """Cluster figures around one step: seconds, peak memory, spilling, restarts."""

    def __init__(self, client: distributed.Client, sampler: MemorySampler, label: str,
                 pid: int | None = None) -> None:
        self.client, self.sampler, self.label, self.pid = client, sampler, label, pid

    def __enter__(self) -> Watch:
        self.workers = set(self.client.scheduler_info()["workers"])
        self.spilled = _spilled(self.client)
        self.rss0 = psutil.Process(self.pid).memory_info().rss if self.pid else 0
        self.rss = _PeakRSS(self.pid) if self.pid else None
        self._sampling = self.sampler.sample(self.label, interval=0.5)
        self._sampling.__enter__()
        self.t0 = time.perf_counter()
        return self

    def __exit__(self, *exc) -> None:
        self.seconds = time.perf_counter() - self.t0
        self._sampling.__exit__(*exc)
        peak = self.rss.stop() if self.rss else 0
        self.figures = {
            "seconds": self.seconds,
            "cluster_peak_gb": float(self.sampler.to_pandas()[self.label].max()) / 1e9,
            "spilled_gb": (_spilled(self.client) - self.spilled) / 1e9,
            "workers_restarted": len(self.workers
                                     - set(self.client.scheduler_info()["workers"]))}
        if self.pid:
            self.figures.update(process_peak_rss_gb=max(peak, self.rss0) / 1e9,
                                process_rss_before_gb=self.rss0 / 1e9)


def streamed(model, table: Path, client: distributed.Client, sampler: MemorySampler,
             n: int) -> dict:
    """Read, encode, scale and score every row, summed on the cluster (nothing written)."""
    df = daskfair.read_table(table)
    X = model[1].transform(model[0].transform(df, lengths=parquet_rows(table)))
    d = model[-1].decision_function(X)
    with Watch(client, sampler, f"stream {n}") as w:
        total, positive = da.compute(d.sum(), (d >= 0).sum())
    return {**w.figures, "decision_sum": float(total), "positives": int(positive)}


def floor(model, table: Path, n: int, client: distributed.Client, sampler: MemorySampler,
          budget: float, cap: int, repeats: int) -> dict:
    """``model[-1].decision_function`` on encoded, scaled rows persisted on the workers."""
    width = int(model[0].n_features_out_)
    lengths = parquet_rows(table)
    fit_rows = int(budget // (8 * width))
    k, rows = 0, 0
    while k < len(lengths) and rows + lengths[k] <= min(fit_rows, cap, n):
        rows += lengths[k]
        k += 1
    k, rows = max(k, 1), max(rows, lengths[0])
    df = daskfair.read_table(table).partitions[:k]
    X = model[1].transform(model[0].transform(df, lengths=lengths[:k]))
    t0 = time.perf_counter()
    X = client.persist(X)
    distributed.wait(X)
    persist_seconds = time.perf_counter() - t0
    times, sums = [], None
    with Watch(client, sampler, f"floor {n}") as w:
        for _ in range(repeats):
            t1 = time.perf_counter()
            d = model[-1].decision_function(X)
            sums = da.compute(d.sum(), (d >= 0).sum())
            times.append(time.perf_counter() - t1)
    del X, d
    best = min(times)
    return {"rows_measured": rows, "parts_measured": k, "encoded_width": width,
            "encoded_gb": rows * width * 8 / 1e9, "encoded_gb_all_rows": n * width * 8 / 1e9,
            "budget_gb": budget / 1e9,
            "how": "measured on all rows" if rows == n else
                   f"measured on the first {rows:,} rows ({k} part files: {n:,} encoded rows, "
                   f"{n * width * 8 / 1e9:.1f} GB, do not fit in {budget / 1e9:.1f} GB), "
                   f"scaled by {n / rows:g}",
            "seconds_measured_best": best, "seconds_measured_all": times,
            "seconds": best * n / rows, "persist_seconds": persist_seconds,
            "cluster_peak_gb": w.figures["cluster_peak_gb"],
            "spilled_gb": w.figures["spilled_gb"],
            "decision_sum": float(sums[0]), "positives": int(sums[1])}


def size(n: int, model, store: Path, args: argparse.Namespace, client: distributed.Client,
         sampler: MemorySampler, address: str, work: Path, bits_decision: np.ndarray) -> dict:
    t0 = time.perf_counter()
    table = make_table(n, args.data)
    lengths = parquet_rows(table)
    row: dict = {"make_table_seconds": time.perf_counter() - t0, "parts": len(lengths),
                 "rows_in": int(sum(lengths)), "load_average_before": os.getloadavg()}
    print(f"{n:,} rows: {len(lengths)} part files", flush=True)

    out = work / f"pred-{n}"
    with Watch(client, sampler, f"predict_table {n}", pid=os.getpid()) as w:
        report = daskfair.predict_table(model, table, out, keep=[KEEP])
    written = parquet_rows(out)
    head = first_rows(out, len(bits_decision))["decision"].to_numpy()
    row["predict_table"] = {
        **w.figures, "rows_reported": report["rows"], "rows_written": int(sum(written)),
        "files_written": len(written), "partitions": report["partitions"],
        "columns": report["columns"], "unseen": report["unseen"],
        "rows_in_equal_rows_out": int(sum(written)) == row["rows_in"] == report["rows"],
        "first_rows_decision_identical_to_pandas": bool(np.array_equal(head,
                                                                       bits_decision)),
        "first_rows_decision_max_abs_diff": float(np.max(np.abs(head - bits_decision)))}
    shutil.rmtree(out)
    print(f"  predict_table: {w.seconds:.1f} s, process peak "
          f"{w.figures['process_peak_rss_gb']:.2f} GB", flush=True)

    out = work / f"cli-{n}"
    cli = run_cli(["predict", str(store), "--input", str(table), "--output", str(out),
                   "--keep", KEEP, "--scheduler", address, "--no-progress"],
                  client, sampler, f"cli {n}")
    cli["rows_written"] = int(sum(parquet_rows(out)))
    cli["rows_in_equal_rows_out"] = cli["rows_written"] == row["rows_in"]
    row["cli"] = cli
    shutil.rmtree(out)
    print(f"  daskfair predict: {cli['seconds']:.1f} s, client "
          f"{cli['client_peak_rss_gb']:.2f} GB", flush=True)

    row["stream_no_write"] = streamed(model, table, client, sampler, n)
    print(f"  streamed, nothing written: {row['stream_no_write']['seconds']:.1f} s",
          flush=True)

    budget = args.floor_fraction * args.workers * parse_bytes(args.memory_limit)
    row["floor"] = floor(model, table, n, client, sampler, budget, args.floor_rows,
                         args.floor_repeats)
    row["predict_table_over_floor"] = row["predict_table"]["seconds"] / row["floor"]["seconds"]
    row["cli_over_floor"] = cli["seconds"] / row["floor"]["seconds"]
    row["load_average_after"] = os.getloadavg()
    row["goal_ratio"] = 1.3
    row["goal_met"] = row["predict_table_over_floor"] <= 1.3
    print(f"  floor: {row['floor']['seconds']:.1f} s ({row['floor']['how']}); ratio "
          f"{row['predict_table_over_floor']:.2f}", flush=True)
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[10_000_000])
    ap.add_argument("--train-rows", type=int, default=200_000)
    ap.add_argument("--landmarks", type=int, default=300)
    ap.add_argument("--cv", type=int, default=2)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--memory-limit", default="8GB", help="per worker (default 8GB)")
    ap.add_argument("--data", type=Path,
                    default=Path(tempfile.gettempdir()) / "daskfair-tables")
    ap.add_argument("--bits-rows", type=int, default=100_000)
    ap.add_argument("--load-repeats", type=int, default=5)
    ap.add_argument("--floor-rows", type=int, default=2_000_000,
                    help="most rows persisted for the floor (default 2000000)")
    ap.add_argument("--floor-fraction", type=float, default=0.4,
                    help="share of the workers' memory the persisted rows may take")
    ap.add_argument("--floor-repeats", type=int, default=3)
    args = ap.parse_args()
    results: dict = {"workers": args.workers, "memory_limit": args.memory_limit,
                     "keep": [KEEP], "sizes": {}}
    with tempfile.TemporaryDirectory(prefix="predict-") as tmp, \
            distributed.LocalCluster(n_workers=args.workers, threads_per_worker=1,
                                     memory_limit=args.memory_limit,
                                     dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        work, address = Path(tmp), cluster.scheduler_address
        sampler = MemorySampler()
        store = work / "model.zarr"
        results["train"] = train(make_table(args.train_rows, args.data), store, args,
                                 client, sampler, address)
        print(f"trained: {results['train']['seconds']:.0f} s", flush=True)
        results["load"], model = load_time(store, args.load_repeats)
        print(f"load: best {results['load']['seconds_best']:.3f} s", flush=True)
        rows = first_rows(make_table(args.sizes[0], args.data), args.bits_rows)
        results["bits"], decision = bits(model, rows, work)
        print(f"bits: {results['bits']}", flush=True)
        write_result(NAME, results)
        for n in args.sizes:
            results["sizes"][str(n)] = size(n, model, store, args, client, sampler, address,
                                            work, decision)
            write_result(NAME, results)
    plot(results)


def plot(results: dict) -> None:
    plt = pyplot()
    sizes = list(results["sizes"])
    rows = [results["sizes"][k] for k in sizes]
    fig, (a, b) = plt.subplots(1, 2, figsize=(10, 3.8), width_ratios=[1, 3])
    load = results["load"]
    a.bar([0], [load["seconds_best"]], 0.5, color="tab:green")
    a.axhline(load["goal_seconds"], color="grey", ls="--", lw=1, label="goal: 1 s")
    a.set_xticks([0], ["daskfair.load\n(best of 5)"])
    a.set_ylabel("seconds")
    a.legend(fontsize=8)
    x = np.arange(len(sizes))
    w = 0.2
    bars = [("predict_table (in this process)", lambda r: r["predict_table"]["seconds"]),
            ("daskfair predict (CLI)", lambda r: r["cli"]["seconds"]),
            ("read+encode+score, nothing written", lambda r: r["stream_no_write"]["seconds"]),
            ("floor: decision_function on rows in memory", lambda r: r["floor"]["seconds"])]
    for i, (label, value) in enumerate(bars):
        b.bar(x + (i - 1.5) * w, [value(r) for r in rows], w, label=label)
    b.scatter(x - 1.5 * w, [1.3 * r["floor"]["seconds"] for r in rows], marker="_", s=300,
              color="black", zorder=3, label="goal for predict_table: 1.3 × floor")
    b.set_xticks(x, [f"{int(k):,} rows" + ("" if r["floor"]["rows_measured"] == int(k)
                                           else f"\n(floor scaled from "
                                                f"{r['floor']['rows_measured']:,})")
                     for k, r in zip(sizes, rows, strict=True)])
    b.set_ylabel("seconds")
    b.set_ylim(0, 1.5 * max(max(value(r) for _, value in bars) for r in rows))
    b.legend(fontsize=8, loc="upper right")
    fig.tight_layout()
    fig.savefig(RESULTS / f"{NAME}.png", dpi=120)


if __name__ == "__main__":
    main()
