"""Seeds that do not depend on chunking or on the number of workers (docs/design.md#determinism).

One :class:`numpy.random.SeedSequence` per run; every task or fixed-size generation block gets
a child identified by its index, never by which worker runs it or how the data is chunked.
"""

from __future__ import annotations

from numbers import Integral
from typing import Any

import numpy as np

__all__ = ["GEN_BLOCK", "as_seed_sequence", "child_rng", "spawn_seeds"]

#: Rows per generation block for synthetic data: rows are drawn in these fixed blocks and
#: sliced to whatever chunking the caller asks for, so values never depend on the chunking.
GEN_BLOCK = 65_536


def as_seed_sequence(random_state: Any) -> np.random.SeedSequence:
    """Turn ``None``, an int, a RandomState, a Generator or a SeedSequence into a SeedSequence.

    ``None`` draws fresh OS entropy (not reproducible, as in scikit-learn).
    """
    if isinstance(random_state, np.random.SeedSequence):
        return random_state
    if random_state is None:
        return np.random.SeedSequence()
    if isinstance(random_state, Integral) and not isinstance(random_state, bool):
        if random_state < 0:
            raise ValueError(f"random_state must be a non-negative integer, got {random_state}.")
        return np.random.SeedSequence(int(random_state))
    if isinstance(random_state, np.random.Generator):
        return np.random.SeedSequence(int(random_state.integers(2**63)))
    if isinstance(random_state, np.random.RandomState):
        # as scikit-learn does with an instance: one draw from it, so a shared instance
        # gives each consumer a different stream
        return np.random.SeedSequence(int(random_state.randint(2**63, dtype=np.int64)))
    raise TypeError(
        "random_state must be None, a non-negative int, a numpy RandomState, SeedSequence or "
        f"Generator; got {type(random_state).__name__}.")


def child_rng(seed: np.random.SeedSequence, *index: int) -> np.random.Generator:
    """Generator for the task or block at ``index`` under ``seed`` (same index, same stream)."""
    child = np.random.SeedSequence(seed.entropy, spawn_key=(*seed.spawn_key, *index))
    return np.random.default_rng(child)


def spawn_seeds(random_state: Any, n: int) -> list[int]:
    """``n`` independent 32-bit integer seeds (scikit-learn's range) for tasks, by index."""
    seed = as_seed_sequence(random_state)
    return [int(child_rng(seed, i).integers(2**32)) for i in range(n)]
