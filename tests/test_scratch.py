"""A thread's scratch memory: reused by name, apart by name and by thread, never kept when
large."""

from __future__ import annotations

import threading

import numpy as np

from daskfair._scratch import MAX_BYTES, scratch


def test_a_name_reuses_its_memory_and_names_stay_apart():
    a = scratch("test a", (3, 5), np.int32)
    a[:] = 7
    again = scratch("test a", 7, np.int64)  # 56 bytes of the 60: the same memory
    assert np.shares_memory(a, again)
    b = scratch("test b", (3, 5), np.int32)
    assert not np.shares_memory(a, b)
    grown = scratch("test a", 1000, np.int64)  # larger: new memory, kept from now on
    assert grown.shape == (1000,) and grown.dtype == np.int64
    assert np.shares_memory(grown, scratch("test a", 1000, np.int64))


def test_threads_have_their_own_and_large_arrays_are_not_kept():
    mine = scratch("test c", 100, np.float64)
    theirs = []
    t = threading.Thread(target=lambda: theirs.append(scratch("test c", 100, np.float64)))
    t.start()
    t.join()
    assert not np.shares_memory(mine, theirs[0])
    n = MAX_BYTES // 8 + 1
    assert not np.shares_memory(scratch("test d", n, np.float64),
                                scratch("test d", n, np.float64))
