"""Partial sums per distinct raw (group, class, ...) key, so that the pass that uses the
groups also lists them: blocks return :class:`Keyed` statistics per local code, :func:`merge`
adds them key by key, :func:`arrange` puts them in the sorted keys' order."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["MISSING", "Keyed", "arrange", "column_values", "local_codes", "merge"]

MAX_KEYS = 4096  # most distinct keys one pass may hold


class _Missing:
    """Stands for NaN/None in a key (NaN is not equal to itself, so cannot be a dict key)."""

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Missing)

    def __hash__(self) -> int:
        return 0x5EED

    def __repr__(self) -> str:
        return "MISSING"


MISSING = _Missing()


def local_codes(*columns: np.ndarray) -> tuple[np.ndarray, tuple[tuple[Any, ...], ...]]:
    """``(codes, keys)``: the distinct rows of 1-D columns coded 0..q-1 by first appearance."""
    n = len(columns[0])
    parts, values = [], []
    for col in columns:
        codes, uniques = pd.factorize(np.asarray(col).ravel(), use_na_sentinel=True)
        uniques = list(np.asarray(uniques, dtype=object)) if len(uniques) else []
        uniques = [u.item() if isinstance(u, np.generic) else u for u in uniques]
        codes = np.where(codes < 0, len(uniques), codes)
        parts.append(codes.astype(np.int64))
        values.append([*uniques, MISSING])
    if n == 0:
        return np.zeros(0, dtype=np.int64), ()
    sizes = tuple(len(v) for v in values)
    joint = np.ravel_multi_index(tuple(parts), sizes)
    uniq, first, inverse = np.unique(joint, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")  # first appearance, not code order
    rank = np.empty(len(uniq), dtype=np.int64)
    rank[order] = np.arange(len(uniq))
    index = np.unravel_index(uniq[order], sizes)
    keys = tuple(tuple(values[c][int(i[k])] for c, i in enumerate(index))
                 for k in range(len(uniq)))
    if len(keys) > MAX_KEYS:
        raise ValueError(too_many_keys(len(keys)))
    return rank[inverse.ravel()], keys


def too_many_keys(n: int) -> str:
    return (f"more than {MAX_KEYS} distinct group/class values ({n} seen): sensitive "
            "features and class labels must be categories; bin a continuous attribute first "
            "(e.g. pandas.cut).")


@dataclass(frozen=True)
class Keyed:
    """Statistics per key: ``values[i][k]`` belongs to ``keys[k]``; ``plain`` summed as is."""

    keys: tuple[tuple[Any, ...], ...]
    values: tuple[np.ndarray, ...]
    plain: tuple[np.ndarray, ...] = ()


def merge(a: Keyed, b: Keyed) -> Keyed:
    """``a + b`` key by key (keys of ``a`` first, then the new ones of ``b``)."""
    index = {k: i for i, k in enumerate(a.keys)}
    new = [k for k in b.keys if k not in index]
    keys = a.keys + tuple(new)
    if len(keys) > MAX_KEYS:
        raise ValueError(too_many_keys(len(keys)))
    where = np.array([index.get(k, -1) for k in b.keys], dtype=np.int64)
    where[where < 0] = len(a.keys) + np.arange(len(new))
    values = []
    for x, y in zip(a.values, b.values, strict=True):
        out = np.zeros((len(keys), *x.shape[1:]), dtype=np.result_type(x, y))
        out[:len(a.keys)] = x
        both = where < len(a.keys)
        out[where[both]] = x[where[both]] + y[both]
        out[where[~both]] = y[~both]
        values.append(out)
    plain = tuple(x + y for x, y in zip(a.plain, b.plain, strict=True))
    return Keyed(keys, tuple(values), plain)


def column_values(keys: tuple[tuple[Any, ...], ...], column: int) -> list[Any]:
    """The distinct values of one key column, in first-seen order."""
    return list(dict.fromkeys(k[column] for k in keys))


def arrange(keyed: Keyed, codes: list[dict[Any, int]], sizes: tuple[int, ...]) -> list[np.ndarray]:
    """The per-key values on the full grid of codes (zeros where a key is absent)."""
    flat = np.array([np.ravel_multi_index(tuple(codes[c][v] for c, v in enumerate(k)), sizes)
                     for k in keyed.keys], dtype=np.int64)
    out = []
    for x in keyed.values:
        grid = np.zeros((int(np.prod(sizes)), *x.shape[1:]), dtype=x.dtype)
        grid[flat] = x
        out.append(grid.reshape(*sizes, *x.shape[1:]))
    return out
