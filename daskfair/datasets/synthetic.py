"""Seeded synthetic data of any size: lazy dask arrays whose values do not depend on the chunks."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import dask.array as da
import numpy as np

from .._params import Array, Integer, Named, Nothing, Real, Seed, Spec, checked, is_sequence
from .._random import GEN_BLOCK, as_seed_sequence, child_rng

__all__ = ["make_fair_blobs", "make_fair_regression"]


def _chunks(n: int, chunks: int | None, width: int) -> int:
    """Rows per output chunk: ``chunks``, or about 2**24 values (at least 1,000 rows)."""
    if chunks is None:
        return int(min(n, max(1_000, 2**24 // max(width, 1))))
    return int(chunks)


def _generated(n: int, width: int, chunks: int | None, seed: np.random.SeedSequence,
               block_fn: Callable[[np.random.Generator, int], np.ndarray]) -> da.Array:
    """A lazy (n, width) float64 array: generation block b (from row b·GEN_BLOCK) is drawn from
    ``child_rng(seed, 1, b)``, and each chunk slices the blocks it overlaps."""
    step = _chunks(n, chunks, width)

    def make(block: np.ndarray) -> np.ndarray:
        start, stop = int(block[0]), int(block[-1]) + 1
        b0, b1 = start // GEN_BLOCK, (stop - 1) // GEN_BLOCK
        parts = [block_fn(child_rng(seed, 1, b), min(GEN_BLOCK, n - b * GEN_BLOCK))
                 for b in range(b0, b1 + 1)]
        rows = np.concatenate(parts) if len(parts) > 1 else parts[0]
        return rows[start - b0 * GEN_BLOCK: stop - b0 * GEN_BLOCK]

    index = da.arange(n, chunks=step)
    return index.map_blocks(make, dtype=np.float64, new_axis=1, chunks=(index.chunks[0], (width,)))


def _weights(weights: Any, k: int, what: str) -> np.ndarray:
    """``weights`` checked as k shares summing to 1 (None: equal shares)."""
    if weights is None:
        return np.full(k, 1.0 / k)
    w = np.asarray(weights, dtype=np.float64)
    if w.shape != (k,) or (w < 0).any() or not np.isclose(w.sum(), 1.0):
        raise ValueError(f"{what} must be {k} non-negative numbers summing to 1, got {weights}.")
    return w


_DATA: dict[str, list[Spec]] = {
    "n_samples": [Integer(1)], "n_features": [Integer(1)],
    "n_groups": [Integer(2, why="fairness needs two groups")],
    "group_weights": [Nothing, Array("n_groups shares summing to 1")],
    "chunks": [Nothing, Integer(1)], "random_state": [Nothing, Seed]}


@checked(**_DATA, n_clusters=[Integer(1)], group_bias=[Real(0, 1)], cluster_std=[Real(0)],
         center_box=[Named("a pair (low, high) of finite numbers", lambda v: is_sequence(v)
                           and len(v) == 2 and all(Real().accepts(x) for x in v), is_sequence)])
def make_fair_blobs(n_samples: int, n_features: int = 2, n_clusters: int = 3, n_groups: int = 2,
                    *, group_weights: Any = None, group_bias: float = 0.6,
                    cluster_std: float = 1.0, center_box: tuple[float, float] = (-10.0, 10.0),
                    chunks: int | None = None, random_state: Any = None,
                    ) -> tuple[da.Array, da.Array, da.Array]:
    """Gaussian blobs whose clusters over-represent one group each: plain k-means is unfair.

    Centers μ_k uniform in ``center_box``; a row's cluster k is uniform, its group drawn from
    p(g | k) = (1 − bias)·w_g + bias·[g = k mod J], and x = μ_k + ``cluster_std``·N(0, I).

    Parameters
    ----------
    n_samples : int
    n_features : int, default=2
        Columns of X.
    n_clusters : int, default=3
        Blobs.
    n_groups : int, default=2
        Groups J (at least 2).
    group_weights : array-like of shape (n_groups,), default=None
        w, the groups' shares, summing to 1 (None: equal).
    group_bias : float, default=0.6
        How strongly each blob over-represents its group, in [0, 1].
    cluster_std : float, default=1.0
        The blobs' standard deviation.
    center_box : (float, float), default=(-10.0, 10.0)
        The box the centers are drawn in.
    chunks : int, default=None
        Rows per block of the dask arrays (None: about 2**24 values); values do not depend on it.
    random_state : int, SeedSequence or None, default=None
        Seeds everything.

    Returns
    -------
    X : dask array of shape (n_samples, n_features), float64
    sensitive, true_labels : dask array of shape (n_samples,), int64
        The group and the blob of every row.

    Examples
    --------
    >>> X, s, labels = make_fair_blobs(1000, n_features=3, random_state=0)
    >>> X.shape, s.shape, labels.shape
    ((1000, 3), (1000,), (1000,))
    """
    w = _weights(group_weights, n_groups, "group_weights")
    seed = as_seed_sequence(random_state)
    centers = child_rng(seed, 0).uniform(*center_box, size=(n_clusters, n_features))
    probs = (1 - group_bias) * w[None, :] + group_bias * np.eye(n_groups)[
        np.arange(n_clusters) % n_groups]

    def block(rng: np.random.Generator, m: int) -> np.ndarray:
        k = rng.integers(0, n_clusters, m)
        u = rng.random(m)
        g = (u[:, None] > np.cumsum(probs[k], axis=1)).sum(axis=1)
        x = centers[k] + cluster_std * rng.standard_normal((m, n_features))
        return np.column_stack([x, np.minimum(g, n_groups - 1), k])

    data = _generated(n_samples, n_features + 2, chunks, seed, block)
    return (data[:, :n_features], data[:, n_features].astype(np.int64),
            data[:, n_features + 1].astype(np.int64))


@checked(**_DATA, group_shift=[Real()], group_effect=[Real()], noise=[Real(0)])
def make_fair_regression(n_samples: int, n_features: int = 20, *, n_groups: int = 2,
                         group_weights: Any = None, group_shift: float = 0.5,
                         group_effect: float = 1.0, noise: float = 0.5,
                         chunks: int | None = None, random_state: Any = None,
                         ) -> tuple[da.Array, da.Array, da.Array]:
    """Regression data in which the group is predictable from X and moves y.

    Group g ~ ``group_weights``; x = ``group_shift``·g + N(0, I); y = xᵀw + ``group_effect``·g +
    ``noise``·N(0, 1), with w ~ N(0, I/d) drawn once.

    Parameters
    ----------
    n_samples : int
    n_features : int, default=20
        Columns of X (d).
    group_shift : float, default=0.5
        How far each group's features are shifted.
    group_effect : float, default=1.0
        How much the group moves y.
    noise : float, default=0.5
        The standard deviation of y's noise.
    n_groups, group_weights, chunks, random_state : as in :func:`make_fair_blobs`.

    Returns
    -------
    X : dask array of shape (n_samples, n_features), float64
    y : dask array of shape (n_samples,), float64
    sensitive : dask array of shape (n_samples,), int64
        The group of every row.

    Examples
    --------
    >>> X, y, s = make_fair_regression(1000, n_features=5, random_state=0)
    >>> X.shape, y.shape, s.shape
    ((1000, 5), (1000,), (1000,))
    """
    w_groups = _weights(group_weights, n_groups, "group_weights")
    seed = as_seed_sequence(random_state)
    coef = child_rng(seed, 0).standard_normal(n_features) / np.sqrt(n_features)

    def block(rng: np.random.Generator, m: int) -> np.ndarray:
        g = rng.choice(n_groups, size=m, p=w_groups)
        x = group_shift * g[:, None] + rng.standard_normal((m, n_features))
        y = x @ coef + group_effect * g + noise * rng.standard_normal(m)
        return np.column_stack([x, y, g])

    data = _generated(n_samples, n_features + 2, chunks, seed, block)
    return (data[:, :n_features], data[:, n_features],
            data[:, n_features + 1].astype(np.int64))
