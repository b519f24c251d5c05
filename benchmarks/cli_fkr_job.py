"""The ``daskfair fkr`` command before and after issue 47 (the job composed of the public
estimators, baselines only on request), timed in the same run.

The baseline is ``git archive BASE daskfair`` unpacked into a temporary folder (default: the
last commit before issue 47's job). Each command runs in a fresh child process with the one
package or the other first on ``sys.path``, ``--repeats`` times in the order base, new,
base, new, ... (after one untimed warm-up each, which compiles and caches their kernels);
the child's wall time of ``daskfair.cli.main`` is compared (median, and the ratio
new ÷ base). Both start the same LocalCluster (``--workers 2``).

* ``adult``: ``daskfair fkr --dataset adult`` with its defaults (the named data set in
  memory; the old job also fitted FKRR, kernel ridge and the constant);
* ``adult_csv``: ``daskfair fkr --input train.csv --label income --sensitive sex``: UCI's
  ``adult.data`` as a CSV table with text columns, split by the row hash;
* ``adult_test``: the new ``--test test.csv`` (``adult.test``) — this checkout only.

    python benchmarks/cli_fkr_job.py [--base 2344151] [--repeats 3] [--data-dir PATH]
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
import json, sys, time
sys.path.insert(0, sys.argv[1])
from daskfair.cli import main
t0 = time.perf_counter()
code = main(json.loads(sys.argv[2]))
print(json.dumps({"seconds": time.perf_counter() - t0, "code": code}))
"""

NAMES = ["age", "workclass", "fnlwgt", "education", "education_num", "marital_status",
         "occupation", "relationship", "race", "sex", "capital_gain", "capital_loss",
         "hours_per_week", "native_country", "income"]


def _tables(data_dir: Path, folder: Path) -> tuple[Path, Path]:
    import pandas as pd

    read = {"header": None, "names": NAMES, "skipinitialspace": True}
    train = pd.read_csv(data_dir / "adult" / "adult.data", **read)
    test = pd.read_csv(data_dir / "adult" / "adult.test", skiprows=1, **read)
    test["income"] = test["income"].str.rstrip(".")
    paths = folder / "train.csv", folder / "test.csv"
    train.to_csv(paths[0], index=False)
    test.to_csv(paths[1], index=False)
    return paths


def _run(package: Path, argv: list[str], store: Path) -> float:
    args = [*argv, "--workers", "2", "--no-progress", "--store", str(store), "--overwrite"]
    out = subprocess.run([sys.executable, "-c", CHILD, str(package), json.dumps(args)],
                         capture_output=True, text=True, check=True, cwd=store.parent)
    result = json.loads(out.stdout.strip().splitlines()[-1])
    if result["code"] != 0:
        raise RuntimeError(f"{argv} failed: {out.stderr[-2000:]}")
    return result["seconds"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", default="2344151")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--data-dir", default=os.environ.get("DASKFAIR_DATA",
                                                             str(ROOT.parent / "shared/data")))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        (tmp / "base").mkdir()
        base = baseline_checkout(args.base, tmp / "base")
        train, test = _tables(Path(args.data_dir), tmp)
        common = ["--data-dir", args.data_dir]
        workloads = {
            "adult": (["fkr", "--dataset", "adult", *common], True),
            "adult_csv": (["fkr", "--input", str(train), "--label", "income", "--sensitive",
                           "sex"], True),
            "adult_test": (["fkr", "--input", str(train), "--test", str(test), "--label",
                            "income", "--sensitive", "sex"], False),
        }
        results = {}
        for name, (argv, both) in workloads.items():
            packages = {"base": base, "new": ROOT} if both else {"new": ROOT}
            times: dict[str, list[float]] = {k: [] for k in packages}
            for key, package in packages.items():  # warm-up: compile and cache
                _run(package, argv, tmp / f"{name}-{key}.zarr")
            for _ in range(args.repeats):
                for key, package in packages.items():
                    times[key].append(_run(package, argv, tmp / f"{name}-{key}.zarr"))
            row = {f"{k}_seconds": statistics.median(v) for k, v in times.items()}
            row.update({f"{k}_all": v for k, v in times.items()})
            if both:
                row["ratio"] = row["new_seconds"] / row["base_seconds"]
            results[name] = row
            print(json.dumps({name: row}), flush=True)
    out = {"base": args.base, "repeats": args.repeats, "results": results}
    write_result("cli_fkr_job", out)


if __name__ == "__main__":
    main()
