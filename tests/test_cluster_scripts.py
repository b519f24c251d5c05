"""The HPC deployment files in cluster/, without any real batch system.

* ``cluster/jobqueue.yaml`` loads, and dask-jobqueue 0.9 turns it into SLURM and PBS job scripts.
* The batch scripts run end to end on this machine: fake ``srun`` / ``pbsdsh`` on PATH start
  their commands as local processes, a tiny ``daskfair demo`` runs through the scheduler file,
  and afterwards no scheduler, worker or client process is left (every process the script
  starts inherits a unique environment marker, looked for in /proc/*/environ).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
import uuid
import warnings
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CLUSTER = ROOT / "cluster"
VENV_BIN = Path(sys.executable).parent
SCRIPTS = sorted([*CLUSTER.rglob("*.sbatch"), *CLUSTER.rglob("*.pbs")])
# The smallest real job: the FCE audit of the Yale pool (100 labelings of 165 rows).
DEMO = ["demo", "--pools", "yale", "--fce-pools", "--no-fkr", "--no-safairkm", "--no-progress"]
MARKER = "DASKFAIR_CLUSTER_TEST_MARKER"
TIMEOUT = 240  # seconds per batch script; each takes ~15-30 s on 2 busy cores

pytestmark = pytest.mark.cluster

# srun: start the command once per task (--ntasks/-n, else SLURM_NTASKS) as local background
# processes with SLURM_PROCID etc. set; pass TERM on to them; exit with the highest exit code.
FAKE_SRUN = r"""#!/usr/bin/env bash
n=${SLURM_NTASKS:-1}
while [[ $# -gt 0 ]]; do
    case $1 in
        -n | --ntasks) n=$2; shift 2 ;;
        --ntasks=*) n=${1#*=}; shift ;;
        -N | --nodes | -c | --cpus-per-task | -o | --output | -e | --error) shift 2 ;;
        -*) shift ;;
        *) break ;;
    esac
done
echo "srun ntasks=$n $*" >>"$FAKE_LOG"
pids=()
for ((i = 0; i < n; i++)); do
    SLURM_PROCID=$i SLURM_LOCALID=$i SLURM_NODEID=0 SLURM_NTASKS=$n SLURM_STEP_ID=0 "$@" &
    pids+=($!)
done
trap 'kill -TERM "${pids[@]}" 2>/dev/null' TERM INT
rc=0
for pid in "${pids[@]}"; do
    while :; do
        wait "$pid"
        s=$?
        if ((s > 128)) && kill -0 "$pid" 2>/dev/null; then continue; fi
        break
    done
    if ((s > rc)); then rc=$s; fi
done
exit "$rc"
"""

# pbsdsh [-c N] [-n INDEX] [-o] [-s] [-u] [-v] [--] PROGRAM ARGS: run PROGRAM here (every slot of
# the fake node file is localhost), in place of this process.
FAKE_PBSDSH = r"""#!/usr/bin/env bash
index=0
while getopts "c:n:osuv" opt; do
    if [[ $opt == n ]]; then index=$OPTARG; fi
