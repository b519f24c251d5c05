"""Hostile arrays on every public entry point (tests/fuzz_entry_points.py), run in a child
process compiled with ``NUMBA_BOUNDSCHECK=1``: an index a kernel was handed unchecked raises
there instead of corrupting memory, and a signal ends the child, reported here."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).with_name("fuzz_entry_points.py")
#: Examples per entry point in the default run; ``DASKFAIR_FUZZ_EXAMPLES`` asks for more.
EXAMPLES = int(os.environ.get("DASKFAIR_FUZZ_EXAMPLES", "100"))


@pytest.fixture(scope="module")
def report():
    env = {**os.environ, "NUMBA_BOUNDSCHECK": "1"}
    done = subprocess.run([sys.executable, str(SCRIPT), "--examples", str(EXAMPLES)],
                          capture_output=True, text=True, env=env, timeout=900)
    if done.returncode < 0:
        running = [line for line in done.stderr.splitlines() if line.startswith("[fuzz]")]
        pytest.fail(f"the child died of {signal.Signals(-done.returncode).name} while fuzzing "
                    f"{running[-1] if running else 'before the first entry point'}")
    assert done.returncode == 0, done.stderr[-4000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_the_child_compiled_the_kernels_with_bounds_checks(report):
    # a kernel handed a label past K raised IndexError: the checks are in the code that ran
    assert report["boundscheck"] == {"config": True, "kernel_raised": True}


def test_every_example_ends_in_a_result_or_a_clear_error(report):
    failures = {name: r["failure"] for name, r in report["entries"].items() if r["failure"]}
    assert not failures, "\n\n".join(f"{k}:\n{v}" for k, v in failures.items())
    for name, r in report["entries"].items():
        assert r["examples"] >= EXAMPLES, name
        assert set(r["outcomes"]) <= {"result", "ValueError", "TypeError"}, name


def test_the_examples_reach_the_kernels_and_the_checks(report):
    # a fuzzer whose every input is refused at the door would prove nothing about a kernel
    for name, r in report["entries"].items():
        assert r["outcomes"].get("result", 0) >= EXAMPLES // 20, (name, r["outcomes"])
        assert r["outcomes"].get("ValueError", 0) >= EXAMPLES // 20, (name, r["outcomes"])


def test_an_error_from_inside_numpy_or_without_a_message_is_a_failure():
    import numpy as np

    from daskfair.metrics import balance

    from .fuzz_entry_points import Outcomes

    outcomes = Outcomes()
    outcomes.record(lambda: balance([0, 1], sensitive_features=[0, 0]))  # daskfair's check
    outcomes.record(lambda: 1.0)
    assert outcomes.kinds == {"ValueError": 1, "result": 1}
    for raw in (lambda: np.isfinite(2**70),  # numpy's TypeError, raised from compiled code
                lambda: np.linalg.cholesky(-np.eye(2)),  # raised inside numpy
                lambda: (_ for _ in ()).throw(ValueError())):  # no message
        with pytest.raises(AssertionError):
            outcomes.record(raw)
