"""Model selection under a disparity bound: every claim of daskfair.fkr.cv against a direct
computation (separate fits, per-row scores, scikit-learn)."""

import dask
import dask.array as da
import numpy as np
import pytest
from sklearn.base import clone

from daskfair._random import fold_of
from daskfair.fkr import (
    FairKernelClassifier,
    FairKernelClassifierCV,
    FairKernelRegressor,
    FairKernelRegressorCV,
    FairKernelRidge,
)
from daskfair.fkr.candidates import Search, build_candidates
from daskfair.fkr.frontier import plot_frontier
from daskfair.fkr.ridge import penalty_scale
from daskfair.fkr.search import search_grid
from daskfair.fkr.statistics import kernel_moments
from daskfair.kernels import kernel_block, kernel_params
from daskfair.metrics import demographic_parity_difference, equalized_odds_difference, error_rate
from daskfair.nystroem import fit_nystroem

from ._counting import counted


def _data(n=600, n_groups=2, seed=0):
    rng = np.random.default_rng(seed)
    s = rng.integers(0, n_groups, n)
    X = rng.normal(size=(n, 4)) + 0.6 * s[:, None]
    logit = X[:, 0] - 0.5 * X[:, 1] ** 2 + 0.8 * s - 0.3
    y = (rng.random(n) < 1 / (1 + np.exp(-2 * logit))).astype(int)
    return X, y, s


# one width (1/n_features): the machinery's tests; gammas="auto" has its own
SMALL = {"relative_alphas": (1e-4, 1e-2), "strengths": (0.0, 0.5, 1.0, 1.5),
         "fair_feature_counts": (3, 8), "gammas": None,
         "fairness_weights": (None, 1.0), "n_landmarks": 80}


def test_refit_with_every_row_a_landmark_equals_the_plain_exact_fits():
    X, y, s = _data(300)
    cv = FairKernelClassifierCV(approximation="exact", cv=3, random_state=0,
                                **{**SMALL, "relative_alphas": (1e-3, 1e-2), "n_landmarks": 1000})
    cv.fit(X, y, sensitive_features=s)
    Xt = _data(50, seed=9)[0]
    scores = cv.feature_map_.kernel(Xt) @ cv.candidate_dual_coef_ + cv.candidate_intercept_
    # every candidate, from the total moments, against the plain fits with the same settings
    rows = cv._table
    for k, row in rows.iterrows():
        if row.family == "embedding" and np.isnan(row.fairness_weight):
            plain = FairKernelRegressor(n_fair_features=int(row.n_fair_features),
                                        relative_alpha=row.relative_alpha,
                                        approximation="exact")
        elif row.family == "reduction" and row.strength == 0:
            plain = FairKernelRidge(0.0, relative_alpha=row.relative_alpha, approximation="exact")
        else:
            continue
        plain.fit(X, y.astype(float), sensitive_features=s)
        np.testing.assert_allclose(scores[:, k], plain.predict(Xt), rtol=1e-8, atol=1e-8)


def test_every_fold_from_one_pass_equals_a_separate_fit_on_its_training_rows():
    X, y, s = _data(500)
    params = kernel_params("rbf", 4)
    fmap = fit_nystroem(X, params, n_landmarks=60, random_state=0)
    cells = s * 2 + y
    group, label = np.repeat([0, 1], 2), np.tile([0, 1], 2)
    search = Search(task="classification", constraint="demographic_parity",
                    families=("reduction", "embedding"), alphas=(1e-4, 1e-2),
                    strengths=(0.0, 0.7, 1.4), components=(3, 6), fairness=(None, 1.0))
    with dask.config.set({"daskfair.block-rows": 64}):
        folded = kernel_moments(da.from_array(X, chunks=97), cells, y.astype(float), None,
                                fmap.landmarks, params, cell_group=group, cell_label=label,
                                n_folds=4, fold_seed=123)
    fold = fold_of(np.arange(len(X)), 4, 123)
    assert np.bincount(fold, minlength=4).min() > 0
    for f in range(4):
        train = folded.train(f).change_basis(fmap.whitening)
        _, path = build_candidates(train, search, penalty_scale(train))
        rows = fold != f
        alone = kernel_moments(X[rows], cells[rows], y[rows].astype(float), None,
                               fmap.landmarks, params, cell_group=group,
                               cell_label=label).total.change_basis(fmap.whitening)
        _, refit = build_candidates(alone, search, penalty_scale(alone))
        scale = np.abs(refit.coef).max()
        np.testing.assert_allclose(path.coef, refit.coef, rtol=0, atol=1e-8 * scale)
        np.testing.assert_allclose(path.intercept, refit.intercept, rtol=0, atol=1e-8)


