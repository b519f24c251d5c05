"""A store or table sent by someone who wants to harm the receiver: every attack of the
security review (issue 45) ends in a refusal that names what is wrong, within seconds and
with less than 1 GiB more memory, or in a correct result; no code runs, nothing outside the
store is read, and no command removes or replaces a file daskfair did not write.

The attacks on loading run in a forked child whose address space may grow by 1 GiB at most
(``RLIMIT_AS``) and which is killed after 30 s: a hang or an allocation past the limit fails
the test. Where the attack needs it, the store's manifest is written again after the edit,
as an attacker can (it is a checksum, not a signature).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import pickle
import resource
import shutil
import signal
import subprocess
import sys
import time

import numpy as np
import pandas as pd
import pytest
import zarr

from daskfair._files import write_new
from daskfair.cli import main
from daskfair.store import create_run, open_run

from .hostile_inputs import (
    CASES,
    damaged_front,
    resign,
    run_case,
    saved_pipeline,
    stopped_consensus,
    tree_node,
)

LIMIT = 2**30  # the memory an attack may add
TIMEOUT = 30.0


def _guarded(fn, *args, **kwargs):
    """``fn(*args, **kwargs)`` in a forked child with 1 GiB more address space at most, killed
    after ``TIMEOUT`` s: ("ok", value) or ("raised", type name, message)."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child
        os.close(read)
        try:
            size = int(next(line.split()[1] for line in open("/proc/self/status")
                            if line.startswith("VmSize")))
            resource.setrlimit(resource.RLIMIT_AS, (size * 1024 + LIMIT, resource.RLIM_INFINITY))
            try:
                out = ("ok", fn(*args, **kwargs))
            except BaseException as exc:  # every outcome goes to the parent
                out = ("raised", type(exc).__name__, str(exc))
            with os.fdopen(write, "wb") as fh:
                pickle.dump(out, fh)
        finally:
            os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as fh:
        deadline = time.monotonic() + TIMEOUT
        while time.monotonic() < deadline:
            done, _ = os.waitpid(pid, os.WNOHANG)
            if done:
                break
            time.sleep(0.02)
        else:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            pytest.fail(f"{fn.__name__} ran for more than {TIMEOUT} s: killed")
        data = fh.read()
    assert data, "the child died without an answer (a signal)"
    return pickle.loads(data)


def _refused(outcome, kind, pattern):
    assert outcome[0] == "raised", f"not refused: {outcome}"
    import re

    assert outcome[1] == kind and re.search(pattern, outcome[2]), outcome


def _cli(*argv):
    """``daskfair ARGV`` in this process: (exit status, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([str(a) for a in argv])
    return code, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def model_store(tmp_path_factory):
    """The catalogue's saved Pipeline (built here, before any fork) and a table for it."""
    root = tmp_path_factory.mktemp("hostile")
    rng = np.random.default_rng(0)
    pd.DataFrame({"age": rng.uniform(18, 80, 300), "job": rng.choice(["a", "b"], 300),
                  "sex": rng.choice(["F", "M"], 300), "y": rng.integers(0, 2, 300)}
                 ).to_csv(root / "t.csv", index=False)
    shutil.copytree(saved_pipeline(), root / "m.zarr")
    return root


GUARDED = [pytest.param(c, id=c.id) for c in CASES if c.guarded]


@pytest.mark.parametrize("case", GUARDED)
def test_every_attack_of_the_catalogue_is_refused_within_bounds(case, model_store):
    """The catalogue's attacks on stores (docs/hostile_inputs.md), each in a child that may
    add 1 GiB of memory and run 30 s: the documented error, and nothing else."""
    outcome = _guarded(run_case, case, "file")
    want = case.expected("file")
    _refused(outcome, want.error.__name__, want.match)


def test_show_names_what_is_wrong_in_one_line(model_store, tmp_path):
    """``daskfair show`` on attacked stores: one line on stderr (exit 2) for what it cannot
    open, "refused" for a model load would refuse, "CORRUPT" with no forged value shown."""
    link = tmp_path / "link.zarr"
    shutil.copytree(model_store / "m.zarr", link)
    (link / "daskfair-lock.json").symlink_to("/dev/zero")
    code, out, err = _guarded(_cli, "show", link)[1]
    assert code == 2 and not out and err.count("\n") == 1
    assert "daskfair-lock.json is a symbolic link" in err
    forged = tmp_path / "forged.zarr"
    shutil.copytree(model_store / "m.zarr", forged)
    meta = json.loads((forged / "zarr.json").read_text())
    meta["attributes"]["daskfair"]["created"] = "1999-01-01T00:00:00+00:00"
    (forged / "zarr.json").write_text(json.dumps(meta))
    code, out, _ = _cli("show", forged)
    assert code == 1 and "CORRUPT" in out and "1999" not in out
    cached = tmp_path / "cached.zarr"
    shutil.copytree(model_store / "m.zarr", cached)
    meta = json.loads((cached / "zarr.json").read_text())
    tree_node(meta["attributes"]["model"], "params")["items"].append(["memory", "/tmp"])
    resign(cached, meta)
    code, out, _ = _cli("show", cached)
    assert code == 1 and "model:    refused" in out and "memory is '/tmp'" in out
    assert "status:    complete" not in out
    code, out, _ = _cli("show", model_store / "m.zarr")
    digest = open_run(model_store / "m.zarr").digest
    assert code == 0 and f"digest:    {digest}" in out


