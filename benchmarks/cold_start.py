"""The first call as a new user meets it: every figure from a new process, in one run.

For each public entry point on 5,000 rows, each from a new process: with an empty cache of
compiled code (a new machine: every block function compiles), with that cache filled (every
command-line run and every Dask worker), from another checkout of the same source on the same
machine (a new virtual environment or clone: daskfair's folder of compiled code is shared by
all of them; numba's own cache, next to the sources, is not), and the same call again in
that process (warm). Imports are timed apart from the call; numba's compile events give the
seconds per function and signature. With ``--baseline-checkout DIR`` (``git worktree add DIR
COMMIT``) the same for that checkout, in the same run. ``--demo`` also times ``daskfair
demo`` from a new process with an empty and a filled cache; ``--cluster`` the first and the
second FCE consensus of 10⁷ rows and SAfairKM front of 10⁶ rows on a fresh 2-worker
LocalCluster, with an empty and a filled cache.

    ../.venv/bin/python cold_start.py [--baseline-checkout DIR] [--demo] [--cluster]
                                      [--repeats 1]

Goals (issue 36): empty cache within 2 s of warm; filled cache within 0.3 s of warm; on a
fresh cluster the first run within 1.2x the second.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path
from typing import Any

from _common import machine, pyplot, write_result

HERE = Path(__file__).resolve().parent

CASES = {
    "SAFairKMeans.fit": "daskfair.SAFairKMeans(n_clusters=5, random_state=0).fit("
                        "X, sensitive_features=s)",
    "pareto_front": "daskfair.pareto_front(X, sensitive_features=s, n_clusters=5, n_init=4, "
                    "max_iter=50, random_state=0)",
    "VFairKMeans.fit": "daskfair.VFairKMeans(n_clusters=5, random_state=0).fit("
                       "X, sensitive_features=s)",
    "FairClusteringEnsemble.fit": "daskfair.FairClusteringEnsemble(4, random_state=0).fit("
                                  "base, sensitive_features=s)",
    "FairKernelClassifier.fit": "daskfair.FairKernelClassifier(n_landmarks=200, "
                                "random_state=0).fit(X, y, sensitive_features=s)",
    "FairKernelClassifierCV.fit": "daskfair.FairKernelClassifierCV(n_landmarks=200, cv=3, "
                                  "random_state=0).fit(X, y, sensitive_features=s)",
}

# one case in a new process: imports, the first call with numba's compile events, the second
CHILD = textwrap.dedent("""
    import json, sys, time
    t0 = time.perf_counter()
    import numpy as np, numba, sklearn, dask.array, scipy.stats  # noqa: F401 - timed apart
    from numba.core import event
    import daskfair
    t1 = time.perf_counter()
    X, s, _ = (np.asarray(a) for a in daskfair.make_fair_blobs(5000, n_clusters=5,
                                                                random_state=0))
    y = (X[:, 0] > np.median(X[:, 0])).astype(int)
    base = np.random.default_rng(0).integers(0, 4, (5000, 10))
    call = compile(sys.argv[1], "case", "eval")
    with event.install_recorder("numba:compile") as rec:
        t2 = time.perf_counter(); eval(call); t3 = time.perf_counter()
    t4 = time.perf_counter(); eval(call); t5 = time.perf_counter()
    starts, compiled = {}, {}
    for ts, ev in rec.buffer:
        d = ev.data["dispatcher"]
        key = f"{d.py_func.__module__}.{d.py_func.__qualname__}{ev.data.get('args')}"
        if ev.is_start:
            starts.setdefault(key, ts)
        elif key.startswith("daskfair"):
            compiled[key] = round(ts - starts.get(key, ts), 3)
    print(json.dumps({"imports": t1 - t0, "first": t3 - t2, "warm": t5 - t4,
                      "compiled": compiled}))
""")


def _copy(checkout: Path, to: Path) -> Path:
    """A checkout of ``checkout``'s package at ``to`` (no compiled code next to the source)."""
    shutil.copytree(checkout / "daskfair", to / "daskfair",
                    ignore=shutil.ignore_patterns("__pycache__"))
    return to


