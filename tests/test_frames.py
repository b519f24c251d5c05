"""A dask DataFrame's partitions as a dask array: each block names one task in every graph
(daskfair/_frames.py; docs/design.md#platform-notes)."""

import dask
import dask.dataframe as dd
import numpy as np
import pandas as pd

from daskfair._frames import count_rows, partition_array, partitions


def _column(part: pd.DataFrame) -> np.ndarray:
    return part["x"].to_numpy()


def _double(part: pd.DataFrame) -> np.ndarray:
    return 2 * part["x"].to_numpy()


def _optimized(*collections) -> dict:
    graph = {}
    for opt in dask.optimize(*collections):
        graph.update(opt.__dask_graph__())
    return graph


def test_a_block_read_alone_is_the_task_of_the_whole_pass():
    # A landmark draw reads a few rows (fancy indexing touches one block); the next pass
    # reads every block and, from the same partitions, other columns. When dask's low-level
    # fusion merged the block read alone with its partition's read, the block's key named
    # another task in the first graph than in the second, and the scheduler, still holding
    # it, read the partition again.
    frame = dd.from_pandas(pd.DataFrame({"x": np.arange(40.0)}), npartitions=4)
    parts = partitions(frame)
    lengths = count_rows(parts)
    a = partition_array(parts, lengths, _column, dtype=np.float64)
    assert a.numblocks == (4,)
    other = partition_array(parts, lengths, _double, dtype=np.float64)
    whole = _optimized(a, other)
    alone = _optimized(a[np.array([11, 13])])
    key = (a.name, 1)
    assert key in whole and key in alone
    assert type(alone[key]) is type(whole[key])
    assert alone[key].dependencies == whole[key].dependencies
    assert parts[1].key in alone[key].dependencies & whole[key].dependencies
    np.testing.assert_array_equal(a[np.array([11, 13])].compute(), [11.0, 13.0])
    np.testing.assert_array_equal(a.compute(), np.arange(40.0))
