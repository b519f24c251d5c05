"""FKR-F²E estimators against independent dense references (numpy/scipy/scikit-learn)."""

import itertools
import warnings

import dask
import dask.array as da
import numpy as np
import pandas as pd
import pytest
from sklearn.exceptions import NotFittedError
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.metrics.pairwise import pairwise_kernels

from daskfair.fkr import (
    FairKernelClassifier,
    FairKernelClassifierCV,
    FairKernelRegressor,
    FairKernelRegressorCV,
    FairKernelRidge,
)
from daskfair.fkr.embedding import mean_discrepancy_directions
from daskfair.fkr.ridge import cell_weighted_fit
from daskfair.fkr.statistics import kernel_moments
from daskfair.kernels import kernel_block, kernel_params
from daskfair.nystroem import whitening

from ._dense_reference import absolute_alpha, absolute_mu, dense_fkr_predict, dense_fkrr_predict

POLY = {"metric": "poly", "degree": 3, "coef0": 0.1}


@pytest.fixture
def data():
    rng = np.random.default_rng(0)
    n, d = 300, 5
    s = rng.integers(0, 2, n)
    X = rng.normal(size=(n, d)) + 0.7 * s[:, None]
    y = X[:, 0] - X[:, 1] ** 2 + 0.8 * s + 0.1 * rng.normal(size=n)
    Xt = rng.normal(size=(80, d)) + 0.3
    return X, y, s, Xt


def _rel(a, b):
    return np.max(np.abs(a - b)) / np.max(np.abs(b))


def _exact_moments(X, s, y, params, weights=None, cells=None, **kw):
    """Moments of the exact feature map (every row a landmark), in the whitened basis."""
    T, _ = whitening(kernel_block(X, X, params))
    cells = s if cells is None else cells
    J = int(np.max(s)) + 1
    if cells is s:
        group, label = np.arange(J), np.full(J, -1)
    else:
        group, label = np.repeat(np.arange(J), 2), np.tile([0, 1], J)
    mom = kernel_moments(X, cells, y, weights, X, params, cell_group=group, cell_label=label,
                         **kw)
    return mom, T


@pytest.mark.parametrize("k", [1, 6, 20])
def test_paper_objective_matches_dense_reference(data, k):
    X, y, s, Xt = data
    K = pairwise_kernels(X, gamma=1 / 5, **POLY)
    ref = dense_fkr_predict(X, y, s, Xt, k, absolute_alpha(K, 0.5), gamma=1 / 5, **POLY)
    est = FairKernelRegressor("polynomial", degree=3, coef0=0.1, n_fair_features=k,
                              relative_alpha=0.5,
                              objective="paper", approximation="exact")
    est.fit(X, y, sensitive_features=s)
    assert _rel(est.predict(Xt), ref) < 1e-6


def test_nystroem_with_m_equal_n_is_exact_and_dask_is_lazy(data):
    X, y, s, Xt = data
    exact = FairKernelRegressor("polynomial", degree=3, coef0=0.1, n_fair_features=6,
                                approximation="exact").fit(X, y, sensitive_features=s)
    nys = FairKernelRegressor("polynomial", degree=3, coef0=0.1, n_fair_features=6,
                              n_landmarks=len(X), random_state=3)
    nys.fit(da.from_array(X, chunks=(41, 5)), da.from_array(y, chunks=50),
            sensitive_features=da.from_array(s, chunks=70))
    pred = nys.predict(da.from_array(Xt, chunks=(25, 5)))
    assert isinstance(pred, da.Array)
    np.testing.assert_allclose(pred.compute(), exact.predict(Xt), rtol=1e-8, atol=1e-8)
    feats = nys.transform(da.from_array(Xt, chunks=(25, 5)))
    assert isinstance(feats, da.Array) and feats.shape == (80, 6)


def test_result_independent_of_chunking_over_several_blocks(data):
    X, y, s, Xt = data
    preds = []
    with dask.config.set({"daskfair.block-rows": 64}):  # 300 rows: five canonical blocks
        for chunks in (300, 64, 17):
            est = FairKernelClassifier("rbf", n_fair_features=5, n_landmarks=100, random_state=11)
            est.fit(da.from_array(X, chunks=(chunks, 5)), y > 0, sensitive_features=s)
            preds.append(est.decision_function(Xt))
        est.fit(X, y > 0, sensitive_features=s)  # numpy input: the same tree of sums
        preds.append(est.decision_function(Xt))
    for p in preds[1:]:
        np.testing.assert_array_equal(p, preds[0])