def _env(checkout: Path, cache_home: Path) -> dict[str, str]:
    # the user's cache folders under cache_home; numba's own cache setting left out; the data
    # sets this checkout finds (a copy elsewhere would not find ../shared/data)
    from daskfair.datasets import data_dir

    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    return {**env, "XDG_CACHE_HOME": str(cache_home), "PYTHONPATH": str(checkout),
            "DASKFAIR_DATA": str(data_dir())}


def _child(checkout: Path, call: str, cache_home: Path) -> dict[str, Any]:
    t = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", CHILD, call], env=_env(checkout, cache_home),
                          capture_output=True, text=True, timeout=900,
                          cwd=tempfile.gettempdir())
    if done.returncode != 0:
        raise RuntimeError(f"{call} failed in {checkout}:\n{done.stderr[-3000:]}")
    out = json.loads(done.stdout.strip().splitlines()[-1])
    out["process"] = time.perf_counter() - t
    return out


def _states(checkout: Path, call: str) -> dict[str, Any]:
    """The call with an empty cache, filled, and from a second checkout on the same cache."""
    with tempfile.TemporaryDirectory(prefix="cold-start-") as tmp:
        home, a, b = (Path(tmp) / x for x in ("cache", "a", "b"))
        _copy(checkout, a)
        _copy(checkout, b)
        return {"empty": _child(a, call, home), "filled": _child(a, call, home),
                "new_checkout": _child(b, call, home)}


def measure(checkout: Path, repeats: int) -> dict[str, Any]:
    """Every case in each cache state, ``repeats`` times (the run with the best empty cache)."""
    rows = {}
    for name, call in CASES.items():
        runs = [_states(checkout, call) for _ in range(repeats)]
        best = min(runs, key=lambda r: r["empty"]["first"])
        e, f, c = best["empty"], best["filled"], best["new_checkout"]
        rows[name] = {
            "empty_first": e["first"], "filled_first": f["first"],
            "new_checkout_first": c["first"], "warm": f["warm"],
            "empty_over_warm": e["first"] - f["warm"], "filled_over_warm": f["first"] - f["warm"],
            "new_checkout_over_warm": c["first"] - f["warm"],
            "imports_empty": e["imports"], "imports_filled": f["imports"],
            "n_compiled": len(e["compiled"]), "n_compiled_new_checkout": len(c["compiled"]),
            "compiled": dict(sorted(e["compiled"].items(), key=lambda kv: -kv[1])[:12]),
            "goal_empty": e["first"] - f["warm"] <= 2.0,
            "goal_filled": f["first"] - f["warm"] <= 0.3, "runs": runs}
        print(f"  {name:<28} empty {e['first']:6.2f} s  filled {f['first']:5.2f} s  "
              f"new checkout {c['first']:5.2f} s  warm {f['warm']:5.2f} s  "
              f"imports {f['imports']:4.2f} s  {len(e['compiled'])} compiled", flush=True)
    return rows


def demo(checkout: Path) -> dict[str, Any]:
    """``daskfair demo`` from a new process: empty cache, then filled."""
    out = {}
    with tempfile.TemporaryDirectory(prefix="demo-") as work:
        home, copy = Path(work) / "cache", _copy(checkout, Path(work) / "a")
        for state in ("empty", "filled"):
            t = time.perf_counter()
            done = subprocess.run([sys.executable, "-m", "daskfair.cli", "demo", "--store",
                                   str(Path(work) / "demo.zarr"), "--no-progress"],
                                  env=_env(copy, home), capture_output=True, text=True,
                                  timeout=1800, cwd=work)
            out[state] = time.perf_counter() - t
            if done.returncode != 0:
                raise RuntimeError(done.stderr[-3000:])
            print(f"  daskfair demo, {state} cache: {out[state]:.1f} s", flush=True)
    return out


