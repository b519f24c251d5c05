"""The CV estimators' upper bound of the disparity over any number of groups
(daskfair/fkr/bound.py): its coverage by simulation where the rates are known."""

from __future__ import annotations

import numpy as np
import pytest

from daskfair.fkr.bound import disparity_upper


def _simulate(rho, rows, runs, rng):
    """``runs`` validation samples as the candidates axis: rates (runs, J, 1), rows."""
    hits = rng.binomial(rows[None, :], rho[None, :], size=(runs, len(rho)))
    return hits[:, :, None] / rows[None, :, None], np.broadcast_to(
        rows[None, :, None].astype(float), (runs, len(rho), 1))


@pytest.mark.parametrize("rho, rows, most", [
    # two groups and a clear gap: one pair competes, the bound is d + z·s, coverage 90%
    (np.array([0.30, 0.36]), np.array([3000, 1200]), 0.92),
    # seven groups of unequal sizes, small gaps: many pairs compete, conservative
    (np.array([0.30, 0.31, 0.30, 0.33, 0.30, 0.32, 0.30]),
     np.array([4000, 2000, 1500, 1000, 800, 500, 200]), 1.0),
    # seven groups, one clear gap: the six equal groups all compete for the lowest rate
    (np.array([0.30, 0.30, 0.30, 0.30, 0.30, 0.30, 0.40]),
     np.array([4000, 2000, 1500, 1000, 800, 500, 1000]), 1.0),
])
def test_the_population_bound_holds_at_its_confidence(rho, rows, most):
    rng = np.random.default_rng(0)
    rate, n = _simulate(rho, rows, 4000, rng)
    upper = disparity_upper([(rate, n)], 0.9)[:, 0]
    truth = rho.max() - rho.min()
    coverage = np.mean(truth <= upper)
    # 4,000 runs: the standard error of a 90% coverage is 0.5 points
    assert 0.885 <= coverage <= most, coverage
    assert (upper >= (rate.max(axis=1) - rate.min(axis=1))[:, 0] - 1e-15).all()


def test_the_largest_of_many_gaps_needs_the_correction():
    # seven groups, one real gap among noise: the bound of the observed worst pair alone,
    # d + z·s, holds far less often than 90% (its gap is the largest of many, biased up and
    # often not the true pair's); the bound over every pair holds
    from scipy.stats import norm

    rng = np.random.default_rng(1)
    rho = np.array([0.30, 0.32, 0.30, 0.32, 0.30, 0.32, 0.30])
    rows = np.array([4000, 2000, 1500, 1000, 800, 500, 300])
    rate, n = _simulate(rho, rows, 4000, rng)
    r = rate[:, :, 0]
    hi, lo, idx = r.argmax(axis=1), r.argmin(axis=1), np.arange(len(r))
    sem = np.sqrt(r[idx, hi] * (1 - r[idx, hi]) / rows[hi]
                  + r[idx, lo] * (1 - r[idx, lo]) / rows[lo])
    naive_lower = r[idx, hi] - r[idx, lo] - norm.ppf(0.9) * sem
    # the naive interval's lower end is above the truth far more often than 10%
    assert np.mean(naive_lower > 0.02) > 0.2
    upper = disparity_upper([(rate, n)], 0.9)[:, 0]
    assert np.mean(0.02 <= upper) >= 0.885


def test_a_new_sample_adds_its_noise():
    rng = np.random.default_rng(2)
    rho, rows = np.array([0.30, 0.34, 0.32]), np.array([5000, 2000, 1000])
    rate, n = _simulate(rho, rows, 4000, rng)
    population = disparity_upper([(rate, n)], 0.9)[:, 0]
    new = 2000  # a new sample of 2,000 rows in the same shares
    sample_rows = np.round(new * rows / rows.sum()).astype(int)
    sample, _ = _simulate(rho, sample_rows, 4000, rng)
    observed = (sample.max(axis=1) - sample.min(axis=1))[:, 0]
    bound = disparity_upper([(rate, n)], 0.9, new_rows=new)[:, 0]
    assert (bound > population).all()
    assert np.mean(observed <= bound) >= 0.88
    assert np.mean(observed <= population) < 0.8  # the population's bound is not about it


def test_equalized_odds_takes_every_class_gap():
    rng = np.random.default_rng(3)
    neg = _simulate(np.array([0.10, 0.12]), np.array([3000, 1500]), 3000, rng)
    pos = _simulate(np.array([0.60, 0.68]), np.array([1000, 400]), 3000, rng)
    upper = disparity_upper([neg, pos], 0.9)[:, 0]
    assert np.mean(0.08 <= upper) >= 0.88  # the larger gap is the positives' (TPR)
    one = disparity_upper([pos], 0.9)[:, 0]
    assert (upper >= one - 1e-12).all()
