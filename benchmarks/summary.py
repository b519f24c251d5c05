"""One table of every stored benchmark result: ``results/*.json`` → markdown (or JSON).

Each benchmark writes its own JSON layout; a small extractor per file name picks the headline
numbers (one or a few rows per benchmark: the setting, the measured values, the baselines
measured next to them) and the run's date and machine. A file with no extractor still gets a
row listing its top-level keys, and a file that cannot be read or whose layout changed gets a
row saying so: nothing is skipped silently. Nothing is recomputed or run; stdlib only.

    python benchmarks/summary.py [--results DIR] [--json] [--output FILE]
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

# Not ``from _common import RESULTS``: _common imports daskfair.store and with it dask and
# zarr (about a second); this script has to stay stdlib-only and instant.
RESULTS = Path(__file__).resolve().parent / "results"


class Measure(NamedTuple):
    """One headline number, or a tuple of them shown joined by ``sep``.

    ``spec`` is a format spec, or a tuple of them (one per element of a tuple value).
    """

    name: str
    value: Any
    spec: str | tuple[str, ...] = ""
    sep: str = "/"


@dataclass
class Row:
    """One line of the summary table; ``status`` is ok, no extractor, unreadable, extractor
    failed or empty, and ``note`` replaces the measures when it is not ok."""

    benchmark: str
    setting: str = "–"
    measures: list[Measure] = field(default_factory=list)
    status: str = "ok"
    note: str = ""
    date: str | None = None
    wall_seconds: float | None = None
    machine: dict[str, Any] | None = None

    @property
    def measured(self) -> str:
        return self.note or "; ".join(f"{m.name} {fmt(m.value, m.spec, m.sep)}"
                                      for m in self.measures)

    def as_dict(self) -> dict[str, Any]:
        return {"benchmark": self.benchmark, "setting": self.setting, "status": self.status,
                "measured": self.measured,
                "values": {m.name: list(m.value) if isinstance(m.value, tuple) else m.value
                           for m in self.measures},
                "date": self.date, "wall_seconds": self.wall_seconds, "machine": self.machine}


def fmt(value: Any, spec: str | tuple[str, ...] = "", sep: str = "/") -> str:
    """A value as the table shows it: tuples joined by ``sep``, None as –, bools as yes/no."""
    if isinstance(value, tuple | list):
        specs = spec if isinstance(spec, tuple) else (spec,) * len(value)
        return sep.join(fmt(v, s, sep) for v, s in zip(value, specs, strict=True))
    if value is None:
        return "–"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, str):
        return value
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    return format(value, spec)


Extracted = list[tuple[str, list[Measure]]]


def _trio(entry: dict[str, Any], columns: tuple[str, ...] = ("ACC", "NMI", "Bal"),
          index: int | None = None) -> tuple[float, ...]:
    # fce_tables stores [mean, std] per column, fce_raw a plain number
    return tuple(entry[c] if index is None else entry[c][index] for c in columns)


def fkr_table1(doc: dict[str, Any]) -> Extracted:
    rows = []
    for name, methods in doc["table"].items():
        size = doc.get("sizes", {}).get(name, {})
        setting = (f"{name}: n={size.get('n', 0):,}, train {size.get('n_train', 0):,}, "
                   f"d={size.get('d')}; {doc.get('trials')} splits, m={doc.get('landmarks')}")
        measures = [Measure(f"{method} SD/err", (e["sd_mean"], e["error_mean"]), ".4f")
                    for method, e in methods.items()]
        measures += [Measure(f"seed's {method} SD/err", (e["paper"][0], e["paper"][2]), ".4f")
                     for method, e in methods.items() if e.get("paper")]
        same = [method for method, e in methods.items() if e.get("equals_constant_predictor")]
        measures.append(Measure("= constant predictor", ", ".join(same) or "none"))
        rows.append((setting, measures))
    return rows


def _setting_text(setting: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}"
                     for k, v in setting.items())


def fkr_tradeoff(doc: dict[str, Any]) -> Extracted:
    rows = []
    for name, points in doc["curves"].items():
        constant = next(p["error"] for p in points if p["method"] == "constant")
        same = [p for p in points if p["sd"] == 0 and p["error"] == constant]
        measures = [Measure("constant err", constant, ".4f"),
                    Measure("points equal to the constant", f"{len(same)} of {len(points)}")]
        for method in dict.fromkeys(p["method"] for p in points):
            curve = [p for p in points if p["method"] == method]
            if method == "constant" or all(p in same for p in curve):
                continue
            best = min(curve, key=lambda p: p["error"])
            where = f" ({_setting_text(best['setting'])})" if best["setting"] else ""
            measures.append(Measure(f"{method}: lowest err{where} SD/err",
                                    (best["sd"], best["error"]), ".4f"))
        rows.append((f"{name}: {doc.get('trials')} splits, m={doc.get('landmarks')}",
                     measures))
    return rows


def fkr_scale(doc: dict[str, Any]) -> Extracted:
    rows = []
    for r in doc["runs"]:
        where = "streamed from zarr" if r.get("streamed_from_zarr") else "in memory"
        setting = (f"{r['n']:,} rows, m={r['m']}, k={r['k']}, {where}; "
                   f"{doc.get('workers')} workers × {doc.get('memory_limit')}")
        measures = [Measure("fit s", r["fit_seconds"], ".1f"),
                    Measure("numpy CᵀC s (in-process floor)", r["floor_ctc_seconds"], ".1f"),
                    Measure("fit / floor", r["ratio_fit_to_floor"], ".2f"),
                    Measure("peak cluster GB", r["peak_cluster_memory_gb"], ".2f"),
                    Measure("predict s", r["predict_seconds"], ".1f")]
        if r.get("floor", "measured") != "measured":
            measures.append(Measure("floor", r["floor"]))
        rows.append((setting, measures))
    return rows


def fkr_convergence(doc: dict[str, Any]) -> Extracted:
    kernel = ", ".join(f"{k}={v}" for k, v in doc.get("kernel", {}).items())
    rows = []
    for objective in dict.fromkeys(r["objective"] for r in doc["convergence"]):
        conv = [r for r in doc["convergence"] if r["objective"] == objective]
        rows.append((f"Nyström → exact, {objective} objective: n={doc.get('n'):,}, "
                     f"k={doc.get('k')}, {kernel}",
                     [Measure("m", tuple(r["m"] for r in conv)),
                      Measure("max angle °", tuple(r["max_angle_deg"] for r in conv), ".2f"),
                      Measure("rel. prediction diff",
                              tuple(r["rel_prediction_diff"] for r in conv), ".1e"),
                      Measure("fit s", tuple(r["fit_seconds"] for r in conv), ".2f")]))
    dense = doc["exact_vs_authors_dense"]
    rows.append(("exact path vs the authors' dense pinv(K)·M",
                 [Measure("n", tuple(r["n"] for r in dense)),
                  Measure("exact s", tuple(r["exact_seconds"] for r in dense), ".1f"),
                  Measure("dense s", tuple(r["dense_seconds"] for r in dense), ".1f"),
                  Measure("speed-up", tuple(r["speedup"] for r in dense), ".2f"),
                  Measure("rel. prediction diff",
                          tuple(r["rel_prediction_diff"] for r in dense), ".2f")]))
    return rows


def fce_tables(doc: dict[str, Any]) -> Extracted:
    tuned = doc.get("tuned_lambda2", {})
    rows = []
    for pool, variants in doc["table"].items():
        fce = variants["FCE"]
        measures = [Measure("FCE ACC/NMI/Bal", _trio(fce, index=0), ".3f"),
                    Measure("FCE-f ACC/NMI/Bal", _trio(variants["FCE-f"], index=0), ".3f"),
                    Measure("FCE λ2", fce["lambda2"], ".2g")]
        if "paper" in fce:
            measures += [Measure("paper FCE ACC/NMI/Bal", _trio(fce["paper"]), ".3f"),
                         Measure("max |Δ| to paper row", fce["max_abs_diff_to_paper"], ".3f")]
        start = variants.get("FCE paper start")
        if start is not None:
            measures += [Measure("FCE paper start ACC/NMI/Bal", _trio(start, index=0), ".3f")]
            if "max_abs_diff_to_paper" in start:
                measures += [Measure("paper start max |Δ| to paper row",
                                     start["max_abs_diff_to_paper"], ".3f")]
        if pool in tuned:
            measures += [Measure("tuned λ2", tuned[pool]["lambda2"], "g"),
                         Measure("tuned ACC/NMI/Bal", _trio(tuned[pool]["row"], index=0),
                                 ".3f"),
                         Measure("tuned max |Δ| to paper row",
                                 tuned[pool]["max_abs_diff_to_paper"], ".3f")]
        rows.append((f"{pool}: 10 subsets of 10 base clusterings, fairness="
                     f"{doc.get('fairness')}", measures))
    return rows


def fce_raw(doc: dict[str, Any]) -> Extracted:
    rows = []
    for name, r in doc["results"].items():
        fce = r["FCE"]
        rows.append((f"{name}: n={r['n']:,}, d={r['d']}, c={r['c']}, {r['runs']} base "
                     "clusterings",
                     [Measure("base s", r["base_seconds"], ".1f"),
                      Measure("base mean ACC/NMI/Bal", _trio(r["base_mean"]), ".3f"),
                      Measure("FCE-f ACC/NMI/Bal", _trio(r["FCE-f"]), ".3f"),
                      Measure("FCE ACC/NMI/Bal", _trio(fce), ".3f"),
                      Measure("FCE λ2", fce["lambda2"], ".2g"),
                      Measure("FCE s", fce["seconds"], ".3f")]))
    return rows


def fce_scale(doc: dict[str, Any]) -> Extracted:
    rows = []
    for r in doc["runs"]:
        its = r.get("iteration_seconds")
        per = (Measure("s/iteration (first with set-up; then)",
                       (its[0], r["seconds_per_iteration_after_the_first"] or float("nan")),
                       ".2f")
               if its else Measure("s/iteration", r["seconds_per_iteration"], ".2f"))
        rows.append((f"{r['n']:,} rows, m={r['m']}, c={r['c']}; "
                     f"{r.get('workers', doc.get('workers'))} worker(s) × "
                     f"{doc.get('memory_limit')}",
                     [Measure("base clusterings s", r["base_seconds"], ".1f"),
                      *([Measure("consensus s median/best of " +
                                 str(len(r["consensus_seconds_all"])),
                                 (r["consensus_seconds"], r["consensus_seconds_best"]), ".2f")]
                        if "consensus_seconds_best" in r
                        else [Measure("consensus s", r["consensus_seconds"], ".1f")]),
                      Measure("iterations", r["iterations"]), per,
                      Measure("peak GB base/consensus",
                              (r["peak_memory_gb_base"], r["peak_memory_gb_consensus"]), ".2f"),
                      Measure("consensus ACC/Bal",
                              _trio(r["report_consensus"], ("ACC", "Bal")), ".3f"),
                      *([Measure("busy fraction base/consensus",
                                 (r["busy_fraction_base"], r["busy_fraction_consensus"]), ".2f"),
                         Measure("numpy pass s (floor)", r["numpy_pass_seconds"], ".2f"),
                         Measure("passes/iteration", r["passes_per_iteration"])]
                        if "busy_fraction_base" in r else [])]))
    return rows


def safairkm_seed(doc: dict[str, Any]) -> Extracted:
    rows = []
    for r in doc["runs"]:
        sa, vf = r["safairkm"], r["vfairkm"]
        seed = r["seed_cpu_s_per_point"]
        rows.append((f"{r['dataset']}, K={r['K']}: n={r['n']:,}, {len(r['groups'])} groups; "
                     f"cap {doc.get('minutes_cap')} min, {doc.get('workers')} workers",
                     [Measure("iterations/seed's", (sa["iterations"], r["seed_iterations"])),
                      Measure("points SAfairKM/VfairKM", (sa["points"], vf["points"])),
                      Measure("SAfairKM CPU s/point/seed's",
                              (sa["cpu_s_per_point"], seed["safairkm"]), (".3f", ".2f")),
                      Measure("× below seed", r["speedup_cpu_per_point_vs_seed"], ".1f"),
                      Measure("SAfairKM wall s/point", sa["wall_s_per_point"], ".3f"),
                      Measure("VfairKM CPU s/point/seed's",
                              (vf["cpu_s_per_point"], seed["vfairkm"]), ".2f"),
                      Measure("HV SAfairKM/VfairKM", (sa["hypervolume"], vf["hypervolume"]),
                              ".4f"),
                      Measure("balance SAfairKM", tuple(sa["balance_range"]), ".3f", "–"),
                      Measure("balance VfairKM", tuple(vf["balance_range"]), ".3f", "–"),
                      Measure("VfairKM μ_max/seed's", (vf["mu_max"], vf["seed_mu_max"]), "g"),
                      *_strict_measures(r)]))
    return rows


def _strict_measures(r: dict[str, Any]) -> list[Measure]:
    st = r.get("safairkm_strict")
    if st is None:
        return []
    return [Measure("strict filter: iterations/points", (st["iterations"], st["points"])),
            Measure("strict CPU s/point, × below seed",
                    (st["cpu_s_per_point"], r["speedup_cpu_per_point_vs_seed_strict"]),
                    (".4f", ".0f")),
            Measure("strict HV", st["hypervolume"], ".4f")]


def safairkm_synthetic(doc: dict[str, Any]) -> Extracted:
    rows = []
    for r in doc["runs"]:
        sa, vf = r["safairkm"], r["vfairkm"]
        groups = "+".join(str(g) for g in r["groups"])
        rows.append((f"{r['dataset']}: groups {groups}, K=2, {len(doc.get('pairs', []))} pairs",
                     [Measure("points SAfairKM/VfairKM", (sa["points"], vf["points"])),
                      Measure("HV SAfairKM/VfairKM", (sa["hypervolume"], vf["hypervolume"]),
                              ".3f"),
                      Measure("balance SAfairKM", tuple(sa["balance_range"]), ".3f", "–"),
                      Measure("balance VfairKM", tuple(vf["balance_range"]), ".3f", "–"),
                      Measure("wall s SAfairKM/VfairKM", (sa["wall_s"], vf["wall_s"]), ".1f")]))
    return rows


def safairkm_scale(doc: dict[str, Any]) -> Extracted:
    rows = []
    for r in doc["runs"]:
        one, two = r["one_worker"], r["two_workers"]
        # the first iteration builds the starting labels; the script's speed-up skips it too
        median = tuple(statistics.median(w["seconds_per_iteration"][1:]) for w in (one, two))
        rows.append((f"{r['dataset']}: {r['n']:,} rows, d={r['d']}, "
                     f"{len(r.get('groups') or [])} groups; {doc.get('iterations')} iterations",
                     [Measure("median s/iteration 1w/2w", median, ".3f"),
                      Measure("last list size L", two["list_size"][-1]),
                      Measure("ms/child 1w/2w", (one["ms_per_child"], two["ms_per_child"]),
                              ".2f"),
                      Measure("wall s 1w/2w", (one["wall_s"], two["wall_s"]), ".1f"),
                      Measure("2-worker speed-up wall/iteration",
                              (r["speedup_2_workers"], r["iteration_speedup_2_workers"]), ".2f"),
                      Measure("peak GB 1w/2w", (one["peak_memory_gb"], two["peak_memory_gb"]),
                              ".2f"),
                      Measure("points", two["points"]),
                      Measure("identical fronts", r["identical_fronts"]),
                      *([Measure("busy fraction 1w/2w",
                                 (one["busy_fraction"], two["busy_fraction"]), ".2f")]
                        if "busy_fraction" in one else []),
                      *([Measure("in-process median s/iteration, × over 2w",
                                 (statistics.median(r["in_process"]["seconds_per_iteration"][1:]),
                                  r["in_process_iteration_speedup_over_2_workers"]),
                                 (".3f", ".1f"))]
                        if "in_process" in r else [])]))
    return rows


def sa2gd_quadratics(doc: dict[str, Any]) -> Extracted:
    rate = doc["rate"]
    ts = sorted(int(t) for t in rate[0]["gap_at"])
    pairs = ", ".join(f"({r['n_a']},{r['n_b']})" for r in rate)
    return [(f"rate: σ={doc.get('sigma')}, pairs {pairs}, T={ts[0]:g}…{ts[-1]:g}",
             [Measure("log–log slope", tuple(r["slope"] for r in rate), ".3f"),
              Measure(f"gap at T={ts[0]:g}", tuple(r["gap_at"][str(ts[0])] for r in rate),
                      ".1e"),
              Measure(f"gap at T={ts[-1]:g}", tuple(r["gap_at"][str(ts[-1])] for r in rate),
                      ".1e")]),
            (f"front: {len(doc['front'])} pairs (n_a, n_b) against the exact weighted-sum front",
             [Measure("max distance to x*(λ)", doc["max_distance_to_minimiser"], ".1e")])]


def memory_streaming(doc: dict[str, Any]) -> Extracted:
    setting = (f"{doc['rows']:,} rows × {doc['features']} features = {doc['data_gb']:.2f} GB "
               f"on disk; {doc['workers']} workers × {doc['memory_limit_per_worker']}")
    rows = []
    for key, name in (("fkr", "FKR-F2E"), ("fce", "FCE"), ("safairkm", "SAfairKM")):
        r = doc[key]
        measures = [Measure("seconds", r["seconds"], ".1f"),
                    Measure("peak cluster GB", r["peak_cluster_memory_gb"], ".2f"),
                    Measure("spilled GB", r["spilled_to_disk_gb"], ".2f"),
                    Measure("workers replaced", r["workers_replaced"])]
        if "nothing_lost" in r:
            measures.append(Measure("nothing lost", r["nothing_lost"]))
        else:
            measures.append(Measure("full data refused", r["refused_full_data"] is not None))
            measures.append(Measure("subsample rows", r["subsample_rows"]))
        rows.append((f"{name}: {setting}", measures))
    return rows


def fkr_vs_fairlearn(doc: dict[str, Any]) -> Extracted:
    rows = []
    summary = doc["summary"]
    kept = doc.get("bound_kept", [])
    for name in dict.fromkeys(r["data"] for r in summary):
        def at(method: str, bound: float | None, name: str = name) -> dict[str, Any] | None:
            return next((r for r in summary if r["data"] == name and r["method"] == method
                         and r["bound"] == bound), None)
        measures = []
        labels = (("FairKernelClassifierCV", "FKR-CV"),
                  ("FairKernelClassifierCV (gammas=None: before issue 49)",
                   "FKR-CV gammas=None"),
                  ("FairKernelClassifierCV (one-fold margin)", "FKR-CV one-fold margin"),
                  ("FairKernelClassifierCV (no margin)", "FKR-CV no margin"),
                  ("EG(LR)", "EG(LR)"))
        for method, label in labels:
            r = at(method, 0.01)
            if r is not None:
                measures.append(Measure(f"{label} at .01: SD/error", (r["sd"], r["error"]),
                                        ".4f"))
        for method, label in labels:
            counts = [k for k in kept if k["data"] == name and k["method"] == method
                      and k["bound"] in (0.01, 0.02)]
            if counts:
                measures.append(Measure(
                    f"{label} test SD ≤ bound .01/.02",
                    "/".join(f"{k['kept']} of {k['splits']}"
                             for k in sorted(counts, key=lambda k: k["bound"]))))
        wins = [c for c in doc.get("comparison", []) if c["data"] == name
                and c.get("method", "FairKernelClassifierCV") == "FairKernelClassifierCV"]
        if wins:
            measures.append(Measure("FKR at least as accurate at EG's SD ≤ .03",
                                    f"{sum(c['fkr_at_least_as_accurate'] for c in wins)}"
                                    f" of {len(wins)}"))
            if all("split_wins" in c for c in wins):
                measures.append(Measure("FKR split wins per EG bound", ", ".join(
                    f"{c['split_wins']}/{c['splits']}" for c in wins)))
            if all("goal_met" in c for c in wins):
                measures.append(Measure("a bound within EG's SD + .002, error ≤ EG's",
                                        f"{sum(c['goal_met'] for c in wins)} of {len(wins)}"))
        fit, eg = at("FairKernelClassifierCV", 0.001), [
            r["seconds"] for r in summary if r["data"] == name and r["method"] == "EG(LR)"]
        if fit is not None and eg:
            measures.append(Measure("s: FKR-CV path / EG(LR) one bound (mean)",
                                    (fit["seconds"], sum(eg) / len(eg)), ".1f"))
        splits = doc.get("splits_per_data", {}).get(
            name, 1 if name == "census_kdd" else doc["splits"])
        rows.append((f"{name}: {splits} split{'s' * (splits > 1)}, test rows", measures))
    return rows


def fkr_cv_scale(doc: dict[str, Any]) -> Extracted:
    rows = []
    for r in doc["runs"]:
        where = "streamed from zarr" if r.get("streamed_from_zarr") else "in memory"
        setting = (f"{r['n']:,} rows, m={r['m']}, {where}; {doc.get('workers')} workers; "
                   f"CV: {r['cv']['candidates']} candidates × {r['cv']['thresholds']} "
                   f"thresholds, {r['cv']['folds']} folds")
        measures = [Measure("CV s", r["cv"]["seconds"], ".1f")]
        if "cv_before" in r:
            measures += [Measure("CV gammas=None s", r["cv_before"]["seconds"], ".1f"),
                         Measure("CV / gammas=None", r["ratio_cv_to_before"], ".2f")]
        if "plain_regressor" in r:
            measures += [Measure("one fit s", r["plain_regressor"]["seconds"], ".1f"),
                         Measure("CV / one fit", r["ratio_cv_to_plain_regressor"], ".2f")]
        measures.append(Measure("CV peak cluster GB", r["cv"]["peak_cluster_memory_gb"], ".2f"))
        eg = r.get("eg")
        if eg:
            measures.append(Measure("fairlearn EG(LR) s", eg.get("seconds"), ".1f")
                            if eg.get("seconds") is not None else
                            Measure("fairlearn EG(LR)",
                                    f"unfinished after {eg['timed_out_after']:.0f} s"))
            if eg.get("seconds_all_bounds") is not None and len(eg.get("bounds", [])) > 1:
                measures.append(Measure(f"EG(LR) s, {len(eg['bounds'])} bounds",
                                        eg["seconds_all_bounds"], ".1f"))
            if eg.get("peak_rss_gb") is not None:
                measures.append(Measure("EG peak GB", eg["peak_rss_gb"], ".2f"))
        rows.append((setting, measures))
    return rows


def numpy_block_sums(doc: dict[str, Any]) -> Extracted:
    runs = doc["runs"]
    setting = (f"FairKernelRegressor on {doc['rows']:,} × {doc['features']} numpy rows, "
               f"m={doc['landmarks']}; one process")
    return [(setting, [
        Measure("peak RSS GiB held/streamed",
                (runs["held"]["peak_rss_gib"], runs["streamed"]["peak_rss_gib"]), ".2f"),
        Measure("before the fit GiB", runs["streamed"]["peak_rss_before_fit_gib"], ".2f"),
        Measure("same model", doc["same_model"])])]


def fce_coarser_consensus(doc: dict[str, Any]) -> Extracted:
    rows = []
    by_pool: dict[str, dict[str, dict[str, Any]]] = {}
    for r in doc["rows"]:
        by_pool.setdefault(r["pool"], {})[r["step"]] = r
    for pool, steps in by_pool.items():
        seed, ours = steps["seed polar"], steps["align_base"]
        rows.append((f"{pool}: c_i={ours['c_i']} > c={ours['c']}, {doc['subsets']} subsets, "
                     f"{doc['iterations']} iterations", [
                         Measure("iterations raising the objective seed/ours",
                                 (seed["rises"], ours["rises"])),
                         Measure("final objective seed/ours",
                                 (seed["final objective"], ours["final objective"]), ".4g"),
                         Measure("ACC/NMI/Bal seed", (seed["ACC"], seed["NMI"], seed["Bal"]),
                                 ".3f"),
                         Measure("ACC/NMI/Bal ours", (ours["ACC"], ours["NMI"], ours["Bal"]),
                                 ".3f")]))
    return rows


def ffe_compas_columns(doc: dict[str, Any]) -> Extracted:
    rows = []
    for c in doc["columns"]:
        rows.append((f"authors' COMPAS col {c['column']} as the label, {doc['splits']} of "
                     "their splits", [
                         Measure("positive rate", c["positive_rate"], ".3f"),
                         Measure("max |corr| with a column", c["max_abs_corr"], ".3f"),
                         Measure("test error constant/GBM/logistic",
                                 (c["constant_error"], c["gbm_error"], c["logistic_error"]),
                                 ".4f")]))
    return rows


def code_shape(doc: dict[str, Any]) -> Extracted:
    rows = []
    for key in ("baseline", "package"):
        if key in doc:
            s, which = doc[key], "the baseline checkout" if key == "baseline" else "now"
            rows.append((f"daskfair/ ({which})", [
                Measure("lines", s["total_lines"], ","),
                Measure("modules", s["modules"], "d"),
                Measure("docstring share", s["docstring_share"], ".1%"),
                Measure("functions > 60 lines / modules > 600", (
                    s["functions_over_60"], len(s["modules_over_600"])), "d")]))
    return rows


def safairkm_end_to_end(doc: dict[str, Any]) -> Extracted:
    return [(f"{r['setting']}, {r['mode']}, {r['dominance']} filter, sync_every "
             f"{r.get('sync_every', 1)}: fresh process, best of {doc['repeats']}", [
                 Measure("iterations/points", (r["iterations"], r["points"])),
                 Measure("call s", r["call_s"], ".2f"),
                 Measure("ms/point", r["ms_per_point"], ".2f"),
                 Measure("× below the authors", r["times_below_authors"], ".0f"),
                 Measure("process wall s", r["process_wall_s"], ".2f"),
                 Measure("HV", r["hypervolume"], ".4f")])
            for r in doc["runs"]]


def tables_at_scale(doc: dict[str, Any]) -> Extracted:
    rows = []
    for n, r in doc["sizes"].items():
        measures = [Measure("fkr --input s", r["fkr"]["seconds"], ".0f"),
                    Measure("floor s", r["floor"]["seconds"], ".0f"),
                    Measure("× floor", r["fkr_over_floor"], ".2f"),
                    Measure("client peak GB", r["fkr"]["client_peak_rss_gb"], ".2f"),
                    Measure("cluster peak GB", r["fkr"]["cluster_peak_gb"], ".2f"),
                    Measure("spilled GB", r["fkr"]["spilled_gb"], ".2f")]
        if "seconds" in r.get("baseline", {}):
            measures += [Measure("before s", r["baseline"]["seconds"], ".0f"),
                         Measure("before client GB", r["baseline"]["client_peak_rss_gb"],
                                 ".2f")]
        rows.append((f"Census-KDD-like Parquet, {int(n):,} rows, {r['parts']} files; "
                     f"2 workers of {doc.get('memory_limit', '?')}", measures))
        for job in ("fce", "safairkm"):
            if job in r:
                rows.append((f"daskfair {job} --input, {int(n):,} rows", [
                    Measure("s", r[job]["seconds"], ".0f"),
                    Measure("client peak GB", r[job]["client_peak_rss_gb"], ".2f")]))
    return rows


def predict_at_scale(doc: dict[str, Any]) -> Extracted:
    rows = [(f"a stored FKR-CV model ({doc['load']['landmarks']} landmarks, "
             f"{doc['load']['encoded_width']} encoded columns): load, and its bits after a "
             f"second save on {doc['bits']['rows']:,} rows", [
                 Measure("load s", doc["load"]["seconds_best"], ".2f"),
                 Measure("bits identical", doc["bits"]["decision_identical"]
                         and doc["bits"]["predict_identical"])])]
    for n, r in doc["sizes"].items():
        p = r["predict_table"]
        rows.append((f"predict_table on a Census-KDD-like Parquet table, {int(n):,} rows, "
                     f"{r['parts']} files; 2 workers", [
                         Measure("s", p["seconds"], ".0f"),
                         Measure("floor s", r["floor"]["seconds"], ".0f"),
                         Measure("× floor", r["predict_table_over_floor"], ".2f"),
                         Measure("client peak GB", r["cli"]["client_peak_rss_gb"], ".2f"),
                         Measure("cluster peak GB", p["cluster_peak_gb"], ".2f"),
                         Measure("rows out = in", p["rows_in_equal_rows_out"]),
                         Measure("spilled GB", p["spilled_gb"], ".2f")]))
    return rows


def load_checks(doc: dict[str, Any]) -> Extracted:
    m = doc["model"]
    return [(f"daskfair.load of a stored FKR-CV pipeline ({doc['train']['landmarks']} "
             f"landmarks, {m['arrays']} arrays, {m['store_files']} files), every check, against "
             "the same store read with none; best of "
             f"{len(doc['load']['seconds_all'])}", [
                 Measure("load s", doc["load"]["seconds_best"], ".2f"),
                 Measure("floor s", doc["floor"]["seconds_best"], ".2f"),
                 Measure("× floor", doc["load_over_floor"], ".2f"),
                 Measure("goal met", doc["load"]["goal_met"])])]


def checks_overhead(doc: dict[str, Any]) -> Extracted:
    names = {"audit": "audit of 10⁷ in-memory rows (Arrow text groups), 200 replicates",
             "fce": "FairClusteringEnsemble(10) on 20 labelings of 10⁶ rows",
             "safairkm": "pareto_front of 20,000 rows, K = 5, 120 iterations"}
    rows = []
    for key, what in names.items():
        if key in doc:
            r = doc[key]
            rows.append((f"{what}: with the checks of issue 46 against {doc['base']}, "
                         f"alternating, median of {doc['repeats']}", [
                             Measure("base s", r["median_seconds"]["base"], ".3f"),
                             Measure("new s", r["median_seconds"]["new"], ".3f"),
                             Measure("new ÷ base", r["ratio_new_over_base"], ".3f")]))
    if "memory" in doc:
        m = doc["memory"]
        rows.append(("FairClusteringEnsemble(2) on 10⁵ rows, 8 labelings of ids {0, 1}, "
                     "{0, 10⁹}, {0, n − 1}", [
                         Measure("peak GB 01/1e9/n-1",
                                 (m["01"]["peak_gb"], m["1e9"]["peak_gb"], m["n-1"]["peak_gb"]),
                                 (".2f", ".2f", ".2f")),
                         Measure("same labels", m["same_labels"])]))
    return rows


def cli_fkr_job(doc: dict[str, Any]) -> Extracted:
    names = {"adult": "`daskfair fkr --dataset adult`, defaults",
             "adult_csv": "`daskfair fkr --input train.csv` (UCI Adult as CSV, text columns)",
             "adult_test": "`daskfair fkr --input train.csv --test test.csv`"}
    rows = []
    for key, what in names.items():
        r = doc["results"].get(key)
        if r is None:
            continue
        measures = [Measure("new s", r["new_seconds"], ".1f")]
        if "base_seconds" in r:
            measures = [Measure("base s", r["base_seconds"], ".1f"), *measures,
                        Measure("new ÷ base", r["ratio"], ".3f")]
        rows.append((f"{what}: the job of issue 47 against {doc['base']}, 2 workers, "
                     f"alternating, median of {doc['repeats']}", measures))
    return rows


def audit_levels(doc: dict[str, Any]) -> Extracted:
    s = doc["at_scale"]
    rows = [(f"audit of {doc['rows']:,} Census-KDD-shaped rows within {s['levels']} control "
             f"levels (race), sex, scores, f1_score and Youden's J, {doc['n_boot']:,} "
             f"replicates; {doc['workers']} workers", [
                 Measure("s", s["levels_seconds"], ".2f"),
                 Measure("floor s", s["floor_seconds"], ".2f"),
                 Measure("× floor", s["ratio_to_floor"], ".2f"),
                 *([Measure("median round × floor", s["median_round_ratio"], ".2f")]
                   if "median_round_ratio" in s else []),
                 Measure("plain audit × floor", s["plain_ratio_to_floor"], ".2f")])]
    for r in doc["fairlearn"]:
        measures = [Measure("fairlearn s", r["fairlearn_seconds"], ".2f"),
                    Measure("daskfair s", r["daskfair_seconds"], ".2f"),
                    Measure("f1 gap difference", r["f1_difference_max_gap"], ".1e")]
        if "calibration_curve_seconds" in r:
            measures += [Measure("calibration_curve s", r["calibration_curve_seconds"], ".2f"),
                         Measure("daskfair calibration s", r["daskfair_calibration_seconds"],
                                 ".3f"),
                         Measure("calibration gap", r["calibration_max_gap"], ".1e")]
        rows.append((f"MetricFrame with control_features on {r['rows']:,} rows in pandas, "
                     f"against daskfair's audit with {r['daskfair_n_boot']:,} replicates",
                     measures))
    c = doc["coverage"]
    rows.append((f"coverage of 95 % intervals, {c['runs']} simulated data sets", [
        Measure("f1/youden/f1 gap", (c["f1_score"], c["youden"], c["f1_gap"]),
                (".3f", ".3f", ".3f"))]))
    if "scores" in c:
        k = c["scores"]
        rows.append((f"coverage of 95 % intervals from score histograms, {k['runs']} data sets "
                     "(groups of 300, 1,000, 3,000 rows)", [
                         Measure("bin rate", k["bin_positive_rate"], ".3f"),
                         Measure("ECE calibrated/shifted/steep",
                                 (k["ece_calibrated"], k["ece_shifted"], k["ece_steep"]),
                                 (".3f", ".3f", ".3f")),
                         Measure("scoring rate", k["scoring_rate"], ".3f")]))
    return rows


def audit_regression(doc: dict[str, Any]) -> Extracted:
    s = doc["at_scale"]
    rows = [(f"regression audit of {doc['rows']:,} Census-KDD-shaped amounts and predictions, "
             f"sex × race; {doc['workers']} workers", [
                 Measure("s", s["audit_seconds"], ".2f"),
                 Measure("floor s", s["floor_seconds"], ".2f"),
                 Measure("× floor", s["ratio_to_floor"], ".2f")])]
    for r in doc["fairlearn"]:
        rows.append((f"MetricFrame (count, mean prediction, MAE, MSE) on {r['rows']:,} rows "
                     "in pandas, against daskfair's regression audit", [
                         Measure("fairlearn s", r["fairlearn_seconds"], ".2f"),
                         Measure("daskfair s", r["daskfair_seconds"], ".2f"),
                         Measure("relative gap", r["max_relative_gap"], ".1e")]))
    c = doc["coverage"]
    rows.append((f"coverage of 95 % intervals, {c['runs']} simulated data sets (groups of "
                 f"{', '.join(map(str, c['group_rows']))} rows)", [
                     Measure("prediction/target/residual/MAE/MSE",
                             tuple(c[m] for m in ("mean_prediction", "mean_target",
                                                  "mean_residual", "mean_absolute_error",
                                                  "mean_squared_error")),
                             (".3f",) * 5),
                     Measure("largest gap", c["mean_prediction_gap"], ".3f")]))
    return rows


def pass_graphs(doc: dict[str, Any]) -> Extracted:
    return [(f"FairKernelClassifierCV (m = 500) on {doc['rows']:,} rows streamed from zarr: "
             f"a pass's arrays optimised together without fusion against {doc['base']}, "
             f"alternating, median of {doc['repeats']}", [
                 Measure("base s", doc["base_seconds"], ".1f"),
                 Measure("new s", doc["new_seconds"], ".1f"),
                 Measure("new ÷ base", doc["ratio"], ".3f")])]


def fkr_bound_population(doc: dict[str, Any]) -> Extracted:
    rows = []
    for name, setting in doc["settings"].items():
        measures = []
        for key, v in setting["rules"].items():
            measures.append(Measure(f"{key}: within/pop. SD/error",
                                    (v["within_bound"], v["population_disparity_mean"],
                                     v["error_mean"]), (".2f", ".4f", ".4f")))
        rows.append((f"FKR-CV on a synthetic population, {name}, {setting['train_rows']:,} "
                     f"training rows, {doc['seeds']} fits, {doc['held_out']:,} held out",
                     measures))
    return rows


def audit_at_scale(doc: dict[str, Any]) -> Extracted:
    rows = []
    for n, r in doc["sizes"].items():
        rows.append((f"audit of a Census-KDD-shaped decisions table, {int(n):,} rows, sex × "
                     f"race, {doc['n_boot']:,} replicates; 2 workers", [
                         Measure("s", r["audit_seconds"], ".1f"),
                         Measure("floor s", r["floor_seconds"], ".1f"),
                         Measure("× floor", r["ratio_to_floor"], ".2f"),
                         Measure("× floor, no scores", r["ratio_no_scores"], ".2f"),
                         Measure("CLI s", r["cli"]["seconds"], ".1f"),
                         Measure("client peak GB", r["cli"]["client_peak_rss_gb"], ".2f")]))
    for f in doc["fairlearn"]:
        rows.append((f"fairlearn MetricFrame against daskfair's in-memory audit, "
                     f"{f['rows']:,} rows in pandas", [
                         Measure("fairlearn s", f["fairlearn_seconds"], ".1f"),
                         Measure("fairlearn 100 replicates s (extrapolated)",
                                 f.get("fairlearn_100_replicates_extrapolated"), ".0f"),
                         Measure(f"daskfair {f['daskfair_n_boot']:,} replicates s",
                                 f["daskfair_seconds"], ".2f")]))
    for name, c in doc["coverage"]["scenarios"].items():
        rows.append((f"coverage of 95% intervals, six groups, rates {name} "
                     f"({doc['coverage']['runs']} data sets)", [
                         Measure("group rate", c["group_rate"], ".3f"),
                         Measure("to reference", c["difference_to_reference"], ".3f"),
                         Measure("largest gap", c["largest_gap"], ".3f"),
                         Measure("percentile", c["largest_gap_percentile"], ".3f")]))
    return rows


def cold_start(doc: dict[str, Any]) -> Extracted:
    rows = []
    for version, cases in doc["versions"].items():
        for name, r in cases.items():
            firsts = (r["empty_first"], r["filled_first"], r["new_checkout_first"])
            rows.append((f"{name}, 5,000 rows, a new process ({version})", [
                Measure("first s empty/filled cache/new checkout", firsts, ".2f"),
                Measure("warm s", r["warm"], ".2f"),
                Measure("imports s", r["imports_filled"], ".2f"),
                Measure("compiled", r["n_compiled"])]))
    for version, d in doc.get("demo", {}).items():
        rows.append((f"daskfair demo from a new process ({version})", [
            Measure("s empty/filled cache", (d["empty"], d["filled"]), ".1f")]))
    for version, d in doc.get("cluster", {}).items():
        for job, what in (("fce", "FCE consensus of 10^7 rows"),
                          ("front", "SAfairKM front of 10^6 rows")):
            rows.append((f"{what}, a fresh 2-worker LocalCluster ({version})", [
                Measure(f"first/second s, {state} cache",
                        (d[f"{job}_{state}"]["first"], d[f"{job}_{state}"]["second"]), ".2f")
                for state in ("empty", "filled")]))
    return rows


def store_kill_points(doc: dict[str, Any]) -> Extracted:
    return [(f"daskfair {job}: SIGKILL at {t['points']} points ({doc['jobs'][job]['writes']} "
             "store writes per run)", [
                 Measure("after the kill", ", ".join(f"{k} {v}" for k, v in
                                                     sorted(t["after_kill"].items()))),
                 Measure("taken on to the uninterrupted result",
                         (t["final"].get("complete", 0), t["points"])),
                 Measure("wrong", t["after_kill"].get("wrong", 0))])
            for job, t in doc["tally"].items()]


def slurm_end_to_end(doc: dict[str, Any]) -> Extracted:
    return [(f"daskfair {job} on 2 jobs of a local SLURM vs a 2-worker LocalCluster, best of "
             f"{max(r['repeat'] for r in doc['rows']) + 1}", [
                 Measure("wall s local/SLURM", (s["local_wall_s"], s["slurm_wall_s"]), ".1f"),
                 Measure("job start s", s["slurm_job_start_s"], ".1f"),
                 Measure("fit × local", s["fit_ratio_slurm_over_local"], ".2f"),
                 Measure("goal s", s["goal_s"], ".1f"),
                 Measure("goal met", s["goal_met"])])
            for job, s in doc["summary"].items()]


EXTRACTORS: dict[str, Callable[[dict[str, Any]], Extracted]] = {
    f.__name__: f for f in (fkr_table1, fkr_tradeoff, fkr_scale, fkr_convergence, fce_tables,
                            fce_raw, safairkm_seed, safairkm_synthetic, safairkm_scale,
                            sa2gd_quadratics, fce_scale, memory_streaming, fkr_vs_fairlearn,
                            fkr_cv_scale, numpy_block_sums, fce_coarser_consensus,
                            ffe_compas_columns, safairkm_end_to_end, tables_at_scale,
                            predict_at_scale, load_checks, checks_overhead, audit_at_scale,
                            cli_fkr_job, pass_graphs, audit_levels, audit_regression,
                            fkr_bound_population,
                            cold_start,
                            store_kill_points, slurm_end_to_end, code_shape)
}
# the same benchmark on Census-KDD alone (its own run: EG takes minutes per bound there)
EXTRACTORS["fkr_vs_fairlearn_census"] = fkr_vs_fairlearn
# the selection rules compared on the same fits (issue 38: the population's bound)
EXTRACTORS["fkr_vs_fairlearn_population"] = fkr_vs_fairlearn
EXTRACTORS["fkr_vs_fairlearn_sex_race"] = fkr_vs_fairlearn
EXTRACTORS["fkr_vs_fairlearn_population_census"] = fkr_vs_fairlearn
# issue 49: the width chosen from the data, against gammas=None, in the same runs
EXTRACTORS["fkr_vs_fairlearn_adult49"] = fkr_vs_fairlearn
EXTRACTORS["fkr_vs_fairlearn_credit_crime49"] = fkr_vs_fairlearn
EXTRACTORS["fkr_vs_fairlearn_census49"] = fkr_vs_fairlearn


def _keys(doc: Any) -> str:
    if isinstance(doc, dict):
        return "top-level keys: " + (", ".join(map(str, doc)) or "none")
    return f"top level is a {type(doc).__name__}, not an object"


def rows_of(path: Path) -> list[Row]:
    """The summary rows of one results file; never raises on a bad or unknown file."""
    name = path.stem
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        return [Row(name, status="unreadable",
                    note=f"could not read {path.name}: {type(exc).__name__}: {exc}")]
    machine = doc.get("machine") if isinstance(doc, dict) else None
    machine = machine if isinstance(machine, dict) else None
    wall = doc.get("wall_seconds") if isinstance(doc, dict) else None
    run = {"date": machine.get("date") if machine else None,
           "wall_seconds": wall if isinstance(wall, int | float) else None,
           "machine": {k: v for k, v in machine.items() if k != "date"} if machine else None}
    extractor = EXTRACTORS.get(name)
    if extractor is None or not isinstance(doc, dict):
        return [Row(name, status="no extractor", note=f"no extractor; {_keys(doc)}", **run)]
    try:
        extracted = extractor(doc)
    # a layout change must show up as a row, whatever the extractor tripped over
    except Exception as exc:
        return [Row(name, status="extractor failed",
                    note=f"extractor failed ({type(exc).__name__}: {exc}); {_keys(doc)}",
                    **run)]
    if not extracted:
        return [Row(name, status="empty", note=f"nothing to summarise; {_keys(doc)}", **run)]
    return [Row(name, setting, measures, **run) for setting, measures in extracted]


def summarise(results: Path = RESULTS) -> list[Row]:
    """Rows for every ``*.json`` in ``results``: known benchmarks in README order, then others."""
    order = {name: i for i, name in enumerate(EXTRACTORS)}
    paths = sorted(results.glob("*.json"), key=lambda p: (order.get(p.stem, len(order)), p.name))
    return [row for path in paths for row in rows_of(path)]


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def markdown(rows: list[Row]) -> str:
    """The rows as a markdown table, with the machines listed once underneath."""
    machines: dict[str, list[str]] = {}
    lines = ["| benchmark | setting | measured | run |", "|---|---|---|---|"]
    for row in rows:
        run = []
        if row.date:
            run.append(row.date)
        if row.wall_seconds is not None:
            run.append(f"{row.wall_seconds:.0f} s")
        if row.machine:
            key = json.dumps(row.machine)
            users = machines.setdefault(key, [])
            if row.benchmark not in users:
                users.append(row.benchmark)
            run.append(f"M{list(machines).index(key) + 1}")
        cells = (f"`{row.benchmark}`", row.setting, row.measured, ", ".join(run) or "–")
        lines.append("| " + " | ".join(_cell(c) for c in cells) + " |")
    lines.append("")
    for i, (key, users) in enumerate(machines.items(), 1):
        m = json.loads(key)
        facts = ", ".join(f"{k} {v}" for k, v in m.items())
        lines.append(f"M{i}: {facts} ({', '.join(users)})  ")
    return "\n".join(lines).rstrip() + "\n"


def as_json(rows: list[Row]) -> str:
    return json.dumps([row.as_dict() for row in rows], indent=2, ensure_ascii=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--results", type=Path, default=RESULTS, help="folder of *.json results")
    ap.add_argument("--json", action="store_true", help="print JSON instead of markdown")
    ap.add_argument("--output", type=Path, default=None, help="also write the table here")
    args = ap.parse_args(argv)
    if not args.results.is_dir():
        print(f"summary.py: no results folder {args.results}", file=sys.stderr)
        return 2
    rows = summarise(args.results)
    text = as_json(rows) if args.json else markdown(rows)
    print(text, end="")
    if args.output is not None:
        args.output.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