@pytest.mark.parametrize("n_groups", [2, 3, 5])
def test_fair_features_have_equal_group_means_for_any_number_of_groups(n_groups):
    rng = np.random.default_rng(n_groups)
    n = 400
    s = rng.integers(0, n_groups, n)
    X = rng.normal(size=(n, 4)) + 0.5 * s[:, None]
    y = X[:, 0] + s
    est = FairKernelRegressor("rbf", n_fair_features=8, approximation="exact").fit(
        X, y, sensitive_features=s)
    F = est.transform(X)
    overall = F.mean(axis=0)
    for g in range(n_groups):
        np.testing.assert_allclose(F[s == g].mean(axis=0), overall, atol=1e-8)
    # and on a Nyström map, from dask input in several blocks
    with dask.config.set({"daskfair.block-rows": 64}):
        nys = FairKernelRegressor("rbf", n_fair_features=8, n_landmarks=60, random_state=0).fit(
            da.from_array(X, chunks=100), y, sensitive_features=s)
    F = nys.transform(X)
    for g in range(n_groups):
        np.testing.assert_allclose(F[s == g].mean(axis=0), F.mean(axis=0), atol=1e-8)


def test_mean_discrepancy_tradeoff_is_monotone(data):
    X, y, s, _ = data
    params = kernel_params("rbf", 5)
    mom, T = _exact_moments(X, s, y, params)
    stats = mom.total.change_basis(T)
    d = stats.group_means[0] - stats.group_means[1]
    gaps, variances = [], []
    for gamma in (0.0, 0.1, 1.0, 10.0, 100.0):
        W, _ = mean_discrepancy_directions(stats, 4, fairness=gamma)
        gaps.append(((d @ W) ** 2).sum())  # tr(WᵀBW) up to p_0 p_1: the penalised term
        variances.append(np.trace(W.T @ stats.covariance() @ W))
    assert all(a >= b - 1e-12 for a, b in itertools.pairwise(gaps))
    assert all(a >= b - 1e-12 for a, b in itertools.pairwise(variances))
    # the knob acts across its documented range: from kernel PCA to nearly the constraint
    # the knob acts across its documented range: from kernel PCA (γ = 0) to nearly the
    # exact constraint (γ = 10)
    assert gaps[1] < 0.95 * gaps[0] and gaps[2] < 0.1 * gaps[0] and gaps[3] < 1e-4 * gaps[0]
    _, v0 = mean_discrepancy_directions(stats, 4, fairness=0.0)
    # fairness=0 is kernel PCA: eigenvalues of the centered kernel matrix / n
    n = len(X)
    K = kernel_block(X, X, params)
    H = np.eye(n) - 1 / n
    kpca = np.sort(np.linalg.eigvalsh(H @ K @ H / n))[::-1][:4]
    np.testing.assert_allclose(v0, kpca, rtol=1e-8)


def test_fkrr_matches_dense_reference(data):
    X, y, s, Xt = data
    K = pairwise_kernels(X, metric="rbf", gamma=0.2)
    for mu in (0.0, 1.0, 100.0):
        ref = dense_fkrr_predict(X, y, s, Xt, absolute_mu(K, s.astype(float), mu),
                                 absolute_alpha(K, 0.3), metric="rbf", gamma=0.2)
        est = FairKernelRidge(mu, gamma=0.2, relative_alpha=0.3, approximation="exact")
        est.fit(X, y, sensitive_features=s)
        assert _rel(est.predict(Xt), ref) < 1e-6


def test_fkrr_penalty_reduces_covariance_on_a_usable_scale(data):
    X, y, s, _ = data
    covs = []
    for mu in (0.0, 1.0, 10.0, 1000.0):
        p = FairKernelRidge(mu, n_landmarks=150, random_state=0).fit(
            X, y, sensitive_features=s).predict(X)
        covs.append(abs(np.cov(p, s)[0, 1]))
    assert covs[0] > covs[1] > covs[2] > covs[3]
    assert covs[1] < 0.8 * covs[0]     # μ = 1 already acts
    assert covs[3] < 0.01 * covs[0]    # μ = 1000 all but removes the covariance


