"""``daskfair audit``: the decisions of a table (or of a stored model on it) audited by
group in one pass, printed, stored, and written as an HTML report."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .. import __version__
from ..metrics._html import group_name
from .outputs import check_output, write_output

__all__ = ["AuditInput", "audit_input", "audit_job", "format_audit", "read_audit"]

class AuditInput:
    """The lazy table an audit reads, and which of its columns play which part."""

    def __init__(self, frame: Any, path: Path, args: argparse.Namespace) -> None:
        self.frame, self.path, self.args = frame, path, args
        self.prediction = "prediction" if args.model else args.prediction
        classifies = args.task == "classification"
        self.score = ("probability" if args.model else args.score) if classifies else None
        self.params = _params(frame, args)
        self.calibration = _calibration(args, self.score)

    def columns(self) -> dict[str, Any]:
        a = self.args
        return {"label": a.label, "prediction": self.prediction, "score": self.score,
                "sensitive": list(a.sensitive), "control": list(a.control or []),
                "weight": a.weight}


def _typed(text: str, dtype: Any, flag: str) -> Any:
    """A value given on the command line, as the column's type."""
    if pd.api.types.is_bool_dtype(dtype):
        if text.lower() not in ("true", "false", "1", "0"):
            raise ValueError(f"{flag} {text!r}: the column holds true/false values.")
        return text.lower() in ("true", "1")
    if pd.api.types.is_numeric_dtype(dtype):
        try:
            value = float(text)
        except ValueError:
            raise ValueError(f"{flag} {text!r}: the column holds numbers.") from None
        return int(value) if value.is_integer() else value
    return text


def _calibration(args: argparse.Namespace, score: str | None) -> dict[str, Any]:
    """``--calibration``, ``--n-bins`` and ``--strategy``, checked before anything is
    read."""
    from .._params import check_params
    from ..metrics import Audit

    if not args.calibration:
        return {"calibration": False}
    if score is None:
        raise ValueError("--calibration needs scores: give --score COLUMN, or --model STORE.")
    check_params({"n_bins": args.n_bins, "strategy": args.strategy},
                 Audit.calibration._parameter_constraints)
    return {"calibration": True, "n_bins": args.n_bins, "strategy": args.strategy}


def _scored(part: pd.DataFrame, scorer: Any, keep: list[str]) -> pd.DataFrame:
    return scorer.score(part, keep)[0]


def _with_model(table: Any, args: argparse.Namespace, keep: list[str]) -> Any:
    """The table's ``keep`` columns beside the model's decisions and probabilities (lazy)."""
    from ..models import load
    from ..models.scoring import Scorer

    scorer = Scorer.of(load(args.model))
    wanted = "classifier" if args.task == "classification" else "regressor"
    if scorer.kind != wanted:
        raise ValueError(f"--model {args.model} holds a {scorer.kind}; --task {args.task} "
                         f"audits a {wanted}'s predictions.")
    scorer.check_table(table._meta, keep)  # also: no kept column named as an output
    meta = table._meta[keep].copy()
    if wanted == "classifier":
        meta["prediction"] = np.asarray(scorer.final.classes_)[:0]
        meta["decision"] = np.zeros(0)
        meta["probability"] = np.zeros(0)
    else:
        meta["prediction"] = np.zeros(0)
    return table[list(dict.fromkeys([*scorer.columns, *keep]))].map_partitions(
        _scored, scorer, keep, meta=meta)


