"""Seeds by task or block index, never by worker or chunking (docs/design.md#determinism)."""

from __future__ import annotations

from numbers import Integral
from typing import Any

import numpy as np

__all__ = ["GEN_BLOCK", "as_seed_sequence", "child_rng", "fold_of", "spawn_seeds"]

GEN_BLOCK = 65_536  # rows per generation block of synthetic data, whatever the chunks


def as_seed_sequence(random_state: Any) -> np.random.SeedSequence:
    """None (fresh entropy), an int, a RandomState, Generator or SeedSequence as SeedSequence."""
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
        # one draw, as scikit-learn: a shared instance gives each consumer its own stream
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


def fold_of(rows: np.ndarray, n_folds: int, seed: int) -> np.ndarray:
    """Fold of each global row index: splitmix64(seed, row) mod ``n_folds``."""
    if n_folds == 1:
        return np.zeros(len(rows), dtype=np.int64)
    z = rows.astype(np.uint64) + np.uint64((int(seed) * 0x9E3779B97F4A7C15) % 2**64)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    z ^= z >> np.uint64(31)
    return (z % np.uint64(n_folds)).astype(np.int64)
