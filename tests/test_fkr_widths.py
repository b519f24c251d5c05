"""gammas="auto": the kernel's width chosen from the data (daskfair/fkr/widths.py)."""

from __future__ import annotations

import collections

import dask
import dask.array as da
import numpy as np
import pytest
from scipy.spatial.distance import pdist

from daskfair import FairKernelClassifierCV, FairKernelRegressorCV
from daskfair.fkr import widths
from daskfair.fkr.widths import WIDTH_FACTORS, median_gamma

GRID = {"relative_alphas": (1e-4, 1e-2), "strengths": (0.0, 0.5, 1.0),
        "fair_feature_counts": (3,), "fairness_weights": (None,), "cv": 3}


def _data(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    s = (rng.random(n) < 0.4).astype(int)
    X = rng.normal(size=(n, 4)) * [1.0, 3.0, 0.3, 1.0] + 0.5 * s[:, None]
    y = (np.sin(2 * X[:, 0]) + 0.3 * X[:, 1] + s + rng.normal(0, 0.5, n) > 0.8).astype(int)
    return X, y, s


def test_the_median_heuristic_against_scipy():
    X = np.random.default_rng(1).normal(size=(300, 5))
    assert median_gamma(X) == pytest.approx(1 / np.median(pdist(X, "sqeuclidean")),
                                            rel=1e-12)
    assert median_gamma(np.ones((4, 2))) is None  # every pair equal: no width to read
    # a shared offset of 1e8 changes no distance (the expansion ‖x‖² + ‖y‖² − 2x·y lost them)
    shifted = X + np.array([1e8, 0, 0, 0, 0])
    assert median_gamma(shifted) == pytest.approx(median_gamma(X), rel=1e-6)


@pytest.mark.parametrize("make", [FairKernelClassifierCV, FairKernelRegressorCV])
def test_on_few_rows_auto_is_the_grid_around_the_median_heuristic(make):
    """With at most 20,000 rows and 500 landmarks the sample is the fit: "auto" equals the
    explicit grid γ₀ × WIDTH_FACTORS, γ₀ read from the landmarks by scipy, and each width's
    line of ``width_search_`` is that width's own fit."""
    X, y, s = _data(600)
    y = y if make is FairKernelClassifierCV else X[:, 0] + s
    auto = make(n_landmarks=120, random_state=3, **GRID).fit(X, y, sensitive_features=s)
    L = auto.feature_maps_[0].landmarks
    g0 = 1 / np.median(pdist(L, "sqeuclidean"))
    grid = [g0 * f for f in WIDTH_FACTORS]
    explicit = make(n_landmarks=120, random_state=3, gammas=grid, **GRID).fit(
        X, y, sensitive_features=s)
    np.testing.assert_allclose([m.params["gamma"] for m in auto.feature_maps_], grid,
                               rtol=1e-12)
    np.testing.assert_array_equal(auto.cv_error_, explicit.cv_error_)
    np.testing.assert_array_equal(auto.dual_coef_, explicit.dual_coef_)
    table = auto.width_search_
    assert table["sample_rows"].tolist() == [600] * len(grid)
    for g, row in zip(grid, table.itertuples(), strict=True):
        alone = make(n_landmarks=120, random_state=3, gammas=[g], **GRID).fit(
            X, y, sensitive_features=s)
        assert row.error == pytest.approx(
            alone.cv_results_["mean_test_error"][alone.best_index_], rel=1e-12)
        assert row.disparity == pytest.approx(alone.best_disparity_, rel=1e-12, abs=1e-15)
    assert table["chosen"].sum() == 1
    assert table["error"].idxmin() == int(np.flatnonzero(table["chosen"])[0])


def test_on_more_rows_one_width_is_searched_on_every_row(monkeypatch):
    """Past SAMPLE_ROWS the widths are compared on a sample with at most 500 landmarks, and
    the fit is the chosen width's own fit on every row."""
    monkeypatch.setattr("daskfair.fkr.cv.SAMPLE_ROWS", 400)
    X, y, s = _data(1500)
    with dask.config.set({"daskfair.block-rows": 64}):
        auto = FairKernelClassifierCV(n_landmarks=100, random_state=2, **GRID).fit(
            X, y, sensitive_features=s)
        chosen = auto.width_search_.loc[auto.width_search_["chosen"], "gamma"].item()
        alone = FairKernelClassifierCV(n_landmarks=100, random_state=2, gammas=[chosen],
                                       **GRID).fit(X, y, sensitive_features=s)
    assert len(auto.feature_maps_) == 1
    assert auto.width_search_["sample_rows"].tolist() == [400] * len(WIDTH_FACTORS)
    np.testing.assert_array_equal(auto.cv_error_, alone.cv_error_)
    np.testing.assert_array_equal(auto.dual_coef_, alone.dual_coef_)
    assert auto.best_params_ == alone.best_params_


def test_the_same_width_for_any_chunking_and_backend(monkeypatch):
    monkeypatch.setattr("daskfair.fkr.cv.SAMPLE_ROWS", 400)
    X, y, s = _data(1500, seed=4)
    fits = []
    with dask.config.set({"daskfair.block-rows": 64}):  # 24 canonical blocks
        for Xin in (X, da.from_array(X, chunks=50), da.from_array(X, chunks=333)):
            fits.append(FairKernelClassifierCV(n_landmarks=100, random_state=7, **GRID).fit(
                Xin, y, sensitive_features=da.from_array(s, chunks=211)))
    for other in fits[1:]:
        np.testing.assert_array_equal(other.width_search_.to_numpy(),
                                      fits[0].width_search_.to_numpy())
        np.testing.assert_array_equal(other.cv_error_, fits[0].cv_error_)
        np.testing.assert_array_equal(other.dual_coef_, fits[0].dual_coef_)


def test_the_sample_reads_a_few_row_blocks_once(monkeypatch):
    """The Notes: two passes over X, the landmark draw's 8 blocks, and the sample's blocks
    (8 of 40 here) once each."""
    from daskfair.nystroem import MIN_LANDMARK_BLOCKS

    monkeypatch.setattr("daskfair.fkr.cv.SAMPLE_ROWS", 300)
    X, y, s = _data(64 * 40, seed=5)
    counts: collections.Counter = collections.Counter()

    def count(block: np.ndarray, block_info=None) -> np.ndarray:
        counts[block_info[0]["chunk-location"][0]] += 1
        return block

    Xd = da.from_array(X, chunks=(64, 4)).map_blocks(count, dtype=X.dtype)
    with dask.config.set({"daskfair.block-rows": 64, "scheduler": "sync"}):
        FairKernelClassifierCV(n_landmarks=40, random_state=0, **GRID).fit(
            Xd, y, sensitive_features=s)
    assert all(2 <= counts[b] <= 4 for b in range(40)), counts
    assert sum(counts.values()) == 2 * 40 + 2 * MIN_LANDMARK_BLOCKS


def test_a_kernel_without_a_width_searches_none():
    X, y, s = _data(300)
    clf = FairKernelClassifierCV("linear", n_landmarks=50, random_state=0, **GRID).fit(
        X, y, sensitive_features=s)
    assert not hasattr(clf, "width_search_") and len(clf.feature_maps_) == 1


def test_a_sample_missing_a_group_keeps_the_heuristic(monkeypatch):
    """A group absent from the sample: no comparison on it, the median heuristic alone."""
    monkeypatch.setattr("daskfair.fkr.cv.SAMPLE_ROWS", 100)
    monkeypatch.setattr(widths, "landmark_pool", lambda n, size, how, width, rng:
                        np.arange(64, 64 + 2 * size))  # rows the rare group is not in
    X, y, s = _data(800, seed=6)
    s = s.copy()
    s[:20] = 2  # a third group, in the first rows only
    with dask.config.set({"daskfair.block-rows": 64}):
        clf = FairKernelClassifierCV(n_landmarks=60, random_state=1, **GRID).fit(
            X, y, sensitive_features=s)
    assert not hasattr(clf, "width_search_")
    L = clf.feature_maps_[0].landmarks
    assert clf.feature_maps_[0].params["gamma"] == pytest.approx(
        1 / np.median(pdist(L, "sqeuclidean")), rel=1e-12)
