"""Shared fixtures: the real data directory and a small in-process Dask client."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

DATA = Path(
    os.environ.get("DASKFAIR_DATA", Path(__file__).resolve().parents[2] / "shared" / "data")
)


@pytest.fixture(autouse=True)
def _no_publishers(monkeypatch):
    """No test reaches the internet: a missing data file would be fetched from a local port
    nobody listens on (tests of the downloads set their own local server)."""
    monkeypatch.setenv("DASKFAIR_DATA_URL", "http://127.0.0.1:9")


@pytest.fixture(scope="session")
def data_dir() -> Path:
    if not (DATA / "SHA256SUMS").exists():
        pytest.skip(f"real data not found at {DATA}; set DASKFAIR_DATA")
    return DATA


@pytest.fixture
def client():
    """A function-scoped in-process cluster.

    docs/design.md#platform-notes: session scope breaks gen_cluster.
    """
    import distributed

    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None
    ) as cluster, distributed.Client(cluster) as c:
        yield c


@pytest.fixture
def several_blocks():
    """Canonical row blocks of 16 rows, so that test inputs of a few hundred rows are many
    blocks: tree sums, carries and block boundaries are exercised (with the default size,
    1,024 rows or more, every small input is one block and a chunking test cannot fail)."""
    import dask

    with dask.config.set({"daskfair.block-rows": 16}):
        yield 16
