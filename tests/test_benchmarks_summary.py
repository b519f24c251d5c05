"""benchmarks/summary.py: one row per stored result, unknown and broken files included."""

from __future__ import annotations

import importlib.util
import json
import shutil
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
REAL = BENCHMARKS / "results"


def _load(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    # dataclasses look their module up in sys.modules while the class is created
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


summary = _load("benchmarks_summary", BENCHMARKS / "summary.py")

COPIED = ("fkr_scale.json", "safairkm_seed.json")
UNKNOWN = {"benchmark": "future_thing", "machine": {"date": "2030-01-01 00:00:00", "cpus": 64},
           "alpha": 1, "curves": [1, 2]}


@pytest.fixture
def results(tmp_path: Path) -> Path:
    for name in COPIED:
        if not (REAL / name).exists():
            pytest.skip(f"{name} is not among the stored results")
        shutil.copy(REAL / name, tmp_path / name)
    (tmp_path / "future_thing.json").write_text(json.dumps(UNKNOWN))
    (tmp_path / "broken.json").write_text('{"runs": [1, 2')
    # a known name whose layout changed: the extractor trips, the summary must not
    (tmp_path / "fce_scale.json").write_text(json.dumps({"runs": [{"n": 5}]}))
    (tmp_path / "sa2gd_quadratics.json").write_text(json.dumps({"rate": [], "front": []}))
    (tmp_path / "notes.txt").write_text("not a result")
    return tmp_path


def _by(rows, benchmark: str) -> list:
    return [r for r in rows if r.benchmark == benchmark]


def test_fkr_scale_rows_match_the_file(results: Path) -> None:
    doc = json.loads((results / "fkr_scale.json").read_text())
    rows = _by(summary.summarise(results), "fkr_scale")
    assert len(rows) == len(doc["runs"])
    for row, run in zip(rows, doc["runs"], strict=True):
        values = row.as_dict()["values"]
        assert row.status == "ok"
        assert f"{run['n']:,} rows" in row.setting
        assert values["fit s"] == run["fit_seconds"]
        assert values["fit / floor"] == run["ratio_fit_to_floor"]
        assert values["fit / floor"] == pytest.approx(run["fit_seconds"]
                                                      / run["floor_ctc_seconds"])
        assert values["peak cluster GB"] == run["peak_cluster_memory_gb"]
        assert f"fit s {run['fit_seconds']:.1f}" in row.measured
        assert f"fit / floor {run['ratio_fit_to_floor']:.2f}" in row.measured
        assert row.date == doc["machine"]["date"]
        assert row.machine["cpus"] == doc["machine"]["cpus"]


def test_safairkm_seed_rows_match_the_file(results: Path) -> None:
    doc = json.loads((results / "safairkm_seed.json").read_text())
    rows = _by(summary.summarise(results), "safairkm_seed")
    assert len(rows) == len(doc["runs"])
    for row, run in zip(rows, doc["runs"], strict=True):
        sa, vf = run["safairkm"], run["vfairkm"]
        values = row.as_dict()["values"]
        assert row.setting.startswith(f"{run['dataset']}, K={run['K']}")
        assert values["points SAfairKM/VfairKM"] == [sa["points"], vf["points"]]
        assert values["SAfairKM CPU s/point/seed's"] == pytest.approx(
            [sa["cpu_s"] / sa["points"], run["seed_cpu_s_per_point"]["safairkm"]])
        assert values["HV SAfairKM/VfairKM"] == [sa["hypervolume"], vf["hypervolume"]]
        assert values["balance SAfairKM"] == sa["balance_range"]
        assert f"{sa['hypervolume']:.4f}/{vf['hypervolume']:.4f}" in row.measured
        assert f"{sa['points']}/{vf['points']}" in row.measured


def test_unknown_broken_and_changed_files_get_a_row(results: Path) -> None:
    rows = summary.summarise(results)
    assert {r.benchmark for r in rows} == {"fkr_scale", "safairkm_seed", "future_thing",
                                           "broken", "fce_scale", "sa2gd_quadratics"}
    (unknown,) = _by(rows, "future_thing")
    assert unknown.status == "no extractor"
    assert all(key in unknown.measured for key in UNKNOWN)
    assert unknown.date == UNKNOWN["machine"]["date"]
    (broken,) = _by(rows, "broken")
    assert broken.status == "unreadable"
    assert "could not read broken.json" in broken.measured
    (changed,) = _by(rows, "fce_scale")
    assert changed.status == "extractor failed"
    assert "KeyError" in changed.measured and "runs" in changed.measured
    (empty,) = _by(rows, "sa2gd_quadratics")
    assert empty.status in ("empty", "extractor failed")


def test_markdown_json_and_output_file(results: Path, tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    rows = summary.summarise(results)
    table = summary.markdown(rows)
    lines = [line for line in table.splitlines() if line.startswith("| `")]
    assert len(lines) == len(rows)
    assert all(line.count(" | ") == 3 for line in lines)  # no stray pipes in cells
    out = tmp_path / "summary.json"
    assert summary.main(["--results", str(results), "--json", "--output", str(out)]) == 0
    printed = capsys.readouterr().out
    assert printed == out.read_text()
    parsed = json.loads(printed)
    assert [r["benchmark"] for r in parsed] == [r.benchmark for r in rows]
    assert summary.main(["--results", str(tmp_path / "missing")]) == 2


def test_every_stored_result_is_summarised() -> None:
    paths = sorted(REAL.glob("*.json"))
    if not paths:
        pytest.skip("no stored results")
    rows = summary.summarise(REAL)
    assert {r.benchmark for r in rows} == {p.stem for p in paths}
    assert all(r.status == "ok" for r in rows), [r.measured for r in rows if r.status != "ok"]


def test_default_folder_is_the_one_the_benchmarks_write() -> None:
    common = _load("benchmarks_common", BENCHMARKS / "_common.py")
    assert summary.RESULTS == common.RESULTS
