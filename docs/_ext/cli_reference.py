"""``.. daskfair-cli::``: the command line's reference, generated from its argparse parser.

For the top-level parser and each subcommand of :func:`daskfair.cli.main.build_parser`, a
section with the command's ``--help`` text, so the page is whatever ``daskfair COMMAND --help``
prints at build time.
"""

from __future__ import annotations

import argparse
import os

from docutils import nodes
from sphinx.util.docutils import SphinxDirective


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def _help(parser: argparse.ArgumentParser) -> str:
    # argparse wraps to $COLUMNS; fix the width so the page does not depend on the terminal
    old = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = "100"
    try:
        return parser.format_help()
    finally:
        if old is None:
            os.environ.pop("COLUMNS", None)
        else:
            os.environ["COLUMNS"] = old


class CliReference(SphinxDirective):
    """Insert the ``--help`` of ``daskfair`` and of every subcommand."""

    has_content = False

    def run(self) -> list[nodes.Node]:
        from daskfair.cli.parser import build_parser

        parser = build_parser()
        parser.prog = "daskfair"
        out: list[nodes.Node] = [nodes.literal_block(text=_help(parser), language="text")]
        for name, sub in _subcommands(parser).items():
            sub.prog = f"daskfair {name}"
            section = nodes.section(ids=[f"daskfair-{name}"], names=[f"daskfair {name}"])
            section += nodes.title(text=f"daskfair {name}")
            section += nodes.literal_block(text=_help(sub), language="text")
            self.state.document.note_implicit_target(section, section)
            out.append(section)
        return out


def setup(app):
    app.add_directive("daskfair-cli", CliReference)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
