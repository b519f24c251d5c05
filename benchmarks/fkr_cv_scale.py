"""The whole model-selection path at 10⁶ and 10⁷ rows: time and peak memory.

``make_fair_regression`` (20 features, two groups) with the label binarised at 0.5. On a
2-worker LocalCluster, in one process and on the same rows:

* ``FairKernelRegressor`` — one plain fit (one pass), the baseline of the ratios;
* ``FairKernelClassifier`` — one plain classifier (two passes: moments, calibration);
* ``FairKernelClassifierCV`` — 5 folds, the default grid, width and rank (``gammas="auto"``:
  the widths compared on a sample; ``n_landmarks="auto"``: the rank from the landmarks'
  spectrum; then every candidate of the chosen width, every threshold; two passes); with
  ``--before`` also ``gammas=None`` and m landmarks (the default before issue 49);
* fairlearn's ``ExponentiatedGradient(LogisticRegression, DemographicParity(ε))`` at each
  ``--eg-bounds`` ε on the same rows as numpy arrays, in a subprocess each (its peak memory
  measured alone), with a time limit.

10⁶ rows are persisted on the workers; 10⁷ rows are written to zarr and streamed (never held
in memory), with m = 500 landmarks as in ``fkr_scale.py`` (the plain fits and ``--before``).

    python benchmarks/fkr_cv_scale.py [--sizes 1000000 10000000] [--eg-timeout 1800]
        [--eg-bounds 0.005 0.01 0.02] [--before] [--no-plain] [--merge]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import dask.array as da
import distributed
import numpy as np
from distributed.diagnostics import MemorySampler

from _common import RESULTS, pyplot, write_result
from daskfair.datasets import make_fair_regression
from daskfair.fkr import FairKernelClassifier, FairKernelClassifierCV, FairKernelRegressor

CHUNK = 25_000

EG_SCRIPT = """
import json, resource, sys, time, warnings
import numpy as np
from fairlearn.reductions import DemographicParity, ExponentiatedGradient
from sklearn.linear_model import LogisticRegression
X = np.load(sys.argv[1], mmap_mode="r"); y = np.load(sys.argv[2]); s = np.load(sys.argv[3])
bound = float(sys.argv[4])
X = np.asarray(X)
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6
t0 = time.perf_counter()
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    eg = ExponentiatedGradient(LogisticRegression(max_iter=500),
                               DemographicParity(difference_bound=bound))
    eg.fit(X, y, sensitive_features=s)
secs = time.perf_counter() - t0
print(json.dumps({"seconds": secs, "oracle_calls": len(eg.predictors_),
                  "peak_rss_gb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6,
                  "data_rss_gb": before}))
