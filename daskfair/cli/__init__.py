"""The command line: the ``daskfair`` command (:mod:`.parser`, :mod:`.commands`), its jobs
(:mod:`.fkr_job`, :mod:`.safairkm_job`, :mod:`.fce_job`), their inputs, the demo, the pool
audit, the plots and the papers' protocols (:mod:`.paper`). The top layer: nothing in the
library imports it."""

from .main import main
from .parser import build_parser

__all__ = ["build_parser", "main"]
