"""The FKR-F²E paper's Table I protocol (daskfair.cli.paper.fkr_paper): α grid-searched on the
training rows only."""

import numpy as np

from daskfair.cli.paper.fkr_paper import (
    PAPER_KERNELS,
    PAPER_RIDGE_PENALTIES,
    paper_alphas,
    run_method,
)
from daskfair.kernels import kernel_block, kernel_params
from daskfair.scaling import ColumnScaler


def _data(n=400, seed=0):
    rng = np.random.default_rng(seed)
    s = (rng.random(n) < 0.4).astype(int)
    X = rng.normal(size=(n, 5)) + s[:, None]
    y = (X[:, 0] + 0.5 * rng.normal(size=n) > 0.5).astype(int)
    return X, y, s


def test_paper_alphas_are_the_papers_ridge_penalties_over_the_dense_trace():
    X, _, _ = _data()
    Xs = ColumnScaler().fit_transform(X)
    for name in ("ffe_credit", "ffe_compas"):
        kernel = PAPER_KERNELS[name]
        params = kernel_params(kernel["kernel"], X.shape[1], degree=kernel.get("degree", 3),
                               coef0=kernel["coef0"])
        trace = np.trace(kernel_block(Xs, Xs, params))
        np.testing.assert_allclose(paper_alphas(Xs, kernel) * trace, PAPER_RIDGE_PENALTIES,
                                   rtol=1e-12)


def test_grid_alpha_is_chosen_without_the_test_rows():
    """The chosen α is one of the grid's, and changing every test row's label and features
    does not change it (the test rows are never seen by the search)."""
    X, y, s = _data()
    train = np.arange(300)
    kw = {"kernel": PAPER_KERNELS["ffe_credit"], "relative_alpha": "grid", "random_state": 3}
    out = run_method("kernel ridge", X, y, s, train, **kw)
    order = np.random.default_rng(3).permutation(train)  # the search's 80/20 split
    fit = np.arange(240)
    Xo = X[order]
    scaled = ColumnScaler().fit(Xo[fit]).transform(Xo)[fit]
    assert out["relative_alpha"] in paper_alphas(scaled, kw["kernel"])
    X2, y2 = X.copy(), y.copy()
    X2[300:] = np.random.default_rng(9).normal(size=(100, 5))
    y2[300:] = 1 - y2[300:]
    again = run_method("kernel ridge", X2, y2, s, train, **kw)
    assert again["relative_alpha"] == out["relative_alpha"]
    assert again["error"] != out["error"]  # the test rows did change


def test_paper_objective_is_the_constant_predictor_on_the_authors_splits(data_dir):
    """The claim of docs/guide/classification.md, on the first two of the authors' splits of
    each data set: the paper's own objective predicts the majority class on every test row (SD
    0, the constant's error). All 150 splits: benchmarks/fkr_table1.py."""
    from daskfair.datasets import load_dataset

    for name in ("ffe_credit", "ffe_crime", "ffe_compas"):
        ds = load_dataset(name, data_dir)
        for split in (0, 1):
            kw = {"kernel": PAPER_KERNELS[name], "n_landmarks": 300, "random_state": split}
            paper = run_method("FKR-F2E (paper)", ds.X, ds.y, ds.sensitive, ds.splits[split],
                               **kw)
            const = run_method("constant", ds.X, ds.y, ds.sensitive, ds.splits[split], **kw)
            assert paper["disparity"] == 0 and paper["error"] == const["error"], (name, split)


def test_a_training_set_within_the_landmarks_is_fitted_exactly():
    """run_method fits exactly (every training row a landmark) when the training rows are no
    more than n_landmarks: the same test predictions as an explicit exact fit."""
    from daskfair.fkr import FairKernelRidge

    X, y, s = _data(n=200)
    train = np.arange(150)
    out = run_method("kernel ridge", X, y, s, train, kernel=PAPER_KERNELS["ffe_credit"],
                     n_landmarks=150)
    Xs = ColumnScaler().fit(X[train]).transform(X)
    exact = FairKernelRidge(0.0, **PAPER_KERNELS["ffe_credit"], relative_alpha=1e-4,
                            approximation="exact").fit(Xs[train], y[train],
                                                       sensitive_features=s[train])
    pred = (exact.predict(Xs[150:]) >= 0.5).astype(int)
    assert out["error"] == np.mean(pred != y[150:])
