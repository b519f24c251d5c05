import dask.array as da
import numpy as np
import pandas as pd
import pytest

from daskfair._groups import check_sensitive
from daskfair._validation import (
    check_array,
    check_consistent_length,
    check_labels,
    check_n_clusters,
)


def test_check_array_numpy_pandas_dask():
    X = np.arange(12, dtype=np.int32).reshape(6, 2)
    out = check_array(X)
    assert out.dtype == np.float64 and out.shape == (6, 2)
    out = check_array(pd.DataFrame(X, columns=["a", "b"]))
    np.testing.assert_array_equal(out, X)
    dX = da.from_array(X, chunks=(2, 1))
    out = check_array(dX)
    assert isinstance(out, da.Array) and out.numblocks == (3, 1)
    np.testing.assert_array_equal(out.compute(), X)


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_check_array_rejects_non_finite(bad):
    X = np.ones((5, 2))
    X[3, 1] = bad
    with pytest.raises(ValueError, match="NaN or infinite.*Drop or impute"):
        check_array(X)
    lazy = check_array(da.from_array(X, chunks=2))  # lazy: raises when computed
    with pytest.raises(ValueError, match="NaN or infinite"):
        lazy.compute()
    assert check_array(X, finite=False).shape == (5, 2)


def test_check_array_shape_and_type_errors():
    with pytest.raises(ValueError, match="must be 2-D.*reshape"):
        check_array(np.ones(5))
    with pytest.raises(TypeError, match="must be numeric.*TableEncoder"):
        check_array(np.array([["a", "b"]]))
    with pytest.raises(ValueError, match="0 rows"):
        check_array(np.ones((0, 3)))
    with pytest.raises(ValueError, match="no columns"):
        check_array(np.ones((3, 0)))
    with pytest.raises(TypeError, match="is None"):
        check_array(None)


def test_check_array_unknown_chunks():
    x = da.from_array(np.arange(20.0).reshape(10, 2), chunks=5)
    x = x[x[:, 0] > 2]  # boolean row selection: unknown chunk sizes
    with pytest.raises(ValueError, match="unknown chunk sizes.*compute_chunk_sizes"):
        check_array(x)


def test_check_consistent_length():
    assert check_consistent_length(("X", np.ones((3, 2))), ("y", np.ones(3))) == 3
    with pytest.raises(ValueError, match="X has 3, y has 4"):
        check_consistent_length(("X", np.ones((3, 2))), ("y", np.ones(4)))


@pytest.mark.parametrize(
    "s, groups",
    [
        (["b", "a", "b", "c"], ["a", "b", "c"]),
        ([True, False, False, True], [False, True]),
        ([2.5, 1.0, 2.5, 1.0], [1.0, 2.5]),
        ([7, 3, 3, 7], [3, 7]),
    ],
)
def test_check_sensitive_encodes(s, groups):
    codes, g = check_sensitive(s, 4)
    assert g.tolist() == groups
    np.testing.assert_array_equal(g[codes], np.asarray(s))
    dcodes, _ = check_sensitive(da.from_array(np.asarray(s), chunks=3), 4)
    np.testing.assert_array_equal(dcodes.compute(), codes)


def test_check_sensitive_errors():
    with pytest.raises(ValueError, match="1 distinct group.*at least 2"):
        check_sensitive([1, 1, 1])
    with pytest.raises(ValueError, match="3 entries but X has 4 rows"):
        check_sensitive([0, 1, 0], 4)
    with pytest.raises(ValueError, match="contains NaN"):
        check_sensitive([0.0, np.nan, 1.0])
    with pytest.raises(ValueError, match="missing values"):
        check_sensitive(np.array(["a", None, "b"], dtype=object))
    with pytest.raises(ValueError, match="must be 1-D"):
        check_sensitive(np.zeros((3, 2, 2)))


def test_check_labels():
    np.testing.assert_array_equal(check_labels([0, 2, 1], n_labels=3), [0, 2, 1])
    with pytest.raises(ValueError, match=r"must lie in \[0, 1\]"):
        check_labels([0, 2, 1], n_labels=2)
    with pytest.raises(ValueError, match="must lie in"):
        check_labels(da.from_array(np.array([0, -1, 1]), chunks=2), n_labels=2).compute()
    with pytest.raises(ValueError, match="non-integer"):
        check_labels([0.5, 1.0])
    with pytest.raises(ValueError, match="non-integer"):
        check_labels(da.from_array(np.array([0.0, 1.5, 2.0]), chunks=2)).compute()
    np.testing.assert_array_equal(check_labels(np.array([2.0, 0.0])), [2, 0])
    with pytest.raises(TypeError, match="must be integers"):
        check_labels(["a", "b"])


def test_check_n_clusters():
    assert check_n_clusters(3, 10) == 3
    with pytest.raises(ValueError, match="larger than the number of samples"):
        check_n_clusters(11, 10)
    with pytest.raises(ValueError, match=">= 1"):
        check_n_clusters(0, 10)
    with pytest.raises(TypeError, match="integer"):
        check_n_clusters(2.0, 10)
