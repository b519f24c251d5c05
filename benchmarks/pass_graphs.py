"""What optimising a pass's arrays together, without task fusion, costs (issue 47:
``row_blocks`` in ``daskfair/_blocks.py``; docs/findings.md F4.6), against the code before.

``FairKernelClassifierCV`` (m = 500 landmarks, 5 folds, the default grid) on 10⁶ rows of
``make_fair_regression`` (20 features, two groups, the label binarised) streamed from a zarr
array in blocks of 25,000 rows, on a 2-worker LocalCluster started in each child. The
baseline is ``git archive BASE daskfair`` (default: the last commit before the change);
each child runs the fit twice and the second is compared (the first also compiles and loads
kernels); ``--repeats`` children each, alternating base, new, base, new, ...; medians and
their ratio new ÷ base.

    python benchmarks/pass_graphs.py [--base 567af69] [--rows 1000000] [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from _common import ROOT, baseline_checkout, write_result

CHILD = r"""
import json, sys, time
sys.path.insert(0, sys.argv[1])
import dask.array as da, distributed, numpy as np
from daskfair.fkr import FairKernelClassifierCV
if __name__ == "__main__":
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None, memory_limit="6GB") as cluster, \
            distributed.Client(cluster):
        X = da.from_zarr(sys.argv[2] + "/X")
        y = (da.from_zarr(sys.argv[2] + "/y") > 0.5).astype(np.int64)
        s = da.from_zarr(sys.argv[2] + "/s")
        times = []
        for _ in range(2):
            t0 = time.perf_counter()
            FairKernelClassifierCV(n_landmarks=500, random_state=0).fit(
                X, y, sensitive_features=s)
            times.append(time.perf_counter() - t0)
    print(json.dumps(times))
"""


def _data(folder: Path, rows: int) -> None:
    import zarr

    from daskfair.datasets import make_fair_regression

    X, y, s = make_fair_regression(rows, 20, random_state=0, chunks=25_000)
    group = zarr.open_group(str(folder), mode="w")
    for name, a in (("X", X), ("y", y), ("s", s)):
        a = a.rechunk({0: 25_000})
        out = group.create_array(name, shape=a.shape, dtype=a.dtype,
                                 chunks=(25_000, *a.shape[1:]))
        a.store(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", default="567af69")
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        (tmp / "base").mkdir()
        base = baseline_checkout(args.base, tmp / "base")
        _data(tmp / "data.zarr", args.rows)
        packages = {"base": base, "new": ROOT}
        times: dict[str, list[float]] = {k: [] for k in packages}
        first: dict[str, list[float]] = {k: [] for k in packages}
        for _ in range(args.repeats):
            for key, package in packages.items():
                out = subprocess.run([sys.executable, "-c", CHILD, str(package),
                                      str(tmp / "data.zarr")], capture_output=True,
                                     text=True, check=True)
                a, b = json.loads(out.stdout.strip().splitlines()[-1])
                first[key].append(a)
                times[key].append(b)
                print(json.dumps({key: [a, b]}), flush=True)
    med = {k: statistics.median(v) for k, v in times.items()}
    write_result("pass_graphs", {
        "base": args.base, "rows": args.rows, "repeats": args.repeats,
        "base_seconds": med["base"], "new_seconds": med["new"],
        "ratio": med["new"] / med["base"], "all": times, "first_calls": first})


if __name__ == "__main__":
    main()
