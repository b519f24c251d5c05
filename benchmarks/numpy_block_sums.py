"""Peak memory of a fit on in-memory (numpy) input: block sums streamed against held.

A numpy input is cut into the same canonical row blocks as a dask array, and the blocks'
statistics are summed in the same pairwise tree, so both give the same bits. This measures
what the numpy path holds at once: ``streamed`` (today: the tree combined as the blocks
arrive, at most log2(#blocks) + 1 partial statistics) against ``held`` (every block's
statistics first, then the tree, as before) — FairKernelRegressor on 10⁶ × 20 Gaussian rows
with a group shift and m = 1,000 landmarks (each block's statistics hold an m × m Gram matrix,
8 MB), each variant in its own process, peak RSS from the kernel.

    python benchmarks/numpy_block_sums.py [--rows 1000000]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

from _common import write_result

CHILD = """
import json, resource, sys, time
import numpy as np
import dask
import daskfair._blocks as blocks
from daskfair.fkr import FairKernelRegressor

if sys.argv[1] == "held":
    def held(parts, combine):
        parts = list(parts)  # every block's statistics at once
        while len(parts) > 1:
            nxt = [combine(parts[i], parts[i + 1]) for i in range(0, len(parts) - 1, 2)]
            parts = nxt + ([parts[-1]] if len(parts) % 2 else [])
        return parts[0]
    blocks.streamed_tree = held
n = int(sys.argv[2])
rng = np.random.default_rng(0)  # plain numpy data: its own peak stays below the fit's
s = rng.integers(0, 2, n)
X = rng.normal(size=(n, 20))
X += 0.5 * s[:, None]  # in place: no second copy of X
y = X[:, 0] - X[:, 1] ** 2 + s + rng.normal(size=n)
data_gib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
t0 = time.perf_counter()
with dask.config.set(scheduler="synchronous"):
    est = FairKernelRegressor(n_fair_features=50, n_landmarks=1000, random_state=0).fit(
        X, y, sensitive_features=s)
print(json.dumps({"variant": sys.argv[1], "seconds": time.perf_counter() - t0,
                  "peak_rss_before_fit_gib": data_gib,
                  "peak_rss_gib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20,
                  "dual_coef_sum": float(np.sum(est.dual_coef_))}))
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    args = ap.parse_args()
    runs = {}
    for variant in ("held", "streamed"):
        out = subprocess.run([sys.executable, "-c", CHILD, variant, str(args.rows)],
                             check=True, capture_output=True, text=True).stdout
        runs[variant] = json.loads(out.strip().splitlines()[-1])
        print(json.dumps(runs[variant]), flush=True)
    same = runs["held"]["dual_coef_sum"] == runs["streamed"]["dual_coef_sum"]
    write_result("numpy_block_sums", {"rows": args.rows, "features": 20, "landmarks": 1000,
                                      "runs": runs, "same_model": same})


if __name__ == "__main__":
    main()