def _fold_models(cv, X, y, s):
    """The per-fold candidate scores of a fitted CV estimator, recomputed directly."""
    fmap = cv.feature_map_
    seed = cv._fold_seed()
    n_groups = int(s.max()) + 1
    classify = isinstance(cv, FairKernelClassifierCV)
    cells = s * 2 + y if classify else s
    group = np.repeat(np.arange(n_groups), 2) if classify else np.arange(n_groups)
    label = np.tile([0, 1], n_groups) if classify else np.full(n_groups, -1)
    folded = kernel_moments(X, cells, y.astype(float), None, fmap.landmarks, fmap.params,
                            cell_group=group, cell_label=label, n_folds=cv.cv, fold_seed=seed)
    folded = type(folded)(tuple(m.change_basis(fmap.whitening) for m in folded.folds))
    search = search_grid(folded.total, cv._search_params(), cv._task)
    fold = fold_of(np.arange(len(X)), cv.cv, seed)
    Z = fmap.transform(X)
    scores = np.empty((len(X), cv.n_candidates_))
    for f in range(cv.cv):
        train = folded.train(f)
        _, lin = build_candidates(train, search, penalty_scale(train))
        rows = fold == f
        scores[rows] = Z[rows] @ lin.coef + lin.intercept
    return scores


@pytest.mark.parametrize("constraint", ["demographic_parity", "equalized_odds"])
def test_validation_error_and_disparity_equal_per_row_predictions(constraint):
    X, y, s = _data(500, n_groups=3)
    cv = FairKernelClassifierCV(constraints=constraint, cv=3, random_state=1, **SMALL)
    with dask.config.set({"daskfair.block-rows": 64}):
        cv.fit(da.from_array(X, chunks=120), y, sensitive_features=s)
    scores = _fold_models(cv, X, y, s)
    metric = equalized_odds_difference if constraint == "equalized_odds" else None
    for k in range(0, cv.n_candidates_, 5):
        for j in (1, 40, 128, 200, 255):
            pred = (scores[:, k] >= cv.thresholds_[k, j]).astype(int)
            assert cv.cv_error_[k, j] == pytest.approx(error_rate(y, pred), abs=1e-12)
            direct = (metric(y, pred, sensitive_features=s) if metric
                      else demographic_parity_difference(None, pred, sensitive_features=s))
            assert cv.cv_disparity_[k, j] == pytest.approx(direct, abs=1e-12)
            assert cv.cv_disparity_sem_[k, j] == pytest.approx(
                _direct_sem(y, pred, s, constraint), abs=1e-12, nan_ok=True)


def _direct_sem(y, pred, s, constraint):
    """Binomial standard error of the largest gap's two rates, from the rows."""
    def worst(rows):
        groups = [g for g in np.unique(s) if rows[s == g].any()]
        rates = {g: pred[rows & (s == g)].mean() for g in groups}
        hi, lo = max(groups, key=rates.get), min(groups, key=rates.get)
        var = [rates[g] * (1 - rates[g]) / (rows & (s == g)).sum() for g in (hi, lo)]
        return rates[hi] - rates[lo], np.sqrt(sum(var))

    if constraint == "demographic_parity":
        return worst(np.ones(len(y), bool))[1]
    gaps = [worst(y == c) for c in (0, 1)]
    return max(gaps, key=lambda g: g[0])[1]


