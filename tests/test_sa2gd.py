"""SA2GD on two strongly convex quadratics with noisy gradients: the O(1/T) rate of the
seed's Theorem 5.1 and the weighted-sum limit point, against closed-form minimisers."""

from __future__ import annotations

import numpy as np
import pytest

from daskfair import sa2gd, sa2gd_front
from daskfair.safairkm.alternating import theorem_step

A = np.array([[1.0, 0.0], [0.0, 3.0]])
B = np.array([[2.0, 0.5], [0.5, 1.0]])
a = np.array([1.0, 0.0])
b = np.array([-1.0, 2.0])
SIGMA = 0.5
C = min(np.linalg.eigvalsh(A).min(), np.linalg.eigvalsh(B).min())  # c ≤ that of any S(·, λ)


def grad_a(x, rng):  # ∇ ½(x − a)ᵀA(x − a) plus noise; x may be (R, 2)
    return (x - a) @ A + SIGMA * rng.standard_normal(x.shape)


def grad_b(x, rng):
    return (x - b) @ B + SIGMA * rng.standard_normal(x.shape)


def weighted(x, lam):
    fa = 0.5 * np.einsum("...i,ij,...j->...", x - a, A, x - a)
    fb = 0.5 * np.einsum("...i,ij,...j->...", x - b, B, x - b)
    return lam * fa + (1 - lam) * fb


def minimiser(lam):
    # ∇S = λA(x − a) + (1 − λ)B(x − b) = 0
    return np.linalg.solve(lam * A + (1 - lam) * B, lam * A @ a + (1 - lam) * B @ b)


def test_gap_falls_like_one_over_t():
    R = 200  # independent replicates, run at once (the gradients broadcast over rows)
    x0 = np.tile([3.0, -3.0], (R, 1))
    n_a, n_b = 1, 3
    lam = n_a / (n_a + n_b)
    res = sa2gd(grad_a, grad_b, x0, n_a=n_a, n_b=n_b, n_iter=100_000, strong_convexity=C,
                random_state=0, history_every=100)
    Ts = np.array([100, 1_000, 10_000, 100_000])
    rows = np.searchsorted(res.iterations, Ts)
    star = weighted(minimiser(lam), lam)
    gap = np.array([weighted(res.history[i], lam).mean() - star for i in rows])
    slope = np.polyfit(np.log(Ts), np.log(gap), 1)[0]
    assert -1.25 < slope < -0.75, (slope, gap)
    assert gap[-1] < 1e-3


@pytest.mark.parametrize(("n_a", "n_b"), [(1, 3), (2, 2), (3, 1), (4, 0)])
def test_limit_is_the_weighted_sum_minimiser(n_a, n_b):
    x0 = np.tile([3.0, -3.0], (50, 1))
    res = sa2gd(grad_a, grad_b, x0, n_a=n_a, n_b=n_b, n_iter=5_000, strong_convexity=C,
                random_state=1, history_every=5_000)
    lam = n_a / (n_a + n_b)
    target = minimiser(lam)
    err = np.linalg.norm(res.x.mean(axis=0) - target)
    assert err < 0.02
    for other in {0.0, 0.25, 0.5, 0.75, 1.0} - {lam}:  # and not another weight's minimiser
        assert np.linalg.norm(res.x.mean(axis=0) - minimiser(other)) > 5 * err


def test_front_tasks_trace_the_weighted_sum_front(client):
    res = sa2gd_front(grad_a, grad_b, np.tile([3.0, -3.0], (20, 1)), n_total=4,
                      n_iter=3_000, strong_convexity=C, random_state=2, client=client,
                      history_every=3_000)
    assert [r.weight for r in res] == [0.0, 0.25, 0.5, 0.75, 1.0]
    for r in res:
        assert np.linalg.norm(r.x.mean(axis=0) - minimiser(r.weight)) < 0.03
    again = sa2gd_front(grad_a, grad_b, np.tile([3.0, -3.0], (20, 1)), n_total=4,
                        n_iter=3_000, strong_convexity=C, random_state=2, client=client,
                        history_every=3_000)
    for r, s in zip(res, again, strict=True):
        np.testing.assert_array_equal(r.x, s.x)
    # in this process (the default without a client): the same fronts bit for bit
    from daskfair.runtime.inprocess import InProcessClient

    with InProcessClient(2) as local:
        here = sa2gd_front(grad_a, grad_b, np.tile([3.0, -3.0], (20, 1)), n_total=4,
                           n_iter=3_000, strong_convexity=C, random_state=2, client=local,
                           history_every=3_000)
    for r, s in zip(res, here, strict=True):
        np.testing.assert_array_equal(r.x, s.x)


def test_theorem_step_and_bad_input():
    assert theorem_step(2.0, 1, 3)(0) == pytest.approx(2 / (2.0 * 1 * 4))
    assert theorem_step(2.0, 1, 3)(9) == pytest.approx(2 / (2.0 * 10 * 4))
    with pytest.raises(ValueError, match="strong_convexity"):
        sa2gd(grad_a, grad_b, [0.0, 0.0], n_a=1, n_b=1, n_iter=10)
    with pytest.raises(ValueError, match="n_a \\+ n_b"):
        sa2gd(grad_a, grad_b, [0.0, 0.0], n_a=0, n_b=0, n_iter=10, step=0.1)
    with pytest.raises(ValueError, match="shape"):
        sa2gd(lambda x, r: np.zeros(3), grad_b, [0.0, 0.0], n_a=1, n_b=1, n_iter=5, step=0.1)
    with pytest.raises(FloatingPointError, match="diverged"):
        sa2gd(lambda x, r: 1e3 * x, grad_b, [1.0, 1.0], n_a=1, n_b=0, n_iter=2000, step=1.0)
    with pytest.raises(ValueError, match="step"):
        sa2gd(grad_a, grad_b, [0.0, 0.0], n_a=1, n_b=1, n_iter=5, step=-1.0)
    res = sa2gd(grad_a, grad_b, [0.0, 0.0], n_a=1, n_b=1, n_iter=7, step=0.01,
                history_every=3, random_state=0)
    assert res.iterations.tolist() == [0, 3, 6, 7] and res.history.shape == (4, 2)
