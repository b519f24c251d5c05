"""``daskfair-benchmark-plots``: every plot in ``benchmarks/results/`` with what it shows.

The caption of ``results/<name>.png`` is the "what it measures" cell of the row of
``<name>.py`` in the scripts table of ``benchmarks/README.md``, so the page says what the
README says and a new benchmark's plot appears without editing the docs.
"""

from __future__ import annotations

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


class BenchmarkPlots(SphinxDirective):
    """A figure per stored plot, captioned from the README's table."""

    def run(self) -> list[nodes.Node]:
        bench = Path(self.env.srcdir).parent / "benchmarks"
        self.env.note_dependency(str(bench / "README.md"))
        described = script_descriptions((bench / "README.md").read_text())
        rst = []
        for png in sorted((bench / "results").glob("*.png")):
            self.env.note_dependency(str(png))
            what = described.get(png.stem, "")
            caption = f"``{png.stem}.py``" + (f": {what}" if what else "")
            rst += [f".. rubric:: {png.stem}", "",
                    f".. figure:: /../benchmarks/results/{png.name}", "   :width: 100%", "",
                    f"   {caption}", ""]
        container = nodes.container()
        from docutils.statemachine import StringList
        self.state.nested_parse(StringList(rst, source="benchmark-plots"), 0, container)
        return container.children


def setup(app):
    app.add_directive("daskfair-benchmark-plots", BenchmarkPlots)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