def test_regressor_validation_metrics_from_moments_equal_per_row_predictions():
    rng = np.random.default_rng(3)
    n = 500
    s = rng.integers(0, 3, n)
    X = rng.normal(size=(n, 4)) + 0.5 * s[:, None]
    y = X[:, 0] - X[:, 1] ** 2 + s + 0.2 * rng.normal(size=n)
    cv = FairKernelRegressorCV(cv=4, disparity_bound=0.1, random_state=2, **SMALL)
    cv.fit(X, y, sensitive_features=s)
    scores = _fold_models(cv, X, y, s)
    rmse = np.sqrt(((scores - y[:, None]) ** 2).mean(axis=0))
    np.testing.assert_allclose(cv.cv_error_[:, 0], rmse, rtol=1e-9)
    means = np.array([scores[s == g].mean(axis=0) for g in range(3)])
    np.testing.assert_allclose(cv.cv_disparity_[:, 0], means.max(axis=0) - means.min(axis=0),
                               rtol=1e-7, atol=1e-10)
    # the gap's standard error: the spread of the folds' own gaps
    fold = fold_of(np.arange(n), cv.cv, cv._fold_seed())
    gaps = []
    for f in range(cv.cv):
        m = np.array([scores[(fold == f) & (s == g)].mean(axis=0) for g in range(3)])
        gaps.append(m.max(axis=0) - m.min(axis=0))
    np.testing.assert_allclose(cv.cv_disparity_sem_[:, 0],
                               np.std(gaps, axis=0, ddof=1) / np.sqrt(cv.cv), rtol=1e-6,
                               atol=1e-10)
    assert cv.best_disparity_ <= 0.1
    # t = 1 of the reduction equalises the groups' mean predictions on the training rows
    reduction = cv._table[(cv._table.family == "reduction") & (cv._table.strength == 1.0)]
    pred = cv.feature_map_.kernel(X) @ cv.candidate_dual_coef_ + cv.candidate_intercept_
    for k in reduction.index:
        g_means = [pred[s == g, k].mean() for g in range(3)]
        assert max(g_means) - min(g_means) < 1e-8 * np.abs(y).max()


def _two_group_upper(d, sem, confidence):
    """The population bound of two groups' gap, by hand (docs/design.md#fkr-selection-margin):
    Šidák's constant for the ordered pairs that may be the largest gap; one pair (the
    observed order) when d > c₂·s, both when not."""
    from scipy.stats import norm

    c2 = norm.ppf(confidence ** 0.5)
    return np.where(d > c2 * sem, d + norm.ppf(confidence) * sem, d + c2 * sem)


