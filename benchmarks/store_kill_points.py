"""Hundreds of SIGKILLs during the three jobs' store writes: how many stores are complete,
incomplete, corrupt — and wrong (must be none).

For each job (the small ``fkr``, ``safairkm`` and ``fce`` runs of ``tests/_killpoints.py``) an
uninterrupted run gives the reference and its number of store writes N. Then, per kill point:

* ``write`` points: the job is killed at write k (k spread evenly over 1..N, then shuffled),
  half that write's bytes left in zarr's scratch file, the whole process group SIGKILLed;
* ``time`` points: the job is killed at a random moment of its run (uniform over the
  reference's wall time), wherever it is — in a write, between writes, in the lease, in the
  completion step.

The store is judged as a user meets it (``open_run`` with the contents checked): complete and
equal to the reference, incomplete, empty (killed before its first write), corrupt, or
*wrong* (complete with other content). Every store that is not complete is then taken on
(``--resume --break-lock``, or ``--overwrite --break-lock`` where the job cannot resume); with
``--resume-kills`` that run is itself killed at a random write first; the final store must
equal the reference.

    python benchmarks/store_kill_points.py [--write-points 60] [--time-points 20] [--seed 0]
        [--jobs fkr safairkm fce] [--append]

``--append`` with another ``--seed`` adds a run's points to the stored result's.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import numpy as np

from _common import RESULTS, pyplot, write_result

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests import _killpoints as kp

DATA = Path(os.environ.get("DASKFAIR_DATA",
                           Path(__file__).resolve().parents[2] / "shared" / "data"))


def _killed_by_time(job: str, store: Path, work: Path, after: float) -> int:
    env = kp.job_env(DATA, work / "hook", None, work / "writes.count")
    proc = subprocess.Popen([sys.executable, "-m", "daskfair.cli", *kp.JOBS[job], "--store",
                             str(store), "--no-progress"], cwd=work, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    try:
        proc.wait(timeout=after)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
    return proc.wait()


def one_point(job: str, how: str, at: float, work: Path, reference,
              resume_kill: int | None) -> dict:
    store = work / "killed.zarr"
    if how == "write":
        env = kp.job_env(DATA, work / "hook", int(at), work / "writes.count")
        code = kp.run_job([*kp.JOBS[job], "--store", str(store)], env, work).returncode
    else:
        code = _killed_by_time(job, store, work, at)
    first = kp.judge(store, reference)
    out = {"job": job, "how": how, "at": at, "exit": code, "after_kill": first}
    if first == "complete":
        out["final"] = "complete"
        return out
    if resume_kill is not None and job in kp.RESUMABLE:
        kp.finish(job, store, work, DATA, resume_kill)
        out["after_killed_resume"] = kp.judge(store, reference)
    out["taken_on_with"] = kp.finish(job, store, work, DATA, None)
    out["final"] = kp.judge(store, reference)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--jobs", nargs="+", default=sorted(kp.JOBS), choices=sorted(kp.JOBS))
    ap.add_argument("--write-points", type=int, default=60, help="per job")
    ap.add_argument("--time-points", type=int, default=20, help="per job")
    ap.add_argument("--resume-kills", type=int, default=10,
                    help="per job: points whose resume is killed too (resumable jobs)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--append", action="store_true",
                    help="add these points to those of the stored result (run with another "
                         "--seed)")
    args = ap.parse_args()
    previous = (json.loads((RESULTS / "store_kill_points.json").read_text())
                if args.append else None)
    if previous and args.seed in previous.get("seeds", [0]):
        ap.error(f"the stored result already holds seed {args.seed}; give another --seed")
    rng = np.random.default_rng(args.seed)
    points, jobs = [], {}
    partial = RESULTS / "store_kill_points.partial.jsonl"
    partial.unlink(missing_ok=True)
    for job in args.jobs:
        with tempfile.TemporaryDirectory(prefix=f"kill-{job}-") as tmp:
            work = Path(tmp)
            t0 = time.perf_counter()
            n_writes = kp.count_writes(job, work / "reference.zarr", work, DATA)
            wall = time.perf_counter() - t0
            reference = kp.contents(work / "reference.zarr")
            jobs[job] = {"writes": n_writes, "seconds": wall}
            if previous and previous["jobs"][job]["writes"] != n_writes:
                raise SystemExit(f"{job} now makes {n_writes} writes, the stored result "
                                 f"{previous['jobs'][job]['writes']}: run afresh")
            # one write drawn in each of --write-points equal strata of 1..N: spread evenly,
            # and another seed gives other writes (so runs with several seeds add up)
            edges = np.linspace(1, n_writes + 1, args.write_points + 1)
            at_writes = np.unique(np.floor(edges[:-1] + rng.uniform(size=args.write_points)
                                           * np.diff(edges)).astype(int).clip(1, n_writes))
            plan = [("write", float(k)) for k in at_writes]
            plan += [("time", float(t)) for t in rng.uniform(0.2, wall, args.time_points)]
            order = rng.permutation(len(plan))
            for i, j in enumerate(order):
                how, at = plan[j]
                resume_kill = (int(rng.integers(1, n_writes // 2 + 1))
                               if i < args.resume_kills else None)
                shutil.rmtree(work / "killed.zarr", ignore_errors=True)
                point = one_point(job, how, at, work, reference, resume_kill)
                points.append(point)
                with partial.open("a") as fh:  # a long run keeps what it measured
                    fh.write(json.dumps(point) + "\n")
                print(f"{job:9s} {how:5s} {at:8.1f}  {point['after_kill']:10s} "
                      f"{point.get('after_killed_resume', ''):10s} -> {point['final']}",
                      flush=True)
    seeds = [args.seed]
    if previous:
        points = previous["points"] + points
        seeds = previous.get("seeds", [0]) + seeds
        jobs = previous["jobs"]
    tally = {job: {
        "points": sum(p["job"] == job for p in points),
        "after_kill": dict(Counter(p["after_kill"] for p in points if p["job"] == job)),
        "after_killed_resume": dict(Counter(p["after_killed_resume"] for p in points
                                            if p["job"] == job and "after_killed_resume" in p)),
        "final": dict(Counter(p["final"] for p in points if p["job"] == job)),
    } for job in jobs}
    wrong = sum(p["after_kill"] == "wrong" or p.get("after_killed_resume") == "wrong"
                or p["final"] != "complete" for p in points)
    write_result("store_kill_points", {"jobs": jobs, "seeds": seeds, "tally": tally,
                                       "not_right": wrong, "points": points})
    partial.unlink(missing_ok=True)
    plt = pyplot()
    kinds = ["complete", "incomplete", "empty", "corrupt", "wrong"]
    fig, ax = plt.subplots(figsize=(7, 3.5))
    left = np.zeros(len(jobs))
    for kind in kinds:
        counts = np.array([tally[j]["after_kill"].get(kind, 0) for j in jobs])
        ax.barh(list(jobs), counts, left=left, label=kind)
        left += counts
    ax.set_xlabel("kill points: the store right after the kill")
    ax.legend(fontsize=8, ncol=len(kinds), loc="upper center", bbox_to_anchor=(0.5, -0.2))
    fig.tight_layout()
    fig.savefig(RESULTS / "store_kill_points.png", dpi=120)


if __name__ == "__main__":
    main()