done
shift $((OPTIND - 1))
echo "pbsdsh -n $index $*" >>"$FAKE_LOG"
export PBS_VNODENUM=$index PBS_TASKNUM=$index
exec "$@"
"""


# -- static checks ------------------------------------------------------------------------------
def test_scripts_found():
    names = {p.relative_to(CLUSTER).as_posix() for p in SCRIPTS}
    assert {"slurm/daskfair.sbatch", "slurm/daskfair-runner.sbatch", "pbs/daskfair.pbs"} <= names
    assert (CLUSTER / "run_with_runner.py").is_file()
    assert (CLUSTER / "README.md").is_file()


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_script_syntax_and_shape(script):
    subprocess.run(["bash", "-n", str(script)], check=True)
    text = script.read_text()
    assert text.startswith("#!/usr/bin/env bash\n")
    assert "set -euo pipefail" in text
    assert "trap cleanup EXIT" in text
    assert "EDIT_ME" in text  # placeholder account / partition or queue
    assert "# source /path/to/venv/bin/activate" in text
    prefix = "#SBATCH" if script.suffix == ".sbatch" else "#PBS"
    assert f"\n{prefix} " in text


@pytest.mark.skipif(shutil.which("shellcheck") is None, reason="shellcheck not installed")
def test_shellcheck():
    subprocess.run(["shellcheck", *map(str, SCRIPTS)], check=True)


@pytest.mark.filterwarnings("ignore:Port .* is already in use")
def test_jobqueue_yaml(tmp_path, monkeypatch):
    import dask
    import dask.config

    # Importing dask_jobqueue writes jobqueue.yaml into dask's config directory: keep it here.
    # dask.config.PATH was fixed when dask was imported, so patch it as well as DASK_CONFIG.
    monkeypatch.setenv("DASK_CONFIG", str(tmp_path / "dask-config"))
    monkeypatch.setattr(dask.config, "PATH", str(tmp_path / "dask-config"))
    monkeypatch.chdir(tmp_path)  # log-directory (relative) is created by the cluster object
    import dask_jobqueue

    cfg = dask.config.collect(paths=[str(CLUSTER / "jobqueue.yaml")], env={})
    assert set(cfg["jobqueue"]) == {"slurm", "pbs"}
    expected = {
        dask_jobqueue.SLURMCluster: [
            "#SBATCH -J daskfair-worker",
            "#SBATCH -e dask-logs/daskfair-worker-%J.err",
            "#SBATCH -o dask-logs/daskfair-worker-%J.out",
            "#SBATCH -n 1",
            "#SBATCH --cpus-per-task=8",
            "#SBATCH --mem=32G",
            "#SBATCH -t 01:00:00",
            "#SBATCH --hint=nomultithread",
        ],
        dask_jobqueue.PBSCluster: [
            "#PBS -N daskfair-worker",
            "#PBS -l select=1:ncpus=8:mem=32GB",
            "#PBS -l walltime=01:00:00",
            "#PBS -e dask-logs/",
            "#PBS -V",
            'cd "${PBS_O_WORKDIR:-$PWD}"',
        ],
    }
    worker = [
        f"{sys.executable} -m distributed.cli.dask_worker",
        "--nthreads 1 ",  # processes == cores: single-threaded workers
        "--nworkers 8 ",
        "--memory-limit 4.00GiB",
        "--nanny",
        "--death-timeout 60",
        "--local-directory ${TMPDIR:-/tmp}",
    ]
    with dask.config.set(cfg), warnings.catch_warnings():
        warnings.simplefilter("error", FutureWarning)  # no deprecated key in use
        for cls, lines in expected.items():
            with cls() as cluster:
                script = cluster.job_script()
            assert script.startswith("#!/usr/bin/env bash\n")
            for line in lines + worker:
                assert line in script, (line, script)
            job = tmp_path / f"{cls.__name__}.sh"
            job.write_text(script)
            subprocess.run(["bash", "-n", str(job)], check=True)
    assert (tmp_path / "dask-logs").is_dir()


# -- end to end ---------------------------------------------------------------------------------
def _marked_pids(marker: str) -> dict[int, str]:
    """Processes of this user whose environment holds ``MARKER=marker``: pid -> command line."""
    needle = f"{MARKER}={marker}".encode()
    found = {}
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            if needle in (proc / "environ").read_bytes().split(b"\0"):
                cmd = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
                found[int(proc.name)] = cmd
        except OSError:  # gone, or not ours
            continue
    return found


def _assert_nothing_left(marker: str) -> None:
    left: dict[int, str] = {}
    for _ in range(60):  # the last processes may still be exiting
        left = _marked_pids(marker)
        if not left:
            return
        time.sleep(0.25)
    for pid in left:  # do not leak them into the rest of the session
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    pytest.fail(f"processes left behind by the batch script: {left}")


@pytest.fixture
def batch(tmp_path, data_dir):
    """Everything to run a batch script here: fake tools, environment, a runner."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name, text in {"srun": FAKE_SRUN, "pbsdsh": FAKE_PBSDSH}.items():
        tool = bin_dir / name
        tool.write_text(text)
        tool.chmod(0o755)
    work = tmp_path / "work"
    work.mkdir()
    marker = uuid.uuid4().hex
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("SLURM_", "PBS_", "DASK_", "DASKFAIR_", "VIRTUAL_ENV"))
    }
    env.update(
        PATH=os.pathsep.join([str(bin_dir), str(VENV_BIN), "/usr/bin", "/bin"]),
        DASKFAIR_DATA=str(data_dir),
        DASK_CONFIG=str(tmp_path / "dask-config"),  # dask_jobqueue writes its yaml there
        DASKFAIR_DASHBOARD_ADDRESS=":0",  # any free port: 8787 may be taken on a shared host
        DASKFAIR_STARTUP_TIMEOUT="120",
        FAKE_LOG=str(tmp_path / "fake-tools.log"),
        **{MARKER: marker},
    )

    def run(script: Path, args: list[str], extra_env: dict[str, str], cwd: Path = work,
            interrupt_when: str | None = None):
        # interrupt_when: send SIGTERM to the batch shell (as scancel / the walltime do) once
        # this text is in its output.
        # sbatch and qsub run a copy of the script from a spool directory, never the file.
        spool = tmp_path / "spool"
        spool.mkdir(exist_ok=True)
        copy = spool / script.name
        shutil.copy(script, copy)
        out, err = tmp_path / "job.out", tmp_path / "job.err"
        t0 = time.perf_counter()
        with out.open("w") as fo, err.open("w") as fe:
            proc = subprocess.Popen(
                ["bash", str(copy), *args], cwd=cwd, env={**env, **extra_env},
                stdout=fo, stderr=fe, stdin=subprocess.DEVNULL, start_new_session=True,
            )
            try:
                if interrupt_when is not None:
                    while interrupt_when not in out.read_text():
                        if proc.poll() is not None or time.perf_counter() - t0 > TIMEOUT:
                            break
                        time.sleep(0.2)
                    else:
                        proc.send_signal(signal.SIGTERM)
                rc = proc.wait(timeout=TIMEOUT)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGTERM)  # the script's trap stops the rest
                try:
                    proc.wait(timeout=60)
                except subprocess.TimeoutExpired:
                    os.killpg(proc.pid, signal.SIGKILL)
                    proc.wait()
                rc = None
        elapsed = time.perf_counter() - t0
        stdout, stderr = out.read_text(), err.read_text()
        _assert_nothing_left(marker)
        if rc is None:
            pytest.fail(f"{script.name} timed out after {TIMEOUT} s\n{stdout}\n{stderr}")
        print(f"{script.name}: exit code {rc} in {elapsed:.1f} s")
        return rc, stdout, stderr

    run.work = work
    run.fake_log = tmp_path / "fake-tools.log"
    return run