@pytest.mark.parametrize("confidence", [0.9, 0.75])
def test_selection_keeps_a_margin_for_the_validation_noise(confidence):
    X, y, s = _data(3000)
    cv = FairKernelClassifierCV(cv=4, disparity_bound=0.08, random_state=0,
                                disparity_confidence=confidence, **SMALL)
    cv.fit(X, y, sensitive_features=s)
    upper = _two_group_upper(cv.cv_disparity_, cv.cv_disparity_sem_, confidence)
    ok = upper <= 0.08
    # a real margin: some candidate within the bound on the validation rows is not feasible
    assert (ok < (cv.cv_disparity_ <= 0.08)).any()
    assert ok.any()
    assert cv.best_score_ == 1 - cv.cv_error_[ok].min()
    lo, hi = cv.best_disparity_interval_
    chosen = cv.frontier_[cv.frontier_.selected].iloc[0]
    assert hi == pytest.approx(float(_two_group_upper(chosen.disparity, chosen.disparity_sem,
                                                      confidence)), abs=1e-12)
    assert hi <= 0.08 and lo == pytest.approx(max(0, 2 * chosen.disparity - hi), abs=1e-12)
    np.testing.assert_allclose(cv.frontier_.disparity_upper, _two_group_upper(
        cv.frontier_.disparity, cv.frontier_.disparity_sem, confidence), rtol=1e-12)
    # no entry of the table within the bound with its margin is more accurate
    fr = cv.frontier_
    assert (fr.error[fr.disparity_upper <= 0.08] >= chosen.error).all()
    # the plot shows the interval the bound was compared with
    import matplotlib

    matplotlib.use("Agg")
    ax = cv.plot_frontier()
    drawn = [line.get_xdata() for line in ax.get_lines() if "upper bound" in line.get_label()]
    assert len(drawn) == 1 and tuple(drawn[0]) == cv.best_disparity_interval_
    # the same figure from the arrays a run store keeps (pareto as 0/1, no family column)
    stored = {"disparity": fr.disparity.to_numpy(), "error": fr.error.to_numpy(),
              "pareto": fr.pareto.to_numpy().astype(np.int8)}
    again = plot_frontier(stored, bound=cv.disparity_bound_, chosen=(chosen.disparity,
                          chosen.error), interval=cv.best_disparity_interval_,
                          confidence=cv.disparity_confidence_)
    for label in ("front", "bound 0.08", f"upper bound at {confidence:.0%}"):
        ours, theirs = ([np.asarray(line.get_xydata()) for line in a.get_lines()
                         if line.get_label() == label] for a in (ax, again))
        assert len(ours) == 1 and np.array_equal(ours[0], theirs[0]), label
    # a bound on a sample of 500 new rows adds that sample's noise: every entry's bound is
    # wider, and the choice no more accurate; back to the population's, the same choice
    from daskfair.fkr.selection import upper_bounds

    population = upper_bounds(vars(cv), confidence, None)
    sample = upper_bounds(vars(cv), confidence, 500)
    finite = np.isfinite(population)
    assert (sample[finite] >= population[finite]).all()
    noisy = finite & (population > cv.cv_disparity_)  # not where every rate is 0 or 1
    assert noisy.any() and (sample[noisy] > population[noisy]).all()
    cv.choose(0.08, new_rows=500)
    assert cv.new_rows_ == 500 and cv.best_disparity_interval_[1] <= 0.08
    assert cv.best_score_ <= 1 - chosen.error
    cv.choose(0.08, new_rows=None)
    assert cv.best_disparity_interval_ == (lo, hi)
    # without a margin, the same search picks a more accurate candidate
    cv.choose(0.08, disparity_confidence=None)
    assert cv.best_score_ > 1 - chosen.error
    assert cv.best_disparity_interval_ == (cv.best_disparity_, cv.best_disparity_)


def test_selection_is_the_most_accurate_within_the_bound():
    X, y, s = _data(800)
    cv = FairKernelClassifierCV(cv=4, disparity_bound=0.03, random_state=0,
                                disparity_confidence=None, **SMALL)
    cv.fit(X, y, sensitive_features=s)
    ok = cv.cv_disparity_ <= 0.03
    assert cv.best_disparity_ <= 0.03
    assert cv.best_score_ == 1 - cv.cv_error_[ok].min()  # accuracy
    chosen = cv.frontier_[cv.frontier_.selected]
    assert len(chosen) == 1 and chosen.iloc[0].threshold == cv.threshold_
    # the frontier holds every candidate, and its global front is non-dominated
    assert set(cv.frontier_.candidate) == set(range(cv.n_candidates_))
    front = cv.frontier_[cv.frontier_.pareto].sort_values("disparity")
    assert (np.diff(front.error.to_numpy()) < 0).all()
    # predictions are the refitted candidate's score against the chosen threshold
    f = cv.feature_map_.kernel(X) @ cv.dual_coef_ + cv.intercept_
    np.testing.assert_array_equal(cv.predict(X), (f >= cv.threshold_).astype(int))
    proba = cv.predict_proba(X)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, atol=1e-12)
    np.testing.assert_array_equal(cv.decision_function(X) >= 0, f >= cv.threshold_)


