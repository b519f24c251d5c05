"""The Python on every user-guide page runs as it is shown.

Each page's ```python blocks run in order in one namespace, in a fresh working directory (the
pages write stores and tables there), with matplotlib drawing off screen. A block that raises
fails the test with the page and the block's first line. Marked ``docs`` (``.ci/run`` runs it
after building the site): the pages read real data sets and start a cluster.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

pytestmark = pytest.mark.docs

ROOT = Path(__file__).resolve().parent.parent
PAGES = [*sorted((ROOT / "docs").glob("guide/*.md")), ROOT / "docs" / "getting_started.md"]
BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)
DATA = Path(os.environ.get("DASKFAIR_DATA", ROOT.parent / "shared" / "data"))


def blocks(page: Path) -> list[str]:
    return BLOCK.findall(page.read_text(encoding="utf-8"))


def test_the_blocks_are_found():
    assert len(blocks(ROOT / "docs" / "guide" / "classification.md")) >= 3
    assert blocks(ROOT / "docs" / "guide" / "cluster.md") == []  # shell only


@pytest.mark.parametrize("page", [p for p in PAGES if blocks(p)], ids=lambda p: p.stem)
def test_page_code_runs(page, tmp_path, monkeypatch):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    code = "".join(blocks(page))
    if ("load_dataset(" in code or "load_fce_pool(" in code) and not (
            DATA / "SHA256SUMS").exists():
        pytest.skip(f"{page.name} reads real data sets, not found at {DATA}; set DASKFAIR_DATA")
    monkeypatch.chdir(tmp_path)
    namespace: dict = {"__name__": f"docs_{page.stem}"}
    try:
        for i, code in enumerate(blocks(page)):
            try:
                exec(compile(code, f"{page.name}, block {i + 1}", "exec"), namespace)
            except Exception as e:
                first = code.strip().splitlines()[0]
                raise AssertionError(f"{page.name} block {i + 1} ({first!r}) raised {e!r}") from e
    finally:
        plt.close("all")
        # a cluster a page started (daskfair.runtime.clients.get_client) would serve the next page,
        # whose working directory its workers do not share
        from distributed.client import _get_global_client

        client = _get_global_client()
        if client is not None:
            cluster = client.cluster
            client.close()
            if cluster is not None:
                cluster.close()