"""


def data(n: int, workdir: Path, client: distributed.Client) -> tuple:
    X, y, s = make_fair_regression(n, 20, chunks=CHUNK, random_state=0)
    y = (y > 0.5).astype(np.int64)
    if n >= 5_000_000:
        paths = {k: str(workdir / f"{k}.zarr") for k in ("X", "y", "s")}
        for k, arr in zip(("X", "y", "s"), (X, y, s), strict=True):
            da.to_zarr(arr, paths[k], overwrite=True)
        return tuple(da.from_zarr(paths[k]) for k in ("X", "y", "s")), True
    X, y, s = client.persist([X, y, s])
    distributed.wait([X, y, s])
    return (X, y, s), False


def timed_fit(make, X, y, s) -> tuple[object, dict]:
    ms = MemorySampler()
    est = make()
    with ms.sample("fit", interval=0.2):
        t0 = time.perf_counter()
        est.fit(X, y, sensitive_features=s)
        secs = time.perf_counter() - t0
    return est, {"seconds": secs, "peak_cluster_memory_gb": float(
        ms.to_pandas()["fit"].max()) / 1e9}


def run_eg(X, y, s, workdir: Path, timeout: float, bounds: list[float]) -> dict:
    """EG(LR) at each bound, in a subprocess each; the first bound's result, every bound's
    seconds and their sum."""
    files = []
    for name, arr in (("X", X), ("y", y), ("s", s)):
        path = workdir / f"eg_{name}.npy"
        np.save(path, np.asarray(arr.compute() if hasattr(arr, "compute") else arr))
        files.append(str(path))
    runs = []
    try:
        for bound in bounds:
            try:
                out = subprocess.run([sys.executable, "-c", EG_SCRIPT, *files, str(bound)],
                                     capture_output=True, text=True, timeout=timeout,
                                     check=True)
                runs.append({"bound": bound,
                             **json.loads(out.stdout.strip().splitlines()[-1])})
            except subprocess.TimeoutExpired:
                runs.append({"bound": bound, "seconds": None, "timed_out_after": timeout})
    finally:
        for f in files:
            Path(f).unlink(missing_ok=True)
    total = (None if any(r["seconds"] is None for r in runs)
             else sum(r["seconds"] for r in runs))
    return {**runs[0], "bounds": runs, "seconds_all_bounds": total}


def _cv_row(cv: FairKernelClassifierCV, timing: dict) -> dict:
    return {**timing, "candidates": cv.n_candidates_, "thresholds": cv.thresholds_.shape[1],
            "folds": cv.cv, "validation_sd": cv.best_disparity_,
            "validation_error": 1 - cv.best_score_,
            "gamma": cv.feature_map_.params["gamma"],
            "n_landmarks": len(cv.feature_map_.landmarks)}


def one_size(client, n: int, workdir: Path, args: argparse.Namespace) -> dict:
    (X, y, s), streamed = data(n, workdir, client)
    m = 1000 if n < 5_000_000 else 500
    kw = {"n_landmarks": m, "random_state": 0}
    row = {"n": n, "m": m, "streamed_from_zarr": streamed}
    if args.before:  # the default before issue 49: one width, 1/n_features
        old, oldr = timed_fit(lambda: FairKernelClassifierCV(
            disparity_bound=0.01, cv=5, gammas=None, **kw), X, y, s)
        row["cv_before"] = _cv_row(old, oldr)
    # the defaults: the width and the rank chosen from the data
    cv, cvr = timed_fit(lambda: FairKernelClassifierCV(disparity_bound=0.01, cv=5,
                                                       random_state=0), X, y, s)
    row["cv"] = _cv_row(cv, cvr)
    if args.before:
        row["ratio_cv_to_before"] = cvr["seconds"] / oldr["seconds"]
    if args.plain:
        _, plain = timed_fit(lambda: FairKernelRegressor(n_fair_features=50, **kw), X, y, s)
        _, clf = timed_fit(lambda: FairKernelClassifier(n_fair_features=50, **kw), X, y, s)
        row.update(plain_regressor=plain, plain_classifier=clf,
                   ratio_cv_to_plain_regressor=cvr["seconds"] / plain["seconds"],
                   ratio_cv_to_plain_classifier=cvr["seconds"] / clf["seconds"])
    if args.eg_timeout > 0:
        row["eg"] = run_eg(X, y, s, workdir, args.eg_timeout, args.eg_bounds)
    print(row, flush=True)
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[1_000_000, 10_000_000])
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--memory-limit", default="6GB", help="per worker")
    ap.add_argument("--eg-timeout", type=float, default=1800,
                    help="seconds fairlearn may take per size (0: skip it)")
    ap.add_argument("--eg-bounds", type=float, nargs="+", default=[0.01],
                    help="EG(LR)'s bounds, each its own fit (default .01)")
    ap.add_argument("--before", action="store_true",
                    help="also FairKernelClassifierCV(gammas=None), the default before issue "
                         "49 (one width, 1/n_features), on the same rows")
    ap.add_argument("--no-plain", dest="plain", action="store_false",
                    help="skip the plain regressor and classifier")
    ap.add_argument("--merge", action="store_true",
                    help="keep the stored runs of the sizes not measured now")
    args = ap.parse_args()
    rows = []
    with (tempfile.TemporaryDirectory(dir=RESULTS.parent) as tmp,
          distributed.LocalCluster(n_workers=args.workers, threads_per_worker=1,
                                   memory_limit=args.memory_limit,
                                   dashboard_address=None) as cluster,
          distributed.Client(cluster) as client):
        for n in args.sizes:
            rows.append(one_size(client, n, Path(tmp), args))
            client.cancel(list(client.futures))
    if args.merge and (RESULTS / "fkr_cv_scale.json").exists():
        kept = json.loads((RESULTS / "fkr_cv_scale.json").read_text())["runs"]
        rows = sorted([r for r in kept if r["n"] not in args.sizes] + rows,
                      key=lambda r: r["n"])
    write_result("fkr_cv_scale", {"workers": args.workers, "memory_limit": args.memory_limit,
                                  "runs": rows})
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(5, 4))
    for key, label in (("plain_regressor", "one fit (1 pass)"),
                       ("plain_classifier", "classifier (2 passes)"),
                       ("cv_before", "CV, gammas=None (before issue 49)"),
                       ("cv", "CV: every candidate (2 passes)")):
        pts = [(r["n"], r[key]["seconds"]) for r in rows if key in r]
        if pts:
            ax.loglog(*zip(*pts, strict=True), "o-", label=label)
    eg = [(r["n"], r["eg"]["seconds"]) for r in rows if r.get("eg", {}).get("seconds")]
    if eg:
        ax.loglog(*zip(*eg, strict=True), "s--", label="fairlearn EG(LR)")
    ax.set_xlabel("rows")
    ax.set_ylabel("seconds")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(RESULTS / "fkr_cv_scale.png", dpi=120)


if __name__ == "__main__":
    main()