@pytest.mark.parametrize("make", [
    lambda: FairKernelRegressor(n_fair_features=5, fairness_weight=1.0, approximation="exact"),
    lambda: FairKernelRidge(3.0, approximation="exact"),
    lambda: FairKernelRegressor(n_fair_features=5, approximation="exact"),
])
def test_knobs_are_scale_free(data, make):
    """Doubling every row, or scaling every weight, leaves the model unchanged."""
    X, y, s, Xt = data
    one = make().fit(X, y, sensitive_features=s).predict(Xt)
    two = make().fit(np.vstack([X, X]), np.r_[y, y], sensitive_features=np.r_[s, s])
    np.testing.assert_allclose(two.predict(Xt), one, rtol=1e-7, atol=1e-7)
    weighted = make().fit(X, y, sensitive_features=s, sample_weight=np.full(len(y), 7.0))
    np.testing.assert_allclose(weighted.predict(Xt), one, rtol=1e-9, atol=1e-9)


def test_classifier_threshold_probabilities_and_decision(data):
    X, y, s, Xt = data
    labels = np.where(y > np.median(y), "high", "low")
    clf = FairKernelClassifier("rbf", n_fair_features=10, approximation="exact", threshold=0.5)
    clf.fit(pd.DataFrame(X), labels, sensitive_features=pd.Series(s).map({0: "a", 1: "b"}))
    assert clf.classes_.tolist() == ["high", "low"]
    reg = FairKernelRegressor("rbf", n_fair_features=10, approximation="exact").fit(
        X, (labels == "low").astype(float), sensitive_features=s)
    expected = np.where(reg.predict(Xt) >= 0.5, "low", "high")
    np.testing.assert_array_equal(clf.predict(Xt), expected)   # the seed's midpoint rule
    assert clf.threshold_ == pytest.approx(0.5)
    proba = clf.predict_proba(Xt)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, atol=1e-12)
    np.testing.assert_array_equal(proba[:, 1] >= 0.5, clf.predict(Xt) == "low")
    lazy = clf.predict(da.from_array(Xt, chunks=(30, 5)))
    assert isinstance(lazy, da.Array)
    np.testing.assert_array_equal(lazy.compute(), expected)
    lazy_p = clf.predict_proba(da.from_array(Xt, chunks=(30, 5)))
    np.testing.assert_allclose(lazy_p.compute(), proba, rtol=1e-12)


def test_auto_threshold_is_platts_half_point(data):
    """threshold='auto': σ(a·f + c) fitted by maximum likelihood on the training scores."""
    X, y, s, _ = data
    yb = (y > np.median(y)).astype(int)
    clf = FairKernelClassifier("rbf", n_fair_features=10, approximation="exact").fit(
        X, yb, sensitive_features=s)
    f = clf.predict(X) * 0 + (clf.decision_function(X) - clf.calibration_[1]) / clf.calibration_[0]
    # independent fit on the raw scores (no binning), with Platt's target smoothing
    n_pos, n_neg = yb.sum(), len(yb) - yb.sum()
    t = np.where(yb == 1, (n_pos + 1) / (n_pos + 2), 1 / (n_neg + 2))
    from scipy.optimize import minimize
    from scipy.special import log_expit

    def nll(theta):
        z = theta[0] * f + theta[1]
        return -(t * log_expit(z) + (1 - t) * log_expit(-z)).sum()
    ref = minimize(nll, np.zeros(2), method="BFGS").x
    # binned (256 bins over ±6σ) against exact: close, not equal
    np.testing.assert_allclose(clf.calibration_, ref, rtol=0.05, atol=0.05)
    assert clf.threshold_ == pytest.approx(-ref[1] / ref[0], abs=0.02)


def test_logistic_loss_matches_sklearn_on_the_fair_features(data):
    X, y, s, _ = data
    yb = (y > np.median(y)).astype(int)
    clf = FairKernelClassifier("rbf", n_fair_features=6, approximation="exact", loss="logistic",
                               relative_alpha=1e-3).fit(X, yb, sensitive_features=s)
    F = clf.feature_map_.project(X, clf.projection_)  # the fair features
    # the same penalty in scikit-learn's units: C = 1 / (α·tr(K)/4)
    K = pairwise_kernels(X, metric="rbf", gamma=1 / 5)
    ref = LogisticRegression(C=4 / absolute_alpha(K, 1e-3), tol=1e-12, max_iter=10_000).fit(F, yb)
    np.testing.assert_allclose(clf.coef_, ref.coef_[0], rtol=1e-5, atol=1e-6)
    assert clf.intercept_ == pytest.approx(ref.intercept_[0], rel=1e-5, abs=1e-6)
    assert 1 <= clf.n_iter_ <= 25
    proba = clf.predict_proba(X)
    np.testing.assert_allclose(proba, ref.predict_proba(F), atol=1e-6)