def test_the_bounds_hold_where_the_attack_would_have_hurt():
    """The guard itself: an allocation past 1 GiB and a hang both fail the test."""
    def allocate():
        return len(bytearray(2 * 2**30))

    assert _guarded(allocate)[:2] == ("raised", "MemoryError")


# -- checkpoints -----------------------------------------------------------------------------

@pytest.mark.parametrize(("how", "pattern"), [
    ("label", r"its labels are not \d+ label vectors of 300 rows in clusters 0 to 2"),
    ("short", r"its labels are not \d+ label vectors of 300 rows"),
    ("counts", r"its states or objectives are not those of its labels")])
def test_a_damaged_front_checkpoint_is_refused_before_the_kernels(tmp_path, how, pattern):
    import daskfair

    X, kw, name = damaged_front(tmp_path, how)

    def resume():
        return daskfair.pareto_front(X, **kw)

    _refused(_guarded(resume), "CorruptStoreError",
             rf"the checkpoint {name} in .*f.zarr is malformed \(ValueError: {pattern}")


def test_a_damaged_consensus_checkpoint_is_refused_before_the_kernels(tmp_path):
    from daskfair import FairClusteringEnsemble

    base, groups, store = stopped_consensus(tmp_path)
    kw = {"random_state": 0, "tol": 0.0, "max_iter": 6}

    def resume(labels=base):
        return FairClusteringEnsemble(3, **kw).fit(labels, sensitive_features=groups,
                                                   store=store, resume=True).n_iter_

    with pytest.raises(ValueError, match=r"parameters differ.*base_cluster_counts"):
        changed = base.copy()
        changed[:, 1] = np.arange(400) % 40  # the same shape, other clusters
        resume(changed)
    group = zarr.open_group(str(store), mode="r+")
    name = open_run(store, allow_incomplete=True).checkpoint["group"]
    labels = group[f"{name}/labels"][...]
    for bad, pattern in ((np.where(np.arange(400) == 5, 250, labels), "its labels are not"),
                         (labels[::-1].copy(), "its tables are not those of its labels")):
        group.create_array(f"{name}/labels", data=bad.astype(labels.dtype), overwrite=True)
        _refused(_guarded(resume), "CorruptStoreError",
                 rf"the checkpoint {name} in .*c.zarr is malformed \(ValueError: {pattern}")
    group.create_array(f"{name}/labels", data=labels, overwrite=True)
    assert _guarded(resume) == ("ok", 6)


# -- outputs never destroy what daskfair did not write -----------------------------------------

def test_predict_overwrite_removes_only_the_predictions_it_wrote(model_store, tmp_path):
    out = tmp_path / "thesis"
    (out / "data").mkdir(parents=True)
    (out / "thesis.tex").write_text("years of work")
    (out / "_daskfair.json").write_text(json.dumps({"kind": "predictions", "files": []}))
    code, _, err = _cli("predict", model_store / "m.zarr", "--input", model_store / "t.csv",
                        "--output", out, "--overwrite", "--no-progress")
    assert code == 2 and "2 entries it did not (data/, thesis.tex)" in err
    assert (out / "thesis.tex").read_text() == "years of work" and (out / "data").is_dir()


def test_a_store_is_replaced_only_when_it_holds_nothing_else(model_store, tmp_path):
    table = model_store / "t.csv"
    path = tmp_path / "a.zarr"
    run = create_run(path, kind="audit")
    run.write_array("cells", np.arange(6))
    run.mark_complete()
    (path / "notes.txt").write_text("mine")
    zarr.open_group(str(path), mode="a").create_array("mine", data=np.arange(3))
    code, _, err = _cli("audit", "--input", table, "--label", "y", "--prediction", "y",
                        "--sensitive", "sex", "--store", path, "--overwrite")
    assert code == 2 and "daskfair did not write (mine/c/0, mine/zarr.json, notes.txt)" in err
    assert (path / "notes.txt").read_text() == "mine" and (path / "mine" / "zarr.json").exists()
    link = tmp_path / "link.zarr"
    link.symlink_to(path, target_is_directory=True)
    code, _, err = _cli("audit", "--input", table, "--label", "y", "--prediction", "y",
                        "--sensitive", "sex", "--store", link)
    assert code == 2 and "link.zarr is a symbolic link" in err


