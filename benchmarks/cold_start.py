"""The first call as a new user meets it: every figure from a new process, in one run.

For each public entry point on 5,000 rows: a new process with an empty numba cache (a new
machine or environment: every block function compiles), then a new process with that cache
filled (every command-line run and every Dask worker), then the same call again in that
process (warm). Imports are timed apart from the call; numba's compile events give the
seconds per function and signature. With ``--baseline-checkout DIR`` (``git worktree add DIR
COMMIT``) the same for that checkout, in the same run. ``--demo`` also times ``daskfair demo``
from a new process with an empty and with a filled cache.

    ../.venv/bin/python cold_start.py [--baseline-checkout DIR] [--demo] [--repeats 1]

Goals (issue 36): empty cache within 2 s of warm; filled cache within 0.3 s of warm.
"""

from __future__ import annotations

import argparse
import json
import os
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


def _child(checkout: Path, call: str, cache: Path) -> dict[str, Any]:
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache), "PYTHONPATH": str(checkout)}
    t = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", CHILD, call], env=env, capture_output=True,
                          text=True, timeout=900, cwd=tempfile.gettempdir())
    if done.returncode != 0:
        raise RuntimeError(f"{call} failed in {checkout}:\n{done.stderr[-3000:]}")
    out = json.loads(done.stdout.strip().splitlines()[-1])
    out["process"] = time.perf_counter() - t
    return out


def measure(checkout: Path, repeats: int) -> dict[str, Any]:
    """Every case from an empty cache, then from the filled cache, ``repeats`` times."""
    rows = {}
    for name, call in CASES.items():
        runs = []
        for _ in range(repeats):
            with tempfile.TemporaryDirectory(prefix="numba-cache-") as cache:
                empty = _child(checkout, call, Path(cache))
                filled = _child(checkout, call, Path(cache))
            runs.append({"empty": empty, "filled": filled})
        best = min(runs, key=lambda r: r["empty"]["first"])
        e, f = best["empty"], best["filled"]
        rows[name] = {
            "empty_first": e["first"], "filled_first": f["first"], "warm": f["warm"],
            "empty_over_warm": e["first"] - f["warm"], "filled_over_warm": f["first"] - f["warm"],
            "imports_empty": e["imports"], "imports_filled": f["imports"],
            "n_compiled": len(e["compiled"]),
            "compiled": dict(sorted(e["compiled"].items(), key=lambda kv: -kv[1])[:12]),
            "goal_empty": e["first"] - f["warm"] <= 2.0,
            "goal_filled": f["first"] - f["warm"] <= 0.3, "runs": runs}
        print(f"  {name:<28} empty {e['first']:6.2f} s  filled {f['first']:5.2f} s  warm "
              f"{f['warm']:5.2f} s  imports {f['imports']:4.2f} s  "
              f"{len(e['compiled'])} compiled", flush=True)
    return rows


def demo(checkout: Path) -> dict[str, Any]:
    """``daskfair demo`` from a new process: empty cache, then filled."""
    out = {}
    with tempfile.TemporaryDirectory(prefix="numba-cache-") as cache, \
            tempfile.TemporaryDirectory(prefix="demo-") as work:
        env = {**os.environ, "NUMBA_CACHE_DIR": cache, "PYTHONPATH": str(checkout)}
        for state in ("empty", "filled"):
            t = time.perf_counter()
            done = subprocess.run([sys.executable, "-m", "daskfair.cli", "demo", "--store",
                                   str(Path(work) / "demo.zarr"), "--no-progress"], env=env,
                                  capture_output=True, text=True, timeout=1800, cwd=work)
            out[state] = time.perf_counter() - t
            if done.returncode != 0:
                raise RuntimeError(done.stderr[-3000:])
            print(f"  daskfair demo, {state} cache: {out[state]:.1f} s", flush=True)
    return out


def plot(results: dict[str, Any]) -> None:
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(9, 4))
    names = list(CASES)
    versions = [v for v in ("before", "after") if v in results["versions"]]
    width = 0.8 / (2 * len(versions))
    for j, version in enumerate(versions):
        rows = results["versions"][version]
        for k, state in enumerate(("empty_first", "filled_first")):
            x = [i + (2 * j + k) * width for i in range(len(names))]
            ax.bar(x, [rows[n][state] for n in names], width,
                   label=f"{version}: {state.split('_')[0]} cache")
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
    results["wall_seconds"] = time.perf_counter() - t0
    path = write_result("cold_start", results)
    plot(results)
    print(json.dumps({k: v for k, v in results.items() if k != "versions"}, indent=1))
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
