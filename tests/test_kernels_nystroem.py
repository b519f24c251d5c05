import dask.array as da
import numpy as np
import pytest
from sklearn.metrics.pairwise import pairwise_kernels

from daskfair.kernels import kernel_block, kernel_params
from daskfair.nystroem import fit_nystroem, select_landmarks, whitening


@pytest.fixture
def xy():
    rng = np.random.default_rng(1)
    return rng.normal(size=(30, 4)), rng.normal(size=(20, 4))


@pytest.mark.parametrize(
    "kernel, kw",
    [
        ("linear", {}),
        ("polynomial", {"degree": 4, "coef0": 0.1}),
        ("polynomial", {"degree": 2, "coef0": 1.0, "gamma": 0.3}),
        ("sigmoid", {"coef0": 0.01}),
        ("sigmoid", {"coef0": -1.0, "gamma": 0.05}),
        ("rbf", {}),
        ("rbf", {"gamma": 2.0}),
    ],
)
def test_kernels_match_sklearn(xy, kernel, kw):
    X, Y = xy
    params = kernel_params(kernel, X.shape[1], **kw)
    metric = "poly" if kernel == "polynomial" else kernel
    sk_kw = {k: v for k, v in kw.items() if not (kernel == "linear")}
    ref = pairwise_kernels(X, Y, metric=metric, **sk_kw)
    np.testing.assert_allclose(kernel_block(X, Y, params), ref, rtol=1e-12, atol=1e-12)


def test_kernel_defaults_and_errors():
    p = kernel_params("sigmoid", 8)
    assert p["gamma"] == 1 / 8 and p["coef0"] == 1.0
    with pytest.raises(ValueError, match="unknown kernel 'cosine'"):
        kernel_params("cosine", 3)
    with pytest.raises(ValueError, match="degree must be an integer from 1 to 100"):
        kernel_params("polynomial", 3, degree=1.5)
    with pytest.raises(ValueError, match="gamma must be positive"):
        kernel_params("rbf", 3, gamma=0.0)


def test_nystroem_with_all_points_is_exact():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(80, 3))
    params = kernel_params("rbf", 3, gamma=0.5)
    fmap = fit_nystroem(X, params, n_landmarks=80)
    Z = fmap.transform(X)
    K = pairwise_kernels(X, metric="rbf", gamma=0.5)
    np.testing.assert_allclose(Z @ Z.T, K, atol=1e-8)
    # dask in -> lazy dask out, same values
    Zd = fmap.transform(da.from_array(X, chunks=(13, 3)))
    assert isinstance(Zd, da.Array)
    np.testing.assert_allclose(Zd.compute(), Z, rtol=1e-12, atol=1e-12)


def test_nystroem_approximates_kernel_better_with_more_landmarks():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(400, 3))
    params = kernel_params("rbf", 3, gamma=0.2)
    K = pairwise_kernels(X, metric="rbf", gamma=0.2)
    errs = []
    for m in (10, 40, 160):
        Z = fit_nystroem(X, params, n_landmarks=m, random_state=0).transform(X)
        errs.append(np.linalg.norm(Z @ Z.T - K) / np.linalg.norm(K))
    assert errs[0] > errs[1] > errs[2]
    assert errs[2] < 0.01


@pytest.mark.usefixtures("several_blocks")
def test_landmarks_independent_of_chunking_and_seeded():
    X = np.arange(3000.0).reshape(1000, 3)
    a = select_landmarks(X, 50, random_state=7)
    b = select_landmarks(da.from_array(X, chunks=(77, 3)), 50, random_state=7)
    c = select_landmarks(X, 50, random_state=8)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)
    assert len(np.unique(a[:, 0])) == 50
    pp = select_landmarks(X, 50, landmarks="kmeans++", random_state=7)
    assert pp.shape == (50, 3) and len(np.unique(pp[:, 0])) == 50
    with pytest.raises(ValueError, match="unknown landmark method"):
        select_landmarks(X, 5, landmarks="leverage")


def test_whitening_clips_the_null_space():
    rng = np.random.default_rng(4)
    B = rng.normal(size=(6, 2))
    W = B @ B.T  # rank 2
    T, lam = whitening(W)
    assert T.shape == (6, 2) and lam.shape == (2,)
    np.testing.assert_allclose(T.T @ W @ T, np.eye(2), atol=1e-10)
    with pytest.raises(ValueError, match="no positive eigenvalue"):
        whitening(np.zeros((3, 3)))


def test_indefinite_kernel_warns_what_the_features_drop():
    import warnings

    from daskfair.nystroem import whitening

    rng = np.random.default_rng(5)
    X = rng.normal(size=(60, 3))
    W = pairwise_kernels(X, metric="sigmoid", gamma=0.5, coef0=-1.0)
    lam = np.linalg.eigvalsh(W)
    assert lam.min() < -1e-6 * lam.max()  # indefinite, by the dense reference
    share = np.abs(lam[lam < -1e-10 * lam.max()]).sum() / np.abs(lam).sum()
    with pytest.warns(UserWarning, match=rf"negative eigenvalues.*\({share:.1%} of the"):
        T, kept = whitening(W)
    assert (kept > 0).all()
    # the features reproduce the positive part of W exactly
    pos = np.where(lam > 1e-10 * lam.max(), lam, 0.0)
    V = np.linalg.eigh(W)[1]
    np.testing.assert_allclose(W @ T @ T.T @ W, (V * pos) @ V.T, atol=1e-8 * lam.max())
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a positive definite kernel: no warning
        whitening(pairwise_kernels(X, metric="rbf", gamma=0.5))
