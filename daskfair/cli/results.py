"""Small pieces every job uses to hand its results over: numpy copies and the encoder."""

from __future__ import annotations

from typing import Any

import numpy as np

from .._validation import is_dask
from ..store import Run
from .inputs import JobData

__all__ = ["numpy_of", "preprocessing", "store_encoder"]


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
