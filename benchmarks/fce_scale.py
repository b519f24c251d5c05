"""FCE at scale: base clusterings and consensus of ``make_fair_blobs`` on a 2-worker cluster.

For 10⁶ and 10⁷ rows (10 features, c = 10, two groups correlated with the clusters):
m = 20 k-means base clusterings (fitted as tasks on a 100,000-row sample, every row assigned
in one blockwise pass), then the FCE consensus from the dask label matrix. Reports wall time
of both stages, seconds per consensus iteration, peak cluster memory, the workers' busy
fraction in each stage (task compute seconds ÷ (wall × workers)), one numpy pass over the
same label matrix in this process (the floor of a pass), and the consensus's fairness report
against the true blobs.

    python benchmarks/fce_scale.py [--sizes 1000000 10000000] [--workers 2]
"""

from __future__ import annotations

import argparse
import time

import distributed
import numpy as np
from distributed.diagnostics import MemorySampler

from _common import RESULTS, busy_fraction, pyplot, write_result
from daskfair.datasets import make_fair_blobs
from daskfair.ensemble import FairClusteringEnsemble, base_clusterings
from daskfair.metrics import clustering_report


def one_size(client, n: int, m: int, c: int) -> dict:
    X, s, truth = make_fair_blobs(n, 10, c, 2, chunks=250_000, random_state=0)
    X, s, truth = client.persist([X, s, truth])
    distributed.wait([X, s, truth])
    ms = MemorySampler()
    workers = sum(client.nthreads().values())
    with ms.sample("base", interval=0.25), \
            distributed.get_task_stream(client=client) as stream:
        t0 = time.perf_counter()
        base = base_clusterings(X, n_clusters=c, n_runs=m, random_state=0, client=client)
        base = client.persist(base)
        distributed.wait(base)
        t_base = time.perf_counter() - t0
    busy_base = busy_fraction(stream.data, t_base, workers)
    with ms.sample("consensus", interval=0.25), \
            distributed.get_task_stream(client=client) as stream:
        t0 = time.perf_counter()
        est = FairClusteringEnsemble(c, random_state=0).fit(base, sensitive_features=s)
        t_cons = time.perf_counter() - t0
    busy_cons = busy_fraction(stream.data, t_cons, workers)
    # the floor: one numpy pass over the same label matrix, in this process (a joint count
    # of every column's labels: each value read once)
    labels = base.compute()
    t0 = time.perf_counter()
    np.bincount((labels + np.arange(m) * c).ravel(), minlength=m * c)
    t_floor = time.perf_counter() - t0
    del labels
    plain_report = clustering_report(truth, base[:, 0], sensitive_features=s, n_clusters=c)
    report = clustering_report(truth, est.labels_, sensitive_features=s, n_clusters=c)
    mem = ms.to_pandas()
    return {
        "n": n, "m": m, "c": c, "base_seconds": t_base, "consensus_seconds": t_cons,
        "iterations": est.n_iter_, "seconds_per_iteration": t_cons / est.n_iter_,
        "workers": workers, "busy_fraction_base": busy_base,
        "busy_fraction_consensus": busy_cons, "numpy_pass_seconds": t_floor,
        "passes_per_iteration": 2,  # the statistics pass and the sweep (tested in test_fce)
        "peak_memory_gb_base": float(mem["base"].max()) / 1e9,
        "peak_memory_gb_consensus": float(mem["consensus"].max()) / 1e9,
        "report_consensus": report, "report_first_base_clustering": plain_report,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[1_000_000, 10_000_000])
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--memory-limit", default="8GB", help="per worker")
    args = ap.parse_args()
    runs = []
    with (distributed.LocalCluster(n_workers=args.workers, threads_per_worker=1,
                                   memory_limit=args.memory_limit,
                                   dashboard_address=None) as cluster,
          distributed.Client(cluster) as client):
        for n in args.sizes:
            runs.append(one_size(client, n, 20, 10))
            print(runs[-1], flush=True)
            client.cancel(list(client.futures))
    write_result("fce_scale", {"workers": args.workers, "memory_limit": args.memory_limit,
                               "runs": runs})
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(5, 4))
    ns = [r["n"] for r in runs]
    ax.loglog(ns, [r["base_seconds"] for r in runs], "o-", label="20 base clusterings")
    ax.loglog(ns, [r["consensus_seconds"] for r in runs], "s-", label="FCE consensus")
    ax.set(xlabel="rows", ylabel="seconds", title=f"FCE, {args.workers} workers")
    ax.legend()
    fig.tight_layout()
    fig.savefig(RESULTS / "fce_scale.png", dpi=120)


if __name__ == "__main__":
    main()