def test_sample_weights_equal_repeated_rows(data):
    X, y, s, Xt = data
    w = np.random.default_rng(1).integers(1, 4, len(y))
    rep = np.repeat(np.arange(len(y)), w)
    kw = {"n_fair_features": 5, "approximation": "exact"}
    # landmarks from the distinct rows in both fits (exact mode: same range of K)
    a = FairKernelRegressor(**kw).fit(X, y, sensitive_features=s, sample_weight=w)
    b = FairKernelRegressor(**kw).fit(X[rep], y[rep], sensitive_features=s[rep])
    np.testing.assert_allclose(a.predict(Xt), b.predict(Xt), rtol=1e-7, atol=1e-7)


def test_cell_weighted_fit_equals_per_row_sample_weights(data):
    """A reductions oracle step from cell moments = the same ridge with per-row weights."""
    X, y, s, _ = data
    yb = (y > np.median(y)).astype(int)
    params = kernel_params("rbf", 5)
    cells = s * 2 + yb
    mom, T = _exact_moments(X, s, yb.astype(float), params, cells=cells, cell_grams=True)
    stats = mom.total.change_basis(T)
    cell_w = np.array([0.3, 2.0, 1.5, 0.7])    # w(g, y), as a reduction step produces
    cell_t = np.array([1.0, 0.0, 0.0, 1.0])    # relabelled targets
    coef, b = cell_weighted_fit(stats, cell_w, cell_t, 0.1, scale=1.0)  # a well-posed system
    Z = kernel_block(X, X, params) @ T
    ref = Ridge(alpha=0.1).fit(Z, cell_t[cells], sample_weight=cell_w[cells])
    np.testing.assert_allclose(coef, ref.coef_, rtol=0, atol=1e-8 * np.abs(ref.coef_).max())
    assert b == pytest.approx(ref.intercept_, rel=1e-8, abs=1e-10)


def test_default_n_components_is_n_over_250():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(1000, 3))
    s = rng.integers(0, 2, 1000)
    est = FairKernelRegressor(n_landmarks=200, random_state=0).fit(X, X[:, 0],
                                                                   sensitive_features=s)
    assert est.n_fair_features_ == 4 and est.transform(X[:5]).shape == (5, 4)


def test_default_k_is_capped_at_the_rank():
    rng = np.random.default_rng(8)
    X = rng.normal(size=(3000, 2))  # linear kernel: rank 2, while n/250 = 12
    s = rng.integers(0, 2, 3000)
    md = FairKernelRegressor("linear", n_landmarks=100, random_state=0).fit(
        X, X[:, 0], sensitive_features=s)
    assert md.n_fair_features_ == 1   # rank 2 minus one constrained direction
    paper = FairKernelRegressor("linear", objective="paper", n_landmarks=100, random_state=0)
    paper.fit(X, X[:, 0], sensitive_features=s)
    assert paper.n_fair_features_ == 2
    with pytest.raises(ValueError, match="no direction left once the group means"):
        # three groups constrain two directions: nothing is left of a rank-2 map
        FairKernelRegressor("linear", n_landmarks=100).fit(
            X, X[:, 0], sensitive_features=rng.integers(0, 3, 3000))
    with pytest.raises(ValueError, match="n_fair_features=12 is larger than the rank"):
        FairKernelRegressor("linear", n_fair_features=12, n_landmarks=100).fit(
            X, X[:, 0], sensitive_features=s)


