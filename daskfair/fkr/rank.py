"""The Nyström rank chosen from the data (docs/design.md#fkr-rank-from-the-data): the fewest
landmarks, doubling up to a ceiling, that capture 99 % of the kernel's trace on rows that are
not landmarks."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from .._random import as_seed_sequence, child_rng
from ..kernels import kernel_block
from ..nystroem import fit_nystroem, select_landmarks
from .widths import evenly

__all__ = ["HELD_ROWS", "RANK_SHARE", "RANK_START", "LandmarkChoice", "captured_share",
           "choose_rank", "draw_landmarks"]

#: The smallest landmark count tried; each next one doubles it, up to the ceiling.
RANK_START = 250
#: The share of the kernel's trace on the held-out rows the landmarks must capture.
RANK_SHARE = 0.99
#: Rows (at most) the captured trace is measured on: drawn with the landmarks, never one.
HELD_ROWS = 2000


def draw_landmarks(X: Any, n_landmarks: int | str, ceiling: int, *, landmarks: str,
                   random_state: Any, rcond: float) -> LandmarkChoice:
    """One draw of landmark rows (:func:`daskfair.nystroem.select_landmarks`: a few row
    blocks): ``n_landmarks`` of them, or for ``"auto"`` the pool the rank is chosen from.

    With ``"auto"`` and at most ``ceiling`` rows every row is a landmark (the exact kernel).
    Else ``ceiling + HELD_ROWS`` rows are drawn and, in a seeded random order, the first
    ``HELD_ROWS`` are held out to judge the rank on (a quarter when fewer rows are drawn, or
    the rows past the ceiling when that is more); m landmarks are the next m rows of that
    order, so each count's landmarks contain every smaller count's.
    """
    n = X.shape[0]
    auto = n_landmarks == "auto"
    size = n_landmarks if not auto else n if n <= ceiling else ceiling + HELD_ROWS
    pool = select_landmarks(X, size, landmarks=landmarks, random_state=random_state)
    if not auto or n <= ceiling:
        return LandmarkChoice(pool, None, None, rcond, ceiling)
    order = child_rng(as_seed_sequence(random_state), 3).permutation(len(pool))
    n_held = min(HELD_ROWS, max(len(pool) - ceiling, len(pool) // 4))
    return LandmarkChoice(pool, pool[np.sort(order[:n_held])], order[n_held:], rcond, ceiling)


def captured_share(landmarks: np.ndarray, held: np.ndarray, params: dict[str, Any],
                   rcond: float) -> float:
    """The share of the kernel's trace on ``held`` that the Nyström map of ``landmarks``
    keeps: ``Σᵢ ‖z(xᵢ)‖² / Σᵢ k(xᵢ, xᵢ)``, with ``z(x) = k(x, L) T`` the map as fitted."""
    fmap = fit_nystroem(landmarks, params, n_landmarks=len(landmarks), rcond=rcond,
                        fixed_landmarks=landmarks)
    Z = kernel_block(held, landmarks, params) @ fmap.whitening
    total = float(sum(kernel_block(row[None], row[None], params)[0, 0] for row in held))
    return float(np.square(Z).sum() / total) if total > 0 else float("nan")


def choose_rank(first: Callable[[int], np.ndarray], available: int, held: np.ndarray,
                params: dict[str, Any], rcond: float, ceiling: int
                ) -> tuple[np.ndarray, pd.DataFrame]:
    """The landmarks ``first(m)`` of the first count m, from :data:`RANK_START` doubling to
    ``ceiling`` (at most ``available``), that capture :data:`RANK_SHARE` of the kernel's
    trace on ``held`` (else the ceiling); with the table of the counts tried."""
    top, counts = min(ceiling, available), []
    while not counts or counts[-1] < top:
        counts.append(min(top, RANK_START * 2 ** len(counts)))
    rows: list[dict[str, Any]] = []
    for m in counts:
        share = captured_share(first(m), held, params, rcond)
        rows.append({"n_landmarks": m, "captured": share})
        if share >= RANK_SHARE:
            break
    chosen = len(rows) - 1
    table = pd.DataFrame(rows)
    table["held_rows"] = len(held)
    table["chosen"] = np.arange(len(table)) == chosen
    return first(counts[chosen]), table


@dataclass
class LandmarkChoice:
    """The landmarks of every kernel setting of one fit: the drawn ``pool`` itself, or, with
    held-out rows (``n_landmarks="auto"``), each setting's rank chosen once, its landmarks
    the first rows of ``order``."""

    pool: np.ndarray
    held: np.ndarray | None
    order: np.ndarray | None
    rcond: float
    ceiling: int
    tables: dict[Any, tuple[np.ndarray, pd.DataFrame]] = field(default_factory=dict)

    def first(self, m: int) -> np.ndarray:
        """m landmark rows: the first m of the order (else m of the pool, evenly spaced)."""
        if self.order is None:
            return evenly(self.pool, m)
        return self.pool[np.sort(self.order[:m])]

    def rows(self, params: dict[str, Any]) -> np.ndarray:
        """The landmarks of the kernel ``params`` (one setting's gamma per fit)."""
        if self.held is None:
            return self.pool
        gamma = params.get("gamma")
        if gamma not in self.tables:
            self.tables[gamma] = choose_rank(self.first, len(self.order), self.held, params,
                                             self.rcond, self.ceiling)
        return self.tables[gamma][0]

    def table(self) -> pd.DataFrame | None:
        """Every setting's counts tried (``rank_search_``), None without a rank search."""
        if not self.tables:
            return None
        return pd.concat([t.assign(gamma=gamma)[["gamma", *t.columns]]
                          for gamma, (_, t) in self.tables.items()], ignore_index=True)
