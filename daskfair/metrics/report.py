"""An audit as one self-contained HTML page: tables, a plot per metric (inline SVG), the
comparisons with the reference group, and what was audited. Every name from the user's
table is escaped, and the page may load nothing and run no script (its Content Security
Policy says so to the browser)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ._html import FOUR_FIFTHS, esc, group_name, group_table, interval, interval_plot, num
from .audit_levels import LevelAudit
from .audit_result import Audit
from .regression_audit import RegressionAudit
from .report_regression import regression_body
from .report_scores import calibration_section, scoring_section

__all__ = ["GENERATOR", "audit_html", "level_name"]

#: The report's generator tag: how ``--overwrite`` knows a report daskfair wrote.
GENERATOR = "daskfair audit report"
_POLICY = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"
_STYLE = """
body{font:15px/1.45 system-ui,sans-serif;margin:2em auto;max-width:1100px;color:#222;padding:0 1em}
table{border-collapse:collapse;margin:.6em 0 1.4em}td,th{padding:.25em .6em;text-align:right;
border-bottom:1px solid #ddd}th{background:#f3f3f3}td.g,th.g{text-align:left}
.flag{color:#b00020;font-weight:600}.muted{color:#777}svg{display:block;margin:.3em 0 1.4em}
h2{margin-top:1.8em;border-bottom:2px solid #444}code{background:#f3f3f3;padding:0 .2em}
"""


def _intervals(a: Audit) -> tuple[Any, Any, str]:
    """The per-group intervals the page shows: the bootstrap's, or Wilson's without it."""
    if a.n_boot > 0:
        lo, hi = a.by_group_ci
        return lo, hi, f"bootstrap percentile, {a.n_boot:,} replicates"
    lo, hi = a.by_group_wilson_ci
    return lo, hi, "Wilson (rates) and DeLong (roc_auc)"


def _comparison_table(a: Audit) -> str:
    diff, ratio = a.difference_to_reference(), a.ratio_to_reference()
    tests = a.tests()
    ci = (a.difference_to_reference_ci(), a.ratio_to_reference_ci()) if a.n_boot else None
    rows = []
    for g in diff.index:
        if g == a.reference_group or diff.loc[g].isna().all():
            continue
        key = g if isinstance(g, tuple) else (g,)
        cells = []
        for c in diff.columns:
            d = interval(diff.loc[g, c], *((ci[0][0].loc[g, c], ci[0][1].loc[g, c])
                                             if ci else (None, None)))
            r = ratio.loc[g, c]
            flag = c == "selection_rate" and r < FOUR_FIFTHS
            noise = tests.loc[(c, *key)] if (c, *key) in tests.index else None
            mark = " <span class='flag'>beyond noise</span>" if (
                noise is not None and bool(noise["significant"])) else ""
            ratio_text = f"<span class='flag'>{num(r)} &lt; 4/5</span>" if flag else num(r)
            cells.append(f"<td>{d}{mark}<br><span class='muted'>ratio</span> {ratio_text}</td>")
        rows.append(f"<tr data-comparison><td class='g'>{esc(group_name(g))}</td>"
                    f"{''.join(cells)}</tr>")
    head = "".join(f"<th>{esc(c)}</th>" for c in diff.columns)
    return (f"<p>Each group minus (and over) the reference group <b>"
            f"{esc(group_name(a.reference_group))}</b>. <i>beyond noise</i>: a two-proportion "
            f"test (DeLong's for roc_auc), Holm-adjusted over the whole table, at level "
            f"{1 - a.confidence:.2g}. The four-fifths rule flags an impact ratio (selection "
            f"rate over the reference's) below {FOUR_FIFTHS}.</p>"
            f"<table id='comparisons'><tr><th class='g'>group</th>{head}</tr>"
            + "".join(rows) + "</table>")


def _worst_table(a: Audit) -> str:
    diff, ratio = a.difference(), a.ratio()
    none = [None, None]
    dci, rci = (a.difference_ci(), a.ratio_ci()) if a.n_boot else (none, none)
    rows = []
    for c in diff.index:
        d = interval(diff[c], *(e[c] if e is not None else None for e in dci))
        r = interval(ratio[c], *(e[c] if e is not None else None for e in rci))
        rows.append(f"<tr><td class='g'>{esc(c)}</td><td>{d}</td><td>{r}</td></tr>")
    return ("<table id='worst'><tr><th class='g'>metric</th><th>largest gap between groups</th>"
            f"<th>smallest ratio</th></tr>{''.join(rows)}</table>")


def _about(about: Mapping[str, Any]) -> str:
    rows = "".join(f"<tr><td class='g'>{esc(k)}</td><td class='g'><code>{esc(v)}</code></td></tr>"
                   for k, v in about.items())
    return f"<table id='about'>{rows}</table>"


def _body(audit: Audit, h: int, calibration: tuple[int, str] | None) -> str:
    """The sections of one audit, headed at level ``h``."""
    lo, hi, _ = _intervals(audit)
    plots = "".join(interval_plot(audit, m, lo, hi, h=h + 1) for m in audit.metrics[1:])
    if audit.n_boot:
        ratio = audit.ratio_to_reference().drop(index=[audit.reference_group])
        rlo, rhi = (x.drop(index=[audit.reference_group]) for x in audit.ratio_to_reference_ci())
        plots += interval_plot(audit, "selection_rate", rlo, rhi, by=ratio, mark=FOUR_FIFTHS,
                       title="impact ratio (selection rate over the reference group's); "
                             "dashed: four-fifths", h=h + 1)
    small = audit.suppressed
    suppressed = ("<p>None: every group has at least "
                  f"{audit.min_group_size:,} rows.</p>") if not small else (
        f"<p>Fewer than {audit.min_group_size:,} rows: their rows are counted, their rates "
        "and intervals are not shown, and they are left out of every comparison.</p><ul>"
        + "".join(f"<li>{esc(group_name(g))}: {n:,} rows</li>" for g, n in small.items())
        + "</ul>")
    return (f"<h{h}>Groups</h{h}>{group_table(audit, *_intervals(audit))}"
            f"<h{h}>Against the reference group</h{h}>{_comparison_table(audit)}"
            f"<h{h}>Largest gaps</h{h}>{_worst_table(audit)}"
            f"<h{h}>Each group's value and interval</h{h}><p>Dashed line: all rows.</p>{plots}"
            + (scoring_section(audit, h) if audit.counts.scores is not None else "")
            + (calibration_section(audit, *calibration, h) if calibration else "")
            + f"<h{h}>Suppressed groups</h{h}>{suppressed}")


def level_name(names: list[str], key: Any) -> str:
    """A control level as text: ``region north, year 2020``."""
    values = key if isinstance(key, tuple) else (key,)
    return ", ".join(f"{n} {v}" for n, v in zip(names, values, strict=True))


def audit_html(audit: Audit | LevelAudit | RegressionAudit, about: Mapping[str, Any] | None = None,
               title: str = "Audit of decisions by group", calibration: bool = False,
               n_bins: int = 10, strategy: str = "uniform") -> str:
    """The audit as one HTML page that needs no network to open (with control features:
    one part per level). With scores, it holds the scoring rate.

    Parameters
    ----------
    audit : Audit, LevelAudit or RegressionAudit
    about : mapping, default=None
        What was audited (input, rows, columns, parameters, version), shown as given.
    title : str, default="Audit of decisions by group"
    calibration : bool, default=False
        Show calibration within groups, as :meth:`~daskfair.metrics.Audit.calibration`
        gives it (scores in [0, 1]): each group's expected calibration error and
        reliability plot.
    n_bins : int, default=10
    strategy : {"uniform", "quantile"}, default="uniform"
        The bins of the calibration.

    Returns
    -------
    str
    """
    shown = (n_bins, strategy) if calibration else None
    def body_of(a: Audit | RegressionAudit, h: int) -> str:
        return regression_body(a, h) if isinstance(a, RegressionAudit) else _body(a, h, shown)

    if isinstance(audit, LevelAudit):
        body = "".join(f"<h2>{esc(level_name(audit.names, key))}</h2>{body_of(a, 3)}"
                       for key, a in audit.levels.items())
    else:
        body = body_of(audit, 2)
    return (
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
        f"<meta name='generator' content='{GENERATOR}'>"
        f"<meta http-equiv='Content-Security-Policy' content=\"{_POLICY}\">"
        f"<title>{esc(title)}</title><style>{_STYLE}</style></head><body>"
        f"<h1>{esc(title)}</h1>{body}"
        f"<h2>What was audited</h2>{_about(about or {})}"
        "</body></html>")
