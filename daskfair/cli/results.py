"""Small pieces every job uses to hand its results over: numpy copies and the encoder."""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any

import numpy as np

from .._groups import plan_merge
from .._validation import is_dask
from ..store import Run
from .inputs import JobData

__all__ = ["MERGE_WARNING", "merged_sizes", "numpy_of", "preprocessing", "store_encoder"]

#: The estimators' warning when they merge small groups (a job says it in its own words).
MERGE_WARNING = "sensitive_features: .* merged into"


def numpy_of(x: Any) -> np.ndarray | None:
    """``x`` as a numpy array (a dask array computed); None stays None."""
    if x is None:
        return None
    return np.asarray(x.compute() if is_dask(x) else x)


def store_encoder(run: Run, data: JobData | None) -> None:
    """A table's encoding, stored with the run: new rows are encoded as these were."""
    if data is not None and data.encoder is not None:
        run.set_attrs(encoder=data.encoder.to_dict())


def preprocessing(data: JobData, scaler: Any) -> list[tuple[str, Any]]:
    """The pipeline steps that prepare new rows as the job's were: a table's encoder, then
    the scaling (each when there is one)."""
    steps = [] if data.encoder is None else [("encode", data.encoder)]
    return steps + ([] if scaler is None else [("scale", scaler)])


def merged_sizes(sizes: dict[Any, int], params: Mapping[str, Any]) -> tuple[list[int], str]:
    """The rows of each group a job's estimators will use, ``params``' ``min_group_size``
    applied as they apply it (refused here, before the run, as they would refuse it), and
    what was merged, as text."""
    with warnings.catch_warnings():  # said in the text returned
        warnings.simplefilter("ignore", UserWarning)
        small, other = plan_merge(sizes, params.get("min_group_size", 1),
                                  params.get("small_groups", "raise"), name="--sensitive")
    if not small:
        return list(sizes.values()), ""
    kept = [c for g, c in sizes.items() if g not in small]
    listed = ", ".join(f"{g} ({c:,} rows)" for g, c in small.items())
    return [*kept, sum(small.values())], f"; merged into {other!r}: {listed}"
