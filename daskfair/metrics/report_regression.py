"""The report of a regression audit: each group's means with intervals, the largest gaps,
the comparisons with the reference group and the distances between the groups' predictions.
Every name from the user's table is escaped."""

from __future__ import annotations

from ._html import esc, group_name, group_table, interval, interval_plot, num
from .regression_audit import RegressionAudit

__all__ = ["regression_body"]


def _comparisons(a: RegressionAudit) -> str:
    diff, (lo, hi), tests = a.difference_to_reference(), a.difference_to_reference_ci(), \
        a.tests()
    rows = []
    for g in diff.index:
        if g == a.reference_group or diff.loc[g].isna().all():
            continue
        key = g if isinstance(g, tuple) else (g,)
        cells = []
        for c in diff.columns:
            beyond = (c, *key) in tests.index and bool(tests.loc[(c, *key), "significant"])
            mark = " <span class='flag'>beyond noise</span>" if beyond else ""
            cells.append(f"<td>{interval(diff.loc[g, c], lo.loc[g, c], hi.loc[g, c])}{mark}"
                         "</td>")
        rows.append(f"<tr data-comparison><td class='g'>{esc(group_name(g))}</td>"
                    f"{''.join(cells)}</tr>")
    head = "".join(f"<th>{esc(c)}</th>" for c in diff.columns)
    return (f"<p>Each group minus the reference group <b>{esc(group_name(a.reference_group))}"
            "</b>; <i>beyond noise</i>: a z-test of two means, Holm-adjusted over the whole "
            f"table, at level {1 - a.confidence:.2g}.</p><table id='comparisons'><tr>"
            f"<th class='g'>group</th>{head}</tr>" + "".join(rows) + "</table>")


def _gaps(a: RegressionAudit) -> str:
    gap, (lo, hi) = a.difference(), a.difference_ci()
    rows = "".join(f"<tr><td class='g'>{esc(c)}</td><td>{interval(gap[c], lo[c], hi[c])}"
                   "</td></tr>" for c in gap.index)
    ks = a.prediction_ks()
    pairs = "".join(f"<tr data-ks><td class='g'>{esc(group_name(x))}</td>"
                    f"<td class='g'>{esc(group_name(y))}</td><td>{num(r['ks'])}</td>"
                    f"<td>{num(r['ks_upper'])}</td></tr>" for (x, y), r in ks.iterrows())
    return ("<p>Largest gap between two groups; its interval holds every pair's at once.</p>"
            "<table id='worst'><tr><th class='g'>metric</th><th>largest gap</th></tr>"
            f"{rows}</table><p>Kolmogorov–Smirnov distance between two groups' predictions, "
            "from their histograms: the exact distance lies between the two columns.</p>"
            "<table id='ks'><tr><th class='g'>group</th><th class='g'>group</th><th>KS</th>"
            f"<th>at most</th></tr>{pairs}</table>")


def regression_body(a: RegressionAudit, h: int) -> str:
    """The sections of a regression audit, headed at level ``h``."""
    lo, hi = a.by_group_ci
    plots = "".join(interval_plot(a, m, lo, hi, h=h + 1) for m in a.metrics[1:])
    small = a.suppressed
    suppressed = "<p>None.</p>" if not small else "<ul>" + "".join(
        f"<li>{esc(group_name(g))}: {n:,} rows</li>" for g, n in small.items()) + "</ul>"
    how = "Hall's intervals of means (residual: target minus prediction)"
    return (f"<h{h}>Groups</h{h}>{group_table(a, lo, hi, how)}"
            f"<h{h}>Against the reference group</h{h}>{_comparisons(a)}"
            f"<h{h}>Largest gaps</h{h}>{_gaps(a)}"
            f"<h{h}>Each group's value and interval</h{h}><p>Dashed line: all rows.</p>{plots}"
            f"<h{h}>Suppressed groups</h{h}>{suppressed}")
