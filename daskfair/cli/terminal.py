"""What the command prints, made safe for a terminal: control characters that come with a
store's or a table's text are shown escaped, never sent to the terminal as they are."""

from __future__ import annotations

import contextlib
import re
import sys
from collections.abc import Iterator
from typing import Any, TextIO

__all__ = ["EscapingStream", "escape", "escaped_output"]

# C0 controls but newline and tab (carriage return and backspace included: they overwrite what
# was printed), DEL, C1 controls, and the bidirectional overrides and isolates that reorder text
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e"
                      "\u2066-\u2069]")


def _escaped(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def escape(text: str) -> str:
    """``text`` with every control character written as an escape (``\\x1b``, ``\\u202e``).

    Parameters
    ----------
    text : str

    Returns
    -------
    str
    """
    return _CONTROL.sub(_escaped, text)


class EscapingStream:
    """A text stream that escapes control characters on their way to ``stream``.

    Progress bars, which redraw their line with a carriage return, write to
    :attr:`unescaped`.
    """

    def __init__(self, stream: TextIO) -> None:
        self.unescaped = stream

    def write(self, text: str) -> int:
        self.unescaped.write(escape(text))
        return len(text)

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.unescaped, name)


@contextlib.contextmanager
def escaped_output() -> Iterator[None]:
    """``sys.stdout`` and ``sys.stderr`` escaping control characters inside the block."""
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = EscapingStream(sys.stdout), EscapingStream(sys.stderr)
    try:
        yield
    finally:
        sys.stdout, sys.stderr = saved
