"""Sums keyed by distinct raw values (daskfair._keyed): the bits of a globally coded table."""

import dask
import dask.array as da
import numpy as np
import pytest

from daskfair._blocks import block_sum
from daskfair._keyed import MAX_KEYS, MISSING, Keyed, arrange, column_values, local_codes, merge


def test_local_codes_are_first_appearance_with_missing_values_as_one_key():
    groups = np.array(["b", "a", None, "b", np.nan], dtype=object)
    classes = np.array([1.0, 0.0, 1.0, 1.0, 1.0])
    codes, keys = local_codes(groups, classes)
    assert keys == (("b", 1.0), ("a", 0.0), (MISSING, 1.0))
    np.testing.assert_array_equal(codes, [0, 1, 2, 0, 2])
    assert all(type(v) is float for _, v in keys)  # Python scalars, not numpy ones


def _global_block(values, cells, *, n_cells):
    out = np.zeros((n_cells, values.shape[1]))
    np.add.at(out, cells, values)
    return out


def _keyed_block(values, cells):
    codes, keys = local_codes(cells)
    out = np.zeros((len(keys), values.shape[1]))
    np.add.at(out, codes, values)
    return Keyed(keys, (out,))


@pytest.mark.parametrize("chunks", [16, 50, 333])
def test_merged_keys_have_the_bits_of_the_globally_coded_tree(chunks):
    """Cells missing from many blocks (rare ones): the key-by-key merge adds exactly what the
    dense tree adds, so the two totals are equal bit for bit, for numpy and dask input."""
    rng = np.random.default_rng(0)
    n = 1000
    cells = rng.choice(7, size=n, p=[.4, .3, .2, .05, .03, .015, .005])
    values = rng.normal(size=(n, 3)) * 10.0 ** rng.integers(-8, 8, size=(n, 1))
    with dask.config.set({"daskfair.block-rows": 16}):
        dense = block_sum(_global_block, values, cells, n_cells=7)
        for x, c in ((values, cells), (da.from_array(values, chunks=(chunks, 3)),
                                      da.from_array(cells, chunks=chunks))):
            keyed = block_sum(_keyed_block, x, c, combine=merge)
            grid = arrange(keyed, [{int(v): int(v) for v in column_values(keyed.keys, 0)}],
                           (7,))[0]
            assert grid.tobytes() == dense.tobytes()
    # and the check can fail: a different order of the same sums differs in the last bits
    assert not np.array_equal(dense, np.add.reduceat(values[np.argsort(cells, kind="stable")],
                              np.searchsorted(np.sort(cells), np.arange(7)), axis=0))


def test_too_many_distinct_values_is_a_clear_error():
    with pytest.raises(ValueError, match="must be categories; bin a continuous attribute"):
        local_codes(np.arange(MAX_KEYS + 1))
    a = Keyed(tuple((i,) for i in range(MAX_KEYS)), (np.zeros(MAX_KEYS),))
    with pytest.raises(ValueError, match="more than 4096 distinct"):
        merge(a, Keyed(((-1,),), (np.zeros(1),)))
