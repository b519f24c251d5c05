"""README.md is a first visit's page: short, and every relative link in it resolves.

A link ``path`` must name a file or folder of the repository; ``path#anchor`` (or ``#anchor``)
must also name a heading of that Markdown file, slugged as GitHub and the docs site (myst's
heading anchors) slug them.
"""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```.*?^```", re.S | re.M)


def slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = heading.strip().lower()
    text = "".join(c for c in text if c in " -_" or unicodedata.category(c)[0] in "LN")
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    text = FENCE.sub("", path.read_text(encoding="utf-8"))
    return {slug(m.group(1)) for m in re.finditer(r"^#{1,6}\s+(.+?)\s*#*$", text, re.M)}


def relative_links(text: str) -> list[str]:
    return [t for t in LINK.findall(FENCE.sub("", text))
            if not re.match(r"[a-z][a-z0-9+.-]*:", t)]


def test_slug_matches_github():
    assert slug("What the demo prints") == "what-the-demo-prints"
    assert slug("FKR-F²E: fair kernel classification") == "fkr-f²e-fair-kernel-classification"
    assert slug("On an HPC cluster (SLURM, PBS)") == "on-an-hpc-cluster-slurm-pbs"


def test_readme_is_short():
    assert len(README.read_text(encoding="utf-8").splitlines()) < 200


@pytest.mark.parametrize("target", relative_links(README.read_text(encoding="utf-8")))
def test_readme_link_resolves(target):
    path, _, anchor = target.partition("#")
    file = (ROOT / path).resolve() if path else README
    assert file.exists(), f"README links to {path}, which does not exist"
    if anchor:
        assert file.suffix == ".md", f"{target}: an anchor into a file that is not Markdown"
        assert anchor in anchors(file), f"{target}: no heading with that anchor in {path}"


def test_the_checks_can_fail(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("# Title\n\n## A section\n\n```\n# not a heading\n```\n")
    assert anchors(page) == {"title", "a-section"}
    assert relative_links("[a](x.md#y) [b](https://e.org) ![img](i.png)") == ["x.md#y"]
