"""n_landmarks="auto": the Nyström rank chosen from the data (daskfair/fkr/rank.py)."""

from __future__ import annotations

import dask
import dask.array as da
import numpy as np
import pytest
from scipy.linalg import pinvh

import daskfair
from daskfair import FairKernelClassifierCV, FairKernelRegressorCV
from daskfair._random import as_seed_sequence, child_rng
from daskfair.fkr import rank
from daskfair.kernels import kernel_block, kernel_params
from daskfair.nystroem import select_landmarks

GRID = {"relative_alphas": (1e-4, 1e-2), "strengths": (0.0, 0.5, 1.0),
        "fair_feature_counts": (3,), "fairness_weights": (None,), "cv": 3, "gammas": [0.3]}


def _data(n: int, seed: int = 0, d: int = 4) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    s = (rng.random(n) < 0.4).astype(int)
    X = rng.normal(size=(n, d)) + 0.5 * s[:, None]
    y = (np.sin(2 * X[:, 0]) + 0.3 * X[:, 1] + s + rng.normal(0, 0.5, n) > 0.8).astype(int)
    return X, y, s


def _share(L: np.ndarray, H: np.ndarray, params: dict, rcond: float = 1e-10) -> float:
    """The captured share by the textbook formula, tr(C W⁺ Cᵀ) / tr(K_HH)."""
    W, C = kernel_block(L, L, params), kernel_block(H, L, params)
    approx = np.einsum("ij,jk,ik->", C, pinvh(W, rtol=rcond), C)
    return float(approx / np.trace(kernel_block(H, H, params)))


@pytest.mark.parametrize("kernel", ["rbf", "polynomial"])
def test_the_captured_share_against_the_textbook_formula(kernel):
    X = np.random.default_rng(1).normal(size=(400, 5))
    params = kernel_params(kernel, 5, gamma=0.2, degree=2, coef0=1.0)
    L, H = X[:60], X[100:400]
    assert rank.captured_share(L, H, params, 1e-10) == pytest.approx(
        _share(L, H, params), rel=1e-9)
    # landmarks that are the held rows themselves capture all of it
    assert rank.captured_share(H[:50], H[:50], params, 1e-10) == pytest.approx(1, rel=1e-9)


@pytest.mark.parametrize(("d", "gamma", "where"), [
    (6, 0.05, "middle"),  # shares .924, .967, .990, .997: 99 % at 200
    (1, 1e-3, "first"),  # one smooth direction: the first count captures it all
    (6, 0.15, "ceiling"),  # shares .61 to .97: 99 % at no count
    (40, 2.0, "ceiling"),  # each row its own direction: nothing is captured, at any count
])
def test_the_rank_is_the_first_count_that_captures_99_percent(monkeypatch, d, gamma, where):
    monkeypatch.setattr(rank, "RANK_START", 25)
    X = np.random.default_rng(2).normal(size=(700, d))
    pool, held = X[:400], X[400:]
    params = kernel_params("rbf", d, gamma=gamma)
    rows, table = rank.choose_rank(lambda m: pool[:m], 400, held, params, 1e-10, ceiling=400)
    counts = [25, 50, 100, 200, 400]
    shares = [_share(pool[:m], held, params) for m in counts]
    # the rule, stated independently: the first count that captures 99 %; else the ceiling
    expected = next((i for i in range(len(counts)) if shares[i] >= 0.99), len(counts) - 1)
    assert {"middle": 0 < expected < len(counts) - 1, "first": expected == 0,
            "ceiling": expected == len(counts) - 1}[where], shares
    tried = len(table)
    assert table["n_landmarks"].tolist() == counts[:tried]
    # 1e-7: one smooth direction's landmark kernel has a condition number near 1e10
    np.testing.assert_allclose(table["captured"], shares[:tried], rtol=1e-7)
    assert table["n_landmarks"][table["chosen"]].tolist() == [counts[expected]]
    assert tried == expected + 1  # no count past the chosen one is computed
    np.testing.assert_array_equal(rows, pool[:counts[expected]])


