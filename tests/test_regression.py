import itertools

import dask.array as da
import numpy as np
import pandas as pd
import pytest
from sklearn.exceptions import NotFittedError

from daskfair.fkr.embedding import group_statistics, mean_discrepancy_directions
from daskfair.fkr.estimators import FairKernelClassifier, FairKernelRegressor, FairKernelRidge
from daskfair.kernels import kernel_params

from ._dense_reference import dense_fkr_predict, dense_fkrr_predict

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


@pytest.mark.parametrize("k", [1, 6, 20])
def test_exact_matches_dense_reference(data, k):
    X, y, s, Xt = data
    ref = dense_fkr_predict(X, y, s, Xt, k, 0.5, gamma=1 / 5, **POLY)
    est = FairKernelRegressor(
        "polynomial", degree=3, coef0=0.1, n_components=k, alpha=0.5, approximation="exact"
    ).fit(X, y, sensitive_features=s)
    assert _rel(est.predict(Xt), ref) < 1e-6


def test_nystroem_with_m_equal_n_is_exact_and_dask_is_lazy(data):
    X, y, s, Xt = data
    exact = FairKernelRegressor("polynomial", degree=3, coef0=0.1, n_components=6,
                                approximation="exact").fit(X, y, sensitive_features=s)
    nys = FairKernelRegressor("polynomial", degree=3, coef0=0.1, n_components=6,
                              n_landmarks=len(X), random_state=3)
    nys.fit(da.from_array(X, chunks=(41, 5)), da.from_array(y, chunks=50),
            sensitive_features=da.from_array(s, chunks=70))
    pred = nys.predict(da.from_array(Xt, chunks=(25, 5)))
    assert isinstance(pred, da.Array)
    np.testing.assert_allclose(pred.compute(), exact.predict(Xt), rtol=1e-8, atol=1e-8)
    feats = nys.transform(da.from_array(Xt, chunks=(25, 5)))
    assert isinstance(feats, da.Array) and feats.shape == (80, 6)


def test_result_independent_of_chunking(data):
    X, y, s, Xt = data
    preds = []
    for chunks in (300, 64, 17):
        est = FairKernelRegressor("rbf", n_components=5, n_landmarks=100, random_state=11)
        est.fit(da.from_array(X, chunks=(chunks, 5)), y, sensitive_features=s)
        preds.append(est.predict(Xt))
    np.testing.assert_allclose(preds[1], preds[0], rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(preds[2], preds[0], rtol=1e-9, atol=1e-12)


def test_fair_features_mean_discrepancy(data):
    X, y, s, _ = data
    est = FairKernelRegressor("rbf", n_components=5, objective="mean_discrepancy",
                              approximation="exact").fit(X, y, sensitive_features=s)
    F = est.transform(X)
    # the literal eq. (3): equal group means of every fair feature (exact constraint)
    np.testing.assert_allclose(F[s == 0].mean(axis=0), F[s == 1].mean(axis=0), atol=1e-8)


def test_mean_discrepancy_tradeoff_is_monotone(data):
    X, y, s, _ = data
    params = kernel_params("rbf", 5)
    stats = group_statistics(X, s, y, X, params)
    from daskfair.kernels import kernel_block
    from daskfair.nystroem import whitening

    T, _ = whitening(kernel_block(X, X, params))
    stats = stats.change_basis(T)
    d = stats.means[0] - stats.means[1]
    gaps, variances = [], []
    for gamma in (0.0, 1.0, 10.0, 100.0):
        W, _ = mean_discrepancy_directions(stats, 4, fairness=gamma)
        gaps.append(np.abs(d @ W).sum())
        variances.append(np.trace(W.T @ stats.centered_covariance() @ W))
    assert all(a >= b - 1e-12 for a, b in itertools.pairwise(gaps))
    assert all(a >= b - 1e-12 for a, b in itertools.pairwise(variances))
    _, v0 = mean_discrepancy_directions(stats, 4, fairness=0.0)
    # fairness=0 is kernel PCA: eigenvalues of the centered kernel matrix / n
    n = len(X)
    K = kernel_block(X, X, params)
    H = np.eye(n) - 1 / n
    kpca = np.sort(np.linalg.eigvalsh(H @ K @ H / n))[::-1][:4]
    np.testing.assert_allclose(v0, kpca, rtol=1e-8)


def test_fkrr_matches_dense_reference(data):
    X, y, s, Xt = data
    for mu in (0.0, 1.0, 100.0):
        ref = dense_fkrr_predict(X, y, s, Xt, mu, 0.3, metric="rbf", gamma=0.2)
        est = FairKernelRidge(mu, gamma=0.2, alpha=0.3, approximation="exact")
        est.fit(X, y, sensitive_features=s)
        assert _rel(est.predict(Xt), ref) < 1e-6


def test_fkrr_penalty_reduces_covariance(data):
    X, y, s, _ = data
    covs = []
    for mu in (0.0, 0.1, 10.0):
        p = FairKernelRidge(mu, n_landmarks=150, random_state=0).fit(
            X, y, sensitive_features=s).predict(X)
        covs.append(abs(np.cov(p, s)[0, 1]))
    assert covs[0] > covs[1] > covs[2]
    assert covs[2] < 0.01 * covs[0]


def test_classifier_thresholds_at_midpoint(data):
    X, y, s, Xt = data
    labels = np.where(y > np.median(y), "high", "low")
    clf = FairKernelClassifier("rbf", n_components=10, approximation="exact")
    clf.fit(pd.DataFrame(X), labels, sensitive_features=pd.Series(s).map({0: "a", 1: "b"}))
    assert clf.classes_.tolist() == ["high", "low"]
    reg = FairKernelRegressor("rbf", n_components=10, approximation="exact").fit(
        X, (labels == "low").astype(float), sensitive_features=s)
    expected = np.where(reg.predict(Xt) >= 0.5, "low", "high")
    np.testing.assert_array_equal(clf.predict(Xt), expected)
    lazy = clf.predict(da.from_array(Xt, chunks=(30, 5)))
    assert isinstance(lazy, da.Array)
    np.testing.assert_array_equal(lazy.compute(), expected)
    from daskfair.metrics import statistical_disparity

    sd = statistical_disparity((clf.predict(X) == "low").astype(int), sensitive_features=s)
    assert 0.0 <= sd <= 1.0


def test_default_n_components_is_n_over_250():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(1000, 3))
    s = rng.integers(0, 2, 1000)
    est = FairKernelRegressor(n_landmarks=200, random_state=0).fit(X, X[:, 0],
                                                                   sensitive_features=s)
    assert est.n_components_ == 4 and est.transform(X[:5]).shape == (5, 4)


