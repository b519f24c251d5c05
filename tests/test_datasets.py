"""Loaders on the real files (counts checked independently with pandas/scipy), checksums,
data-directory resolution, and the chunk-independent synthetic generators."""

import shutil
import sys

import numpy as np
import pandas as pd
import pytest
import scipy.io

from daskfair import datasets as ds
from daskfair._random import GEN_BLOCK


@pytest.fixture(scope="module")
def census(data_dir):
    return ds.load_dataset("census_income_kdd", data_dir)


def _check(d, n, d_features=None):
    assert d.X.shape[0] == n and d.X.dtype == np.float64 and np.isfinite(d.X).all()
    assert len(d.feature_names) == d.X.shape[1]
    assert d.sensitive.shape == (n,) and d.sensitive.min() == 0
    assert d.sensitive.max() == len(d.groups) - 1
    if d_features:
        assert d.X.shape[1] == d_features


def test_adult(data_dir):
    d = ds.load_dataset("adult", data_dir)
    raw = pd.read_csv(data_dir / "adult/adult.data", header=None, skipinitialspace=True)
    _check(d, len(raw))
    assert len(raw) == 32561
    np.testing.assert_array_equal(d.groups[d.sensitive], raw[9].to_numpy())
    assert d.y.sum() == (raw[14] == ">50K").sum()
    race = ds.load_dataset("adult", data_dir, sensitive_attribute="race")
    assert sorted(race.groups) == sorted(raw[8].unique())
    assert not any(name.startswith("sex") for name in d.feature_names)


def test_bank(data_dir):
    d = ds.load_dataset("bank_marketing", data_dir)
    raw = pd.read_csv(data_dir / "bank_marketing/bank-additional-full.csv", sep=";")
    raw = raw[raw.marital != "unknown"]
    _check(d, 41108)
    assert dict(zip(d.groups, np.bincount(d.sensitive), strict=True)) == \
        raw.marital.value_counts().to_dict()
    assert d.y.sum() == (raw.y == "yes").sum()
    assert "duration" not in d.feature_names
    # the same groups as the SAfairKM authors' Bank arrays
    with np.load(data_dir / "safairkm/Bank.npz") as z:
        assert sorted(np.bincount(z["demograph"])) == sorted(np.bincount(d.sensitive))


def test_census(census, data_dir):
    _check(census, 199523)
    raw = pd.read_csv(data_dir / "census_income_kdd/census_income_1994_1995_train.csv.gz",
                      header=None, usecols=[12, 41])
    assert dict(zip(census.groups, np.bincount(census.sensitive), strict=True)) == {
        k.strip(): v for k, v in raw[12].value_counts().items()}
    assert census.y.sum() == raw[41].str.contains("50000+", regex=False).sum()


def test_communities(data_dir):
    d = ds.load_dataset("communities_crime", data_dir)
    raw = pd.read_csv(data_dir / "communities_crime/communities.data", header=None,
                      na_values="?")
    _check(d, 1994)
    assert d.sensitive.sum() == (raw[7] >= 0.5).sum() == 244
    np.testing.assert_allclose(d.y, raw[127])


@pytest.mark.parametrize("sensitive, key", [(None, "race"), ("sex", "sex")])
def test_compas(data_dir, sensitive, key):
    d = ds.load_dataset("compas", data_dir, sensitive_attribute=sensitive)
    raw = pd.read_csv(data_dir / "compas/compas-scores-two-years.csv")
    _check(d, 7214)
    assert d.sensitive_name == key
    assert dict(zip(d.groups, np.bincount(d.sensitive), strict=True)) == \
        raw[key].value_counts().to_dict()
    assert d.y.mean() == pytest.approx(raw.two_year_recid.mean())


def test_credit_default(data_dir):
    d = ds.load_dataset("credit_default", data_dir)
    raw = pd.read_csv(data_dir / "credit_default/UCI_Credit_Card.csv")
    _check(d, 30000, 22)
    np.testing.assert_array_equal(d.y, raw.iloc[:, -1])
    np.testing.assert_array_equal(d.groups[d.sensitive], raw.EDUCATION)
    sex = ds.load_dataset("credit_default", data_dir, sensitive_attribute="SEX")
    assert sex.groups.tolist() == [1, 2]