def _check_store(path: Path) -> None:
    from daskfair.store import open_run

    assert path.exists()
    assert open_run(path).is_complete


def _check_logs(log_dir: Path, job_id: str, names: list[str]) -> None:
    for name in names:
        assert (log_dir / f"daskfair-{job_id}-{name}.log").is_file(), sorted(log_dir.iterdir())
    assert not (log_dir / f"daskfair-{job_id}-scheduler.json").exists()  # removed on exit


def test_slurm_plain(batch):
    store = batch.work / "demo.zarr"
    env = {"SLURM_JOB_ID": "4242", "SLURM_NTASKS": "3", "SLURM_CPUS_PER_TASK": "1",
           "SLURM_SUBMIT_DIR": str(batch.work), "SLURM_JOB_NODELIST": "localhost"}
    rc, out, err = batch(CLUSTER / "slurm" / "daskfair.sbatch", [*DEMO, "--store", str(store)],
                         env)
    assert rc == 0, out + err
    _check_store(store)
    assert "2 Dask workers connected" in out, out
    assert "Dask cluster: 2 workers" in out, out
    assert "dashboard: http" in out, out
    assert "srun ntasks=2 dask worker" in batch.fake_log.read_text()
    logs = batch.work / "daskfair-logs"
    _check_logs(logs, "4242", ["scheduler", "workers"])
    assert (logs / "daskfair-4242-workers.log").read_text().count("Registered to:") == 2