def audit_input(args: argparse.Namespace) -> AuditInput:
    """The table, checked before a cluster starts: every named column is there."""
    from ..tables import read_table

    if args.model is None and args.prediction is None:
        raise ValueError("give the decisions: --prediction COLUMN, or --model STORE to "
                         "predict them from the table.")
    if args.model is not None and (args.prediction or args.score):
        raise ValueError("--model predicts the decisions and scores: leave out --prediction "
                         "and --score.")
    if args.report:  # refused before anything is read
        check_output(args.report, **_report_target(args))
    path = Path(args.input).absolute()
    table = read_table(path)
    keep = list(dict.fromkeys(c for c in [args.label, *args.sensitive, *(args.control or []),
                                          args.weight, args.prediction, args.score] if c))
    missing = [c for c in keep if c not in table.columns]
    if missing:
        raise ValueError(f"{args.input} has no column(s) {missing}; its columns are "
                         f"{list(table.columns)}.")
    frame = _with_model(table, args, keep) if args.model else table[keep]
    return AuditInput(frame, path, args)


def _params(frame: Any, a: argparse.Namespace) -> dict[str, Any]:
    """The audit's parameters from the flags, as the columns' types."""
    from .._params import check_params
    from ..metrics._audit_stats import own_metrics
    from ..metrics.audit_pass import AUDIT

    if a.task == "regression":
        given = [flag for flag, value in (("--score", a.score), ("--metrics", a.metrics),
                                          ("--weight", a.weight),
                                          ("--calibration", a.calibration),
                                          ("--pos-label", a.pos_label != "1")) if value]
        if given:
            raise ValueError(f"--task regression takes no {', '.join(given)}: a regression "
                             "audit compares the groups' means of the predictions, targets "
                             "and errors.")
    check_params({"n_boot": a.n_boot, "confidence": a.confidence,
                  "min_group_size": a.min_group_size, "random_state": a.random_state,
                  "task": a.task}, AUDIT)
    ref = a.reference_group
    pos = None
    if ref is not None:
        if len(ref) != len(a.sensitive):
            raise ValueError(f"--reference-group needs one value per --sensitive column "
                             f"({len(a.sensitive)}), got {len(ref)}.")
        ref = tuple(_typed(v, frame._meta[c].dtype, "--reference-group")
                    for v, c in zip(ref, a.sensitive, strict=True))
        ref = ref[0] if len(ref) == 1 else ref
    if a.task == "classification":
        pos = _typed(a.pos_label, frame._meta[a.label].dtype, "--pos-label")
    own_metrics(a.metrics)
    if a.task == "regression":
        return {"confidence": a.confidence, "min_group_size": a.min_group_size,
                "reference_group": ref, "task": "regression"}
    return {"n_boot": a.n_boot, "confidence": a.confidence, "min_group_size": a.min_group_size,
            "reference_group": ref, "pos_label": pos, "random_state": a.random_state,
            "metrics": a.metrics}


def run_audit(data: AuditInput) -> Any:
    """The audit of the input's columns, in one pass on the current client."""
    from ..metrics import audit

    f, a = data.frame, data.args
    return audit(f[a.label], f[data.prediction], sensitive_features=f[list(a.sensitive)],
                 y_score=f[data.score] if data.score else None,
                 sample_weight=f[a.weight] if a.weight else None,
                 control_features=f[list(a.control)] if a.control else None, **data.params)


def _levels(audit: Any) -> dict[str, Any]:
    """The audit of every control level by its name ("": one audit without levels)."""
    from ..metrics.report import level_name

    if not hasattr(audit, "levels"):
        return {"": audit}
    return {level_name(audit.names, k): a for k, a in audit.levels.items()}


def _about(audit: Any, data: AuditInput, client: Any) -> dict[str, Any]:
    cols = {k: v for k, v in data.columns().items() if v}
    levels = _levels(audit)
    rows = sum(int(a.overall["count"]) for a in levels.values())
    reference = "; ".join(f"{k}: {group_name(a.reference_group)}" if k
                          else group_name(a.reference_group) for k, a in levels.items())
    bootstrap = ({"task": "regression"} if data.args.task == "regression" else
                 {"n_boot": audit.n_boot, "random_state": audit.random_state})
    return {"input": str(data.path), "rows": f"{rows:,}",
            "partitions": data.frame.npartitions, **{f"column: {k}": v for k, v in cols.items()},
            **({"model": str(Path(data.args.model).absolute())} if data.args.model else {}),
            **bootstrap, "confidence": audit.confidence,
            "min_group_size": audit.min_group_size, "reference_group": reference,
            "workers": len(client.scheduler_info().get("workers", {})) if client else 1,
            "daskfair": __version__}