@pytest.mark.parametrize("name, n, n_train, majority_error",
                         [("ffe_credit", 20000, 15000, 0.229), ("ffe_crime", 1993, 1495, 0.145),
                          ("ffe_compas", 16000, 12000, 0.228)])
def test_ffe_files(data_dir, name, n, n_train, majority_error):
    d = ds.load_dataset(name, data_dir)
    _check(d, n)
    assert len(d.groups) == 2 and set(np.unique(d.y)) == {0, 1}
    # the data README's majority-class error confirms the label column
    assert min(d.y.mean(), 1 - d.y.mean()) == pytest.approx(majority_error, abs=0.002)
    assert len(d.splits) == 50
    for split in d.splits:
        assert len(split) == n_train and split.min() >= 0 and split.max() < n
        distinct = len(np.unique(split))
        if name == "ffe_credit":  # the authors drew these with replacement
            assert 0.99 * n_train < distinct < n_train
        else:  # the first 75 % of a permutation
            assert distinct == n_train
    assert not np.array_equal(d.splits[0], d.splits[1])
    # no column of X determines the label (the authors' crime file has the target as col 100)
    for j in range(d.X.shape[1]):
        assert np.mean((d.X[:, j] >= 0.5) == d.y) < 0.99


def test_safairkm_arrays(data_dir):
    for name, n, J in (("safairkm_adult", 32561, 2), ("safairkm_bank", 41108, 3)):
        d = ds.load_dataset(name, data_dir)
        _check(d, n)
        assert d.y is None and len(d.groups) == J
    Z, s = ds.preprocess_safairkm(d.X, d.sensitive, 5000, random_state=1)
    assert Z.shape == (5000, 6) and s.shape == (5000,)
    np.testing.assert_allclose(np.linalg.norm(Z, axis=1), 1.0)


@pytest.mark.parametrize("pool, n", [("ds", 9120), ("har", 10299), ("mnist_usps", 3800),
                                     ("reverse_mnist", 4000), ("jaffe", 213), ("yale", 165)])
def test_fce_pools(data_dir, pool, n):
    base, y, g = ds.load_fce_pool(pool, data_dir)
    assert base.shape == (n, 100) and y.shape == (n,) and g.shape == (n,)
    mat = scipy.io.loadmat(data_dir / f"fce_pools/bc_pool_{pool}.mat")
    for j in (0, 99):
        onehot = mat["bac_Y"][0, j]
        np.testing.assert_array_equal(np.eye(onehot.shape[1])[base[:, j]], onehot)
    np.testing.assert_array_equal(y, mat["y"].ravel() - mat["y"].min())


def test_mnist_usps(data_dir):
    d = ds.load_mnist_usps(data_dir)
    _check(d, 3800, 256)
    assert np.bincount(d.sensitive).tolist() == [2000, 1800]
    assert d.X.min() >= -1 - 1e-12 and d.X.max() <= 1 + 1e-12 and set(d.y) == set(range(10))


def test_data_dir_resolution(data_dir, tmp_path, monkeypatch):
    monkeypatch.setenv("DASKFAIR_DATA", str(tmp_path))
    assert ds.data_dir() == tmp_path
    assert ds.data_dir(data_dir) == data_dir  # the argument wins
    (tmp_path / "SHA256SUMS").write_text("")  # kept by hand: a missing file is an error
    with pytest.raises(FileNotFoundError, match="fce_pools/bc_pool_yale.mat is missing from"):
        ds.load_fce_pool("yale")
    # no DASKFAIR_DATA and no development checkout: the user's cache folder
    monkeypatch.delenv("DASKFAIR_DATA")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(ds.files, "__file__",
                        str(tmp_path / "site" / "daskfair" / "datasets" / "files.py"))
    if sys.platform.startswith("linux"):
        assert ds.data_dir() == tmp_path / "xdg" / "daskfair" / "data" and ds.data_dir().is_dir()
    # a development checkout: the folder shared/data beside the checkout that holds the
    # module (daskfair/datasets/files.py)
    (tmp_path / "work" / "shared" / "data").mkdir(parents=True)
    monkeypatch.setattr(ds.files, "__file__", str(tmp_path / "work" / "main" / "daskfair" /
                                                  "datasets" / "files.py"))
    assert ds.data_dir() == tmp_path / "work" / "shared" / "data"
    with pytest.raises(FileNotFoundError, match="does not exist"):
        ds.data_dir(tmp_path / "nope")


