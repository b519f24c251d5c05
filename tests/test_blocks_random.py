import dask
import dask.array as da
import numpy as np
import pytest

from daskfair._blocks import align_rows, block_sum, streamed_tree
from daskfair._random import as_seed_sequence, child_rng, spawn_seeds


def _stats(x, s):
    # per-group count, row sums and Gram matrix: a typical one-pass statistic
    counts = np.bincount(s, minlength=2).astype(float)
    sums = np.stack([x[s == g].sum(axis=0) for g in range(2)])
    return counts, sums, x.T @ x


@pytest.fixture
def small_blocks():
    # 200 rows in 13 canonical blocks of 16 (an odd count: the tree carries a part up)
    with dask.config.set({"daskfair.block-rows": 16}):
        yield


@pytest.mark.parametrize("chunks", [1, 7, 50, 200])
def test_block_sum_matches_single_block(chunks, small_blocks):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(200, 3))
    s = rng.integers(0, 2, size=200)
    ref = _stats(x, s)
    dx = align_rows(da.from_array(x, chunks=(chunks, 3)))[0]
    assert len(dx.chunks[0]) == 13
    out = block_sum(_stats, da.from_array(x, chunks=(chunks, 3)), s)
    for a, b in zip(ref, out, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(out[0], np.bincount(s, minlength=2))
    # numpy input: the same blocks and the same tree, so the same bits
    for a, b in zip(block_sum(_stats, x, s), out, strict=True):
        np.testing.assert_array_equal(a, b)


def test_block_sum_check_fails_when_the_tree_drops_a_block(small_blocks, monkeypatch):
    # the test above can fail: a tree that loses the carried odd part gives other sums
    import daskfair._blocks as blocks

    tree = blocks._tree

    def broken(parts, combine):
        parts = list(parts)
        return tree(parts[:-1] if len(parts) % 2 else parts, combine)

    rng = np.random.default_rng(0)
    x, s = rng.normal(size=(200, 3)), rng.integers(0, 2, size=200)
    monkeypatch.setattr(blocks, "_tree", broken)
    out = block_sum(_stats, da.from_array(x, chunks=(7, 3)), s)
    assert out[0].sum() < 200


def _level_pairs(parts):
    # the reference tree: pairs level by level, the last odd part carried up
    parts = list(parts)
    while len(parts) > 1:
        nxt = [(parts[i], parts[i + 1]) for i in range(0, len(parts) - 1, 2)]
        parts = nxt + ([parts[-1]] if len(parts) % 2 else [])
    return parts[0]


def test_streamed_tree_is_the_level_tree_and_holds_log_many_parts():
    for n in range(1, 130):
        assert streamed_tree(iter(range(n)), lambda a, b: (a, b)) == _level_pairs(range(n))
    live, peak = set(), [0]

    class Part:
        def __init__(self):
            live.add(id(self))
            peak[0] = max(peak[0], len(live))

        def __del__(self):
            live.discard(id(self))

    streamed_tree((Part() for _ in range(1024)), lambda a, b: Part())
    assert peak[0] <= 12  # log2(1024) + 2, where a list of parts held 1024
    with pytest.raises(ValueError, match="no row blocks"):
        streamed_tree(iter([]), lambda a, b: a)


def test_block_sum_delayed_and_kwargs():
    x = da.arange(10, chunks=3)
    total = block_sum(lambda b, k: b.sum() * k, x, compute=False, k=2)
    assert total.compute() == 90


def test_align_rows_rechunks_to_canonical_rows_whatever_the_input_chunks():
    y = np.arange(10)
    with dask.config.set({"daskfair.block-rows": 4}):
        for chunks in ((3, 2), (10, 4), ((1, 9), 4)):
            ax, ay = align_rows(da.ones((10, 4), chunks=chunks), y)
            assert ax.chunks == ((4, 4, 2), (4,))
            assert ay.chunks == ((4, 4, 2),)
    # by default the size follows the widest row (or the hint): 64 MB blocks, 2^k rows
    x = da.ones((300_000, 8), chunks=(1000, 8))
    assert align_rows(x)[0].chunks[0][0] == 65_536
    assert align_rows(x, row_width=1000)[0].chunks[0][0] == 8192


def test_seeds_reproducible_and_independent():
    a = child_rng(as_seed_sequence(5), 3).random(4)
    b = child_rng(as_seed_sequence(5), 3).random(4)
    c = child_rng(as_seed_sequence(5), 4).random(4)
    np.testing.assert_array_equal(a, b)
    assert not np.allclose(a, c)
    assert spawn_seeds(1, 3) == spawn_seeds(1, 3)
    assert len(set(spawn_seeds(1, 50))) == 50
    with pytest.raises(ValueError, match="non-negative"):
        as_seed_sequence(-1)
    with pytest.raises(TypeError, match="random_state must be"):
        as_seed_sequence("x")
