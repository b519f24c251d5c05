"""Block functions are compiled once per machine and user: a second checkout or environment
with the same source loads what the first compiled, from daskfair's folder of compiled code
(docs/design.md#first-calls). Each case runs in new processes, on copies of the package."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import numba
import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "daskfair"

# one small block function called on tiny arrays; numba's own counters of loads and compiles
SCRIPT = textwrap.dedent("""
    import json
    import numpy as np
    import daskfair
    from daskfair._compiled import compile_cache_dir
    from daskfair.fkr._binning import bin_scores

    hist = np.zeros((1, 2, 4))
    bin_scores(np.array([[0.1], [0.7]]), np.array([0, 1]), np.ones(2), np.zeros(1),
               np.full(1, 0.25), hist)
    stats = bin_scores.stats
    print(json.dumps({"package": daskfair.__file__, "folder": stats.cache_path,
                      "hits": sum(stats.cache_hits.values()),
                      "misses": sum(stats.cache_misses.values()),
                      "hist": hist.ravel().tolist(), "default": str(compile_cache_dir())}))
""")


def _checkout(root: Path) -> Path:
    shutil.copytree(PACKAGE, root / "daskfair", ignore=shutil.ignore_patterns("__pycache__"))
    return root


def _env(checkout: Path, cache_home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    return {**env, "PYTHONPATH": str(checkout), "XDG_CACHE_HOME": str(cache_home)}


def _run(checkout: Path, cache_home: Path, numba_cache: Path | None = None,
         boundscheck: bool = False) -> dict:
    env = _env(checkout, cache_home)
    env.pop("NUMBA_BOUNDSCHECK", None)
    if boundscheck:
        env["NUMBA_BOUNDSCHECK"] = "1"
    if numba_cache is not None:
        env["NUMBA_CACHE_DIR"] = str(numba_cache)
    done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True,
                          timeout=300, cwd=checkout, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["package"].startswith(str(checkout))  # the copy ran, not the installed package
    assert out["hist"] == [1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0]  # bins of 0.1 and 0.7
    return out


@pytest.fixture
def checkouts(tmp_path):
    return _checkout(tmp_path / "a"), _checkout(tmp_path / "b")


def test_a_second_checkout_loads_what_the_first_compiled(tmp_path, checkouts):
    a, b = checkouts
    cache_home = tmp_path / "home-cache"
    first = _run(a, cache_home)
    folder = cache_home / "daskfair" / "compiled" / f"numba-{numba.__version__}"
    assert first["default"] == str(folder)
    assert Path(first["folder"]).parent == folder
    assert first["misses"] == 1 and first["hits"] == 0
    assert list(Path(first["folder"]).glob("*.nbc"))
    assert not list(a.rglob("*.nbi"))  # nothing next to the source
    second = _run(b, cache_home)  # another path, the same source: loaded, not compiled
    assert second["folder"] == first["folder"]
    assert second["hits"] == 1 and second["misses"] == 0


def test_a_changed_source_compiles_into_a_folder_of_its_own(tmp_path, checkouts):
    a, b = checkouts
    cache_home = tmp_path / "home-cache"
    first = _run(a, cache_home)
    source = b / "daskfair" / "fkr" / "_binning.py"
    source.write_text(source.read_text() + "\n# changed\n")
    second = _run(b, cache_home)
    assert second["folder"] != first["folder"]
    assert second["misses"] == 1 and second["hits"] == 0
    assert _run(a, cache_home)["hits"] == 1  # the first source's code is still there


def test_code_compiled_with_bounds_checks_has_a_folder_of_its_own(tmp_path, checkouts):
    a, _ = checkouts
    cache_home = tmp_path / "home-cache"
    assert _run(a, cache_home)["misses"] == 1
    checked = _run(a, cache_home, boundscheck=True)
    # compiled again, with the checks, not loaded from the unchecked code's folder
    assert checked["misses"] == 1 and checked["hits"] == 0
    assert checked["default"].endswith(f"numba-{numba.__version__}-boundscheck")
    assert _run(a, cache_home, boundscheck=True)["hits"] == 1


def test_numba_cache_dir_comes_first(tmp_path, checkouts):
    a, _ = checkouts
    out = _run(a, tmp_path / "home-cache", numba_cache=tmp_path / "numba-cache")
    assert Path(out["folder"]).is_relative_to(tmp_path / "numba-cache")
    assert not (tmp_path / "home-cache" / "daskfair").exists()


def test_an_unwritable_cache_folder_falls_back_to_numbas(tmp_path, checkouts):
    a, _ = checkouts
    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder")  # no folder can be made under it, even by root
    out = _run(a, blocked)
    assert Path(out["folder"]) == a / "daskfair" / "fkr" / "__pycache__"
    assert out["misses"] == 1


# holds bin_scores' lock file as a compiling process would, until its stdin closes
HOLDER = textwrap.dedent("""
    import fcntl, sys
    from daskfair.fkr._binning import bin_scores

    handle = open(bin_scores._cache.lock_path, "a+b")
    fcntl.flock(handle, fcntl.LOCK_EX)
    print("locked", flush=True)
    sys.stdin.read()
""")


@pytest.mark.skipif(sys.platform == "win32", reason="the compile lock is POSIX only")
def test_a_process_waits_for_another_compiling_the_same_function(tmp_path, checkouts):
    a, _ = checkouts
    env = _env(a, tmp_path / "home-cache")
    holder = subprocess.Popen([sys.executable, "-c", HOLDER], env=env, cwd=a, text=True,
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        assert holder.stdout.readline().strip() == "locked"
        waiting = subprocess.Popen([sys.executable, "-c", SCRIPT], env=env, cwd=a, text=True,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        with pytest.raises(subprocess.TimeoutExpired):
            waiting.wait(timeout=8)  # it found no compiled code and waits for the lock
    finally:
        holder.stdin.close()
        holder.wait(timeout=60)
    out, err = waiting.communicate(timeout=300)
    assert waiting.returncode == 0, err[-3000:]
    assert json.loads(out.strip().splitlines()[-1])["misses"] == 1  # the holder saved nothing


# a SAfairKM fit, its block functions' loads and compiles
FIT = textwrap.dedent("""
    import json
    import numpy as np
    import daskfair
    from daskfair.safairkm import _block_functions as kernels

    X, s, _ = (np.asarray(a) for a in daskfair.make_fair_blobs(200, n_clusters=3,
                                                                random_state=0))
    daskfair.SAFairKMeans(3, max_iter=3, random_state=0).fit(X, sensitive_features=s)
    out = {}
    for name in ("run_member", "init_state", "cost_of", "balance_of"):
        stats = getattr(kernels, name).stats
        out[name] = [sum(stats.cache_hits.values()), sum(stats.cache_misses.values())]
    print(json.dumps(out))
""")


@pytest.mark.skipif(sys.platform == "win32", reason="the compile lock is POSIX only")
def test_two_processes_starting_together_compile_each_function_once(tmp_path, checkouts):
    a, _ = checkouts
    env = _env(a, tmp_path / "home-cache")
    procs = [subprocess.Popen([sys.executable, "-c", FIT], env=env, cwd=a, text=True,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)
             for _ in range(2)]
    outs = []
    for p in procs:
        out, err = p.communicate(timeout=600)
        assert p.returncode == 0, err[-3000:]
        outs.append(json.loads(out.strip().splitlines()[-1]))
    for name in outs[0]:
        hits = outs[0][name][0] + outs[1][name][0]
        misses = outs[0][name][1] + outs[1][name][1]
        assert (hits, misses) == (1, 1), (name, outs)
