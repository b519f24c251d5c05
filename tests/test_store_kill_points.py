"""SIGKILL at random store writes of the three jobs, and of a resume: never a wrong result.

For each job (small ``fkr``, ``safairkm`` and ``fce`` runs, see ``tests/_killpoints.py``) an
uninterrupted run gives the reference and the number of writes N; then the job is killed at a
write drawn from 1..N (half its bytes left in zarr's scratch file, the whole process group
killed). The store must then be complete and equal to the reference, or incomplete (or empty,
or corrupt) — never complete with other content. It is then taken on as a user would
(``--resume --break-lock``, or ``--overwrite --break-lock`` for a job that cannot resume),
that run is itself killed at a random write for the resumable jobs, and a last ``--resume``
must end at the reference. ``benchmarks/store_kill_points.py`` runs hundreds of kill points.
"""

import os

import numpy as np
import pytest

from . import _killpoints as kp

pytestmark = pytest.mark.cluster

SEED = int(os.environ.get("DASKFAIR_KILL_SEED", "0"))
NOT_WRONG = {"complete", "incomplete", "corrupt", "empty"}


# One kill point per job here, with the slow tests: benchmarks/store_kill_points.py kills each
# job at hundreds of points. The default run kills a job mid-run with SIGTERM and resumes it
# (tests/test_kill_resume.py), and tests/test_hostile_stores.py opens damaged and tampered
# stores.
@pytest.mark.slow
@pytest.mark.parametrize("job", sorted(kp.JOBS))
def test_killed_at_a_random_write_the_store_is_right_or_says_it_is_not(job, data_dir,
                                                                      tmp_path):
    rng = np.random.default_rng([SEED, sorted(kp.JOBS).index(job)])
    ref_store = tmp_path / "reference.zarr"
    n_writes = kp.count_writes(job, ref_store, tmp_path, data_dir)
    assert n_writes > 10
    reference = kp.contents(ref_store)

    store = tmp_path / "killed.zarr"
    at = int(rng.integers(1, n_writes + 1))
    env = kp.job_env(data_dir, tmp_path / "hook", at, tmp_path / "writes.count")
    proc = kp.run_job([*kp.JOBS[job], "--store", str(store)], env, tmp_path)
    assert proc.returncode == -9, f"not killed at write {at}/{n_writes}: {proc.stderr[-800:]}"
    first = kp.judge(store, reference)
    assert first in NOT_WRONG, f"killed at write {at}/{n_writes}: {first}"
    if first == "complete":
        return
    if job in kp.RESUMABLE:  # killed again, during the resume
        kp.finish(job, store, tmp_path, data_dir, int(rng.integers(1, n_writes // 2 + 1)))
        assert kp.judge(store, reference) in NOT_WRONG
    kp.finish(job, store, tmp_path, data_dir, None)
    assert kp.judge(store, reference) == "complete"
