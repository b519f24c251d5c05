"""Data larger than the workers' memory, streamed from zarr on disk through each method.

A ``make_fair_blobs`` data set (default 6·10⁶ rows × 50 features: 2.4 GB, plus groups and
classes) is written to zarr; a LocalCluster whose workers together have less memory than that
(default 2 × 700 MB, of which a worker process needs about 250 MB just to hold Python, numpy,
numba and scikit-learn) then runs

* FKR-F²E: one pass over the rows to fit, then predictions written back to zarr;
* FCE: base clusterings (every row assigned, labels written to zarr), then the consensus
  over the stored labels;
* SAfairKM: which needs every row on every worker (points move one at a time), so it must
  refuse this data with a clear error before loading it — and runs on a subsample that fits.

For each: wall seconds, peak cluster memory (``MemorySampler``), bytes spilled to disk, worker
restarts, and checks that nothing was lost: every row predicted and finite, every row labelled,
group counts summing to n.

    python benchmarks/memory_streaming.py [--rows 6000000] [--features 50] [--memory-limit 700MB]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import dask
import dask.array as da
import distributed
import numpy as np
from distributed.diagnostics import MemorySampler

from _common import RESULTS, pyplot, write_result
from daskfair.datasets import make_fair_blobs
from daskfair.ensemble import FairClusteringEnsemble, base_clusterings
from daskfair.fkr.estimators import FairKernelClassifier
from daskfair.safairkm import pareto_front

CHUNK = 50_000


def _spilled(client) -> int:
    # bytes the workers' spill buffers hold on disk right now
    def disk(dask_worker):
        data = dask_worker.data
        return int(getattr(data, "spilled_total", (0, 0))[1]) if hasattr(
            data, "spilled_total") else 0
    return sum(client.run(disk).values())


def _workers(client) -> set[str]:
    return set(client.scheduler_info()["workers"])


def _measure(client, sampler, name, work):
    before = _workers(client)
    t0 = time.perf_counter()
    with sampler.sample(name, interval=0.25):
        out = work()
    seconds = time.perf_counter() - t0
    after = _workers(client)
    mem = sampler.to_pandas()[name]
    return out, {"seconds": seconds, "peak_cluster_memory_gb": float(mem.max()) / 1e9,
                 "spilled_to_disk_gb": _spilled(client) / 1e9,
                 "workers_replaced": len(before - after)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=6_000_000)
    ap.add_argument("--features", type=int, default=50)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--memory-limit", default="700MB", help="per worker")
    args = ap.parse_args()
    n, d = args.rows, args.features
    out: dict = {"rows": n, "features": d, "workers": args.workers,
                 "memory_limit_per_worker": args.memory_limit,
                 "data_gb": n * d * 8 / 1e9, "chunk_rows": CHUNK}
    with (tempfile.TemporaryDirectory(dir=RESULTS.parent) as tmp,
          dask.config.set({"daskfair.block-rows": 16_384}),
          distributed.LocalCluster(n_workers=args.workers, threads_per_worker=1,
                                   memory_limit=args.memory_limit,
                                   dashboard_address=None) as cluster,
          distributed.Client(cluster) as client):
        limit = sum(w["memory_limit"] for w in client.scheduler_info()["workers"].values())
        out["cluster_memory_gb"] = limit / 1e9
        root = Path(tmp)
        X, s, labels = make_fair_blobs(n, n_features=d, n_clusters=5, chunks=CHUNK,
                                       random_state=0)
        t0 = time.perf_counter()
        for name, arr in (("X", X), ("s", s), ("y", labels % 2)):
            da.to_zarr(arr, str(root / f"{name}.zarr"), overwrite=True)
        out["write_seconds"] = time.perf_counter() - t0
        X, s, y = (da.from_zarr(str(root / f"{k}.zarr")) for k in ("X", "s", "y"))
        print(f"{out['data_gb']:.2f} GB of features on disk; cluster memory "
              f"{out['cluster_memory_gb']:.2f} GB", flush=True)
        sampler = MemorySampler()

        def fkr():
            est = FairKernelClassifier("rbf", n_fair_features=10, n_landmarks=200,
                                       random_state=0)
            est.fit(X, y, sensitive_features=s)
            da.to_zarr(est.predict(X).astype(np.int8), str(root / "pred.zarr"),
                       overwrite=True)
            pred = da.from_zarr(str(root / "pred.zarr"))
            n_ok, agree = da.compute(((pred == 0) | (pred == 1)).sum(), (pred == y).mean())
            return {"rows_predicted": int(n_ok), "train_accuracy": float(agree)}

        res, stats = _measure(client, sampler, "FKR-F2E", fkr)
        out["fkr"] = {**res, **stats, "nothing_lost": res["rows_predicted"] == n}
        print("FKR-F2E", out["fkr"], flush=True)

        def fce():
            base = base_clusterings(X, n_clusters=5, n_runs=6, sample_size=50_000,
                                    random_state=1, client=client)
            da.to_zarr(base, str(root / "base.zarr"), overwrite=True)
            base = da.from_zarr(str(root / "base.zarr"))
            est = FairClusteringEnsemble(5, max_iter=4, random_state=2).fit(
                base, sensitive_features=s)
            da.to_zarr(est.labels_, str(root / "fce.zarr"), overwrite=True)
            lab = da.from_zarr(str(root / "fce.zarr"))
            n_ok = int(((lab >= 0) & (lab < 5)).sum().compute())
            return {"rows_labelled": n_ok, "group_count_total": int(est.group_counts_.sum()),
                    "iterations": est.n_iter_}

        res, stats = _measure(client, sampler, "FCE", fce)
        out["fce"] = {**res, **stats, "nothing_lost": res["rows_labelled"] == n
                      and res["group_count_total"] == n}
        print("FCE", out["fce"], flush=True)

        refusal = None
        if out["data_gb"] > out["cluster_memory_gb"] / args.workers:
            try:
                pareto_front(X, sensitive_features=s, n_clusters=5, max_iter=2, client=client)
            except ValueError as exc:
                refusal = str(exc)
        sub = 200_000

        def safairkm():
            front = pareto_front(X[:sub], sensitive_features=s[:sub], n_clusters=5,
                                 n_init=4, max_iter=5, random_state=0, client=client)
            return {"subsample_rows": sub, "points": len(front)}

        res, stats = _measure(client, sampler, "SAfairKM", safairkm)
        out["safairkm"] = {"refused_full_data": refusal, **res, **stats}
        print("SAfairKM", out["safairkm"], flush=True)
        frame = sampler.to_pandas()
    write_result("memory_streaming", out)
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6, 3.5))
    for name in frame.columns:
        series = frame[name].dropna()
        ax.plot((series.index - series.index[0]).total_seconds(), series.values / 1e9,
                label=name)
    ax.axhline(out["cluster_memory_gb"], color="grey", ls=":", label="memory limit (sum)")
    ax.axhline(out["data_gb"], color="k", ls="--", lw=0.8, label="features on disk")
    ax.set_xlabel("seconds into the method")
    ax.set_ylabel("cluster memory (GB)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(RESULTS / "memory_streaming.png", dpi=120)


if __name__ == "__main__":
    main()
