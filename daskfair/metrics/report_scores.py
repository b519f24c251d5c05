"""The report's parts on scores: the scoring rate of New York City's Local Law 144 and
calibration within groups (a reliability plot per group, inline SVG). Every name from the
user's table is escaped."""

from __future__ import annotations

from typing import Any

from ._html import FOUR_FIFTHS, esc, group_name, interval, num
from .audit_result import Audit

__all__ = ["calibration_section", "scoring_section"]

def scoring_section(a: Audit, h: int) -> str:
    """The scoring rate per group, its interval, impact ratio and bound."""
    rates = a.scoring_rate()
    rows = []
    for g, r in rates.iterrows():
        flag = r["impact_ratio"] < FOUR_FIFTHS
        impact = (f"<span class='flag'>{num(r['impact_ratio'])} &lt; 4/5</span>" if flag
                  else num(r["impact_ratio"]))
        rows.append(f"<tr data-scoring><td class='g'>{esc(group_name(g))}</td>"
                    f"<td>{interval(r['scoring_rate'], r['lower'], r['upper'])}</td>"
                    f"<td>{impact}</td>"
                    f"<td>{num(r['ratio_to_reference'])}</td>"
                    f"<td>{num(r['error_bound'])}</td></tr>")
    return (f"<h{h}>Scoring rate</h{h}><p>The share of each group scored above the median "
            "score of all rows (New York City's Local Law 144); impact ratio: over the highest "
            "group's rate; Wilson intervals with the median taken as fixed. The exact rate lies "
            "between the rate and the rate plus its bound (rows in the median's bin).</p>"
            "<table id='scoring'><tr><th class='g'>group</th><th>scoring rate</th>"
            "<th>impact ratio</th><th>over the reference</th><th>bound</th></tr>"
            + "".join(rows) + "</table>")


def _reliability(table: Any, title: str) -> str:
    """One group's reliability plot: observed positive rate (with Wilson intervals) against
    the mean score of each bin, and the diagonal of perfect calibration."""
    size, pad = 220, 30
    span = size - 2 * pad

    def x(v: float) -> float:
        return pad + span * v

    def y(v: float) -> float:
        return size - pad - span * v

    parts = [f"<svg width='{size}' height='{size + 18}' role='img' "
             f"aria-label='reliability of {esc(title)}'>",
             f"<text x='{size / 2}' y='14' text-anchor='middle' font-size='12'>{esc(title)}"
             "</text>",
             f"<rect x='{pad}' y='{pad}' width='{span}' height='{span}' fill='none' "
             "stroke='#ccc'/>",
             f"<line x1='{x(0)}' y1='{y(0)}' x2='{x(1)}' y2='{y(1)}' stroke='#999' "
             "stroke-dasharray='4 3'/>"]
    points = []
    for _, r in table.iterrows():
        px, py = x(r["mean_score"]), y(r["positive_rate"])
        parts.append(f"<line x1='{px:.1f}' x2='{px:.1f}' y1='{y(r['positive_rate_lower']):.1f}' "
                     f"y2='{y(r['positive_rate_upper']):.1f}' stroke='#1f5fa8'/>")
        points.append(f"{px:.1f},{py:.1f}")
    parts.append(f"<polyline points='{' '.join(points)}' fill='none' stroke='#1f5fa8' "
                 "stroke-width='1.5'/>")
    parts.extend(f"<circle cx='{p.split(',')[0]}' cy='{p.split(',')[1]}' r='3' "
                 "fill='#1f5fa8'/>" for p in points)
    parts.append(f"<text x='{size / 2}' y='{size - 8}' text-anchor='middle' font-size='11'>"
                 "mean score</text>"
                 f"<text x='12' y='{size / 2}' text-anchor='middle' font-size='11' "
                 f"transform='rotate(-90 12 {size / 2})'>positive rate</text>")
    parts.extend(f"<text x='{x(v)}' y='{size - pad + 12}' text-anchor='middle' "
                 f"font-size='10'>{v:g}</text>" for v in (0, 1))
    parts.append("</svg>")
    return "".join(parts)


def calibration_section(a: Audit, n_bins: int, strategy: str, h: int) -> str:
    """Each group's expected calibration error and reliability plot."""
    c = a.calibration(n_bins, strategy)
    rows = "".join(
        f"<tr data-calibration><td class='g'>{esc(group_name(g))}</td>"
        f"<td>{interval(r['ece'], r['lower'], r['upper'])}</td></tr>"
        for g, r in c.ece.iterrows())
    keys = list(dict.fromkeys(k[:-1] for k in c.by_bin.index))
    plots = "".join(_reliability(c.by_bin.loc[k if len(k) > 1 else k[0]], group_name(
        k if len(k) > 1 else k[0])) for k in keys)
    whole = c.overall_ece
    return (f"<h{h}>Calibration within groups</h{h}><p>{n_bins} {esc(strategy)} bins of the "
            "scores. Expected calibration error: the rows' share-weighted gap between each "
            "bin's observed positive rate and mean score (all rows: "
            f"{num(whole['ece'])} [{num(whole['lower'])}, {num(whole['upper'])}]); its "
            "interval holds every bin's Wilson interval at once. In the plots, dashed: a "
            "calibrated score; bars: Wilson intervals of the positive rate.</p>"
            "<table id='calibration'><tr><th class='g'>group</th><th>expected calibration "
            f"error</th></tr>{rows}</table>"
            f"<div style='display:flex;flex-wrap:wrap'>{plots}</div>")

