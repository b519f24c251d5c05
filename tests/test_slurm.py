"""``--jobqueue slurm`` on a real SLURM: a single-node cluster started by
``cluster/local-slurm.sh`` for this module (root and Debian's ``slurm-wlm``/``munge``).

Kept out of the default run (marker ``slurm``); ``.ci/run`` runs them after the suite when it
can install the packages. Each job runs as real batch jobs through ``sbatch``; its stored
results must equal the same job's on a LocalCluster, also when a worker job is cancelled in the
middle of the run and when the workers retire at a walltime shorter than the run.
"""

import math
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import distributed
import numpy as np
import pytest

from daskfair.cli import main
from daskfair.store import open_run

from .test_hpc import _config  # the shipped cluster/jobqueue.yaml, one core per job

pytestmark = pytest.mark.slurm

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "cluster" / "local-slurm.sh"

#: small real jobs (the arguments of tests/test_cli_jobs.py); FCE's is LONG_JOB below
JOBS = {
    "fkr": ["fkr", "--dataset", "ffe_crime", "--split", "3", "--n-fair-features", "2", "4",
            "--objective", "mean_discrepancy", "--n-landmarks", "300", "--kernel",
            "polynomial", "--degree", "4", "--coef0", "0.1"],
    "safairkm": ["safairkm", "--dataset", "safairkm_adult", "--rows", "600", "--n-clusters",
                 "3", "--n-init", "4", "--max-iter", "12", "--vfairkm-fairness-weights", "0",
                 "100"],
}

#: long enough to lose workers on the way (they retire 10-20 s into their jobs): 30 base
#: clusterings of Bank Marketing, each a task, then the consensus (about 17 s of work for two
#: one-core workers, measured 2026-11-26; 10 runs took 8 s, and the run could end before any
#: worker retired)
LONG_JOB = ["fce", "--dataset", "bank_marketing", "--n-clusters", "2", "--n-runs", "30",
            "--methods", "kmeans", "spectral"]

#: stored values that are timings or dates, not results
_CLOCK = ("seconds", "time", "created", "completed", "updated")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def slurm(tmp_path_factory):
    """A running one-node SLURM; yields the environment its commands need."""
    if os.geteuid() != 0:
        pytest.skip("a local SLURM needs root (slurmd starts jobs as their users)")
    if shutil.which("slurmctld") is None or shutil.which("munged") is None:
        pytest.skip("slurm-wlm and munge are not installed: cluster/local-slurm.sh install")
    folder = tmp_path_factory.mktemp("slurm")
    ports = {"DASKFAIR_SLURMCTLD_PORT": str(_free_port()),
             "DASKFAIR_SLURMD_PORT": str(_free_port())}
    try:
        started = subprocess.run([str(SCRIPT), "start", str(folder)],
                                 env={**os.environ, **ports}, capture_output=True, text=True,
                                 timeout=120)
        assert started.returncode == 0, started.stdout + started.stderr
        yield {"SLURM_CONF": str(folder / "slurm.conf")}
    finally:
        subprocess.run([str(SCRIPT), "stop", str(folder)], capture_output=True, timeout=60)


@pytest.fixture(scope="module")
def scheduler():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster:
        yield cluster.scheduler_address


def _on_slurm(slurm, args, tmp_path, data_dir, *extra):
    """Start ``daskfair ARGS --jobqueue slurm ...`` in the background (cwd tmp_path)."""
    env = {**os.environ, **slurm, "DASKFAIR_DATA": str(data_dir),
           "DASK_CONFIG": str(tmp_path / "dask-config")}
    env.pop("DASK_SCHEDULER_ADDRESS", None)
    return subprocess.Popen(
        [sys.executable, "-m", "daskfair.cli", *args, "--jobqueue", "slurm",
         "--jobqueue-config", str(_config(tmp_path, "slurm")), "--jobqueue-wait", "120", "--store",
         str(tmp_path / "slurm.zarr"), "--no-progress", *extra],
        cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _finish(proc, tmp_path, timeout=300):
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
    logs = "".join(p.read_text(errors="replace")[-1500:]
                   for p in sorted((tmp_path / "logs").glob("*.err")))
    assert proc.returncode == 0, f"{out[-2000:]}\n{err[-3000:]}\nworker logs:\n{logs}"
    return out


def _on_local_cluster(args, scheduler, data_dir, store, capsys):
    code = main([*args, "--scheduler", scheduler, "--data-dir", str(data_dir), "--store",
                 str(store), "--no-progress"])
    assert code == 0, capsys.readouterr().err
    capsys.readouterr()


def _same(a, b, path="attrs"):
    if isinstance(a, dict):
        assert isinstance(b, dict) and set(a) == set(b), path
        for key in a:
            # the manifest's digest of the attributes covers the timings
            clock = any(word in key for word in _CLOCK) or (
                path.endswith("manifest") and key == "attributes")
            if not clock:
                _same(a[key], b[key], f"{path}.{key}")
    elif isinstance(a, list):
        assert isinstance(b, list) and len(a) == len(b), path
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            _same(x, y, f"{path}[{i}]")
    elif isinstance(a, float):
        assert math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12) or (
            math.isnan(a) and math.isnan(b)), f"{path}: {a} != {b}"
    else:
        assert a == b, f"{path}: {a!r} != {b!r}"


