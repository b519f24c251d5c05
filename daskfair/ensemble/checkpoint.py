"""FCE consensus checkpoints in a zarr run: the whole state after an iteration.

A checkpoint is a group ``checkpoint_<t>`` holding the labels (written block by block by the
workers when they are a dask array) and the small arrays of :class:`ConsensusState`; the
objective history and the iteration count go into the pointer attribute that
:meth:`daskfair.store.Run.commit_checkpoint` switches once the group is complete. Every array
is stored exactly (integers, float64), so a resumed consensus repeats the uninterrupted one bit for
bit.
"""

from __future__ import annotations

from dataclasses import fields
from typing import Any

import dask.array as da
import numpy as np

from .._validation import is_dask
from ..store import Run
from .consensus import ConsensusState

__all__ = ["load_state", "save_state"]

#: ConsensusState fields stored as arrays (labels aside).
_ARRAYS = tuple(f.name for f in fields(ConsensusState)
                if f.name not in {"labels", "objective", "n_iter"})


def save_state(run: Run, state: ConsensusState) -> None:
    """Write ``state`` as the run's new checkpoint (the previous one is deleted after)."""
    name = f"checkpoint_{state.n_iter}"
    run.write_array(f"{name}/labels", state.labels)
    for key in _ARRAYS:
        run.write_array(f"{name}/{key}", getattr(state, key))
    run.commit_checkpoint(name, iteration=state.n_iter, objective=state.objective)


def load_state(run: Run, like: Any) -> ConsensusState | None:
    """The state of the run's last checkpoint, or None when it has none yet.

    The labels come back as a persisted dask array when ``like`` (the base labelings) is a
    dask array, so they do not depend on the checkpoint group, which the next checkpoint
    deletes; otherwise as numpy.
    """
    ckpt = run.checkpoint
    if not ckpt:
        return None
    group = run.group[ckpt["group"]]
    if is_dask(like):
        labels = da.from_zarr(group["labels"]).persist()
    else:
        labels = group["labels"][...]
    arrays = {key: np.asarray(group[key][...]) for key in _ARRAYS}
    return ConsensusState(labels=labels, objective=[float(v) for v in ckpt["objective"]],
                          n_iter=int(ckpt["iteration"]), **arrays)
