"""The ``daskfair`` console script: parse, set up logging and signals, run one command."""

from __future__ import annotations

import logging
import signal
import sys
import threading
from collections.abc import Sequence

from ..datasets import DataUnavailableError
from .commands import COMMANDS
from .params import as_flags
from .parser import build_parser, subparser
from .session import on_sigterm

__all__ = ["main"]

#: Errors that are the user's to fix (input, environment): one clear line, no traceback.
_USER_ERRORS = (ValueError, TypeError, FileNotFoundError, FileExistsError, PermissionError,
                ConnectionError, ImportError, DataUnavailableError)


def _log_to_stderr(verbose: bool) -> None:
    # daskfair's own logger only: a root handler would also print distributed's INFO
    # messages (dask's configuration sets its loggers to INFO)
    log = logging.getLogger("daskfair")
    if not log.handlers:
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
        log.addHandler(handler)
    log.setLevel(logging.INFO if verbose else logging.WARNING)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``daskfair`` console script.

    Parameters
    ----------
    argv : sequence of str, default=None
        The arguments (default: ``sys.argv[1:]``).

    Returns
    -------
    int
        The exit status: 0 done, 1 a run shown incomplete or a failed check, 2 an error the
        user can fix (one line on stderr), 130/143 interrupted (Ctrl-C, SIGTERM).
    """
    parser = build_parser()
    args = parser.parse_args(argv)
    _log_to_stderr(args.verbose)
    main_thread = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, on_sigterm) if main_thread else None
    try:
        return COMMANDS[args.command](args)
    except _USER_ERRORS as exc:
        message = as_flags(str(exc), subparser(parser, args.command))
        print(f"daskfair {args.command}: error: {message}", file=sys.stderr)
        return 2
    finally:
        if main_thread:
            signal.signal(signal.SIGTERM, previous)