def _assert_same_run(slurm_store, local_store):
    ours, ref = open_run(slurm_store), open_run(local_store)
    assert ours.is_complete and ref.is_complete
    assert ours.array_names() == ref.array_names() and ref.array_names()
    for name in ref.array_names():
        a, b = ours.read_array(name), ref.read_array(name)
        if a.dtype.kind == "f":
            np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12, err_msg=name)
        else:
            np.testing.assert_array_equal(a, b, err_msg=name)
    _same(ours.attrs, ref.attrs)


def _slurm(slurm, *args):
    return subprocess.run(list(args), env={**os.environ, **slurm}, capture_output=True,
                          text=True, timeout=30, check=True).stdout


def _jobs(slurm, states="all"):
    """{job id: state} of this module's SLURM."""
    out = _slurm(slurm, "squeue", "--noheader", f"--states={states}", "--format=%i %T")
    return dict(line.split() for line in out.splitlines() if line.strip())


@pytest.mark.parametrize("job", sorted(JOBS))
def test_a_job_on_real_slurm_jobs_equals_the_local_cluster(job, slurm, scheduler, data_dir,
                                                           tmp_path, capsys):
    proc = _on_slurm(slurm, JOBS[job], tmp_path, data_dir, "--jobs", "2")
    _on_local_cluster(JOBS[job], scheduler, data_dir, tmp_path / "local.zarr", capsys)
    out = _finish(proc, tmp_path)
    assert "Dask cluster:" in out and "(tls://" in out
    # the link names the loopback, where the dashboard is served, and how to tunnel to it
    assert "Dask dashboard: http://127.0.0.1:" in out and "ssh -N -L" in out
    _assert_same_run(tmp_path / "slurm.zarr", tmp_path / "local.zarr")
    # the jobs ran on SLURM and were cancelled when the run closed its cluster
    logs = sorted((tmp_path / "logs").glob("*.err"))
    assert len(logs) >= 2
    deadline = time.monotonic() + 30
    ids = {p.stem.rsplit("-", 1)[1] for p in logs}
    while ids & set(_jobs(slurm, "pending,running")):
        assert time.monotonic() < deadline, _jobs(slurm)
        time.sleep(0.5)


def test_a_run_outlives_a_cancelled_job_and_its_workers_walltime(slurm, scheduler, data_dir,
                                                                 tmp_path, capsys,
                                                                 monkeypatch):
    """Workers retire 10-20 s into jobs of a 30 s walltime, and one job is cancelled (scancel:
    SIGTERM, as at a walltime) once its worker works: new jobs take over and the run
    completes with the LocalCluster's result."""
    # a worker that starts slowly on a busy machine does a few seconds' work before it
    # retires, and a base clustering retired with it counts as lost work: more recoveries
    # than the default 5 (CI failed once after 6, with the kernel tests running beside it)
    monkeypatch.setenv("DASK_DASKFAIR__MAX_RECOVERIES", "30")
    proc = _on_slurm(slurm, LONG_JOB, tmp_path, data_dir, "--jobs", "2", "--walltime",
                     "00:00:30")
    logs = tmp_path / "logs"
    deadline = time.monotonic() + 180
    # both workers registered with the scheduler (not only their jobs running)
    while len(joined := [p for p in logs.glob("*.err")
                         if "Registered to" in p.read_text(errors="replace")]) < 2:
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            pytest.fail(f"the workers did not join: {proc.communicate()[1][-2000:]}")
        time.sleep(0.5)
    _slurm(slurm, "scancel", joined[0].stem.rsplit("-", 1)[1])
    _on_local_cluster(LONG_JOB, scheduler, data_dir, tmp_path / "local.zarr", capsys)
    out = _finish(proc, tmp_path, timeout=600)
    assert "(tls://" in out
    _assert_same_run(tmp_path / "slurm.zarr", tmp_path / "local.zarr")
    text = {p.stem: p.read_text(errors="replace") for p in logs.glob("*.err")}
    # the cancelled job was replaced, and workers retired at their lifetime
    assert len(text) >= 3, sorted(text)
    assert any("worker-lifetime-reached" in t for t in text.values()), \
        "no worker retired at its lifetime"


