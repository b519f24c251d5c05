"""SA2GD, the SAfairKM paper's Algorithm 4 (docs/design.md#sa2gd)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._params import Integer, Named, Nothing, Real, Seed, Spec, checked, is_sequence
from .._random import as_seed_sequence, child_rng
from ..runtime.clients import task_client

__all__ = ["SA2GDResult", "sa2gd", "sa2gd_front", "theorem_step"]

Gradient = Callable[[np.ndarray, np.random.Generator], np.ndarray]


@dataclass
class SA2GDResult:
    """Iterates of one SA2GD run (made by :func:`sa2gd`).

    Attributes
    ----------
    x : ndarray
        The last iterate x_T, of the shape of x0.
    history, iterations : ndarray of shape (n_recorded, *x.shape), ndarray of shape (n_recorded,)
        The recorded x_t (x_0 first) and their iterations t.
    n_a, n_b : int
        Steps on f_a and on f_b per iteration.
    """

    x: np.ndarray
    history: np.ndarray
    iterations: np.ndarray
    n_a: int
    n_b: int

    @property
    def weight(self) -> float:
        """λ = n_a / (n_a + n_b), the weight of f_a in the weighted sum the run approaches."""
        return self.n_a / (self.n_a + self.n_b)


@checked(strong_convexity=[Real(0, low_open=True)], n_a=[Integer(0)], n_b=[Integer(0)])
def theorem_step(strong_convexity: float, n_a: int, n_b: int) -> Callable[[int], float]:
    """Theorem 5.1's step ``t -> α_t = 2 / (c (t + 1)(n_a + n_b))`` (c > 0)."""
    c = float(strong_convexity)
    total = n_a + n_b
    return lambda t: 2.0 / (c * (t + 1) * total)


def _step_rule(step: Any, strong_convexity: Any, n_a: int, n_b: int) -> Callable[[int], float]:
    if step is None:
        if strong_convexity is None:
            raise ValueError(
                "give strong_convexity (c of Theorem 5.1, for its step 2/(c(t+1)(n_a+n_b))) "
                "or a step: a positive number or a callable t -> alpha_t.")
        return theorem_step(strong_convexity, n_a, n_b)
    if callable(step):
        return step
    return lambda t: float(step)  # a positive number (checked by sa2gd's table)


def _gradient(grad: Gradient, x: np.ndarray, rng: np.random.Generator, which: str) -> np.ndarray:
    g = np.asarray(grad(x, rng), dtype=np.float64)
    if g.shape != x.shape:
        raise ValueError(f"grad_{which} returned shape {g.shape} for x of shape {x.shape}; "
                         "a gradient must have the shape of x.")
    return g


_STEP = [Nothing, Real(0, low_open=True), Named("a function t -> step", callable)]
_RUN: dict[str, list[Spec]] = {
    "grad_a": [Named("a function (x, rng) -> gradient", callable)],
    "grad_b": [Named("a function (x, rng) -> gradient", callable)],
    "n_iter": [Integer(1)], "step": _STEP,
    "strong_convexity": [Nothing, Real(0, low_open=True)], "random_state": [Nothing, Seed],
    "history_every": [Integer(1)]}


