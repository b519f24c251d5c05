"""SAfairKM fronts at full size and beyond: time per iteration against list size, memory,
and 1 → 2 workers.

Full Adult (32,561 rows, sex) and Bank (41,108, marital, 3 groups), Census-KDD (199,523,
sex; integer-coded categoricals) — all z-scored and L2-normalised like the seed — and
``make_fair_blobs`` with 10⁶ rows (5 features, 2 groups); K = 10, 8 starts, the four pairs.
Each front runs a fixed number of iterations on 1 and on 2 worker processes and in this
process without a client (the fronts must be identical: same seed); reported: seconds per
iteration against the list size L (and per child, i.e. per L·P runs of Algorithm 2), peak
cluster memory, the 2-worker speed-up, the workers' busy fraction (task compute seconds ÷
(wall × workers), from the task stream) and the in-process path's speed-up.

    python benchmarks/safairkm_scale.py [--iterations 40] [--only adult bank census blobs]
"""

from __future__ import annotations

import argparse
import time

import distributed
import numpy as np
from distributed.diagnostics import MemorySampler

from _common import RESULTS, busy_fraction, pyplot, write_result
from daskfair import pareto_front
from daskfair.datasets import load_dataset, make_fair_blobs, preprocess_safairkm


def data(name: str) -> tuple[np.ndarray, np.ndarray]:
    if name == "blobs":
        X, s, _ = make_fair_blobs(1_000_000, 5, 10, 2, random_state=0)
        X, s = X.compute(), s.compute()
        X, s = preprocess_safairkm(X, s, n_samples=None)
        return X, s
    source = {"adult": ("safairkm_adult", None), "bank": ("safairkm_bank", None),
              "census": ("census_income_kdd", "sex")}[name]
    d = load_dataset(source[0], sensitive_attribute=source[1])
    return preprocess_safairkm(d.X, np.asarray(d.sensitive), n_samples=None)


def _warm(client, X, s) -> None:
    """The numba caches warm, on a small subsample (not timed)."""
    step = max(1, len(X) // 2000)
    pareto_front(X[::step], sensitive_features=s[::step], n_clusters=10, max_iter=2,
                 n_init=4, random_state=0, client=client)


def _timed_front(client, X, s, iterations: int):
    """The timed front and its labels."""
    t0 = time.perf_counter()
    front = pareto_front(X, sensitive_features=s, n_clusters=10, n_init=8,
                         max_iter=iterations, random_state=0, client=client)
    wall = time.perf_counter() - t0
    return front, wall, front.labels


def _summary(front, wall: float, labels, workers: int) -> dict:
    secs = np.diff([0.0] + [h["seconds"] for h in front.history])
    sizes = np.array([8] + [h["n_points"] for h in front.history[:-1]])  # L entering each
    return {"workers": workers, "wall_s": wall, "points": len(front),
            "seconds_per_iteration": secs.tolist(), "list_size": sizes.tolist(),
            "ms_per_child": float(1e3 * secs[1:].sum() / (4 * sizes[1:].sum())),
            "cost": front.cost, "balance": front.balance,
            "labels_sum": int(labels.astype(np.int64).sum())}


def run(X, s, workers: int, iterations: int) -> dict:
    """The front on ``workers`` worker processes, or (0) in this process without a client."""
    if workers == 0:
        import resource

        from daskfair.runtime.inprocess import InProcessClient

        with InProcessClient(2) as client:
            _warm(client, X, s)
            out = _summary(*_timed_front(client, X, s, iterations), 0)
        out["peak_rss_gb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
        return out
    with (distributed.LocalCluster(n_workers=workers, threads_per_worker=1,
                                   memory_limit="10GB", dashboard_address=None) as cluster,
          distributed.Client(cluster) as client):
        _warm(client, X, s)
        ms = MemorySampler()
        with ms.sample("front", interval=0.25), \
                distributed.get_task_stream(client=client) as stream:
            front, wall, labels = _timed_front(client, X, s, iterations)
        out = _summary(front, wall, labels, workers)
        out["peak_memory_gb"] = float(ms.to_pandas()["front"].max()) / 1e9
    out["busy_fraction"] = busy_fraction(stream.data, wall, workers)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--iterations", type=int, default=40)
    ap.add_argument("--only", nargs="*", default=["adult", "bank", "census", "blobs"])
    args = ap.parse_args()
    results = []
    for name in args.only:
        X, s = data(name)
        one, two, here = (run(X, s, w, args.iterations) for w in (1, 2, 0))
        same = all(np.array_equal(one["cost"], o["cost"])
                   and np.array_equal(one["balance"], o["balance"])
                   and one["labels_sum"] == o["labels_sum"] for o in (two, here))
        results.append({"dataset": name, "n": len(X), "d": X.shape[1],
                        "groups": np.bincount(s).tolist() if s.dtype.kind in "iu" else None,
                        "one_worker": one, "two_workers": two, "in_process": here,
                        "in_process_iteration_speedup_over_2_workers": float(
                            np.median(two["seconds_per_iteration"][1:])
                            / np.median(here["seconds_per_iteration"][1:])),
                        "speedup_2_workers": one["wall_s"] / two["wall_s"],
                        # iterations after the first (which builds the starting labels)
                        "iteration_speedup_2_workers": float(
                            np.median(one["seconds_per_iteration"][1:])
                            / np.median(two["seconds_per_iteration"][1:])),
                        "identical_fronts": bool(same)})
        print(name, len(X), "1w", round(one["wall_s"], 1), "2w", round(two["wall_s"], 1),
              "same", same, flush=True)
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(5.5, 4))
    for r in results:
        two = r["two_workers"]
        ax.plot(two["list_size"][1:], two["seconds_per_iteration"][1:], ".",
                label=f"{r['dataset']} (n={r['n']:,})")
    ax.set_xlabel("list size L entering the iteration")
    ax.set_ylabel("seconds per iteration (2 workers)")
    ax.set_yscale("log")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(RESULTS / "safairkm_scale.png", dpi=120)
    write_result("safairkm_scale", {"iterations": args.iterations, "runs": results})


if __name__ == "__main__":
    main()
