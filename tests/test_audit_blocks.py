"""An audit's block statistics: the codes of Arrow text columns against pandas' factorize,
the dense table of score bins against sorting the bins, on hostile texts and scores."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from daskfair._keyed import MAX_KEYS, MISSING
from daskfair.metrics import audit
from daskfair.metrics._audit_blocks import (
    UNIT_BINS,
    _codes,
    _histograms,
    _merge_runs,
    audit_block,
    merge_blocks,
    merge_sorted,
    score_bins,
)
from daskfair.metrics._audit_kernels import add_run, dense_cells, occupied


def _texts(n: int, seed: int) -> list[str | None]:
    rng = np.random.default_rng(seed)
    # long texts that share their first 8 (or all but the last) bytes, short ones that
    # differ in one byte or in length only, the empty text, non-ASCII text and missing
    pool = ["", "a", "ab", "abc", "abcdefg", "abcdefgh", "abcdefghi", "abcdefghij",
            "abcdefgh" + "x" * 20, "abcdefgh" + "x" * 19 + "y", "Amer Indian Aleut or Eskimo",
            "Amer Indian Aleut or Eskimx", "zürich", "zurich", "\x00", "\x00\x00", None]
    return [pool[i] for i in rng.integers(0, len(pool), n)]


def _coded(column: pd.Series) -> tuple[np.ndarray, list]:
    out = np.empty(len(column), dtype=np.int32)  # as audit_block codes them
    return out, _codes(column, out)


def _reference(values: list) -> tuple[np.ndarray, list]:
    codes, uniques = pd.factorize(pd.Series(values, dtype=object), use_na_sentinel=True)
    uniques = list(uniques)
    if (codes < 0).any():
        codes = np.where(codes < 0, len(uniques), codes)
        uniques.append(MISSING)
    return codes, uniques


@pytest.mark.parametrize("arrow_type", [pa.string(), pa.large_string()])
@pytest.mark.parametrize("cut", [slice(None), slice(7, 1900)])
def test_text_codes_equal_factorize(arrow_type, cut):
    values = _texts(2000, seed=1)
    column = pd.Series(pd.arrays.ArrowExtensionArray(pa.array(values, type=arrow_type)))
    column = column.iloc[cut].reset_index(drop=True)  # an Arrow slice: offsets start inside
    codes, uniques = _coded(column)
    want_codes, want_uniques = _reference(values[cut])
    assert uniques == want_uniques
    np.testing.assert_array_equal(codes, want_codes)


def test_text_codes_of_several_chunks_and_pandas_strings():
    values = _texts(3000, seed=2)
    chunked = pa.chunked_array([pa.array(values[:1000]), pa.array(values[1000:])])
    for column in (pd.Series(pd.arrays.ArrowStringArray(chunked)),
                   pd.Series(values, dtype=pd.StringDtype("pyarrow")),
                   pd.Series(values, dtype=object)):
        codes, uniques = _coded(column)
        want_codes, want_uniques = _reference(values)
        assert [None if u is pd.NA else u for u in uniques] == want_uniques
        np.testing.assert_array_equal(codes, want_codes)


def test_more_distinct_texts_than_groups_allowed_is_refused():
    column = pd.Series([f"person {i}" for i in range(MAX_KEYS + 5)],
                       dtype=pd.StringDtype("pyarrow"))
    with pytest.raises(ValueError, match="bin a continuous attribute"):
        _coded(column)


@pytest.mark.parametrize("outside", [False, True])
def test_dense_table_of_bins_equals_sorting_them(outside):
    rng = np.random.default_rng(3)
    n = 40_000  # enough rows for the dense table: 3 groups x 2 labels x UNIT_BINS bins
    group = rng.choice(["a", "b", "c"], n, p=[0.7, 0.29, 0.01])
    y = rng.integers(0, 2, n)
    score = rng.random(n) ** 3
    score[rng.random(n) < 0.05] = rng.choice([0.0, 1.0, 0.5 + 1 / UNIT_BINS], 1)
    if outside:
        score[rng.random(n) < 0.02] = rng.normal(0, 5, 1)
    # on the unit boundaries b / UNIT_BINS and one float to either side, where score *
    # UNIT_BINS rounds across a boundary
    edge = rng.integers(0, UNIT_BINS + 1, 3000) / UNIT_BINS
    score[:9000] = np.r_[edge, np.nextafter(edge, -1.0), np.nextafter(edge, 2.0)].clip(0, 1)
    block = audit_block([pd.Series(group, dtype=pd.StringDtype("pyarrow"))], y, y, score)
    codes, keys = pd.factorize(group)
    want = _histograms(codes.astype(np.int64), y.astype(np.int8), score_bins(score),
                       [(k,) for k in keys])
    # each unit bin b holds (b / UNIT_BINS, (b + 1) / UNIT_BINS], the boundaries as floats
    unit = score_bins(score[:9000]) - 2**15
    assert np.all((unit == 0) | (unit / UNIT_BINS < score[:9000]))
    assert np.all(score[:9000] <= (unit + 1) / UNIT_BINS)
    assert block.histograms.keys() == want.keys()
    for key, (bins, counts) in want.items():
        np.testing.assert_array_equal(block.histograms[key][0], bins)
        np.testing.assert_array_equal(block.histograms[key][1], counts)
        assert counts.sum() == ((group == key[0]) & (y == key[1])).sum()


def test_text_codes_of_offsets_arrow_did_not_align():
    values = [v if v is not None else "" for v in _texts(500, seed=4)]
    data = "".join(values).encode()
    offsets = np.r_[0, np.cumsum([len(v.encode()) for v in values])].astype(np.int64)
    unaligned = pa.py_buffer(b"x" + offsets.tobytes())[1:]  # one byte past an aligned address
    arr = pa.Array.from_buffers(pa.large_string(), len(values),
                                [None, unaligned, pa.py_buffer(data)])
    codes, uniques = _coded(pd.Series(pd.arrays.ArrowExtensionArray(arr)))
    want_codes, want_uniques = _reference(values)
    assert uniques == want_uniques
    np.testing.assert_array_equal(codes, want_codes)


def test_a_few_rows_of_a_long_column():
    values = _texts(100_000, seed=5)
    column = pd.Series(values, dtype=pd.StringDtype("pyarrow")).iloc[50_000:50_100]
    codes, uniques = _coded(column.reset_index(drop=True))
    want_codes, want_uniques = _reference(values[50_000:50_100])
    assert [None if u is pd.NA else u for u in uniques] == want_uniques
    np.testing.assert_array_equal(codes, want_codes)


@pytest.mark.parametrize("missing", [False, True])
def test_as_many_distinct_texts_as_groups_allowed(missing):
    values = [f"p{i}" for i in range(MAX_KEYS)] * 2 + ([None] if missing else [])
    codes, uniques = _coded(pd.Series(values, dtype=pd.StringDtype("pyarrow")))
    assert len(uniques) == MAX_KEYS + missing
    np.testing.assert_array_equal(codes, _reference(values)[0])


def test_too_many_groups_for_any_integer_is_refused():
    # 256**8 groups: a product that wraps to 0 in int64
    columns = np.stack([np.roll(np.arange(256), k) for k in range(8)], axis=1)
    y = np.arange(256) % 2
    with pytest.raises(ValueError, match="bin a continuous attribute"):
        audit(y, y, sensitive_features=columns, n_boot=0)


def test_inputs_of_different_lengths_are_refused():
    g = pd.Series(["a", "b", "a"], dtype=pd.StringDtype("pyarrow"))
    with pytest.raises(ValueError, match="one value per row"):
        audit_block([g], np.array([1, 0, 1]), np.array([1, 0]))
    with pytest.raises(ValueError, match="one value per row"):
        audit_block([g], np.array([1, 0, 1]), np.array([1, 0, 1]), np.array([0.5]))


def test_cells_and_bins_of_two_columns_with_missing_values_against_pandas():
    rng = np.random.default_rng(6)
    n = 160_000  # dense: 3 x 4 groups (missing included) x 2 labels x UNIT_BINS bins
    sex = rng.choice(["F", "M", None], n, p=[0.5, 0.49, 0.01])
    race = rng.choice(["a", "bb", "Asian or Pacific Islander", None], n, p=[.6, .3, .08, .02])
    y, d = rng.integers(0, 2, n), rng.integers(0, 2, n)
    score = np.where(rng.random(n) < 0.01, 1.5, rng.random(n))
    block = audit_block([pd.Series(sex, dtype=pd.StringDtype("pyarrow")),
                         pd.Series(race, dtype=pd.StringDtype("pyarrow"))], y, d, score)
    frame = pd.DataFrame({"sex": sex, "race": race, "y": y, "d": d,
                          "bin": score_bins(score)}).fillna({"sex": "?", "race": "?"})
    want = frame.groupby(["sex", "race", "y", "d"]).size()
    got = {tuple("?" if v is MISSING else v for v in key): int(rows)
           for key, rows in zip(block.cells.keys, block.cells.values[0], strict=True)}
    assert got == {key: int(rows) for key, rows in want.items()}
    for (s_, r_, label), part in frame.groupby(["sex", "race", "y"]):
        key = (*(MISSING if v == "?" else v for v in (s_, r_)), label)
        bins, counts = np.unique(part["bin"], return_counts=True)
        np.testing.assert_array_equal(block.histograms[key][0], bins)
        np.testing.assert_array_equal(block.histograms[key][1], counts)


@pytest.mark.parametrize("sizes", [(0, 0), (0, 5), (7, 0), (300, 200), (1, 1000)])
def test_merged_histograms_equal_counting_every_bin(sizes):
    rng = np.random.default_rng(sum(sizes))
    parts = []
    for size in sizes:
        bins = np.unique(rng.integers(0, 2000, size)).astype(np.int32)
        parts.append((bins, rng.integers(1, 50, len(bins)).astype(np.int64)))
    bins, counts = merge_sorted(*parts)
    every = np.zeros(2000, dtype=np.int64)
    for b, c in parts:
        np.add.at(every, b, c)
    np.testing.assert_array_equal(bins, np.flatnonzero(every))
    np.testing.assert_array_equal(counts, every[every > 0])
    assert bins.dtype == np.int32 and counts.dtype == np.int64


@pytest.mark.parametrize("spread", [3000, 2**18])  # added densely, or merged pairwise
def test_several_histograms_merged_at_once_equal_counting_every_bin(spread):
    rng = np.random.default_rng(spread)
    parts = []
    for size in (0, 400, 1, 900, 250, 0, 60, 1000):
        bins = np.unique(rng.integers(0, spread, size)).astype(np.int32)
        parts.append((bins, rng.integers(1, 2**59, len(bins)).astype(np.int64)))
    bins, counts = _merge_runs(parts)
    every = {}
    for b, c in parts:
        for k, v in zip(b.tolist(), c.tolist(), strict=True):
            every[k] = every.get(k, 0) + v
    assert bins.tolist() == sorted(every)
    assert counts.tolist() == [every[k] for k in sorted(every)]  # exact beyond 2**53
    assert bins.dtype == np.int32 and counts.dtype == np.int64


def test_blocks_merged_eight_at_a_time_equal_the_block_of_all_rows():
    rng = np.random.default_rng(5)
    n = 80_000  # blocks of 10,000 rows: the dense table of bins in each
    group = pd.Series(rng.choice(["a", "b", "c"], n), dtype=pd.StringDtype("pyarrow"))
    y, p = rng.integers(0, 2, n), rng.integers(0, 2, n)
    score = rng.random(n) ** 2
    score[rng.random(n) < 0.01] = 3.5  # a few outside [0, 1]: merged pairwise
    whole = audit_block([group], y, p, score)
    cut = np.sort(rng.choice(np.arange(1, n), 7, replace=False))
    blocks = [audit_block([group.iloc[a:b]], y[a:b], p[a:b], score[a:b])
              for a, b in zip(np.r_[0, cut], np.r_[cut, n], strict=True)]
    merged = merge_blocks(*blocks)
    cells = dict(zip(whole.cells.keys, whole.cells.values[0].tolist(), strict=True))
    assert dict(zip(merged.cells.keys, merged.cells.values[0].tolist(), strict=True)) == cells
    assert merged.histograms.keys() == whole.histograms.keys()
    for key, (bins, counts) in whole.histograms.items():
        np.testing.assert_array_equal(merged.histograms[key][0], bins)
        np.testing.assert_array_equal(merged.histograms[key][1], counts)


def test_the_merge_kernels_write_only_within_their_arrays():
    dense = np.zeros(10, dtype=np.int64)
    bins, counts = np.array([3, 5, 12], dtype=np.int32), np.array([1, 2, 3], dtype=np.int64)
    assert add_run(bins, counts, 2, dense) == -1  # 12 - 2 lies past dense: nothing added
    assert add_run(bins[:2], counts, 2, dense) == -1  # lengths differ
    assert not dense.any()
    assert add_run(bins[:2], counts[:2], 2, dense) == 0
    assert dense.tolist() == [0, 1, 0, 2, 0, 0, 0, 0, 0, 0]
    short = np.zeros(1, dtype=np.int32), np.zeros(1, dtype=np.int64)
    assert dense_cells(dense, 2, *short) == 2  # counted, written only where there is room
    assert short[0].tolist() == [3] and short[1].tolist() == [1]
    table = np.zeros((2, 4), dtype=np.int32)
    table[0, 1], table[1, 3] = 7, 9
    starts = np.zeros(3, dtype=np.int64)
    assert occupied(table, 10, *short, starts) == 2
    assert starts.tolist() == [0, 1, 2] and short[0].tolist() == [11]
    assert occupied(table, 10, *short, np.zeros(2, dtype=np.int64)) == -1


def test_blocks_read_at_once_in_several_threads_equal_blocks_read_one_by_one():
    """Each thread reuses its own scratch memory: blocks counted side by side in threads
    give every block's own statistics."""
    from concurrent.futures import ThreadPoolExecutor

    rng = np.random.default_rng(9)
    inputs = []
    for k in range(16):
        n = 40_000 + 1_000 * k  # the dense table of score bins: 4 n >= 3 x 2 x UNIT_BINS
        group = pd.Series(rng.choice(["a", "bb", "ccc"], n), dtype=pd.StringDtype("pyarrow"))
        inputs.append(([group], rng.integers(0, 2, n), rng.integers(0, 2, n), rng.random(n)))
    alone = [audit_block(*args) for args in inputs]
    with ThreadPoolExecutor(4) as pool:
        together = list(pool.map(lambda args: audit_block(*args), inputs * 3))
    for want, got in zip(alone * 3, together, strict=True):
        assert got.cells.keys == want.cells.keys
        np.testing.assert_array_equal(got.cells.values[0], want.cells.values[0])
        for key, (bins, counts) in want.histograms.items():
            np.testing.assert_array_equal(got.histograms[key][0], bins)
            np.testing.assert_array_equal(got.histograms[key][1], counts)


def test_the_text_kernel_checks_every_rows_offsets():
    """The kernel reads bytes only between a row's offsets: a decreasing offset, which
    pyarrow's cheap validation accepts, stops it before it reads (whoever calls it)."""
    from daskfair.metrics._audit_blocks import _text_codes

    def column(offsets):
        arr = pa.Array.from_buffers(pa.string(), 12, [None, pa.py_buffer(
            np.array(offsets, np.int32).tobytes()), pa.py_buffer(b"ab" * 6)])
        return pd.Series(pd.arrays.ArrowStringArray(pa.chunked_array([arr])))

    out = np.empty(12, dtype=np.int32)
    assert _text_codes(column(list(range(13))), out) == ["a", "b"]
    with pytest.raises(ValueError, match="malformed Arrow array"):
        _text_codes(column([0, 1, 2, 3, 4, 11, 6, 7, 8, 9, 10, 11, 12]), out)
