"""Shared pieces of the benchmark scripts: results folder, JSON output, machine facts."""

from __future__ import annotations

import json
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any

from daskfair.store import to_json

RESULTS = Path(__file__).resolve().parent / "results"
ROOT = Path(__file__).resolve().parents[1]


def baseline_checkout(rev: str, folder: Path) -> Path:
    """``git archive REV daskfair`` of this repository unpacked into ``folder`` (returned):
    the package as it was at ``rev``, to put first on a child's ``sys.path``."""
    import subprocess

    archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev, "daskfair"],
                             capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive, check=True)
    return folder


def machine() -> dict[str, Any]:
    """Facts that make a timing interpretable."""
    import dask
    import numpy as np

    return {
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "cpus": len(os.sched_getaffinity(0)),
        "numpy": np.__version__,
        "dask": dask.__version__,
        "date": time.strftime("%Y-%m-%d %H:%M:%S"),
    }


def write_result(name: str, payload: dict[str, Any]) -> Path:
    """Write ``benchmarks/results/<name>.json`` and print it."""
    RESULTS.mkdir(parents=True, exist_ok=True)
    payload = {"benchmark": name, "machine": machine(), **payload}
    text = json.dumps(to_json(payload), indent=2)
    path = RESULTS / f"{name}.json"
    path.write_text(text + "\n")
    print(text)
    return path


def pyplot():
    """matplotlib's pyplot with a file-only backend (the ``plot`` extra)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def busy_fraction(task_stream: list[dict[str, Any]], wall: float, workers: int,
                  window: tuple[float, float] | None = None) -> float:
    """Task compute seconds ÷ (wall × worker threads), from ``get_task_stream`` records.

    On a 2-core machine the client and scheduler share the cores with the workers; a busy
    fraction near 1 says the workers had work the whole time (more workers would help), a
    low one that they waited (on round trips, the client, a sequential step).

    ``window`` (start, stop), in ``time.time()`` seconds: only compute inside it counts, once
    per (key, start) — a repeated computation of the same keys can bring back records of an
    earlier one in the scheduler's task stream.
    """
    seen, compute = set(), 0.0
    for rec in task_stream:
        for ss in rec.get("startstops", ()):
            if ss.get("action") != "compute" or (str(rec.get("key")), ss["start"]) in seen:
                continue
            seen.add((str(rec.get("key")), ss["start"]))
            lo, hi = ss["start"], ss["stop"]
            if window is not None:
                lo, hi = max(lo, window[0]), min(hi, window[1])
            compute += max(hi - lo, 0.0)
    return compute / (wall * workers) if wall > 0 and workers > 0 else float("nan")
