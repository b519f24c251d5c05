"""Run stores: a SAfairKM front checkpointed, interrupted and resumed
==================================================================

``pareto_front(store=PATH)`` writes a zarr run store and checkpoints every
``checkpoint_every`` iterations. Here the first run is interrupted at iteration 25 (its
callback raises, as Ctrl-C would), the store is refused as a result while it is incomplete,
and ``resume=True`` continues from the last checkpoint to exactly the front of an
uninterrupted run.

Run it from the repository root::

    python examples/store_resume.py
"""

import tempfile
from pathlib import Path

import numpy as np

from daskfair import make_fair_blobs, open_run, pareto_front
from daskfair.store import IncompleteRunError


class Interrupted(Exception):
    pass


def stop_at_25(iteration, cost, balance):
    if iteration == 25:
        raise Interrupted


def main() -> None:
    X, s, _ = make_fair_blobs(1000, n_features=2, n_clusters=3, group_bias=0.8, random_state=0)
    X, s = np.asarray(X), np.asarray(s)
    settings = dict(sensitive_features=s, n_clusters=3, n_init=8, max_iter=60,
                    checkpoint_every=10, random_state=0)
    path = Path(tempfile.mkdtemp()) / "front.zarr"

    try:
        pareto_front(X, store=path, callback=stop_at_25, **settings)
    except Interrupted:
        print("interrupted at iteration 25")
    try:
        open_run(path)
    except IncompleteRunError as e:
        print("open_run refuses it:", e)

    resumed = pareto_front(X, store=path, resume=True, **settings)
    whole = pareto_front(X, **settings)
    print(f"resumed: {len(resumed.cost)} points; uninterrupted: {len(whole.cost)} points; "
          f"identical: {np.array_equal(resumed.cost, whole.cost)}")

    run = open_run(path)
    print(f"stored run: kind {run.kind!r}, status {run.status!r}, "
          f"arrays {run.array_names()}")


if __name__ == "__main__":
    main()