def test_slurm_plain_passes_the_client_exit_code(batch):
    env = {"SLURM_JOB_ID": "4243", "SLURM_NTASKS": "2", "SLURM_SUBMIT_DIR": str(batch.work)}
    store = batch.work / "bad.zarr"
    args = ["demo", "--pools", "no_such_pool", "--store", str(store), "--no-progress"]
    rc, out, err = batch(CLUSTER / "slurm" / "daskfair.sbatch", args, env)
    assert rc == 2, out + err  # daskfair's exit code for a usage error
    assert "unknown pool" in err
    assert "exit code 2" in out


def test_slurm_runner(batch):
    store = batch.work / "demo.zarr"
    env = {"SLURM_JOB_ID": "4244", "SLURM_NTASKS": "3", "SLURM_CPUS_PER_TASK": "1",
           "SLURM_SUBMIT_DIR": str(batch.work),
           "DASKFAIR_RUNNER": str(CLUSTER / "run_with_runner.py")}
    rc, out, err = batch(CLUSTER / "slurm" / "daskfair-runner.sbatch",
                         [*DEMO, "--store", str(store)], env)
    assert rc == 0, out + err
    _check_store(store)
    assert "Dask cluster: 1 workers" in out, out
    assert "srun ntasks=3 python" in batch.fake_log.read_text()
    logs = batch.work / "daskfair-logs"
    _check_logs(logs, "4244", ["scheduler", "worker-2"])  # ranks 0 and 2; rank 1 = client


def test_slurm_runner_needs_three_tasks(batch):
    env = {"SLURM_JOB_ID": "4245", "SLURM_NTASKS": "2",
           "DASKFAIR_RUNNER": str(CLUSTER / "run_with_runner.py")}
    rc, _, err = batch(CLUSTER / "slurm" / "daskfair-runner.sbatch", DEMO, env)
    assert rc == 2
    assert "at least 3 tasks" in err


def test_pbs_plain(batch, tmp_path):
    nodefile = tmp_path / "nodefile"
    nodefile.write_text("localhost\n" * 3)
    home = tmp_path / "home"  # PBS starts the job in $HOME; the script goes to PBS_O_WORKDIR
    home.mkdir()
    env = {"PBS_JOBID": "4246.fakeserver", "PBS_NODEFILE": str(nodefile),
           "PBS_O_WORKDIR": str(batch.work),
           # PBS Pro passes no script arguments: the command line comes in DASKFAIR_ARGS.
           "DASKFAIR_ARGS": " ".join([*DEMO, "--store", "demo.zarr"])}
    rc, out, err = batch(CLUSTER / "pbs" / "daskfair.pbs", [], env, cwd=home)
    assert rc == 0, out + err
    _check_store(batch.work / "demo.zarr")  # relative to PBS_O_WORKDIR
    assert "2 Dask workers connected" in out, out
    assert "Dask cluster: 2 workers" in out, out
    calls = batch.fake_log.read_text().splitlines()
    assert sorted(c.split(" bash ")[0] for c in calls) == ["pbsdsh -n 1", "pbsdsh -n 2"]
    logs = batch.work / "daskfair-logs"
    _check_logs(logs, "4246", ["scheduler", "worker-1", "worker-2"])
    assert "Registered to:" in (logs / "daskfair-4246-worker-1.log").read_text()


@pytest.mark.parametrize("script", ["daskfair.sbatch", "daskfair-runner.sbatch"])
def test_slurm_interrupted(batch, script):
    """scancel / walltime: the trap stops everything, the exit code says so, the run is open."""
    store = batch.work / "full.zarr"
    env = {"SLURM_JOB_ID": "4247", "SLURM_NTASKS": "3", "SLURM_SUBMIT_DIR": str(batch.work),
           "DASKFAIR_RUNNER": str(CLUSTER / "run_with_runner.py")}
    # The whole demo takes minutes: it is still running when the signal comes.
    rc, out, err = batch(CLUSTER / "slurm" / script, ["demo", "--no-progress", "--store",
                         str(store)], env, interrupt_when="Dask cluster:")
    assert rc == 143, out + err
    assert "exit code 143" in out
    if store.exists():  # it may be cut off before its metadata is written: not a run then
        from daskfair.store import StoreError, open_run

        try:
            complete = open_run(store, allow_incomplete=True).is_complete
        except StoreError:
            complete = False
        assert not complete