@pytest.mark.parametrize("make", [FairKernelClassifierCV, FairKernelRegressorCV])
def test_the_fit_takes_the_chosen_landmarks_from_one_draw(monkeypatch, tmp_path, make):
    """Past ``max_landmarks`` rows: ``max_landmarks`` + HELD_ROWS rows drawn once, the held
    rows evenly spaced among them, the landmarks evenly spaced among the rest; the chosen
    count is in ``rank_search_``, ``cv_results_`` and the map."""
    monkeypatch.setattr(rank, "RANK_START", 50)
    monkeypatch.setattr(rank, "HELD_ROWS", 200)
    X, y, s = _data(1500, d=8)
    y = y if make is FairKernelClassifierCV else X[:, 0] + s
    with dask.config.set({"daskfair.block-rows": 64}):
        fit = make(max_landmarks=300, random_state=5, **GRID).fit(X, y, sensitive_features=s)
        pool = select_landmarks(X, 500, random_state=5)
    order = child_rng(as_seed_sequence(5), 3).permutation(500)
    held_rows, rest = pool[np.sort(order[:200])], order[200:]
    table = fit.rank_search_
    m = int(table.loc[table["chosen"], "n_landmarks"].item())
    assert table["held_rows"].unique().tolist() == [200]
    assert table["gamma"].unique().tolist() == [0.3]
    np.testing.assert_array_equal(fit.feature_map_.landmarks, pool[np.sort(rest[:m])])
    assert set(fit.cv_results_["param_n_landmarks"]) == {m}
    np.testing.assert_allclose(
        table["captured"],
        [_share(pool[rest[:c]], held_rows, fit.feature_map_.params)
         for c in table["n_landmarks"]], rtol=1e-9)
    loaded = daskfair.load(daskfair.save(fit, tmp_path / "m.zarr"))
    np.testing.assert_array_equal(loaded.rank_search_.to_numpy(), table.to_numpy())


def test_at_most_the_ceiling_of_rows_every_row_is_a_landmark():
    """The exact kernel, as ``n_landmarks`` = n rows gives it, and no rank search."""
    X, y, s = _data(400)
    auto = FairKernelClassifierCV(max_landmarks=400, random_state=1, **GRID).fit(
        X, y, sensitive_features=s)
    every = FairKernelClassifierCV(n_landmarks=400, random_state=1, **GRID).fit(
        X, y, sensitive_features=s)
    assert not hasattr(auto, "rank_search_") and len(auto.feature_map_.landmarks) == 400
    np.testing.assert_array_equal(auto.cv_error_, every.cv_error_)
    np.testing.assert_array_equal(auto.dual_coef_, every.dual_coef_)


def test_the_same_rank_for_any_chunking_and_backend(monkeypatch):
    monkeypatch.setattr(rank, "RANK_START", 50)
    monkeypatch.setattr(rank, "HELD_ROWS", 200)
    X, y, s = _data(1500, seed=4, d=8)
    fits = []
    with dask.config.set({"daskfair.block-rows": 64}):  # 24 canonical blocks
        for Xin in (X, da.from_array(X, chunks=50), da.from_array(X, chunks=333)):
            fits.append(FairKernelClassifierCV(max_landmarks=300, random_state=7, **GRID).fit(
                Xin, y, sensitive_features=da.from_array(s, chunks=211)))
    assert fits[0].rank_search_["chosen"].sum() == 1
    for other in fits[1:]:
        np.testing.assert_array_equal(other.rank_search_.to_numpy(),
                                      fits[0].rank_search_.to_numpy())
        np.testing.assert_array_equal(other.cv_error_, fits[0].cv_error_)
        np.testing.assert_array_equal(other.dual_coef_, fits[0].dual_coef_)


def test_the_command_line_leaves_the_rank_to_the_estimator_unless_given():
    from daskfair.cli.fkr_job import build_models

    (_, auto), = build_models({"n_landmarks": None, "max_landmarks": None}, classify=True)
    assert (auto.n_landmarks, auto.max_landmarks) == ("auto", 2000)
    (_, capped), = build_models({"n_landmarks": None, "max_landmarks": 300}, classify=True)
    assert (capped.n_landmarks, capped.max_landmarks) == ("auto", 300)
    (_, fixed), = build_models({"n_landmarks": 500, "max_landmarks": None}, classify=True)
    assert fixed.n_landmarks == 500
    (_, single), = build_models({"n_landmarks": None, "max_landmarks": None}, classify=True,
                                n_fair_features=[4])
    assert single.n_landmarks == 1000  # FKR-F²E itself takes a number
