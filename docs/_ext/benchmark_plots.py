"""``daskfair-benchmark-plots``: every plot in ``benchmarks/results/`` with what it shows.

The caption of ``results/<name>.png`` is the "what it measures" cell of the row of
``<name>.py`` in the scripts table of ``benchmarks/README.md``, so the page says what the
README says and a new benchmark's plot appears without editing the docs.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from docutils import nodes
from sphinx.util.docutils import SphinxDirective


def script_descriptions(readme: str) -> dict[str, str]:
    """Map each script's stem to its "what it measures" cell in the README's table."""
    out = {}
    for line in readme.splitlines():
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]]
        m = re.fullmatch(r"`(\w+)\.py`", cells[0]) if len(cells) >= 3 else None
        if m:
            out[m.group(1)] = cells[2]
    return out


def _inline(text: str) -> list[nodes.Node]:
    """The README's cell as text, its `code` spans as literals."""
    out: list[nodes.Node] = []
    for i, piece in enumerate(re.split(r"`([^`]*)`", text)):
        if piece:
            out.append(nodes.literal(text=piece) if i % 2 else nodes.Text(piece))
    return out


class BenchmarkPlots(SphinxDirective):
    """A figure per stored plot, captioned from the README's table."""

    def run(self) -> list[nodes.Node]:
        bench = Path(self.env.srcdir).parent / "benchmarks"
        here = Path(self.env.doc2path(self.env.docname)).parent
        self.env.note_dependency(str(bench / "README.md"))
        described = script_descriptions((bench / "README.md").read_text())
        out: list[nodes.Node] = []
        for png in sorted((bench / "results").glob("*.png")):
            self.env.note_dependency(str(png))
            figure = nodes.figure(ids=[f"plot-{png.stem}"])
            figure += nodes.image(uri=os.path.relpath(png, here), width="100%",
                                  alt=f"{png.stem} benchmark plot")
            caption = nodes.caption()
            caption += nodes.literal(text=f"{png.stem}.py")
            what = described.get(png.stem)
            if what:
                caption += nodes.Text(": ")
                caption += _inline(what)
            figure += caption
            out += [nodes.rubric(text=png.stem), figure]
        return out


def setup(app):
    app.add_directive("daskfair-benchmark-plots", BenchmarkPlots)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
