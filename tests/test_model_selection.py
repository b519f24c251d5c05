"""daskfair.train_test_split: the same rows for numpy, pandas and dask, however chunked."""

import dask.array as da
import dask.dataframe as dd
import numpy as np
import pandas as pd
import pytest

from daskfair import train_test_split


def _splitmix_is_test(row: int, seed: int, share: float) -> bool:
    """The hash of one row in Python integers (an independent spelling of the split's rule:
    splitmix64 of the row plus the salted seed times the golden ratio, modulo 2**20)."""
    mask = 2**64 - 1
    z = (row + (seed + 0x5EED) * 0x9E3779B97F4A7C15) & mask
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & mask
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & mask
    z ^= z >> 31
    return z % 2**20 < round(share * 2**20)


def test_rows_follow_the_stated_hash():
    rows = np.arange(500)
    train, test = train_test_split(rows, test_size=0.3, random_state=4)
    expected = np.array([_splitmix_is_test(int(r), 4, 0.3) for r in rows])
    np.testing.assert_array_equal(test, rows[expected])
    np.testing.assert_array_equal(train, rows[~expected])


def test_the_same_rows_for_every_kind_and_partitioning():
    n = 2000
    df = pd.DataFrame({"x": np.arange(n), "t": [f"r{i}" for i in range(n)]})
    train, test = train_test_split(df["x"].to_numpy(), test_size=0.25, random_state=7)
    assert 400 < len(test) < 600 and len(train) + len(test) == n
    # several canonical blocks, uneven chunks, partitions of a frame (one of them empty)
    for chunks in (128, (1, 999, 1000), 2000):
        a, b = train_test_split(da.from_array(df["x"].to_numpy(), chunks=chunks),
                                test_size=0.25, random_state=7)
        np.testing.assert_array_equal(b.compute(), test)
        np.testing.assert_array_equal(a.compute(), train)
    parts = [df.iloc[:700], df.iloc[700:700], df.iloc[700:1500], df.iloc[1500:]]
    frame = dd.from_delayed([__import__("dask").delayed(p) for p in parts], meta=df.iloc[:0])
    a, b, _, d = train_test_split(frame, frame["t"], test_size=0.25, random_state=7)
    np.testing.assert_array_equal(b.compute()["x"].to_numpy(), test)
    np.testing.assert_array_equal(a.compute()["x"].to_numpy(), train)
    assert d.compute().tolist() == [f"r{i}" for i in test]
    _, f, _, h = train_test_split(df, list(range(n)), test_size=0.25, random_state=7)
    np.testing.assert_array_equal(f["x"].to_numpy(), test)
    np.testing.assert_array_equal(h, test)
    # another seed, another split
    assert not np.array_equal(train_test_split(np.arange(n), test_size=0.25,
                                               random_state=8)[1], test)


@pytest.mark.parametrize(("kwargs", "error", "message"), [
    ({"test_size": 1.0}, ValueError, r"test_size must be a finite number in \(0, 1\), got 1.0"),
    ({"test_size": 0}, ValueError, "test_size must be"),
    ({"test_size": True}, TypeError, "test_size must be"),
    ({"random_state": -1}, ValueError, "random_state must be an integer >= 0, got -1"),
    ({"random_state": None}, TypeError, "random_state must be an integer >= 0, got None"),
])
def test_parameters_are_checked(kwargs, error, message):
    with pytest.raises(error, match=message):
        train_test_split(np.arange(10), **kwargs)


def test_inputs_must_agree():
    with pytest.raises(ValueError, match="at least one array"):
        train_test_split()
    with pytest.raises(ValueError, match=r"different numbers of rows: \[9, 10\]"):
        train_test_split(np.arange(10), np.arange(9))
    unknown = da.from_array(np.arange(10), chunks=5)
    unknown = unknown[unknown > 2]
    with pytest.raises(ValueError, match="unknown chunk sizes"):
        train_test_split(unknown)
