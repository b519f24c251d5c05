"""``--jobqueue slurm|pbs`` end to end, with a fake batch system on PATH.

The fake ``sbatch``/``qsub`` copies the job script dask-jobqueue generated (it deletes its
file right after submitting) and starts it as a local process group with ``setsid``; the fake
``scancel``/``qdel`` kills that group. So the real job script runs: its workers start and
connect to the scheduler in the client, the job finishes, and closing the cluster cancels the
jobs. ``DASK_CONFIG`` points at a temporary folder, since importing dask_jobqueue writes its
configuration there.
"""

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from daskfair.runtime.clients import get_client
from daskfair.runtime.jobqueue import jobqueue_cluster, load_jobqueue_config
from daskfair.store import open_run

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def _own_dask_config():
    """Loading a jobqueue file merges it into dask's global configuration: each test gets
    the configuration back as it was."""
    import copy

    import dask

    saved = copy.deepcopy(dask.config.config)
    yield
    dask.config.config.clear()
    dask.config.config.update(saved)

SUBMIT = """#!/usr/bin/env bash
set -e
script="${@: -1}"
id=$$  # unique among jobs submitted at the same time
cp "$script" "$FAKE_QUEUE/$id.sh"
setsid bash "$FAKE_QUEUE/$id.sh" > "$FAKE_QUEUE/$id.out" 2>&1 < /dev/null &
echo $! > "$FAKE_QUEUE/$id.pgid"
echo "%s"
"""

CANCEL = """#!/usr/bin/env bash
for id in "$@"; do
  id=${id%%.*}
  echo "$id" >> "$FAKE_QUEUE/cancelled"
  kill -TERM -- "-$(cat "$FAKE_QUEUE/$id.pgid")" 2>/dev/null || true
done
"""

SYSTEMS = {
    "slurm": ("sbatch", "scancel", "Submitted batch job $id", "#SBATCH"),
    "pbs": ("qsub", "qdel", "$id.fakepbs", "#PBS"),
}


def _config(tmp_path: Path, system: str) -> Path:
    """The shipped cluster/jobqueue.yaml, made small for this machine."""
    cfg = yaml.safe_load((ROOT / "cluster" / "jobqueue.yaml").read_text())
    cfg["jobqueue"][system].update(
        cores=1, processes=1, memory="2GiB", walltime="00:10:00",
        **{"log-directory": str(tmp_path / "logs"), "local-directory": str(tmp_path),
           "death-timeout": 30, "python": sys.executable})
    path = tmp_path / "jobqueue.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path


def _fake_batch_system(tmp_path: Path, system: str) -> tuple[dict[str, str], Path]:
    """The fake submit/cancel commands of ``system`` in a folder of their own: the
    environment that puts them on PATH (and dask's config in tmp_path), and the queue."""
    submit, cancel, reply, _ = SYSTEMS[system]
    bin_dir, queue = tmp_path / "bin", tmp_path / "queue"
    bin_dir.mkdir()
    queue.mkdir()
    (bin_dir / submit).write_text(SUBMIT % reply)
    (bin_dir / cancel).write_text(CANCEL)
    for f in bin_dir.iterdir():
        f.chmod(0o755)
    env = {"PATH": f"{bin_dir}:{os.environ['PATH']}", "FAKE_QUEUE": str(queue),
           "DASK_CONFIG": str(tmp_path / "dask-config")}
    return env, queue