def _report_target(args: argparse.Namespace) -> dict[str, Any]:
    """How the report is written: checked against the inputs and the store."""
    from ..metrics.report import GENERATOR

    avoid = [args.input, args.store, *([args.model] if args.model else [])]
    return {"signature": GENERATOR.encode(), "what": "the report",
            "overwrite": args.overwrite, "avoid": avoid}


def write_report(audit: Any, about: dict[str, Any], args: argparse.Namespace,
                 calibration: dict[str, Any]) -> Path:
    """The HTML report at ``--report`` (``calibration``: :func:`audit_html`'s arguments),
    which appears only once it is whole."""
    from ..metrics.report import audit_html

    page = audit_html(audit, about, **calibration)
    return write_output(args.report, page.encode("utf-8"), **_report_target(args))


def audit_job(run: Any, client: Any, data: AuditInput) -> str:
    """The audit, stored in ``run``, with the report if asked; the text to print."""
    audit = run_audit(data)
    arrays, attrs = audit.to_state()
    for name, values in arrays.items():
        run.write_array(name, values)
    about = _about(audit, data, client)
    run.set_attrs(audit=attrs, about=about,
                  by_group=_plain_table(audit.by_group),
                  suppressed=[f"{k}: {group_name(g)}" if k else group_name(g)
                              for k, a in _levels(audit).items() for g in a.suppressed])
    text = format_audit(audit, **data.calibration)
    if data.args.report:
        text += f"\nreport: {write_report(audit, about, data.args, data.calibration)}"
    return text


def _plain_table(frame: pd.DataFrame) -> dict[str, dict[str, float | None]]:
    return {group_name(g): {c: None if np.isnan(v) else float(v) for c, v in row.items()}
            for g, row in frame.iterrows()}


def read_audit(path: str | os.PathLike[str]) -> Any:
    """The audit stored by ``daskfair audit`` at ``path`` (checked against its manifest)."""
    from ..metrics import Audit, LevelAudit, RegressionAudit
    from ..store import open_run

    run = open_run(path)
    if run.kind != "audit":
        raise ValueError(f"{path} holds a {run.kind} run, not an audit.")
    with run.reading("the audit"):
        arrays = {name: run.read_array(name) for name in run.array_names()}
        attrs = run.attrs["audit"]
        kind = (RegressionAudit if attrs.get("task") == "regression" else
                LevelAudit if "control" in attrs else Audit)
        return kind.from_state(arrays, attrs)


def _cell(point: float, lo: float, hi: float) -> str:
    if np.isnan(point):
        return "—"
    return f"{point:.3f}" if np.isnan(lo) else f"{point:.3f} [{lo:.3f}, {hi:.3f}]"


def format_audit(audit: Any, calibration: bool = False, n_bins: int = 10,
                 strategy: str = "uniform") -> str:
    """The per-group table with intervals, the largest gaps, and what is more than noise;
    with scores, the scoring rate; with ``calibration``, each group's expected calibration
    error in ``n_bins`` bins of ``strategy`` (with control features: for every level)."""
    from ..metrics import RegressionAudit

    shown = (n_bins, strategy) if calibration else None

    def one(a: Any) -> str:
        return _format_regression(a) if isinstance(a, RegressionAudit) else _format_one(a, shown)

    levels = _levels(audit)
    if "" not in levels:
        return "\n\n".join(f"== {k} ==\n{one(a)}" for k, a in levels.items())
    return one(audit)