def test_a_job_that_fails_at_once_is_reported_with_its_script_and_log(slurm, data_dir,
                                                                      tmp_path):
    """A worker environment that cannot start: the run fails within seconds (not after the
    whole --jobqueue-wait), showing the job script, the queue and the job's log."""
    start = time.monotonic()
    proc = _on_slurm(slurm, JOBS["fkr"], tmp_path, data_dir, "--jobs", "1",
                     "--job-script-prologue", "echo 'no such environment' >&2; exit 3")
    out, err = proc.communicate(timeout=180)
    assert proc.returncode == 2, out + err
    assert time.monotonic() - start < 90
    assert "ended before any worker joined" in err and "FAILED" in err
    assert "job script:" in err and "exit 3" in err
    assert "queue (squeue)" in err and "no such environment" in err
    assert not open_run_exists(tmp_path / "slurm.zarr")


def open_run_exists(path: Path) -> bool:
    try:
        return open_run(path).is_complete
    except (FileNotFoundError, ValueError):
        return False


def test_predict_on_real_slurm_jobs_equals_the_local_cluster(slurm, scheduler, tmp_path,
                                                             capsys):
    """``daskfair predict`` on SLURM workers (started in their own folder) with relative
    paths writes what the LocalCluster writes, where the client meant."""
    import pandas as pd

    from .test_tables import _table

    df = _table(1200).assign(id=np.arange(1200))
    df.to_csv(tmp_path / "train.csv", index=False)
    for i in range(3):
        df.iloc[i * 400:(i + 1) * 400].drop(columns="risk").to_parquet(
            tmp_path / f"new-{i}.parquet", index=False)
    assert main(["fkr", "--input", str(tmp_path / "train.csv"), "--label", "risk",
                 "--sensitive", "sex", "--features", "age", "income", "purpose", "housing",
                 "--n-landmarks", "40", "--cv", "2", "--scheduler", scheduler, "--store",
                 str(tmp_path / "m.zarr"), "--no-progress"]) == 0
    assert main(["predict", str(tmp_path / "m.zarr"), "--input",
                 str(tmp_path / "new-*.parquet"), "--output", str(tmp_path / "local"),
                 "--keep", "id", "--scheduler", scheduler, "--no-progress"]) == 0
    capsys.readouterr()
    env = {**os.environ, **slurm, "DASK_CONFIG": str(tmp_path / "dask-config")}
    env.pop("DASK_SCHEDULER_ADDRESS", None)
    proc = subprocess.Popen(
        [sys.executable, "-m", "daskfair.cli", "predict", "m.zarr", "--input",
         "new-*.parquet", "--output", "on-slurm", "--keep", "id", "--jobqueue", "slurm",
         "--jobqueue-config", str(_config(tmp_path, "slurm")), "--jobqueue-wait", "120",
         "--jobs", "2", "--no-progress"],
        cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out = _finish(proc, tmp_path)
    assert "1,200 rows predicted in 3 partitions" in out and "(tls://" in out
    ours, ref = pd.read_parquet(tmp_path / "on-slurm"), pd.read_parquet(tmp_path / "local")
    pd.testing.assert_frame_equal(ours, ref)


def test_audit_on_real_slurm_jobs_equals_the_local_cluster(slurm, scheduler, tmp_path):
    """``daskfair audit`` on SLURM workers with relative paths stores the audit the
    LocalCluster stores (the same bits), and writes its report where the client meant."""
    import pandas as pd

    from daskfair.cli.audit_job import read_audit

    from .test_cli_audit import _decisions

    df = _decisions(3000, seed=2)
    for i in range(3):
        df.iloc[i * 1000:(i + 1) * 1000].to_parquet(tmp_path / f"d-{i}.parquet", index=False)
    flags = ["--input", "d-*.parquet", "--label", "hired", "--prediction", "offer", "--score",
             "score", "--sensitive", "sex", "race", "--n-boot", "300", "--no-progress"]
    local = subprocess.run(
        [sys.executable, "-m", "daskfair.cli", "audit", *flags, "--store", "local.zarr",
         "--scheduler", scheduler], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert local.returncode == 0, local.stderr
    env = {**os.environ, **slurm, "DASK_CONFIG": str(tmp_path / "dask-config")}
    env.pop("DASK_SCHEDULER_ADDRESS", None)
    proc = subprocess.Popen(
        [sys.executable, "-m", "daskfair.cli", "audit", *flags, "--store", "on-slurm.zarr",
         "--report", "audit.html", "--jobqueue", "slurm", "--jobqueue-config",
         str(_config(tmp_path, "slurm")), "--jobqueue-wait", "120", "--jobs", "2"],
        cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out = _finish(proc, tmp_path)
    assert "Per group (95% intervals, bootstrap, 300 replicates)" in out and "(tls://" in out
    ours, ref = read_audit(tmp_path / "on-slurm.zarr"), read_audit(tmp_path / "local.zarr")
    pd.testing.assert_frame_equal(ours.by_group, ref.by_group, check_exact=True)
    for end in (0, 1):
        pd.testing.assert_frame_equal(ours.by_group_ci[end], ref.by_group_ci[end],
                                      check_exact=True)
    assert (tmp_path / "audit.html").is_file()
