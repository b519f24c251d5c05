"""FKR-F²E at scale on a 2-worker LocalCluster: wall time, peak memory, ratio to the floor.

``make_fair_regression`` data with 20 features; Nyström with m landmarks, k = 50 fair features.
10⁵ and 10⁶ rows are persisted on the workers first (the fit is timed alone); 10⁷ rows are
written to a zarr array on disk and streamed from it, never held in memory.

The floor is the time numpy needs, in this process, for the single product CᵀC with C of shape
(n, m) — the one unavoidable O(n m²) operation of the fit. For 10⁷ rows (40 GB) it is measured
on 10⁶ rows and scaled by 10 (the product is linear in n).

    python benchmarks/fkr_scale.py [--sizes 100000 1000000 10000000] [--workers 2]
"""

from __future__ import annotations

import argparse
import resource
import tempfile
import time
from pathlib import Path

import dask.array as da
import distributed
import numpy as np
from distributed.diagnostics import MemorySampler

from _common import RESULTS, pyplot, write_result
from daskfair.datasets import make_fair_regression
from daskfair.fkr.estimators import FairKernelRegressor

CHUNK = 25_000


def floor_seconds(n: int, m: int) -> tuple[float, str]:
    """Seconds for CᵀC (n × m) in numpy, in this process."""
    n_meas = min(n, 1_000_000)
    C = np.random.default_rng(0).normal(size=(n_meas, m))
    C.T @ C  # warm up BLAS
    t0 = time.perf_counter()
    C.T @ C
    t = time.perf_counter() - t0
    del C
    how = "measured" if n_meas == n else f"measured at n={n_meas}, scaled by {n / n_meas:g}"
    return t * n / n_meas, how


def one_size(client, n: int, m: int, k: int, workdir: Path) -> dict:
    X, y, s = make_fair_regression(n, 20, chunks=CHUNK, random_state=0)
    streamed = n >= 5_000_000
    if streamed:
        # Write to disk once (block by block), then read lazily from zarr during the fit.
        paths = {name: str(workdir / f"{name}.zarr") for name in ("X", "y", "s")}
        for name, arr in zip(("X", "y", "s"), (X, y, s), strict=True):
            da.to_zarr(arr, paths[name], overwrite=True)
        X, y, s = (da.from_zarr(paths[name]) for name in ("X", "y", "s"))
    else:
        X, y, s = client.persist([X, y, s])
        distributed.wait([X, y, s])
    ms = MemorySampler()
    est = FairKernelRegressor("rbf", n_fair_features=k, n_landmarks=m, random_state=0)
    with ms.sample("fit", interval=0.2):
        t0 = time.perf_counter()
        est.fit(X, y, sensitive_features=s)
        fit = time.perf_counter() - t0
    t0 = time.perf_counter()
    mse = float(((est.predict(X) - y) ** 2).mean().compute())
    predict = time.perf_counter() - t0
    mem = ms.to_pandas()["fit"]
    floor, how = floor_seconds(n, m)
    return {
        "n": n, "m": m, "k": k, "chunk_rows": CHUNK, "streamed_from_zarr": streamed,
        "fit_seconds": fit, "predict_seconds": predict, "train_mse": mse,
        "peak_cluster_memory_gb": float(mem.max()) / 1e9,
        "floor_ctc_seconds": floor, "floor": how, "ratio_fit_to_floor": fit / floor,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000, 10_000_000])
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--memory-limit", default="6GB", help="per worker")
    args = ap.parse_args()
    rows = []
    with (tempfile.TemporaryDirectory(dir=RESULTS.parent) as tmp,
          distributed.LocalCluster(n_workers=args.workers, threads_per_worker=1,
                                   memory_limit=args.memory_limit,
                                   dashboard_address=None) as cluster,
          distributed.Client(cluster) as client):
        for n in args.sizes:
            m = 1000 if n < 5_000_000 else 500
            row = one_size(client, n, m, 50, Path(tmp))
            print(row, flush=True)
            rows.append(row)
            client.cancel(list(client.futures))
    client_peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6
    write_result("fkr_scale", {"workers": args.workers, "memory_limit": args.memory_limit,
                               "client_peak_rss_gb_incl_floor": client_peak, "runs": rows})
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(5, 4))
    ns = [r["n"] for r in rows]
    ax.loglog(ns, [r["fit_seconds"] for r in rows], "o-", label="daskfair fit")
    ax.loglog(ns, [r["floor_ctc_seconds"] for r in rows], "s--", label="numpy CᵀC (floor)")
    ax.set_xlabel("rows")
    ax.set_ylabel("seconds")
    ax.set_title("FKR-F²E fit, 2 workers")
    ax.legend()
    fig.tight_layout()
    fig.savefig(RESULTS / "fkr_scale.png", dpi=120)


if __name__ == "__main__":
    main()
