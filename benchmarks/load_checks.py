"""What the checks of a saved model cost: ``daskfair.load`` of a stored FKR-CV pipeline
against reading the same store with nothing checked, in the same process.

The model is the one ``predict_at_scale.py`` loads: ``daskfair fkr --input`` on
``--train-rows`` rows of the Census-KDD-like Parquet table of ``tables_at_scale.py``
(``--landmarks`` 300, ``--cv`` 2), a Pipeline(TableEncoder, ColumnScaler,
FairKernelClassifierCV). Timed, best of ``--repeats`` each, in one process:

* ``load``: ``daskfair.load(store)``: the store walked (plain files only), every file's digest
  against the manifest, the tree decoded within its limits, every part checked against its
  schema, every array's metadata and chunk files checked, the arrays read and their values
  checked, the objects built and their parameters checked (goal: under 1 s);
* ``manifest``: ``open_run(store, verify="contents")`` alone (the walk and the digests);
* ``floor``: the root ``zarr.json`` parsed and every array of the model read with zarr, no
  check of any kind: what any reader of the same store pays.

    python benchmarks/load_checks.py [--train-rows 200000] [--landmarks 300] [--cv 2]
        [--repeats 7] [--data DIR]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import distributed
import zarr
from tables_at_scale import make_table, run_cli

import daskfair
from _common import write_result
from daskfair.store import open_run

NAME = "load_checks"


def best(fn, repeats: int) -> tuple[float, list[float]]:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times), times


def floor(store: Path) -> int:
    """The tree and every array of the model, read with nothing checked: the bytes read."""
    json.loads((store / "zarr.json").read_text())
    group = zarr.open_group(str(store), mode="r")
    return sum(a[...].nbytes for _, a in group["model"].arrays())


def model_arrays(store: Path) -> tuple[int, int]:
    """How many arrays the model holds, and their bytes."""
    group = zarr.open_group(str(store), mode="r")
    arrays = [a for _, a in group["model"].members(max_depth=None) if isinstance(a, zarr.Array)]
    return len(arrays), sum(a.nbytes for a in arrays)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--train-rows", type=int, default=200_000)
    ap.add_argument("--landmarks", type=int, default=300)
    ap.add_argument("--cv", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--data", type=Path, default=Path(tempfile.gettempdir()) / "daskfair-bench")
    args = ap.parse_args()
    table = make_table(args.train_rows, args.data)
    store = args.data / f"load_checks_{args.train_rows}_{args.landmarks}.zarr"
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        sampler = distributed.diagnostics.MemorySampler()
        flags = ["fkr", "--input", str(table), "--label", "income", "--sensitive", "sex",
                 "--n-landmarks", str(args.landmarks), "--cv", str(args.cv), "--store",
                 str(store), "--scheduler", cluster.scheduler_address, "--no-progress",
                 "--overwrite"]
        train = run_cli(flags, client, sampler, "train")
    model = daskfair.load(store)  # a first load: imports and compiled code out of the timing
    n_arrays, nbytes = model_arrays(store)
    load_s, load_all = best(lambda: daskfair.load(store), args.repeats)
    manifest_s, _ = best(lambda: open_run(store, verify="contents"), args.repeats)
    floor_s, floor_all = best(lambda: floor(store), args.repeats)
    write_result(NAME, {
        "train": {"rows": args.train_rows, "landmarks": args.landmarks, "cv": args.cv,
                  "seconds": train["seconds"]},
        "model": {"steps": [type(s).__name__ for _, s in model.steps],
                  "arrays": n_arrays, "array_bytes": nbytes,
                  "root_metadata_bytes": (store / "zarr.json").stat().st_size,
                  "store_files": sum(1 for p in store.rglob("*") if p.is_file())},
        "load": {"seconds_best": load_s, "seconds_all": load_all, "goal_seconds": 1.0,
                 "goal_met": load_s < 1.0},
        "manifest_seconds_best": manifest_s,
        "floor": {"seconds_best": floor_s, "seconds_all": floor_all},
        "load_over_floor": load_s / floor_s,
    })


if __name__ == "__main__":
    main()