def test_a_report_never_replaces_an_input_or_a_file_it_did_not_write(model_store, tmp_path):
    table = tmp_path / "t.csv"
    shutil.copy(model_store / "t.csv", table)
    before = table.read_bytes()
    for extra in ([], ["--overwrite"]):
        code, _, err = _cli("audit", "--input", table, "--label", "y", "--prediction", "y",
                            "--sensitive", "sex", "--store", tmp_path / "a.zarr", "--report",
                            table, *extra)
        assert code == 2 and "is the command's input or store" in err
    notes = tmp_path / "notes.html"
    notes.write_text("<html>mine</html>")
    code, _, err = _cli("audit", "--input", table, "--label", "y", "--prediction", "y",
                        "--sensitive", "sex", "--store", tmp_path / "a.zarr", "--report",
                        notes, "--overwrite")
    assert code == 2 and "is not the report daskfair wrote; it is never replaced" in err
    assert table.read_bytes() == before and notes.read_text() == "<html>mine</html>"


def test_a_partial_file_left_as_a_link_is_never_written_through(tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("keep")
    for name in (".r.html.partial", ".r.html.partial-000000000000"):
        (tmp_path / name).symlink_to(victim)
    write_new(tmp_path / "r.html", b"<html></html>")
    assert victim.read_text() == "keep" and (tmp_path / "r.html").read_bytes() == b"<html></html>"
    (tmp_path / "link.html").symlink_to(victim)
    with pytest.raises(ValueError, match="link.html is a symbolic link"):
        write_new(tmp_path / "link.html", b"x", replace=True)
    assert victim.read_text() == "keep"


def test_plot_replaces_only_a_figure_it_wrote(tmp_path):
    path = tmp_path / "f.zarr"
    run = create_run(path, kind="safairkm")
    run.write_array("cost", np.array([1.0, 0.5]))
    run.write_array("balance", np.array([0.2, 0.6]))
    run.mark_complete()
    figure = tmp_path / "f.png"
    figure.write_text("my own figure")
    code, _, err = _cli("plot", path, "--overwrite")
    assert code == 2 and "is not the figure daskfair wrote" in err
    figure.unlink()
    assert _cli("plot", path)[0] == 0
    code, _, err = _cli("plot", path)
    assert code == 2 and "holds the figure daskfair wrote: pass --overwrite" in err
    assert _cli("plot", path, "--overwrite")[0] == 0


# -- the terminal ------------------------------------------------------------------------------

def test_text_from_a_store_reaches_the_terminal_escaped(tmp_path):
    path = tmp_path / "r.zarr"
    evil = "\x1b]0;pwned\x07\rstatus:    complete (verified)\u202e"
    create_run(path, kind="t", params={"note": evil}).mark_complete(result={evil: evil})
    code, out, err = _cli("show", path)
    assert code == 0, err
    assert "\x1b" not in out and "\r" not in out and "\u202e" not in out
    assert "\\x1b]0;pwned\\x07\\x0dstatus:" in out and "\\u202e" in out


def test_group_names_from_a_table_reach_the_terminal_escaped(client, tmp_path):
    rng = np.random.default_rng(0)
    evil = "\x1b]2;owned\x07\x1b[31mF"
    pd.DataFrame({"sex": rng.choice([evil, "M"], 400), "y": rng.integers(0, 2, 400),
                  "d": rng.integers(0, 2, 400)}).to_csv(tmp_path / "t.csv", index=False)
    code, out, err = _cli("audit", "--input", tmp_path / "t.csv", "--label", "y",
                          "--prediction", "d", "--sensitive", "sex", "--n-boot", "0",
                          "--store", tmp_path / "a.zarr", "--no-progress")
    assert code == 0, err
    assert "\x1b" not in out + err and "\\x1b]2;owned\\x07\\x1b[31mF" in out


# -- signals -----------------------------------------------------------------------------------

def test_sigterm_stops_a_prediction_within_seconds(model_store, tmp_path):
    big = pd.concat([pd.read_csv(model_store / "t.csv")] * 7000, ignore_index=True)
    big.to_parquet(tmp_path / "big.parquet", row_group_size=50_000)
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "daskfair.cli", "predict", str(model_store / "m.zarr"), "--input",
         str(tmp_path / "big.parquet"), "--output", str(tmp_path / "out"), "--workers", "1",
         "--no-progress"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    for line in proc.stdout:
        if line.startswith("Dask cluster"):
            break
    time.sleep(0.5)
    start = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    code = proc.wait(timeout=30)
    assert time.monotonic() - start < 10, "SIGTERM took more than 10 s"
    assert code == 143 and "terminated (SIGTERM)" in proc.stderr.read()
    assert not (tmp_path / "out").exists() and not list(tmp_path.glob(".out.partial-*"))