# a fresh 2-worker LocalCluster: the first and the second run of one job on it (the client's
# third-party imports before, as in CHILD; the workers' imports are part of the first run)
CLUSTER_CHILD = textwrap.dedent("""
    import json, sys, time
    import dask.array as da, distributed, numpy as np, sklearn.base, scipy.stats  # noqa: F401
    import daskfair
    from daskfair.datasets import make_fair_blobs

    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, memory_limit="10GB",
                                  dashboard_address=None) as cluster, \\
            distributed.Client(cluster) as client:
        if sys.argv[1] == "fce":
            # 10**7 rows, 20 base clusterings: the truth with 20 % of labels replaced
            n, m, c = 10**7, 20, 10
            _, s, truth = make_fair_blobs(n, 10, c, 2, chunks=250_000, random_state=0)
            rng = da.random.default_rng(0)
            noise = rng.integers(0, c, (n, m), chunks=(250_000, m))
            keep = rng.random((n, m), chunks=(250_000, m)) < 0.8
            base = da.where(keep, truth[:, None], noise).astype(np.int32)
            base, s = client.persist([base, s])
            distributed.wait([base, s])
            job = lambda: daskfair.FairClusteringEnsemble(c, random_state=0).fit(
                base, sensitive_features=s)
        else:
            X, s, _ = (np.asarray(a) for a in make_fair_blobs(10**6, 5, 10, 2,
                                                               random_state=0))
            job = lambda: daskfair.pareto_front(X, sensitive_features=s, n_clusters=10,
                                                n_init=8, max_iter=30, random_state=0)
        seconds = []
        for _ in range(2):
            t = time.perf_counter(); job(); seconds.append(time.perf_counter() - t)
    print(json.dumps({"first": seconds[0], "second": seconds[1]}))
""")


def cluster(checkout: Path) -> dict[str, Any]:
    """The first and second FCE consensus and SAfairKM front on a fresh LocalCluster."""
    out: dict[str, Any] = {}
    for job in ("fce", "front"):
        with tempfile.TemporaryDirectory(prefix="cold-cluster-") as tmp:
            home, copy = Path(tmp) / "cache", _copy(checkout, Path(tmp) / "a")
            for state in ("empty", "filled"):
                done = subprocess.run([sys.executable, "-c", CLUSTER_CHILD, job],
                                      env=_env(copy, home), capture_output=True, text=True,
                                      timeout=1800, cwd=tmp)
                if done.returncode != 0:
                    raise RuntimeError(done.stderr[-3000:])
                r = json.loads(done.stdout.strip().splitlines()[-1])
                r["ratio"] = r["first"] / r["second"]
                out[f"{job}_{state}"] = r
                print(f"  fresh LocalCluster, {job}, {state} cache: first {r['first']:.2f} s, "
                      f"second {r['second']:.2f} s ({r['ratio']:.2f}x)", flush=True)
    return out


def plot(results: dict[str, Any]) -> None:
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(9, 4))
    names = list(CASES)
    versions = [v for v in ("before", "after") if v in results["versions"]]
    width = 0.8 / (3 * len(versions))
    for j, version in enumerate(versions):
        rows = results["versions"][version]
        for k, state in enumerate(("empty_first", "filled_first", "new_checkout_first")):
            x = [i + (3 * j + k) * width for i in range(len(names))]
            ax.bar(x, [rows[n][state] for n in names], width,
                   label=f"{version}: {state.removesuffix('_first').replace('_', ' ')}")
    ax.set_xticks([i + 0.4 - width / 2 for i in range(len(names))], names, rotation=20,
                  ha="right", fontsize=8)
    ax.set_ylabel("first call, s (new process)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(HERE / "results" / "cold_start.png", dpi=120)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--baseline-checkout", type=Path,
                    help="a checkout of daskfair before issue 36 (git worktree add DIR c081a65)")
    ap.add_argument("--demo", action="store_true", help="also time daskfair demo")
    ap.add_argument("--cluster", action="store_true",
                    help="also time the first and second run on a fresh LocalCluster")
    ap.add_argument("--repeats", type=int, default=1)
    args = ap.parse_args()
    results: dict[str, Any] = {"machine": machine(), "rows": 5000, "cases": CASES,
                               "versions": {}}
    t0 = time.perf_counter()
    checkouts = {"after": HERE.parent}
    if args.baseline_checkout:
        checkouts = {"before": args.baseline_checkout.resolve(), **checkouts}
    for version, checkout in checkouts.items():
        print(f"{version} ({checkout}):", flush=True)
        results["versions"][version] = measure(checkout, args.repeats)
        if args.demo:
            results.setdefault("demo", {})[version] = demo(checkout)
        if args.cluster:
            results.setdefault("cluster", {})[version] = cluster(checkout)
    results["wall_seconds"] = time.perf_counter() - t0
    path = write_result("cold_start", results)
    plot(results)
    print(json.dumps({k: v for k, v in results.items() if k != "versions"}, indent=1))
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
