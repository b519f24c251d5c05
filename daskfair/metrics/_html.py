"""What every part of the audit report writes the same way: escaped text, numbers, a
value with its interval."""

from __future__ import annotations

import html
import math
from typing import Any

__all__ = ["FOUR_FIFTHS", "esc", "group_name", "interval", "num"]

#: The four-fifths rule: a selection rate below 4/5 of the reference group's is flagged.
FOUR_FIFTHS = 0.8


def esc(value: Any) -> str:
    """``value`` as text safe in HTML, quotes included."""
    return html.escape(str(value), quote=True)


def group_name(group: Any) -> str:
    """A group as people read it: several columns' values joined by ", "."""
    return ", ".join(map(str, group)) if isinstance(group, tuple | list) else str(group)


def num(x: float | None, digits: int = 3) -> str:
    """A number to ``digits`` places ("—" for None or NaN)."""
    return "—" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.{digits}f}"


def interval(point: float, lo: float | None, hi: float | None) -> str:
    """A value and, muted, its interval (none when ``lo`` is None)."""
    if lo is None or math.isnan(point):
        return num(point)
    return f"{num(point)} <span class='muted'>[{num(lo)}, {num(hi)}]</span>"
