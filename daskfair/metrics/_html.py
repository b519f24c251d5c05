"""What every part of the audit report writes the same way: escaped text, numbers, a
value with its interval, a plot of every group's value and interval."""

from __future__ import annotations

import html
import math
from typing import Any

import numpy as np

__all__ = ["FOUR_FIFTHS", "esc", "group_name", "group_table", "interval", "interval_plot",
           "num"]

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


def interval_plot(a: Any, metric: str, lo: Any, hi: Any, by: Any = None,
                  mark: float | None = None, title: str | None = None, h: int = 3) -> str:
    """An SVG plot of one metric of an audit ``a``: one row per compared group, its value
    (dot) and interval (line); a dashed line at all rows' value (or at ``mark``)."""
    by = a.by_group if by is None else by
    groups = [g for g in by.index if not np.isnan(by.loc[g, metric])]
    if not groups:
        return ""
    width, left, row = 720, 230, 22
    height = row * len(groups) + 30
    line = a.overall[metric] if mark is None else mark
    ends = np.r_[[by.loc[g, metric] for g in groups], [lo.loc[g, metric] for g in groups],
                 [hi.loc[g, metric] for g in groups], line]
    ends = ends[np.isfinite(ends)]
    pad = 0.05 * max(float(ends.max() - ends.min()), 1e-9)
    x0, x1 = float(ends.min()) - pad, float(ends.max()) + pad

    def x(v: float) -> float:
        return left + (width - left - 20) * (v - x0) / (x1 - x0)

    parts = [f"<svg width='{width}' height='{height}' role='img' "
             f"aria-label='{esc(metric)} by group'>"]
    ov = x(line)
    parts.append(f"<line x1='{ov:.1f}' x2='{ov:.1f}' y1='0' y2='{height - 20}' "
                 "stroke='#999' stroke-dasharray='4 3'/>")
    for i, g in enumerate(groups):
        y = 15 + i * row
        v, low, high = by.loc[g, metric], lo.loc[g, metric], hi.loc[g, metric]
        parts.append(f"<text x='{left - 8}' y='{y + 4}' text-anchor='end' font-size='12'>"
                     f"{esc(group_name(g))}</text>")
        if np.isfinite(low) and np.isfinite(high):
            parts.append(f"<line x1='{x(low):.1f}' x2='{x(high):.1f}' y1='{y}' y2='{y}' "
                         "stroke='#1f5fa8' stroke-width='2'/>")
        parts.append(f"<circle cx='{x(v):.1f}' cy='{y}' r='4' fill='#1f5fa8'/>")
    for v in (x0, x1):
        parts.append(f"<text x='{x(v):.1f}' y='{height - 4}' font-size='11' "
                     f"text-anchor='middle'>{num(v, 2)}</text>")
    parts.append("</svg>")
    return f"<h{h}>{esc(title or metric)}</h{h}>" + "".join(parts)


def group_table(a: Any, lo: Any, hi: Any, how: str) -> str:
    """An audit's groups, each with its rows and every metric with its interval from ``lo``
    and ``hi`` (``how``: how they were made); suppressed groups said so."""
    by = a.by_group
    cols = a.metrics[1:]
    head = "".join(f"<th>{esc(c)}</th>" for c in cols)
    rows = []
    suppressed = a.suppressed
    for g in by.index:
        if np.isnan(by.loc[g, "count"]):
            continue  # a combination of levels with no rows
        label = f"<td class='g'>{esc(group_name(g))}</td><td>{int(by.loc[g, 'count']):,}</td>"
        if g in suppressed:
            cells = (f"<td colspan='{len(cols)}' class='muted'>suppressed: fewer than "
                     f"{a.min_group_size:,} rows</td>")
        else:
            cells = "".join(f"<td>{interval(by.loc[g, c], lo.loc[g, c], hi.loc[g, c])}</td>"
                            for c in cols)
        rows.append(f"<tr data-group>{label}{cells}</tr>")
    return (f"<p>Intervals: {esc(how)}, {a.confidence:.0%} confidence.</p>"
            f"<table id='groups'><tr><th class='g'>group</th><th>rows</th>{head}</tr>"
            + "".join(rows) + "</table>")