@pytest.mark.cluster
@pytest.mark.parametrize("system", sorted(SYSTEMS))
def test_a_job_runs_end_to_end_on_a_fake_batch_system(system, tmp_path, data_dir):
    directive = SYSTEMS[system][3]
    fake, queue = _fake_batch_system(tmp_path, system)
    env = {**os.environ, **fake, "DASKFAIR_DATA": str(data_dir)}
    env.pop("DASK_SCHEDULER_ADDRESS", None)
    store = tmp_path / "yale.zarr"
    proc = subprocess.run(
        [sys.executable, "-m", "daskfair.cli", "fce", "--pool", "yale", "--n-runs", "4",
         "--n-clusters", "15", "--jobqueue", system, "--jobs", "2", "--jobqueue-config",
         str(_config(tmp_path, system)), "--jobqueue-wait", "120", "--store", str(store),
         "--no-progress"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    logs = "".join(p.read_text() for p in queue.glob("*.out"))
    assert proc.returncode == 0, proc.stderr[-3000:] + logs[-3000:]
    assert "Dask cluster:" in proc.stdout and "FCE consensus, c = 15" in proc.stdout
    assert open_run(store).is_complete
    # two jobs were submitted with the configured directives and the worker command
    scripts = sorted(queue.glob("*.sh"))
    assert len(scripts) == 2
    text = scripts[0].read_text()
    assert directive in text and "distributed.cli.dask_worker" in text
    assert sys.executable in text and "--nthreads 1" in text
    # TLS by default: the workers reach a tls:// scheduler with this cluster's own
    # credentials, whose folder is gone once the cluster closed
    assert "(tls://" in proc.stdout and "--tls-ca-file" in text and " tls://" in text
    assert not list(tmp_path.glob(".daskfair-tls-*"))
    assert "Worker" in logs or "worker" in logs
    # closing the cluster cancelled both jobs, and no process of theirs is left
    cancelled = (queue / "cancelled").read_text().split()
    assert sorted(cancelled) == sorted(p.stem for p in scripts)
    deadline = time.monotonic() + 30
    for pgid_file in queue.glob("*.pgid"):
        pgid = int(pgid_file.read_text())
        while True:
            try:
                os.killpg(pgid, 0)
            except ProcessLookupError:
                break
            assert time.monotonic() < deadline, f"job {pgid_file.stem} still running"
            time.sleep(0.2)
    assert (tmp_path / "dask-config" / "jobqueue.yaml").exists()  # not ~/.config/dask


def test_jobqueue_input_errors(tmp_path, monkeypatch):
    monkeypatch.setenv("DASK_CONFIG", str(tmp_path))
    with pytest.raises(ValueError, match="must be one of"):
        jobqueue_cluster("lsf", 1)
    with pytest.raises(ValueError, match="jobs=0 must be >= 1"):
        jobqueue_cluster("slurm", 0)
    with pytest.raises(ValueError, match="either jobs= or adapt="):
        jobqueue_cluster("slurm", 2, adapt=(1, 3))
    with pytest.raises(ValueError, match=r"adapt= needs \(MIN, MAX\) with 1 <= MIN <= MAX"):
        jobqueue_cluster("slurm", None, adapt=(0, 2))
    with pytest.raises(FileNotFoundError, match="does not exist"):
        load_jobqueue_config(tmp_path / "none.yaml")
    (tmp_path / "bad.yaml").write_text("slurm:\n  cores: 1\n")
    with pytest.raises(ValueError, match="no top-level 'jobqueue' key"):
        load_jobqueue_config(tmp_path / "bad.yaml")
    with pytest.raises(ValueError, match="either address= or jobqueue="):
        get_client("tcp://127.0.0.1:1", jobqueue="slurm")


def test_loaded_config_merges_into_dask_jobqueue_defaults(tmp_path, monkeypatch):
    import dask

    monkeypatch.setattr(dask.config, "PATH", str(tmp_path))
    pytest.importorskip("dask_jobqueue")
    (tmp_path / "mine.yaml").write_text("jobqueue:\n  slurm:\n    cores: 3\n    memory: 5GB\n")
    with dask.config.set({}):  # restores the configuration afterwards
        load_jobqueue_config(tmp_path / "mine.yaml")
        assert dask.config.get("jobqueue.slurm.cores") == 3
        # keys the file leaves out keep dask-jobqueue's defaults (a merge, not a replace)
        assert dask.config.get("jobqueue.slurm.interface") is None
        assert "processes" in dask.config.get("jobqueue.slurm")
        from dask_jobqueue import SLURMCluster

        with SLURMCluster(processes=1) as cluster:
            script = cluster.job_script()
        assert "#SBATCH --cpus-per-task=3" in script and "--nthreads 3" in script


def _network_address() -> str | None:
    """This machine's outbound address, None when it has only loopback."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("10.255.255.255", 1))  # no packet is sent
        except OSError:
            return None
        address = probe.getsockname()[0]
    return None if address.startswith("127.") else address


@pytest.mark.cluster
def test_the_jobqueue_scheduler_admits_only_its_own_credentials(tmp_path, monkeypatch):
    """A daskfair jobqueue scheduler speaks TLS with credentials made for it: a plain tcp://
    client and a client holding another CA's certificate are both refused; the workers'
    credential files are private to the user and gone after close."""
    import stat

    import dask.array as da
    import distributed
    from distributed.security import Security

    for name, value in _fake_batch_system(tmp_path, "slurm")[0].items():
        monkeypatch.setenv(name, value)
    monkeypatch.chdir(tmp_path)
    cluster = jobqueue_cluster("slurm", 1, config=_config(tmp_path, "slurm"))
    (folder,) = tmp_path.glob(".daskfair-tls-*")  # beside the jobs' working directory
    try:
        address = cluster.scheduler_address
        assert address.startswith("tls://")
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700
        files = list(folder.iterdir())
        assert files and all(stat.S_IMODE(f.stat().st_mode) & 0o077 == 0 for f in files)
        with pytest.raises((OSError, TypeError, ValueError)):
            distributed.Client(address.replace("tls://", "tcp://"), timeout="3s")
        with pytest.raises((OSError, TypeError)):
            distributed.Client(address, security=Security.temporary(), timeout="3s")
        with distributed.Client(cluster, timeout="60s") as client:  # its own credentials
            client.wait_for_workers(1, timeout=120)
            assert float(da.ones(1000, chunks=100).sum().compute()) == 1000.0
        # the dashboard listens on loopback only
        port = cluster.scheduler_info["services"]["dashboard"]
        with socket.create_connection(("127.0.0.1", port), timeout=5):
            pass
        outside = _network_address()
        if outside is not None:
            with pytest.raises(OSError), socket.create_connection((outside, port), timeout=5):
                pass
    finally:
        cluster.close()
    assert not folder.exists()


@pytest.mark.parametrize("text, seconds", [
    ("01:30:00", 5400), ("90", 5400), (90, 5400), ("1:30", 90), ("2-01:00", 176400),
    ("1-00:00:30", 86430), ("2-3", 183600), ("00:00:40", 40)])
def test_walltime_forms_of_slurm_and_pbs(text, seconds):
    from daskfair.runtime.jobqueue import format_walltime, parse_walltime

    assert parse_walltime(text) == seconds
    assert parse_walltime(format_walltime(seconds)) == seconds
    assert parse_walltime(format_walltime(seconds), "pbs") == seconds


def test_a_bare_number_is_minutes_for_slurm_and_seconds_for_pbs():
    from daskfair.runtime.jobqueue import parse_walltime

    assert parse_walltime("3600", "pbs") == parse_walltime(3600, "pbs") == 3600
    assert parse_walltime("60", "slurm") == parse_walltime(60) == 3600


def test_a_bad_walltime_says_which_forms_work():
    from daskfair.runtime.jobqueue import parse_walltime, worker_lifetime

    for bad in ("1h", "01:02:03:04", "", "0", "-5"):
        with pytest.raises(ValueError, match="walltime"):
            parse_walltime(bad)
    with pytest.raises(ValueError, match="too short"):
        worker_lifetime(20)


@pytest.mark.parametrize("walltime", [30, 45, 600, 3600, 86400])
def test_workers_retire_before_the_walltime_with_room_to_start_and_leave(walltime):
    from daskfair.runtime.jobqueue import worker_lifetime

    lifetime, stagger = worker_lifetime(walltime)
    # the latest retirement leaves at least 10 s (a worker's start) and at most 5 min unused
    assert 10 <= walltime - (lifetime + stagger) and walltime - lifetime <= 300
    assert 0 < stagger < lifetime


def test_walltime_prologue_and_skipped_directives_reach_the_job_script(tmp_path, monkeypatch):
    """--walltime sets the job's limit and the workers' lifetime below it; prologue lines
    and skipped directives add to the configuration's; a lifetime of the user's is kept."""
    import dask

    monkeypatch.setenv("DASK_CONFIG", str(tmp_path))
    pytest.importorskip("dask_jobqueue")
    from dask_jobqueue import SLURMCluster

    from daskfair.runtime.jobqueue import _job_options

    config = _config(tmp_path, "slurm")
    with dask.config.set({}):
        load_jobqueue_config(config)
        dask.config.set({"jobqueue.slurm.job-script-prologue": ["module load python"]})
        options = _job_options("slurm", "00:20:00", ["source venv/bin/activate"], ["--mem"],
                               {})
        with SLURMCluster(**options) as cluster:
            script = cluster.job_script()
        # the configuration's own walltime (10 min) when none is given
        default = _job_options("slurm", None, None, None, {})
        dask.config.set({"jobqueue.slurm.worker-extra-args": ["--lifetime", "7m"]})
        mine = _job_options("slurm", "01:00:00", None, None, {})
    assert "#SBATCH -t 00:20:00" in script
    assert "--lifetime 1000s --lifetime-stagger 66s" in script  # 20 min - 200 s
    assert script.index("module load python") < script.index("source venv/bin/activate") \
        < script.index("distributed.cli.dask_worker")
    assert "#SBATCH --mem" not in script and "#SBATCH --cpus-per-task=1" in script
    assert default["worker_extra_args"] == ["--lifetime", "500s", "--lifetime-stagger", "33s"]
    assert mine == {"walltime": "01:00:00"}  # the user's own --lifetime is left as it is
    with dask.config.set({"jobqueue.slurm.worker-extra-args": ["--lifetime", "55m"]}), \
            pytest.raises(ValueError, match="killed before they retire"):
        _job_options("slurm", "00:30:00", None, None, {})
    # --lifetime-stagger alone is not a lifetime
    with dask.config.set({"jobqueue.slurm.worker-extra-args": ["--lifetime-stagger", "1m"]}):
        args = _job_options("slurm", "00:20:00", None, None, {})["worker_extra_args"]
    assert args == ["--lifetime-stagger", "1m", "--lifetime", "1000s", "--lifetime-stagger",
                    "66s"]


def test_jobqueue_flag_errors(tmp_path, monkeypatch, capsys):
    from daskfair.cli import main

    monkeypatch.setenv("DASK_CONFIG", str(tmp_path))
    cases = [
        (["--walltime", "1:00:00"], "--walltime only apply with --jobqueue"),
        (["--jobs", "3"], "--jobs only apply with --jobqueue"),
        (["--tls-cert", "c.pem"], "are for joining a TLS scheduler (--scheduler or"),
        (["--jobqueue", "slurm", "--jobs", "2", "--adapt", "1", "3"],
         "either --jobs or --adapt"),
        (["--jobqueue", "slurm", "--adapt", "3", "1"], "1 <= MIN <= MAX"),
        (["--jobqueue", "slurm", "--adapt", "0", "2"], "1 <= MIN <= MAX"),
        (["--jobqueue", "slurm", "--walltime", "1h"], "not a time limit"),
        (["--jobqueue", "slurm", "--walltime", "0:10"], "too short"),
    ]
    for extra, says in cases:
        code = main(["fce", "--pool", "yale", "--store", str(tmp_path / "x.zarr"), *extra])
        err = capsys.readouterr().err
        assert code == 2 and says in err, (extra, err)
        # also where the job would run in this process (SAfairKM without a cluster)
        code = main(["safairkm", "--dataset", "safairkm_adult", "--store",
                     str(tmp_path / "y.zarr"), *extra])
        err = capsys.readouterr().err
        assert code == 2 and says in err, (extra, err)
    assert not (tmp_path / "x.zarr").exists() and not (tmp_path / "y.zarr").exists()


def test_a_job_that_ends_before_its_worker_joined_fails_at_once(tmp_path, monkeypatch):
    """SLURM's states tell: the wait stops at the first ended job and shows the script, the
    queue and the job's log (here a fake squeue reports the job FAILED)."""
    import distributed

    from daskfair.runtime.batch_jobs import wait_for_jobs

    fake, _ = _fake_batch_system(tmp_path, "slurm")
    squeue = Path(fake["PATH"].split(":")[0]) / "squeue"
    squeue.write_text("#!/usr/bin/env bash\nfor f in \"$FAKE_QUEUE\"/*.sh; do "
                      "id=$(basename \"$f\" .sh); echo \"$id FAILED NonZeroExitCode\"; done\n")
    squeue.chmod(0o755)
    for name, value in fake.items():
        monkeypatch.setenv(name, value)
    monkeypatch.chdir(tmp_path)
    cluster = jobqueue_cluster("slurm", 1, config=_config(tmp_path, "slurm"),
                               job_script_prologue=["echo 'module not found' >&2; exit 3"])
    try:
        with distributed.Client(cluster) as client:
            start = time.monotonic()
            with pytest.raises(ConnectionError) as info:
                wait_for_jobs(client, cluster, "slurm", timeout=120)
            assert time.monotonic() - start < 30
    finally:
        cluster.close()
    text = str(info.value)
    assert "ended before any worker joined" in text and "FAILED" in text
    assert "job script:" in text and "exit 3" in text and "queue (squeue)" in text
    assert "worker logs:" in text


def test_a_refused_submission_fails_at_once_with_the_batch_systems_message(tmp_path,
                                                                         monkeypatch):
    fake, _ = _fake_batch_system(tmp_path, "slurm")
    sbatch = Path(fake["PATH"].split(":")[0]) / "sbatch"
    sbatch.write_text("#!/usr/bin/env bash\necho 'sbatch: error: invalid partition "
                      "specified: gpu' >&2\nexit 1\n")
    for name, value in fake.items():
        monkeypatch.setenv(name, value)
    monkeypatch.chdir(tmp_path)
    start = time.monotonic()
    with pytest.raises(ConnectionError) as info:
        get_client(jobqueue="slurm", jobs=1, jobqueue_config=_config(tmp_path, "slurm"),
                   jobqueue_wait=300)
    assert time.monotonic() - start < 60
    text = str(info.value)
    assert "submitting a slurm job failed" in text and "invalid partition" in text
    assert "#SBATCH" in text and "distributed.cli.dask_worker" in text
    assert not list(tmp_path.glob(".daskfair-tls-*"))  # the credentials went with it


@pytest.mark.cluster
def test_a_job_of_two_worker_processes_that_ended_is_replaced(tmp_path, monkeypatch):
    """The shipped layout runs several worker processes per job (name-0, name-1, ...), which
    distributed never matches to the job: daskfair's watch drops the job once its workers are
    gone, and the cluster submits a new one."""
    import signal

    import distributed

    fake, queue = _fake_batch_system(tmp_path, "slurm")
    for name, value in fake.items():
        monkeypatch.setenv(name, value)
    monkeypatch.chdir(tmp_path)
    config = _config(tmp_path, "slurm")
    cfg = yaml.safe_load(config.read_text())
    cfg["jobqueue"]["slurm"].update(cores=2, processes=2)
    config.write_text(yaml.safe_dump(cfg))
    import dask

    cluster = jobqueue_cluster("slurm", 1, config=config)
    try:
        with dask.config.set({"distributed.deploy.lost-worker-timeout": "2s"}), \
                distributed.Client(cluster) as client:
            client.wait_for_workers(2, timeout=120)
            time.sleep(3)  # the watch (every 2 s) saw the job's workers
            first = next(queue.glob("*.pgid"))
            os.killpg(int(first.read_text()), signal.SIGKILL)  # the job ends, as at its walltime
            deadline = time.monotonic() + 90
            while len(list(queue.glob("*.sh"))) < 2:
                assert time.monotonic() < deadline, "the ended job was not replaced"
                time.sleep(0.5)
            client.wait_for_workers(2, timeout=120)
    finally:
        cluster.close()
