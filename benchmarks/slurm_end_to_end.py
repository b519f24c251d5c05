"""The three jobs on a real SLURM against the same jobs on a LocalCluster, in one process.

For each job and each way of running it, as a user runs it (``daskfair.cli.main``, which uses
the client already running in the process):

* ``start_s``: from asking for the cluster to two workers connected. For SLURM this is
  ``get_client(jobqueue="slurm", jobs=2)``: two batch jobs submitted through ``sbatch``, their
  workers started by the jobs and joined over TLS; ``job_start_s`` is the queue's part, the
  longest wait from submission to start SLURM recorded for the two jobs (whole seconds;
  ``sched_interval=2`` on the local SLURM);
* ``fit_s``: the job itself, with the busy fraction of the two workers over it (task compute
  seconds ÷ (fit seconds × 2));
* ``teardown_s``: closing the client and the cluster (``scancel`` of the jobs).

Goal (issue 25): SLURM's wall time within 1.2 × the LocalCluster's plus the job-start latency.
A single-node SLURM is started for the run (``cluster/local-slurm.sh``, root) unless
``SLURM_CONF`` names a running one.

    python benchmarks/slurm_end_to_end.py [--repeats 2] [--jobs fkr safairkm fce] [--plot]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import distributed
import yaml

from _common import busy_fraction, pyplot, write_result
from daskfair.cli import main
from daskfair.runtime.clients import close_client, get_client

ROOT = Path(__file__).resolve().parents[1]

JOBS = {
    # the README's FKR example on the authors' Credit split 0, with a 2-fold CV grid
    "fkr": ["fkr", "--dataset", "ffe_credit", "--split", "0", "--disparity-bound", "0.02",
            "--n-landmarks", "300", "--cv", "2"],
    "safairkm": ["safairkm", "--dataset", "safairkm_adult", "--n-clusters", "4", "--n-init",
                 "8", "--max-iter", "40", "--vfairkm-fairness-weights", "0", "100"],
    # the README's FCE example
    "fce": ["fce", "--pool", "har", "--n-runs", "10", "--n-clusters", "6"],
}


def _slurm_config(folder: Path) -> Path:
    cfg = yaml.safe_load((ROOT / "cluster" / "jobqueue.yaml").read_text())
    cfg["jobqueue"]["slurm"].update(
        cores=1, processes=1, memory="2GiB",
        **{"log-directory": str(folder / "logs"), "local-directory": str(folder),
           "python": sys.executable})
    path = folder / "jobqueue.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path


def _job_start_latency(ids: list[str]) -> float:
    """The longest wait from submission to start among ``ids``, as SLURM recorded it
    (``squeue``'s submit and start times, whole seconds)."""
    from datetime import datetime

    out = subprocess.run(["squeue", "--noheader", "--states=all", "--format=%i %V %S"],
                         capture_output=True, text=True, check=True).stdout
    waits = []
    for line in out.splitlines():
        job, submit, start = line.split()
        if job in ids:
            waits.append((datetime.fromisoformat(start)
                          - datetime.fromisoformat(submit)).total_seconds())
    return max(waits) if waits else float("nan")


def _start(mode: str, config: Path) -> tuple[distributed.Client, float, float]:
    t0 = time.perf_counter()
    if mode == "local":
        client = get_client(n_workers=2, dashboard_address=None)
    else:
        client = get_client(jobqueue="slurm", jobs=2, jobqueue_config=config)
    client.wait_for_workers(2, timeout=300)
    start = time.perf_counter() - t0
    if mode == "local":
        return client, start, 0.0
    ids = [str(j.job_id) for j in client.cluster.workers.values() if j.job_id]
    return client, start, _job_start_latency(ids)


def run_once(job: str, mode: str, config: Path, folder: Path) -> dict[str, float]:
    client, start_s, job_start_s = _start(mode, config)
    store = folder / f"{job}-{mode}.zarr"
    try:
        with distributed.get_task_stream(client) as ts:
            t0 = time.time()
            tic = time.perf_counter()
            code = main([*JOBS[job], "--store", str(store), "--overwrite", "--no-progress"])
            fit_s = time.perf_counter() - tic
        if code != 0:
            raise RuntimeError(f"{job} on {mode} exited with {code}")
    except BaseException:
        close_client(client)
        raise
    busy = busy_fraction(ts.data, fit_s, 2, window=(t0, t0 + fit_s))
    tic = time.perf_counter()
    close_client(client)
    teardown_s = time.perf_counter() - tic
    return {"start_s": start_s, "job_start_s": job_start_s, "fit_s": fit_s,
            "teardown_s": teardown_s, "wall_s": start_s + fit_s + teardown_s,
            "busy_fraction": busy}


def _local_slurm(folder: Path) -> Path | None:
    if os.environ.get("SLURM_CONF"):
        return None
    if os.geteuid() != 0 or shutil.which("slurmctld") is None:
        sys.exit("needs a running SLURM (SLURM_CONF) or root with slurm-wlm and munge "
                 "installed (cluster/local-slurm.sh install)")
    subprocess.run([str(ROOT / "cluster" / "local-slurm.sh"), "start", str(folder)],
                   check=True, stdout=subprocess.DEVNULL)
    os.environ["SLURM_CONF"] = str(folder / "slurm.conf")
    return folder


def main_() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--jobs", nargs="+", default=sorted(JOBS), choices=sorted(JOBS))
    parser.add_argument("--plot", action="store_true")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="daskfair-slurm-bench-"))
    os.chdir(folder)  # the jobs' logs and credentials
    started = _local_slurm(folder / "slurm")
    config = _slurm_config(folder)
    rows = []
    try:
        for job in args.jobs:
            for repeat in range(args.repeats):
                for mode in ("local", "slurm"):
                    row = {"job": job, "mode": mode, "repeat": repeat,
                           **run_once(job, mode, config, folder)}
                    print(row, file=sys.stderr, flush=True)
                    rows.append(row)
    finally:
        if started is not None:
            subprocess.run([str(ROOT / "cluster" / "local-slurm.sh"), "stop", str(started)],
                           check=False, stdout=subprocess.DEVNULL)
    summary = {}
    for job in args.jobs:
        best = {m: min((r for r in rows if r["job"] == job and r["mode"] == m),
                       key=lambda r: r["wall_s"]) for m in ("local", "slurm")}
        allowed = 1.2 * best["local"]["wall_s"] + best["slurm"]["job_start_s"]
        summary[job] = {
            "local_wall_s": best["local"]["wall_s"], "slurm_wall_s": best["slurm"]["wall_s"],
            "slurm_job_start_s": best["slurm"]["job_start_s"],
            "fit_ratio_slurm_over_local": best["slurm"]["fit_s"] / best["local"]["fit_s"],
            "goal_s": allowed, "goal_met": best["slurm"]["wall_s"] <= allowed}
    path = write_result("slurm_end_to_end", {"jobs": JOBS, "rows": rows, "summary": summary})
    if args.plot:
        plot(rows, path.with_suffix(".png"))
    shutil.rmtree(folder, ignore_errors=True)


def plot(rows: list[dict], path: Path) -> None:
    """Stacked bars: start, fit and teardown of each job's fastest run per mode."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7, 3.5))
    labels, bottoms = [], []
    for i, job in enumerate(sorted({r["job"] for r in rows})):
        for j, mode in enumerate(("local", "slurm")):
            r = min((r for r in rows if r["job"] == job and r["mode"] == mode),
                    key=lambda r: r["wall_s"])
            x = 3 * i + j
            labels.append((x, f"{job}\n{mode}"))
            bottom = 0.0
            for part, color in (("start_s", "#999"), ("fit_s", "#1f77b4"),
                                ("teardown_s", "#ff7f0e")):
                ax.bar(x, r[part], bottom=bottom, color=color,
                       label=part[:-2] if x == 0 else None)
                bottom += r[part]
            bottoms.append(bottom)
    ax.set_xticks([x for x, _ in labels], [t for _, t in labels])
    ax.set_ylabel("seconds")
    ax.set_title("wall time: LocalCluster vs local SLURM (2 workers)")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    print(f"wrote {path}", file=sys.stderr)


if __name__ == "__main__":
    main_()