def test_choose_reselects_without_reading_the_data(monkeypatch):
    X, y, s = _data(600)
    a = FairKernelClassifierCV(cv=3, disparity_bound=0.05, random_state=0, **SMALL).fit(
        X, y, sensitive_features=s)
    b = FairKernelClassifierCV(cv=3, disparity_bound=0.01, random_state=0, **SMALL).fit(
        X, y, sensitive_features=s)
    c = FairKernelClassifierCV(cv=3, disparity_bound=0.01, disparity_confidence=None,
                               random_state=0, **SMALL).fit(X, y, sensitive_features=s)
    def no_pass(*args, **kwargs):
        raise AssertionError("choose() must not read the data")
    monkeypatch.setattr("daskfair.fkr.search.score_histograms", no_pass)
    monkeypatch.setattr("daskfair.fkr._base.cell_moments", no_pass)
    a.choose(0.01)
    # the choice and the model move; the constructor parameter does not
    assert a.disparity_bound == 0.05 and a.disparity_bound_ == 0.01
    assert a.best_params_ == b.best_params_ and a.best_threshold_ == b.best_threshold_
    np.testing.assert_array_equal(a.dual_coef_, b.dual_coef_)
    assert a.threshold_ == b.threshold_ and a.calibration_ == b.calibration_
    # the margin changes without a pass too
    a.choose(0.01, disparity_confidence=None)
    assert a.disparity_confidence == 0.9 and a.disparity_confidence_ is None
    assert a.best_params_ == c.best_params_ and a.best_threshold_ == c.best_threshold_
    assert a.best_disparity_interval_ == c.best_disparity_interval_


def test_same_result_for_numpy_dask_any_chunking_and_weight_scale():
    X, y, s = _data(700)
    fits = []
    with dask.config.set({"daskfair.block-rows": 64}):  # eleven canonical blocks
        for Xin in (X, da.from_array(X, chunks=50), da.from_array(X, chunks=333)):
            fits.append(FairKernelClassifierCV(cv=4, random_state=5, **SMALL).fit(
                Xin, y, sensitive_features=s))
        weighted = FairKernelClassifierCV(cv=4, random_state=5, **SMALL).fit(
            X, y, sensitive_features=s, sample_weight=np.full(len(y), 2.0))
    for other in fits[1:]:
        np.testing.assert_array_equal(other.cv_error_, fits[0].cv_error_)
        np.testing.assert_array_equal(other.dual_coef_, fits[0].dual_coef_)
        assert other.best_params_ == fits[0].best_params_
    # doubling every row's weight changes no statistic's meaning: same choice and model
    chosen = {k: v for k, v in fits[0].best_params_.items() if k != "threshold"}
    assert {k: v for k, v in weighted.best_params_.items() if k != "threshold"} == chosen
    assert weighted.threshold_ == pytest.approx(fits[0].threshold_, rel=1e-12)
    np.testing.assert_allclose(weighted.dual_coef_, fits[0].dual_coef_, rtol=0,
                               atol=1e-8 * np.abs(fits[0].dual_coef_).max())
    np.testing.assert_allclose(weighted.cv_error_, fits[0].cv_error_, atol=1e-12)


def test_the_reduction_reaches_parity_where_the_unconstrained_model_does_not():
    X, y, s = _data(3000)
    cv = FairKernelClassifierCV(cv=5, disparity_bound=0.02, random_state=0, n_landmarks=150)
    cv.fit(X, y, sensitive_features=s)
    Xt, yt, st = _data(3000, seed=11)
    plain = FairKernelRidge(0.0, n_landmarks=150, random_state=0).fit(
        X, y.astype(float), sensitive_features=s)
    sd_plain = demographic_parity_difference(None, (plain.predict(Xt) >= 0.5).astype(int),
                                     sensitive_features=st)
    sd_cv = demographic_parity_difference(None, cv.predict(Xt), sensitive_features=st)
    assert sd_plain > 0.2 and sd_cv < 0.06   # held-out rows: the bound holds up to noise
    assert error_rate(yt, cv.predict(Xt)) < min(y.mean(), 1 - y.mean())  # beats the constant


def test_regressor_warns_when_no_candidate_meets_the_bound():
    rng = np.random.default_rng(0)
    n = 400
    s = rng.integers(0, 2, n)
    X = rng.normal(size=(n, 3)) + s[:, None]
    y = X[:, 0] + 2 * s
    cv = FairKernelRegressorCV(cv=3, disparity_bound=0.0, random_state=0, gammas=None,
                               families=("embedding",), fairness_weights=(1.0,), n_landmarks=60,
                               fair_feature_counts=(2,))
    with pytest.warns(UserWarning, match="no candidate reaches a validation disparity"):
        cv.fit(X, y, sensitive_features=s)
    assert cv.best_disparity_ == cv.cv_disparity_.min()


