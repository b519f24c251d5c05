"""What the input checks of issue 46 cost: the audit, the FCE consensus and a SAfairKM front
timed with this checkout's daskfair and with the one before those checks, alternately, in
one run; and FCE's memory for cluster ids of any numbering.

The baseline is ``git archive BASE daskfair`` unpacked into a temporary folder (default: the
last commit before the checks). Each workload runs in a fresh child process with the one
package or the other first on ``sys.path`` (after one untimed warm-up each, which compiles
their kernels), ``--repeats`` times in the order base, new, base, new, ...; each child calls
the workload twice, and the second call is the one compared (the first also loads the
kernels from their cache, a cost per process: reported apart). The medians and their ratio
new ÷ base are reported (goal: within 3 %). This machine's speed drifts by up to
±20 % from one minute to the next; alternating the two keeps the drift out of the ratio.

* ``audit``: ``daskfair.metrics.audit`` of 10⁷ in-memory rows (0/1 labels and decisions, a
  score, ten groups as an Arrow string column: the Arrow check and the text kernel), 200
  bootstrap replicates;
* ``fce``: ``FairClusteringEnsemble(10)`` on 20 noisy labelings of 10⁶ rows (numpy, int32;
  the renumbering of every labeling), two groups;
* ``safairkm``: ``pareto_front`` of 20,000 ``make_fair_blobs`` rows, 5 features, K = 5,
  8 starts, 120 iterations, in process.

Then, with this checkout only, the peak memory (the child's maximum resident set) of
``FairClusteringEnsemble(2)`` on 10⁵ rows whose 8 labelings use the ids {0, 10⁹} and
{0, n − 1}, and the same labelings renumbered 0/1 (goal: under 1.5 GB; the same labels).

    python benchmarks/checks_overhead.py [--base 1c03a85] [--repeats 5]
        [--only audit fce safairkm memory]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from _common import ROOT, baseline_checkout, write_result

CHILD = r"""
import json, resource, sys, time
sys.path.insert(0, sys.argv[1])
import numpy as np
import daskfair

def audit():
    import pandas as pd, pyarrow as pa
    from daskfair.metrics import audit
    n, rng = 10**7, np.random.default_rng(0)
    names = np.array([f"group-{g}" for g in range(10)])
    g = rng.integers(0, 10, n)
    s = pd.Series(pa.array(names[g]), dtype=pd.ArrowDtype(pa.string()))
    y = (rng.random(n) < 0.3 + 0.03 * g).astype(np.int8)
    p = (rng.random(n) < 0.35).astype(np.int8)
    score = rng.random(n)
    t0 = time.perf_counter()
    audit(y, p, sensitive_features=s, y_score=score, n_boot=200, random_state=0)
    return time.perf_counter() - t0

def fce():
    from daskfair import FairClusteringEnsemble
    n, m, c, rng = 10**6, 20, 10, np.random.default_rng(0)
    truth = rng.integers(0, c, n)
    s = (rng.random(n) < 0.3 + 0.04 * truth).astype(np.int8)
    base = np.column_stack([np.where(rng.random(n) < 0.8, truth, rng.integers(0, c, n))
                            for _ in range(m)]).astype(np.int32)
    t0 = time.perf_counter()
    FairClusteringEnsemble(c, max_iter=5, random_state=0).fit(base, sensitive_features=s)
    return time.perf_counter() - t0

def safairkm():
    from daskfair import make_fair_blobs, pareto_front
    X, s, _ = make_fair_blobs(20_000, 5, 5, 2, random_state=0)
    X, s = np.asarray(X), np.asarray(s)
    t0 = time.perf_counter()
    pareto_front(X, sensitive_features=s, n_clusters=5, n_init=8, max_iter=120,
                 random_state=0)
    return time.perf_counter() - t0

def memory(ids):
    from daskfair import FairClusteringEnsemble
    n, rng = 10**5, np.random.default_rng(0)
    truth = rng.integers(0, 2, n)
    s = (rng.random(n) < 0.3 + 0.3 * truth).astype(np.int8)
    flips = [np.where(rng.random(n) < 0.9, truth, 1 - truth) for _ in range(8)]
    high = {"1e9": 10**9, "n-1": n - 1, "01": 1}[ids]
    base = np.column_stack([np.where(f == 1, high, 0) for f in flips]).astype(np.int64)
    t0 = time.perf_counter()
    labels = FairClusteringEnsemble(2, random_state=0).fit(base, sensitive_features=s).labels_
    seconds = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    return {"seconds": seconds, "peak_bytes": peak, "labels": np.asarray(labels).tolist()}

name = sys.argv[2]
if name == "memory":
    out = memory(sys.argv[3])
else:  # the first call loads the compiled kernels from their cache: timed apart
    first = globals()[name]()
    out = {"first_seconds": first, "seconds": globals()[name]()}
print(json.dumps(out))
"""


def _child(package_parent: Path, *args: str) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run([sys.executable, "-c", CHILD, str(package_parent), *args],
                          capture_output=True, text=True, env=env, timeout=3600)
    if done.returncode:
        raise RuntimeError(f"{args} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def timed(workload: str, base: Path, repeats: int) -> dict:
    for where in (base, ROOT):  # warm-up: compiles each package's kernels once
        _child(where, workload)
    seconds: dict[str, list[float]] = {"base": [], "new": []}
    first: dict[str, list[float]] = {"base": [], "new": []}
    for _ in range(repeats):
        for key, where in (("base", base), ("new", ROOT)):
            out = _child(where, workload)
            seconds[key].append(out["seconds"])
            first[key].append(out["first_seconds"])
    med = {k: statistics.median(v) for k, v in seconds.items()}
    med_first = {k: statistics.median(v) for k, v in first.items()}
    return {"median_seconds": med, "ratio_new_over_base": med["new"] / med["base"],
            "seconds": seconds, "first_call_median_seconds": med_first,
            "first_call_ratio": med_first["new"] / med_first["base"]}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--base", default="1c03a85")
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--only", nargs="+", default=["audit", "fce", "safairkm", "memory"])
    args = p.parse_args()
    out: dict = {"base": args.base, "repeats": args.repeats}
    with tempfile.TemporaryDirectory() as tmp:
        base = baseline_checkout(args.base, Path(tmp))
        for workload in ("audit", "fce", "safairkm"):
            if workload in args.only:
                out[workload] = timed(workload, base, args.repeats)
                print(workload, out[workload]["ratio_new_over_base"], file=sys.stderr)
    if "memory" in args.only:
        runs = {ids: _child(ROOT, "memory", ids) for ids in ("01", "1e9", "n-1")}
        out["memory"] = {ids: {"seconds": r["seconds"], "peak_gb": r["peak_bytes"] / 1e9}
                         for ids, r in runs.items()}
        out["memory"]["same_labels"] = all(r["labels"] == runs["01"]["labels"]
                                           for r in runs.values())
    write_result("checks_overhead", out)


if __name__ == "__main__":
    main()