def test_bad_inputs(data):
    X, y, s, Xt = data
    est = FairKernelRegressor("rbf", n_components=3, n_landmarks=50, random_state=0)
    with pytest.raises(NotFittedError):
        est.predict(Xt)
    with pytest.raises(ValueError, match="1 distinct group"):
        est.fit(X, y, sensitive_features=np.zeros(len(X)))
    with pytest.raises(ValueError, match="binary sensitive attribute; got 3 groups"):
        est.fit(X, y, sensitive_features=np.arange(len(X)) % 3)
    with pytest.raises(ValueError, match="Inconsistent numbers of rows"):
        est.fit(X, y[:-1], sensitive_features=s)
    Xnan = X.copy()
    Xnan[5, 2] = np.nan
    with pytest.raises(ValueError, match="NaN or infinite"):
        est.fit(Xnan, y, sensitive_features=s)
    with pytest.raises(ValueError, match="NaN or infinite"):
        est.fit(X, np.where(np.arange(len(y)) == 3, np.inf, y), sensitive_features=s)
    with pytest.raises(ValueError, match="n_components=60 is larger than the rank"):
        FairKernelRegressor("linear", n_components=60, n_landmarks=50).fit(
            X, y, sensitive_features=s)
    with pytest.raises(ValueError, match="objective must be one of"):
        FairKernelRegressor(objective="mmd").fit(X, y, sensitive_features=s)
    with pytest.raises(ValueError, match="fairness applies to objective='mean_discrepancy'"):
        FairKernelRegressor(fairness=1.0, n_landmarks=50).fit(X, y, sensitive_features=s)
    with pytest.raises(ValueError, match="approximation must be one of"):
        FairKernelRegressor(approximation="rff").fit(X, y, sensitive_features=s)
    est.fit(X, y, sensitive_features=s)
    with pytest.raises(ValueError, match="X has 4 features, but FairKernelRegressor is expecting"):
        est.predict(Xt[:, :4])
    with pytest.raises(ValueError, match="exactly two classes"):
        FairKernelClassifier().fit(X, np.arange(len(X)) % 3, sensitive_features=s)
    with pytest.raises(TypeError, match="sensitive_features"):
        est.fit(X, y)


@pytest.mark.parametrize("objective", ["paper", "mean_discrepancy"])
def test_exact_on_real_data_matches_dense_and_nystroem(data_dir, objective):
    """The authors' Communities & Crime file: 600 training rows, polynomial degree 4."""
    from daskfair.datasets import load_dataset
    from daskfair.fkr.protocol import minmax_scale

    data = load_dataset("ffe_crime", data_dir)
    train, test = data.splits[0][:600], data.splits[1][-200:]
    X = minmax_scale(data.X, train)
    y, s = data.y.astype(float), data.sensitive
    kernel = {"kernel": "polynomial", "degree": 4, "coef0": 0.1}
    exact = FairKernelRegressor(**kernel, n_components=12, objective=objective,
                                approximation="exact").fit(X[train], y[train],
                                                           sensitive_features=s[train])
    if objective == "paper":
        ref = dense_fkr_predict(X[train], y[train], s[train], X[test], 12, 1.0,
                                metric="poly", degree=4, coef0=0.1, gamma=1 / X.shape[1])
        assert _rel(exact.predict(X[test]), ref) < 1e-6
    nys = FairKernelRegressor(**kernel, n_components=12, objective=objective,
                              n_landmarks=600, random_state=0)
    nys.fit(da.from_array(X[train], chunks=(128, -1)), y[train], sensitive_features=s[train])
    assert _rel(nys.predict(X[test]), exact.predict(X[test])) < 1e-6


def test_default_k_is_capped_at_the_rank():
    rng = np.random.default_rng(8)
    X = rng.normal(size=(3000, 2))  # linear kernel: rank 2, while n/250 = 12
    s = rng.integers(0, 2, 3000)
    est = FairKernelRegressor("linear", n_landmarks=100, random_state=0).fit(
        X, X[:, 0], sensitive_features=s)
    assert est.n_components_ == 2
    md = FairKernelRegressor("linear", objective="mean_discrepancy", n_landmarks=100,
                             random_state=0).fit(X, X[:, 0], sensitive_features=s)
    assert md.n_components_ == 1
    with pytest.raises(ValueError, match="n_components=12 is larger than the rank"):
        FairKernelRegressor("linear", n_components=12, n_landmarks=100).fit(
            X, X[:, 0], sensitive_features=s)