def test_bad_parameters():
    X, y, s = _data(200)
    for kw, match in [({"cv": 1}, "cv must be an integer"),
                      ({"disparity_bound": -0.1}, "disparity_bound must be"),
                      ({"families": ("boosting",)}, "families must be one of"),
                      ({"constraints": "calibration"}, "constraints must be one of"),
                      ({"relative_alphas": (-1.0,)},
                       "relative_alphas must be None or a finite number")]:
        with pytest.raises(ValueError, match=match):
            FairKernelClassifierCV(**kw).fit(X, y, sensitive_features=s)


def test_a_target_whose_sums_overflow_is_refused():
    # found by tests/fuzz_entry_points.py: y near 1e307 made Σ y·z infinite and SciPy's
    # solver refuse it; below that, Σ y² overflowed and every validation error was inf
    from daskfair import FairKernelRegressor, FairKernelRidge

    X, _, s = _data(200)
    y = X[:, 0] + s
    cv = FairKernelRegressorCV(cv=2, random_state=0, **SMALL)
    errors = cv.fit(X, y * 1e100, sensitive_features=s).cv_results_["mean_test_error"]
    assert np.isfinite(errors).all()
    for est in (cv, FairKernelRegressor(n_fair_features=2, n_landmarks=40, random_state=0),
                FairKernelRidge(n_landmarks=40, random_state=0)):
        assert np.isfinite(clone(est).fit(X, y * 1e100, sensitive_features=s).predict(X)).all()
        for scale in (1e160, 1e300, 1e307):
            with pytest.raises(ValueError, match=r"y is too large for its sums over the rows"):
                clone(est).fit(X, y * scale, sensitive_features=s)


def test_fairlearn_exponentiated_gradient_wraps_the_classifier():
    reductions = pytest.importorskip("fairlearn.reductions")
    X, y, s = _data(400)
    import warnings

    base = FairKernelClassifier(n_fair_features=5, n_landmarks=60, random_state=0)
    eg = reductions.ExponentiatedGradient(
        base, reductions.DemographicParity(difference_bound=0.02), max_iter=8)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the base is fitted without groups; pandas notes
        eg.fit(X, y, sensitive_features=s)
    pred = eg.predict(X, random_state=0)
    assert set(np.unique(pred)) <= {0, 1} and len(eg.predictors_) >= 1
    # the oracle saw per-row weights: its fits differ from the unweighted one
    w = np.where(y == 1, 3.0, 1.0)
    weighted = FairKernelClassifier(n_fair_features=5, n_landmarks=60, random_state=0).fit(
        X, y, sensitive_features=s, sample_weight=w)
    plain = FairKernelClassifier(n_fair_features=5, n_landmarks=60, random_state=0).fit(
        X, y, sensitive_features=s)
    assert not np.allclose(weighted.dual_coef_, plain.dual_coef_)


def test_fold_assignment_depends_on_position_and_seed_only():
    rows = np.arange(10_000)
    a = fold_of(rows, 5, 7)
    np.testing.assert_array_equal(np.concatenate([fold_of(rows[:3333], 5, 7),
                                                  fold_of(rows[3333:], 5, 7)]), a)
    counts = np.bincount(a, minlength=5)
    assert counts.min() > 1850 and counts.max() < 2150       # balanced
    assert (fold_of(rows, 5, 8) != a).mean() > 0.7            # another seed, another split


def test_kernel_block_of_the_feature_map_is_what_the_scores_use():
    X, y, s = _data(200)
    cv = FairKernelClassifierCV(cv=3, random_state=0, **SMALL).fit(X, y,
                                                                   sensitive_features=s)
    f = kernel_block(X, cv.feature_map_.landmarks, cv.feature_map_.params) @ cv.dual_coef_
    np.testing.assert_allclose(f + cv.intercept_,
                               cv.decision_function(X) / cv.calibration_[0] + cv.threshold_,
                               rtol=1e-9, atol=1e-9)