def test_bad_inputs(data):
    X, y, s, Xt = data
    est = FairKernelRegressor("rbf", n_fair_features=3, n_landmarks=50, random_state=0)
    with pytest.raises(NotFittedError):
        est.predict(Xt)
    with pytest.raises(ValueError, match="1 distinct group"):
        est.fit(X, y, sensitive_features=np.zeros(len(X)))
    with pytest.raises(ValueError, match="defined for two groups, got 3"):
        FairKernelRegressor(objective="paper", n_landmarks=50).fit(
            X, y, sensitive_features=np.arange(len(X)) % 3)
    with pytest.raises(ValueError, match="Inconsistent numbers of rows"):
        est.fit(X, y[:-1], sensitive_features=s)
    Xnan = X.copy()
    Xnan[5, 2] = np.nan
    with pytest.raises(ValueError, match="NaN or infinite"):
        est.fit(Xnan, y, sensitive_features=s)
    with pytest.raises(ValueError, match="NaN or infinite"):
        est.fit(X, np.where(np.arange(len(y)) == 3, np.inf, y), sensitive_features=s)
    with pytest.raises(ValueError, match="n_fair_features=60 is larger than the rank"):
        FairKernelRegressor("linear", n_fair_features=60, n_landmarks=50).fit(
            X, y, sensitive_features=s)
    with pytest.raises(ValueError, match="objective must be one of"):
        FairKernelRegressor(objective="mmd").fit(X, y, sensitive_features=s)
    with pytest.raises(ValueError,
                       match="fairness_weight applies to objective='mean_discrepancy'"):
        FairKernelRegressor(objective="paper", fairness_weight=1.0, n_landmarks=50).fit(
            X, y, sensitive_features=s)
    with pytest.raises(ValueError, match="approximation must be one of"):
        FairKernelRegressor(approximation="rff").fit(X, y, sensitive_features=s)
    with pytest.raises(ValueError, match="sample weights must be >= 0"):
        est.fit(X, y, sensitive_features=s, sample_weight=-np.ones(len(y)))
    with pytest.raises(ValueError, match="sample_weight has 299 entries"):
        est.fit(X, y, sensitive_features=s, sample_weight=np.ones(len(y) - 1))
    with pytest.raises(ValueError, match="loss must be one of"):
        FairKernelClassifier(loss="hinge").fit(X, y > 0, sensitive_features=s)
    with pytest.raises(ValueError, match="threshold must be 'auto' or a finite number"):
        FairKernelClassifier(threshold="median").fit(X, y > 0, sensitive_features=s)
    est.fit(X, y, sensitive_features=s)
    with pytest.raises(ValueError, match="X has 4 features, but FairKernelRegressor is expecting"):
        est.predict(Xt[:, :4])
    with pytest.raises(ValueError, match="exactly two classes"):
        FairKernelClassifier().fit(X, np.arange(len(X)) % 3, sensitive_features=s)
    with pytest.warns(UserWarning, match="got no sensitive_features"):
        est.fit(X, y)


SMALL_CV = {"relative_alphas": (1e-3,), "strengths": (0.0, 1.0), "fairness_weights": (None,),
            "fair_feature_counts": (2,), "cv": 3}