def _group_table(audit: Any, lo: Any, hi: Any) -> str:
    """Every present group's rows and metrics with their intervals, as text."""
    by = audit.by_group
    present = by[by["count"].notna()]
    table = pd.DataFrame({c: [_cell(present.loc[g, c], lo.loc[g, c], hi.loc[g, c])
                              for g in present.index] for c in audit.metrics[1:]},
                         index=present.index)
    table.insert(0, "rows", [f"{int(n):,}" for n in present["count"]])
    return table.to_string()


def _tests_and_suppressed(audit: Any) -> list[str]:
    """What is more than noise, and the suppressed groups."""
    tests = audit.tests()
    sig = tests[tests["significant"]]
    lines = [f"Differences beyond noise (Holm, level {1 - audit.confidence:.2g}): "
             + ("; ".join(f"{m} of {group_name(g)}" for (m, *g) in sig.index) if len(sig)
                else "none")]
    if audit.suppressed:
        lines.append("Suppressed (fewer than --min-group-size rows): " + "; ".join(
            f"{group_name(g)} ({n:,} rows)" for g, n in audit.suppressed.items()))
    return lines


def _format_regression(audit: Any) -> str:
    gap, (glo, ghi) = audit.difference(), audit.difference_ci()
    lines = [f"Per group ({audit.confidence:.0%} intervals):",
             _group_table(audit, *audit.by_group_ci), "", "Largest gap between groups:"]
    lines += [f"  {c:<20} {_cell(gap[c], glo[c], ghi[c])}" for c in gap.index]
    ks = audit.prediction_ks()
    worst = ks["ks"].idxmax()
    lines.append(f"\nLargest distance between two groups' predictions (Kolmogorov-Smirnov): "
                 f"{ks.loc[worst, 'ks']:.3f} ({group_name(worst[0])} and "
                 f"{group_name(worst[1])})")
    lines.append(f"Reference group: {group_name(audit.reference_group)}")
    return "\n".join(lines + _tests_and_suppressed(audit))


def _format_scores(audit: Any, calibration: tuple[int, str] | None) -> list[str]:
    lines = ["", "Scoring rate (above the median score; impact ratio over the highest):"]
    for g, r in audit.scoring_rate().iterrows():
        lines.append(f"  {group_name(g):<20} {_cell(r['scoring_rate'], r['lower'], r['upper'])}"
                     f"  impact ratio {r['impact_ratio']:.3f}")
    if calibration:
        c = audit.calibration(*calibration)
        lines += ["", f"Expected calibration error ({calibration[0]} {calibration[1]} bins):"]
        lines += [f"  {group_name(g):<20} {_cell(r['ece'], r['lower'], r['upper'])}"
                  for g, r in c.ece.iterrows()]
    return lines


def _format_one(audit: Any, calibration: tuple[int, str] | None) -> str:
    lo, hi = audit.by_group_ci if audit.n_boot else audit.by_group_wilson_ci
    how = f"bootstrap, {audit.n_boot:,} replicates" if audit.n_boot else "Wilson"
    lines = [f"Per group ({audit.confidence:.0%} intervals, {how}):",
             _group_table(audit, lo, hi), ""]
    gap, ratio = audit.difference(), audit.ratio()
    dlo, dhi = audit.difference_ci() if audit.n_boot else (gap * np.nan, gap * np.nan)
    lines.append("Largest gap between groups (smallest ratio):")
    for c in gap.index:
        lines.append(f"  {c:<20} {_cell(gap[c], dlo[c], dhi[c]):<26} ({ratio[c]:.3f})")
    impact = audit.ratio_to_reference()["selection_rate"].dropna()
    low = impact[impact < 0.8]
    lines.append(f"\nReference group: {group_name(audit.reference_group)}")
    if len(low):
        lines.append("Impact ratio below 4/5: " + "; ".join(
            f"{group_name(g)} {r:.3f}" for g, r in low.items()))
    noise, *suppressed = _tests_and_suppressed(audit)
    lines.append(noise)
    if audit.counts.scores is not None:
        lines += _format_scores(audit, calibration)
    return "\n".join(lines + suppressed)