def _counted(n_blocks, seed=0):
    """X as a dask array whose every block computation is counted, 64-row blocks."""
    import collections

    rng = np.random.default_rng(seed)
    base = rng.normal(size=(64 * n_blocks, 4))
    s = (rng.random(len(base)) < 0.4).astype(int)
    y = (base[:, 0] + s + rng.normal(size=len(base)) > 0.5).astype(int)
    counts = collections.Counter()
    return counted(base, counts), y, s, counts


@pytest.mark.parametrize(("make", "passes"), [
    (lambda: FairKernelRegressor(n_fair_features=3, n_landmarks=40, random_state=0), 1),
    (lambda: FairKernelRidge(1.0, n_landmarks=40, random_state=0), 1),
    (lambda: FairKernelClassifier(n_fair_features=3, n_landmarks=40, random_state=0), 2),
    (lambda: FairKernelClassifierCV(cv=3, random_state=0, **SMALL), 2),
    (lambda: FairKernelRegressorCV(cv=3, random_state=0, **SMALL), 1),
])
def test_passes_over_x_are_what_the_docstrings_say(make, passes):
    """Every block of X is computed `passes` times, plus once more for the landmark draw's
    eight blocks (of forty): "one pass" means one read of the data, not two."""
    from daskfair.nystroem import MIN_LANDMARK_BLOCKS

    X, y, s, counts = _counted(40)
    with dask.config.set({"daskfair.block-rows": 64, "scheduler": "sync"}):
        make().fit(X, y, sensitive_features=s)
    extra = [b for b in range(40) if counts[b] == passes + 1]
    assert all(counts[b] in (passes, passes + 1) for b in range(40)), counts
    assert len(extra) == MIN_LANDMARK_BLOCKS


@pytest.mark.parametrize(("make", "passes"), [(FairKernelClassifierCV, 2),
                                               (FairKernelRegressorCV, 1)])
def test_several_kernel_settings_share_one_landmark_draw(make, passes):
    X, y, s, counts = _counted(40)
    with dask.config.set({"daskfair.block-rows": 64, "scheduler": "sync"}):
        make(cv=3, random_state=0, **{**SMALL, "gammas": [0.1, 0.5]}).fit(
            X, y, sensitive_features=s)
    # passes per gamma (two for the classifier, one for the regressor), one landmark draw
    assert sorted(set(counts.values())) == [2 * passes, 2 * passes + 1]


@pytest.mark.parametrize(("make", "reads"), [
    (lambda: FairKernelRegressor(n_fair_features=3, n_landmarks=40, random_state=0), 1),
    (lambda: FairKernelRidge(n_landmarks=40, random_state=0), 1),
    (lambda: FairKernelClassifier(n_fair_features=3, n_landmarks=40, random_state=0), 2),
    (lambda: FairKernelRegressorCV(cv=3, random_state=0, **SMALL), 1),
    (lambda: FairKernelClassifierCV(cv=3, random_state=0, **SMALL), 2),
])
def test_reads_of_dask_labels_and_groups_are_what_the_docstrings_say(make, reads):
    """y and s are read with X in each pass, which lists the groups and classes itself: the
    estimators' Notes say so (no read before the passes)."""
    import collections

    X, y, s, x_counts = _counted(40)
    counts = collections.Counter()
    classify = reads == 2
    dy = counted(np.where(y == 1, "yes", "no") if classify else y.astype(float), counts, "y")
    ds = counted(np.where(s == 1, "f", "m"), counts, "s")
    with dask.config.set({"daskfair.block-rows": 64, "scheduler": "sync"}):
        est = make().fit(X, dy, sensitive_features=ds)
    assert {v for (n, _), v in counts.items() if n == "y"} == {reads}
    assert {v for (n, _), v in counts.items() if n == "s"} == {reads}
    assert min(x_counts.values()) == reads  # as often as X's blocks outside the landmark draw
    assert est.groups_.tolist() == ["f", "m"]
    if classify:
        assert est.classes_.tolist() == ["no", "yes"]