def test_checksums(data_dir, tmp_path):
    rel = "fce_pools/bc_pool_yale.mat"
    (tmp_path / "fce_pools").mkdir()
    shutil.copy(data_dir / rel, tmp_path / rel)
    line = next(x for x in (data_dir / "SHA256SUMS").read_text().splitlines() if rel in x)
    (tmp_path / "SHA256SUMS").write_text(line + "\n" + line.replace(rel, "missing/file.csv"))
    assert ds.load_fce_pool("yale", tmp_path)[0].shape == (165, 100)
    assert ds.verify_data(tmp_path) == {rel: "ok", "missing/file.csv": "missing"}
    data = bytearray((tmp_path / rel).read_bytes())
    data[100] ^= 0xFF
    (tmp_path / rel).write_bytes(bytes(data))
    import os
    os.utime(tmp_path / rel, (1, 1))  # a new mtime: the cached verification no longer applies
    with pytest.raises(ds.DataIntegrityError, match="corrupt or modified"):
        ds.load_fce_pool("yale", tmp_path)
    assert ds.verify_data(tmp_path)[rel] == "corrupt"


def test_unknown_names(data_dir):
    with pytest.raises(ValueError, match="unknown data set 'iris'"):
        ds.load_dataset("iris", data_dir)
    with pytest.raises(ValueError, match="sensitive_attribute='age' is not available for 'adult'"):
        ds.load_dataset("adult", data_dir, sensitive_attribute="age")
    with pytest.raises(ValueError, match="unknown FCE pool"):
        ds.load_fce_pool("mnist", data_dir)


def test_generators_are_chunk_independent_and_seeded():
    n = 2 * GEN_BLOCK + 1234
    outs = [ds.make_fair_blobs(n, 3, 4, 2, chunks=c, random_state=5)
            for c in (1000, 4096, GEN_BLOCK + 7)]
    ref = [a.compute() for a in outs[0]]
    for other in outs[1:]:
        for a, b in zip(ref, other, strict=True):
            np.testing.assert_array_equal(a, b.compute())
    X, s, k = ref
    assert X.shape == (n, 3) and s.dtype == np.int64 and k.max() == 3
    # clusters over-represent one group each: the group rate differs between clusters
    rates = [s[k == j].mean() for j in range(4)]
    assert max(rates) - min(rates) > 0.4
    other = ds.make_fair_blobs(n, 3, 4, 2, random_state=6)[0].compute()
    assert not np.allclose(other, X)
    Xr, y, g = (a.compute() for a in ds.make_fair_regression(50_000, 5, chunks=999,
                                                               random_state=1))
    Xr2 = ds.make_fair_regression(50_000, 5, chunks=50_000, random_state=1)[0].compute()
    np.testing.assert_array_equal(Xr, Xr2)
    assert y[g == 1].mean() - y[g == 0].mean() > 0.5  # group_effect = 1 plus the shifted X
    assert Xr[g == 1].mean() - Xr[g == 0].mean() == pytest.approx(0.5, abs=0.05)


def test_generator_errors():
    with pytest.raises(ValueError, match="n_groups must be an integer >= 2"):
        ds.make_fair_blobs(10, n_groups=1)
    with pytest.raises(ValueError, match="summing to 1"):
        ds.make_fair_regression(10, group_weights=[0.5, 0.6])
    with pytest.raises(ValueError, match="n_samples must be an integer >= 1, got 0"):
        ds.make_fair_blobs(0)
    with pytest.raises(ValueError, match="chunks must be None or an integer >= 1, got 0"):
        ds.make_fair_regression(10, chunks=0)
