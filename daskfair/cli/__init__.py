"""The command-line layer: the ``daskfair`` command, its jobs and inputs, the demo, the pool
audit and the plots. Library code never imports from here."""

from .main import build_parser, main

__all__ = ["build_parser", "main"]