def test_a_minimum_group_size_reads_dask_groups_once_more_and_x_no_more():
    """min_group_size > 1 counts the groups first: one more read of s, none of X or y."""
    import collections

    X, y, s, x_counts = _counted(40)
    counts = collections.Counter()
    dy = counted(y, counts, "y")
    ds = counted(np.where(s == 1, "f", "m"), counts, "s")
    with dask.config.set({"daskfair.block-rows": 64, "scheduler": "sync"}):
        est = FairKernelClassifierCV(cv=3, random_state=0, min_group_size=5, **SMALL).fit(
            X, dy, sensitive_features=ds)
    assert {v for (n, _), v in counts.items() if n == "s"} == {3}
    assert {v for (n, _), v in counts.items() if n == "y"} == {2}
    assert min(x_counts.values()) == 2
    assert est.groups_.tolist() == ["f", "m"] and est.merged_groups_ == {}


def test_logistic_loss_reads_x_once_per_newton_step():
    """loss="logistic": the moments pass, then one pass per Newton step (n_iter_)."""
    from daskfair.nystroem import MIN_LANDMARK_BLOCKS

    X, y, s, counts = _counted(40)
    with dask.config.set({"daskfair.block-rows": 64, "scheduler": "sync"}):
        est = FairKernelClassifier(n_fair_features=3, n_landmarks=40, random_state=0,
                                   loss="logistic").fit(X, y, sensitive_features=s)
    passes = 1 + est.n_iter_
    assert est.n_iter_ >= 2
    assert sorted(set(counts.values())) == [passes, passes + 1]
    assert sum(v == passes + 1 for v in counts.values()) == MIN_LANDMARK_BLOCKS


@pytest.mark.parametrize("mu", [0.0, 1.0])
def test_fkrr_from_the_cvs_moments_is_the_fit_of_its_own_with_no_pass(mu, monkeypatch):
    """The claim of docs/guide/classification.md for the CLI's baselines:
    FairKernelRidge.fit_moments on the CV's first-pass moments equals FairKernelRidge.fit on
    the same rows and landmarks (to 1e-9), and reads no data. Ten canonical row blocks, uneven
    input chunks."""
    X, y, s = _data(600)
    Xd = da.from_array(X, chunks=97)
    kw = {"gamma": 0.2, "n_landmarks": 60, "random_state": 0}
    with dask.config.set({"daskfair.block-rows": 64}):
        cv = FairKernelClassifierCV(cv=3, gammas=kw["gamma"], n_landmarks=60,
                                    random_state=0).fit(Xd, y, sensitive_features=s)
        own = FairKernelRidge(mu, relative_alpha=1e-3, **kw).fit(Xd, y.astype(float),
                                                                 sensitive_features=s)
    np.testing.assert_array_equal(own.feature_map_.landmarks, cv.feature_maps_[0].landmarks)

    def no_pass(*args, **kwargs):
        raise AssertionError("fit_moments must not read the data")
    monkeypatch.setattr("daskfair.fkr._base.cell_moments", no_pass)
    monkeypatch.setattr("daskfair.fkr.statistics.kernel_moments", no_pass)
    solved = FairKernelRidge(mu, relative_alpha=1e-3, **kw).fit_moments(cv.moments_[0],
                                                                        cv.feature_maps_[0])
    np.testing.assert_allclose(solved.dual_coef_, own.dual_coef_, rtol=0, atol=1e-9)
    assert solved.intercept_ == pytest.approx(own.intercept_, abs=1e-9)
    np.testing.assert_allclose(solved.predict(X), own.predict(X), rtol=0, atol=1e-9)


def test_landmarks_beyond_the_rows_are_the_exact_model():
    """n_landmarks >= n_samples makes every training row a landmark: the same landmarks,
    in the same order, and the same bits as approximation="exact" (what the fkr command's
    --n-landmarks help promises)."""
    X, y, s = _data(300)
    exact = FairKernelClassifierCV(approximation="exact", cv=3, random_state=0)
    wide = FairKernelClassifierCV(n_landmarks=1000, cv=3, random_state=0)
    exact.fit(X, y, sensitive_features=s)
    wide.fit(X, y, sensitive_features=s)
    np.testing.assert_array_equal(wide.feature_map_.landmarks, exact.feature_map_.landmarks)
    np.testing.assert_array_equal(wide.feature_map_.landmarks, X)
    np.testing.assert_array_equal(wide.decision_function(X), exact.decision_function(X))
