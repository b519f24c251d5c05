"""The ``daskfair`` console script: parse, set up logging and signals, run one command."""

from __future__ import annotations

import logging
import signal
import sys
import threading
from collections.abc import Sequence
from typing import Any

from ..datasets import DataUnavailableError
from .commands import COMMANDS
from .params import as_flags
from .parser import build_parser, subparser
from .session import TERMINATED, on_sigterm
from .terminal import escaped_output

__all__ = ["main"]

#: Errors that are the user's to fix (input, environment): one clear line, no traceback.
_USER_ERRORS = (ValueError, TypeError, FileNotFoundError, FileExistsError, PermissionError,
                ConnectionError, ImportError, DataUnavailableError)


class _CurrentStderr(logging.StreamHandler):
    """Writes to ``sys.stderr`` as it is when a message is logged (escaped in a command)."""

    @property
    def stream(self) -> Any:
        return sys.stderr

    @stream.setter
    def stream(self, value: Any) -> None:
        pass


def _log_to_stderr(verbose: bool) -> None:
    # daskfair's own logger only: a root handler would also print distributed's INFO
    # messages (dask's configuration sets its loggers to INFO)
    log = logging.getLogger("daskfair")
    if not log.handlers:
        handler = _CurrentStderr()
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
    main_thread = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, on_sigterm) if main_thread else None
    with escaped_output():  # a store's or a table's text never reaches the terminal raw
        _log_to_stderr(args.verbose)
        try:
            return COMMANDS[args.command](args)
        except _USER_ERRORS as exc:
            message = as_flags(str(exc), subparser(parser, args.command))
            print(f"daskfair {args.command}: error: {message}", file=sys.stderr)
            return 2
        except (MemoryError, RecursionError) as exc:
            if args.verbose:
                raise
            print(f"daskfair {args.command}: error: {type(exc).__name__} ({str(exc)[:200]}): "
                  "an input or store holds more than can be read here (--verbose shows "
                  "where).", file=sys.stderr)
            return 2
        except KeyboardInterrupt as exc:  # Ctrl-C, or SIGTERM (on_sigterm)
            print(f"\ndaskfair {args.command}: {exc or 'interrupted'}", file=sys.stderr)
            return 143 if str(exc) == TERMINATED else 130
        finally:
            if main_thread:
                signal.signal(signal.SIGTERM, previous)