@pytest.mark.parametrize(("cls", "bad", "message"), [
    (FairKernelRegressor, {"n_landmarks": 0}, "n_landmarks must be an integer >= 1, got 0"),
    (FairKernelRegressor, {"n_landmarks": 50.5}, "n_landmarks must be an integer >= 1"),
    (FairKernelRegressor, {"fit_intercept": "yes"}, "fit_intercept must be True or False"),
    (FairKernelRegressor, {"fairness_weight": -1.0},
     "fairness_weight must be None or a finite number >= 0, got -1.0"),
    (FairKernelRegressor, {"fairness_weight": np.inf},
     "fairness_weight must be None or a finite number >= 0, got inf"),
    (FairKernelRegressor, {"relative_alpha": True}, "relative_alpha must be a finite number"),
    (FairKernelRegressor, {"relative_alpha": np.inf}, "relative_alpha must be a finite number"),
    (FairKernelRegressor, {"kernel": "polynomial", "degree": 10**9},
     "degree must be an integer from 1 to 100"),
    (FairKernelRegressor, {"coef0": np.nan}, "coef0 must be a finite number"),
    (FairKernelClassifier, {"threshold": np.inf}, "threshold must be 'auto' or a finite"),
    (FairKernelRegressor, {"n_fair_features": 0}, "n_fair_features must be None or an integer"),
    (FairKernelRegressor, {"kernel": "cosine"}, "kernel must be one of .*, got 'cosine'"),
    (FairKernelRegressor, {"gamma": -1.0}, "gamma must be positive"),
    (FairKernelRegressor, {"random_state": "seed"}, "random_state must be None"),
    (FairKernelClassifier, {"max_iter": 0}, "max_iter must be an integer >= 1, got 0"),
    (FairKernelRidge, {"relative_alpha": -1.0}, "relative_alpha must be a finite number >= 0"),
    (FairKernelRidge, {"fairness_weight": np.inf}, "fairness_weight must be a finite number"),
    (FairKernelRidge, {"landmarks": "random"}, "landmarks must be one of"),
    (FairKernelRidge, {"min_group_size": 0}, "min_group_size must be an integer >= 1"),
    (FairKernelClassifierCV, {"refit": "no"}, "refit must be True or False"),
    (FairKernelClassifierCV, {"strengths": [0.0, None]},
     r"strengths must be .* a non-empty list of values, each a finite number"),
    (FairKernelClassifierCV, {"fair_feature_counts": [0]},
     r"fair_feature_counts must be .* each an integer >= 1, got \[0\]"),
    (FairKernelRegressorCV, {"fairness_weights": [-1.0]},
     r"fairness_weights must be .* each None or a finite number >= 0, got \[-1\.0\]"),
    (FairKernelRegressorCV, {"disparity_confidence": 1.0}, "disparity_confidence must be"),
    (FairKernelRegressorCV, {"rcond": 0.0}, r"rcond must be a finite number in \[1e-15, 1\)"),
])
def test_every_parameter_is_checked_before_the_data_is_read(cls, bad, message, data):
    """One check of every parameter, first: with X=None the parameter's error comes, not the
    input's; and a refused fit leaves the earlier model whole."""
    X, y, s, _ = data
    target = (y > 0).astype(int) if "Classifier" in cls.__name__ else y
    with pytest.raises((ValueError, TypeError), match=message):
        cls(**bad).fit(None, None)
    cv = SMALL_CV if cls.__name__.endswith("CV") else {}
    est = cls(n_landmarks=40, random_state=0, **cv).fit(X, target, sensitive_features=s)
    before = dict(vars(est))
    with pytest.raises((ValueError, TypeError), match=message):
        est.set_params(**bad).fit(X, target, sensitive_features=s)
    assert all(vars(est)[k] is v for k, v in before.items() if k.endswith("_"))


def test_feature_names_are_kept_and_checked(data):
    X, y, s, Xt = data
    cols = [f"f{i}" for i in range(5)]
    est = FairKernelRegressor(n_fair_features=3, n_landmarks=50, random_state=0).fit(
        pd.DataFrame(X, columns=cols), y, sensitive_features=s)
    assert est.feature_names_in_.tolist() == cols
    with pytest.raises(ValueError, match="feature names should match"):
        est.predict(pd.DataFrame(Xt, columns=cols[::-1]))
    with pytest.warns(UserWarning, match="does not have valid feature names"):
        est.predict(Xt)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        est.predict(pd.DataFrame(Xt, columns=cols))


@pytest.mark.parametrize("objective", ["paper", "mean_discrepancy"])
def test_exact_on_real_data_matches_dense_and_nystroem(data_dir, objective):
    """The authors' Communities & Crime file: 600 training rows, polynomial degree 4."""
    from daskfair.datasets import load_dataset
    from daskfair.scaling import ColumnScaler

    data = load_dataset("ffe_crime", data_dir)
    train, test = data.splits[0][:600], data.splits[1][-200:]
    X = ColumnScaler().fit(data.X[train]).transform(data.X)
    y, s = data.y.astype(float), data.sensitive
    kernel = {"kernel": "polynomial", "degree": 4, "coef0": 0.1}
    exact = FairKernelRegressor(**kernel, n_fair_features=12, objective=objective,
                                relative_alpha=0.1,
                                approximation="exact").fit(X[train], y[train],
                                                           sensitive_features=s[train])
    if objective == "paper":
        kw = {"metric": "poly", "degree": 4, "coef0": 0.1, "gamma": 1 / X.shape[1]}
        K = pairwise_kernels(X[train], **kw)
        ref = dense_fkr_predict(X[train], y[train], s[train], X[test], 12,
                                absolute_alpha(K, 0.1), **kw)
        assert _rel(exact.predict(X[test]), ref) < 1e-6
    nys = FairKernelRegressor(**kernel, n_fair_features=12, objective=objective,
                              relative_alpha=0.1,
                              n_landmarks=600, random_state=0)
    with dask.config.set({"daskfair.block-rows": 128}):
        nys.fit(da.from_array(X[train], chunks=(128, -1)), y[train],
                sensitive_features=s[train])
    assert _rel(nys.predict(X[test]), exact.predict(X[test])) < 1e-6