@checked(**_RUN, n_a=[Integer(0)], n_b=[Integer(0)])
def sa2gd(grad_a: Gradient, grad_b: Gradient, x0: Any, *, n_a: int, n_b: int, n_iter: int,
          step: float | Callable[[int], float] | None = None,
          strong_convexity: float | None = None, random_state: Any = None,
          history_every: int = 1) -> SA2GDResult:
    """Run SA2GD (Algorithm 4) for ``n_iter`` iterations.

    Parameters
    ----------
    grad_a, grad_b : callable ``(x, rng) -> g``
        Stochastic gradients of f_a and f_b, g of x's shape (exact gradients are fine).
    x0 : array-like
        Starting point.
    n_a, n_b : int
        Steps on f_a and on f_b per iteration (n_a + n_b > 0).
    n_iter : int
        Iterations T.
    step : float or callable ``t -> alpha_t``, default=None
        None: Theorem 5.1's 2 / (c (t + 1)(n_a + n_b)), which needs ``strong_convexity``.
    strong_convexity : float, default=None
        c, a strong-convexity constant of the weighted sum.
    random_state : int, RandomState, Generator, SeedSequence or None, default=None
        Seeds the ``rng`` passed to the gradients.
    history_every : int, default=1
        Record x_t every this many iterations (and at T).

    Returns
    -------
    SA2GDResult
        The last iterate and the recorded ones.

    Raises
    ------
    ValueError, FloatingPointError
        On bad parameters, x0 or gradient shapes; if the iterates diverge (a step too large).

    See Also
    --------
    sa2gd_front : SA2GD for every pair of a fixed total (with an example).
    """
    if n_a + n_b == 0:
        raise ValueError("n_a + n_b must be positive.")
    every = history_every
    alpha = _step_rule(step, strong_convexity, n_a, n_b)
    x = np.array(x0, dtype=np.float64)
    if not np.isfinite(x).all():
        raise ValueError("x0 must be finite.")
    rng = child_rng(as_seed_sequence(random_state), 0)
    history, iterations = [x.copy()], [0]
    for t in range(n_iter):
        a = float(alpha(t))
        with np.errstate(over="ignore", invalid="ignore"):  # divergence is reported below
            for _ in range(n_a):
                x -= a * _gradient(grad_a, x, rng, "a")
            for _ in range(n_b):
                x -= a * _gradient(grad_b, x, rng, "b")
        if not np.isfinite(x).all():
            raise FloatingPointError(
                f"SA2GD diverged at iteration {t} (step {a:.3g}): the step is too large for "
                "the gradients' Lipschitz constant. Lower the step, or pass a larger "
                "strong_convexity (alpha_t = 2/(c(t+1)(n_a+n_b)) shrinks as c grows).")
        if (t + 1) % every == 0 or t + 1 == n_iter:
            history.append(x.copy())
            iterations.append(t + 1)
    return SA2GDResult(x, np.stack(history), np.asarray(iterations), n_a, n_b)


@checked(**_RUN, n_total=[Integer(1)], update_pairs=[Nothing, Named(
    "a list of (n_a, n_b) pairs of integers >= 0", lambda v: is_sequence(v) and all(
        is_sequence(p) and len(p) == 2 and all(Integer(0).accepts(x) for x in p) for p in v),
    is_sequence)])
def sa2gd_front(grad_a: Gradient, grad_b: Gradient, x0: Any, *, n_total: int, n_iter: int,
                update_pairs: Sequence[tuple[int, int]] | None = None,
                step: float | Callable[[int], float] | None = None,
                strong_convexity: float | None = None, random_state: Any = None,
                history_every: int = 1, client: Any = None) -> list[SA2GDResult]:
    """:func:`sa2gd` for every pair (n_a, n_total − n_a), n_a = 0 … n_total, one task each.

    Parameters
    ----------
    grad_a, grad_b, x0, n_iter, step, strong_convexity, history_every : as in :func:`sa2gd`.
    n_total : int
        n_a + n_b of every pair.
    update_pairs : sequence of (int, int), default=None
        The pairs (n_a, n_b) to run instead of those of total ``n_total``.
    random_state : int, RandomState, Generator, SeedSequence or None, default=None
        Seeds the runs (pair i gets child i, wherever it runs).
    client : as in :func:`pareto_front`.

    Returns
    -------
    list of SA2GDResult
        One run per pair, by increasing λ = n_a / (n_a + n_b).

    Raises
    ------
    ValueError
        If ``n_total``, a pair or the step rule is refused (before any task runs).

    Examples
    --------
    >>> from daskfair import sa2gd_front
    >>> runs = sa2gd_front(lambda x, rng: x - [1, 0], lambda x, rng: x - [0, 1], [0.0, 0.0],
    ...                    n_total=2, n_iter=2000, strong_convexity=1.0)
    >>> [run.x.round(2).tolist() for run in runs]
    [[0.0, 1.0], [0.5, 0.5], [1.0, 0.0]]
    """
    update_pairs = ([(a, n_total - a) for a in range(n_total + 1)] if update_pairs is None
                    else list(update_pairs))
    seed = as_seed_sequence(random_state)
    for n_a, n_b in update_pairs:  # fail here, not in a task
        _step_rule(step, strong_convexity, n_a, n_b)
    client = task_client(client)
    futures = [client.submit(
        sa2gd, grad_a, grad_b, x0, n_a=n_a, n_b=n_b, n_iter=n_iter, step=step,
        strong_convexity=strong_convexity, history_every=history_every, pure=False,
        random_state=np.random.SeedSequence(seed.entropy, spawn_key=(*seed.spawn_key, i)))
        for i, (n_a, n_b) in enumerate(update_pairs)]
    return sorted(client.gather(futures), key=lambda r: r.weight)
