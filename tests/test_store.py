import json
import os
import shutil
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import dask
import dask.array as da
import numpy as np
import pytest
import zarr

from daskfair.store import (
    STORE_FORMAT,
    CorruptStoreError,
    IncompleteRunError,
    StoreError,
    StoreLockedError,
    break_lock,
    check_new_store,
    create_run,
    open_run,
    resume_run,
    to_json,
)
from daskfair.store.lease import LEASE_NAME


def test_roundtrip_numpy_dask_attrs(tmp_path):
    path = tmp_path / "run.zarr"
    run = create_run(path, kind="test", params={"k": np.int64(3), "mu": (0.1, 0.2)})
    x = np.arange(12.0).reshape(4, 3)
    run.write_array("a/x", x)
    run.write_array("d", da.arange(100, chunks=30))
    run.set_attrs(metric=np.float32(0.5), table={"ACC": [0.1, float("nan")]})
    run.mark_complete(done=True)
    back = open_run(path)
    assert back.kind == "test" and back.is_complete
    assert back.params == {"k": 3, "mu": [0.1, 0.2]}
    np.testing.assert_array_equal(back.read_array("a/x"), x)
    np.testing.assert_array_equal(back.read_array("d"), np.arange(100))
    assert back.attrs["table"] == {"ACC": [0.1, None]}
    assert back.attrs["done"] is True
    info = back.info
    assert info["format"] == STORE_FORMAT and "numpy" in info["versions"]
    assert info["completed"] >= info["created"]
    with pytest.raises(KeyError, match="has no array 'nope'"):
        back.read_array("nope")


def test_incomplete_run_refused(tmp_path):
    path = tmp_path / "run.zarr"
    run = create_run(path, kind="test")
    run.write_array("x", np.ones(3))
    with pytest.raises(IncompleteRunError, match="did not finish.*resume"):
        open_run(path)
    assert open_run(path, allow_incomplete=True).status == "running"


def test_existing_store_needs_overwrite(tmp_path):
    path = tmp_path / "run.zarr"
    create_run(path, kind="test").mark_complete()
    with pytest.raises(FileExistsError, match="already exists.*overwrite=True"):
        create_run(path, kind="test")
    run = create_run(path, kind="other", overwrite=True)
    assert run.kind == "other" and run.status == "running"


def test_bad_stores(tmp_path):
    with pytest.raises(StoreError, match="does not exist"):
        open_run(tmp_path / "missing.zarr")
    plain = tmp_path / "plain.zarr"
    zarr.open_group(str(plain), mode="w").attrs["x"] = 1
    with pytest.raises(StoreError, match="not a daskfair run"):
        open_run(plain)
    # a store from another format version
    other = tmp_path / "other.zarr"
    run = create_run(other, kind="test")
    info = run.info
    info["format"] = STORE_FORMAT + 1
    run.group.attrs["daskfair"] = info
    with pytest.raises(StoreError, match=f"format {STORE_FORMAT + 1} .*reads format "
                       f"{STORE_FORMAT} only"):
        open_run(other)
    # corrupt metadata
    corrupt = tmp_path / "corrupt.zarr"
    create_run(corrupt, kind="test").mark_complete()
    (corrupt / "zarr.json").write_text("{not json")
    with pytest.raises(StoreError, match="not a readable zarr group.*corrupt"):
        open_run(corrupt)


@pytest.mark.skipif(os.geteuid() == 0, reason="root ignores directory permissions")
def test_no_write_permission(tmp_path):
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o500)
    try:
        with pytest.raises(PermissionError, match="no write permission"):
            create_run(ro / "run.zarr", kind="test")
    finally:
        ro.chmod(0o700)


def test_no_write_permission_reported(tmp_path, monkeypatch):
    # Also checked when running as root (CI): os.access says no, the error says what to do.
    monkeypatch.setattr(os, "access", lambda *a, **k: False)
    with pytest.raises(PermissionError, match="no write permission.*writable directory"):
        create_run(tmp_path / "run.zarr", kind="test")


def test_reserved_and_non_numeric(tmp_path):
    run = create_run(tmp_path / "r.zarr", kind="test")
    with pytest.raises(ValueError, match="reserved"):
        run.set_attrs(params={})
    with pytest.raises(TypeError, match="as an attribute"):
        run.write_array("s", np.array(["a", "b"]))
    unknown = da.from_array(np.arange(10), chunks=5)
    with pytest.raises(ValueError, match="unknown chunk sizes"):
        run.write_array("u", unknown[unknown > 3])


def test_to_json():
    out = to_json({"a": np.arange(3), 1: (np.float64(1.5), float("inf"))})
    assert out == {"a": [0, 1, 2], "1": [1.5, None]}
    json.dumps(out)


# -- what --overwrite may remove ---------------------------------------------------------------

def test_a_folder_that_is_not_a_run_is_never_emptied(tmp_path):
    folder = tmp_path / "folder"
    folder.mkdir()
    (folder / "thesis.tex").write_text("years of work")
    (folder / "figures").mkdir()
    for overwrite in (False, True):
        with pytest.raises(FileExistsError, match=r"not a daskfair run store \(it holds 2 "
                           r"entries: figures/, thesis.tex\).*never deletes.*overwrite=True"):
            create_run(folder, kind="fce", overwrite=overwrite)
    assert sorted(p.name for p in folder.iterdir()) == ["figures", "thesis.tex"]
    assert (folder / "thesis.tex").read_text() == "years of work"
    # another program's zarr group and an unreadable zarr.json are not daskfair's either
    plain = tmp_path / "plain.zarr"
    zarr.open_group(str(plain), mode="w").create_array("x", data=np.arange(3))
    with pytest.raises(FileExistsError, match="not a daskfair run store"):
        create_run(plain, kind="fce", overwrite=True)
    np.testing.assert_array_equal(zarr.open_group(str(plain), mode="r")["x"][...], np.arange(3))
    broken = tmp_path / "broken.zarr"
    broken.mkdir()
    (broken / "zarr.json").write_text("{not json")
    with pytest.raises(FileExistsError, match="zarr.json that cannot be read"):
        create_run(broken, kind="fce", overwrite=True)
    assert (broken / "zarr.json").read_text() == "{not json"
    a_file = tmp_path / "notes.txt"
    a_file.write_text("x")
    with pytest.raises(FileExistsError, match="it is a file"):
        create_run(a_file, kind="fce", overwrite=True)


def test_an_empty_directory_is_used_without_overwrite(tmp_path):
    (tmp_path / "empty.zarr").mkdir()
    create_run(tmp_path / "empty.zarr", kind="t").mark_complete()
    assert open_run(tmp_path / "empty.zarr").kind == "t"


def test_overwrite_refuses_a_run_holding_files_it_did_not_write(tmp_path):
    path = tmp_path / "run.zarr"
    run = create_run(path, kind="t", params={"a": 1})
    run.write_array("labels", np.arange(100), chunks=(10,))
    run.write_array("model/coef", np.ones((3, 3)))
    run.write_array("checkpoint_3/x", np.arange(4))
    run.mark_complete()
    before = sorted(p.relative_to(path) for p in path.rglob("*"))
    (path / "README.txt").write_text("my notes on this run")
    (path / "model" / "plot.png").write_bytes(b"\x89PNG")
    with pytest.raises(FileExistsError, match=r"2 file\(s\) daskfair did not write "
                       r"\(README.txt, model/plot.png\); nothing in it is removed"):
        create_run(path, kind="u", params={"b": 2}, overwrite=True)
    assert open_run(path, verify=None).kind == "t"  # untouched: still the finished run
    (path / "README.txt").unlink()
    (path / "model" / "plot.png").unlink()
    assert sorted(p.relative_to(path) for p in path.rglob("*")) == before
    new = create_run(path, kind="u", params={"b": 2}, overwrite=True)
    assert new.array_names() == [] and new.kind == "u" and new.params == {"b": 2}
    assert sorted(p.name for p in path.iterdir()) == ["daskfair-lock.json", "zarr.json"]
    new.write_array("y", np.arange(3))
    new.mark_complete()
    assert open_run(path).array_names() == ["y"]


def test_overwrite_of_an_unfinished_run_removes_what_it_recorded(tmp_path):
    path = tmp_path / "run.zarr"
    run = create_run(path, kind="t")
    run.write_array("labels", np.arange(10), chunks=(5,))
    run.write_array("checkpoint_2/state", np.arange(3))
    run.close()  # crashed: no manifest, the nodes it wrote are recorded in its marker
    assert open_run(path, allow_incomplete=True).info["nodes"] == ["labels"]
    zarr.open_group(str(path), mode="a").create_array("mine", data=np.arange(2))
    with pytest.raises(FileExistsError, match=r"mine/c/0, mine/zarr.json"):
        create_run(path, kind="t", overwrite=True)
    shutil.rmtree(path / "mine")
    create_run(path, kind="t", overwrite=True).close()
    assert sorted(p.name for p in path.iterdir()) == ["zarr.json"]


def test_a_run_interrupted_while_being_replaced_is_incomplete_and_replaceable(tmp_path,
                                                                              monkeypatch):
    from daskfair.store import access

    path = tmp_path / "run.zarr"
    run = create_run(path, kind="t", params={"a": 1})
    run.write_array("x", np.arange(10), chunks=(2,))
    run.write_array("y", np.arange(10), chunks=(2,))
    run.mark_complete()

    def dies(p, info, dry_run=False):
        if dry_run:
            return
        shutil.rmtree(p / "x" / "c")  # part of the run removed, then the process dies
        raise KeyboardInterrupt

    monkeypatch.setattr(access, "remove_run", dies)
    with pytest.raises(KeyboardInterrupt):
        create_run(path, kind="t", params={"a": 1}, overwrite=True)
    monkeypatch.undo()
    with pytest.raises(IncompleteRunError, match="status 'replacing'"):
        open_run(path)
    with pytest.raises(ValueError, match="being replaced.*overwrite=True"):
        resume_run(path, kind="t", params={"a": 1})
    create_run(path, kind="t", params={"a": 1}, overwrite=True).mark_complete()
    assert open_run(path).array_names() == []
    assert sorted(p.name for p in path.iterdir()) == ["zarr.json"]  # nothing of it left


# -- one writer at a time ----------------------------------------------------------------------

def test_a_second_writer_is_refused_before_it_writes(tmp_path):
    path = tmp_path / "run.zarr"
    first = create_run(path, kind="t", params={"a": 1})
    first.write_array("x", np.arange(5))
    before = sorted(p.relative_to(path).as_posix() for p in path.rglob("*"))
    for call in (lambda: create_run(path, kind="t", overwrite=True),
                 lambda: resume_run(path, kind="t", params={"a": 1}),
                 lambda: check_new_store(path, overwrite=True)):
        with pytest.raises(StoreLockedError, match=rf"being written by another run \(host "
                           rf"{socket.gethostname()}, pid {os.getpid()}.*choose another"):
            call()
    assert sorted(p.relative_to(path).as_posix() for p in path.rglob("*")) == before
    with pytest.raises(IncompleteRunError, match="its lock is held by a live run"):
        open_run(path)
    with pytest.raises(StoreLockedError, match="holder is alive"):
        break_lock(path)
    first.mark_complete()
    assert not (path / LEASE_NAME).exists()
    np.testing.assert_array_equal(open_run(path).read_array("x"), np.arange(5))


def _lease_file(path, **holder):
    path.mkdir(exist_ok=True)
    lease = path / LEASE_NAME
    lease.write_text(json.dumps({"run_id": "r", "started": "then", "command": "daskfair fce",
                                 **holder}))
    return lease


def test_a_dead_holder_needs_break_lock(tmp_path):
    path = tmp_path / "run.zarr"
    create_run(path, kind="t").close()  # an incomplete run
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()  # a pid that no longer runs
    _lease_file(path, host=socket.gethostname(), pid=proc.pid)
    for call in (lambda: create_run(path, kind="t", overwrite=True),
                 lambda: resume_run(path, kind="t", params={})):
        with pytest.raises(StoreLockedError, match=rf"no longer running.*process {proc.pid} "
                           r"is no longer running.*break_lock"):
            call()
    with pytest.warns(UserWarning, match="broke the lock .* no longer running"):
        holder = break_lock(path)
    assert holder["pid"] == proc.pid and not (path / LEASE_NAME).exists()
    assert break_lock(path) is None
    resume_run(path, kind="t", params={}).mark_complete()


def test_a_reused_pid_is_a_dead_holder(tmp_path):
    path = tmp_path / "run.zarr"
    _lease_file(path, host=socket.gethostname(), pid=os.getpid(), pid_start="1")
    with pytest.raises(StoreLockedError, match="pid now belongs to a later process"):
        check_new_store(path)


def test_a_holder_on_another_host_is_dead_only_after_the_stale_time(tmp_path):
    path = tmp_path / "run.zarr"
    lease = _lease_file(path, host="node-17", pid=4242)
    with pytest.raises(StoreLockedError, match="being written by another run.*node-17.*"
                                               r"refreshed \d+ s ago"):
        create_run(path, kind="t")
    with pytest.raises(StoreLockedError, match="holder is alive"):
        break_lock(path)
    old = time.time() - 301
    os.utime(lease, (old, old))
    with pytest.raises(StoreLockedError, match=r"no longer running.*no refresh for 30\d s"):
        create_run(path, kind="t")
    with dask.config.set({"daskfair.lease-stale": 1000}):
        with pytest.raises(StoreLockedError, match="being written by another run"):
            create_run(path, kind="t")
    with pytest.warns(UserWarning, match="broke the lock"):
        break_lock(path)
    create_run(path, kind="t").mark_complete()


def test_the_lease_is_refreshed_and_a_lost_lease_stops_the_writer(tmp_path):
    path = tmp_path / "run.zarr"
    with dask.config.set({"daskfair.lease-refresh": 0.05}):
        run = create_run(path, kind="t")
    lease = path / LEASE_NAME
    old = time.time() - 1000
    os.utime(lease, (old, old))
    deadline = time.time() + 10
    while lease.stat().st_mtime < time.time() - 5 and time.time() < deadline:
        time.sleep(0.05)
    assert lease.stat().st_mtime > time.time() - 5  # refreshed by the run's thread
    lease.unlink()  # broken by someone else
    with pytest.raises(StoreLockedError, match="lost its lease.*stops before writing more"):
        run.write_array("x", np.arange(3))
    with pytest.raises(StoreLockedError, match="lost its lease"):
        run.mark_complete()
    assert not (path / "x").exists()
    with pytest.raises(IncompleteRunError):
        open_run(path)


def test_a_dropped_run_gives_its_lease_back(tmp_path):
    path = tmp_path / "run.zarr"
    create_run(path, kind="t")  # not kept: garbage at once
    assert not (path / LEASE_NAME).exists()
    with create_run(tmp_path / "b.zarr", kind="t") as run:
        assert (run.path / LEASE_NAME).exists()
    assert not (run.path / LEASE_NAME).exists()
    with pytest.raises(StoreLockedError, match="released its lease"):
        run.set_attrs(x=1)


def test_a_read_only_run_refuses_writes(tmp_path):
    create_run(tmp_path / "r.zarr", kind="t").mark_complete()
    with pytest.raises(StoreError, match="opened for reading"):
        open_run(tmp_path / "r.zarr").set_attrs(x=1)


def test_two_processes_racing_for_one_store_one_wins(tmp_path):
    """Eight processes create a run on one new path at the same moment: exactly one gets it,
    every other is refused naming a holder, and the winner's run is whole."""
    code = textwrap.dedent("""
        import pathlib, sys, time
        import numpy as np
        from daskfair.store import StoreLockedError, create_run
        go = pathlib.Path(sys.argv[2])
        pathlib.Path(sys.argv[2] + sys.argv[3]).touch()  # ready
        while not go.exists():
            pass
        try:
            run = create_run(sys.argv[1], kind="t", params={"who": sys.argv[3]})
        except StoreLockedError as exc:
            print("refused", exc)
            sys.exit(0)
        run.write_array("x", np.full(1000, int(sys.argv[3])))
        time.sleep(2.0)  # the others are refused while it writes, not after it finished
        run.mark_complete()
        print("won")
    """)
    path, go = tmp_path / "race.zarr", tmp_path / "go"
    procs = [subprocess.Popen([sys.executable, "-c", code, str(path), str(go), str(k)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for k in range(8)]
    deadline = time.time() + 120
    while not all((tmp_path / f"go{k}").exists() for k in range(8)):
        assert time.time() < deadline and all(p.poll() is None for p in procs)
        time.sleep(0.01)
    go.touch()  # all eight are spinning on this file: they start together
    outs = [p.communicate(timeout=60) for p in procs]
    assert all(p.returncode == 0 for p in procs), [e for _, e in outs]
    said = [o.split()[0] for o, _ in outs]
    assert said.count("won") == 1 and said.count("refused") == 7, outs
    winner = said.index("won")
    run = open_run(path, verify="contents")
    assert run.params == {"who": str(winner)}
    np.testing.assert_array_equal(run.read_array("x"), np.full(1000, winner))


# -- a complete run is whole, or said to be corrupt ----------------------------------------------

def _finished(path):
    run = create_run(path, kind="t", params={"a": 1})
    run.write_array("labels", np.arange(1000, dtype=np.int32), chunks=(100,))
    run.write_array("weights", np.linspace(0, 1, 7))
    run.mark_complete(results={"ACC": 0.61})
    return path


def test_a_truncated_chunk_is_corrupt(tmp_path):
    path = _finished(tmp_path / "run.zarr")
    chunk = path / "labels" / "c" / "3"
    chunk.write_bytes(chunk.read_bytes()[:-7])
    with pytest.raises(CorruptStoreError, match=r"array 'labels' \(its file c/3\) has .* bytes "
                       r"where .* were written \(a chunk is truncated.*overwrite=True"):
        open_run(path)
    open_run(path, verify=None)  # explicitly unchecked


def test_an_altered_chunk_of_the_same_size_is_corrupt_when_read(tmp_path):
    path = _finished(tmp_path / "run.zarr")
    chunk = path / "weights" / "c" / "0"
    data = bytearray(chunk.read_bytes())
    data[-1] ^= 1
    chunk.write_bytes(bytes(data))
    run = open_run(path)  # sizes agree
    with pytest.raises(CorruptStoreError,
                       match=r"array 'weights' \(its file c/0\) has other contents"):
        run.read_array("weights")
    np.testing.assert_array_equal(run.read_array("labels"), np.arange(1000))
    with pytest.raises(CorruptStoreError, match="other contents"):
        open_run(path, verify="contents")


def test_missing_extra_and_edited_parts_are_corrupt(tmp_path):
    path = _finished(tmp_path / "a.zarr")
    shutil.rmtree(path / "weights")
    with pytest.raises(CorruptStoreError, match="array 'weights' is missing"):
        open_run(path)
    path = _finished(tmp_path / "b.zarr")
    zarr.open_group(str(path), mode="r+").create_array("extra", data=np.arange(2))
    with pytest.raises(CorruptStoreError, match="array 'extra' was not part of the finished"):
        open_run(path)
    path = _finished(tmp_path / "c.zarr")
    group = zarr.open_group(str(path), mode="r+")
    group.attrs["results"] = {"ACC": 0.99}
    with pytest.raises(CorruptStoreError, match="attributes .* were changed"):
        open_run(path)


def test_a_forged_completion_marker_is_corrupt(tmp_path):
    path = tmp_path / "run.zarr"
    run = create_run(path, kind="t")
    run.write_array("x", np.arange(3))
    run.close()
    group = zarr.open_group(str(path), mode="r+")
    group.attrs["daskfair"] = {**group.attrs["daskfair"], "status": "complete"}
    with pytest.raises(CorruptStoreError, match="marked complete but has no record of its files"):
        open_run(path)


@pytest.mark.parametrize("older", [1, 2])
def test_a_run_of_an_earlier_format_is_refused_naming_it(tmp_path, older):
    # formats 1 and 2 stored the renamed keys (pairs, n_starts, lambda1, ...): refused
    path = _finished(tmp_path / "run.zarr")
    group = zarr.open_group(str(path), mode="r+")
    group.attrs["daskfair"] = {**group.attrs["daskfair"], "format": older}
    with pytest.raises(StoreError, match=f"format {older} .*reads format {STORE_FORMAT} only"):
        open_run(path)


def test_the_marker_comes_after_every_file_is_flushed(tmp_path, monkeypatch):
    """fsync of every result file, then the marker, then fsync of the marker."""
    from daskfair.store import integrity

    path = tmp_path / "run.zarr"
    run = create_run(path, kind="t")
    run.write_array("x", np.arange(100), chunks=(10,))
    events = []
    real = integrity._fsync

    def spy(p, flags):
        status = zarr.open_group(str(path), mode="r").attrs["daskfair"]["status"]
        events.append((Path(p).relative_to(path).as_posix(), status))
        return real(p, flags)

    monkeypatch.setattr(integrity, "_fsync", spy)
    run.mark_complete()
    chunks = [e for e in events if e[0].startswith("x/c/")]
    assert len(chunks) == 10 and all(s == "running" for _, s in chunks)
    assert events[-2:] == [("zarr.json", "complete"), (".", "complete")]
    first_complete = next(i for i, e in enumerate(events) if e[1] == "complete")
    assert all(s == "running" for _, s in events[:first_complete])


def test_overwrite_never_follows_a_symbolic_link(tmp_path):
    """A link inside a run (to another store, to a user's folder) is never followed: the run
    is not replaced, and what the link points to keeps every file."""
    other = create_run(tmp_path / "other.zarr", kind="t")
    other.write_array("labels", np.arange(10), chunks=(5,))
    other.mark_complete()
    before = sorted(p.relative_to(tmp_path) for p in (tmp_path / "other.zarr").rglob("*"))
    path = tmp_path / "run.zarr"
    run = create_run(path, kind="t")
    run.write_array("x", np.arange(3))
    run.mark_complete()
    (path / "linked").symlink_to(tmp_path / "other.zarr", target_is_directory=True)
    with pytest.raises(FileExistsError, match=r"not replaced: .*run.zarr/linked is a symbolic "
                       "link"):
        create_run(path, kind="t", overwrite=True)
    after = sorted(p.relative_to(tmp_path) for p in (tmp_path / "other.zarr").rglob("*"))
    assert after == before and open_run(tmp_path / "other.zarr").read_array("labels").size == 10
    assert not (path / LEASE_NAME).exists()
    with pytest.raises(CorruptStoreError, match="linked is a symbolic link"):  # nor read
        open_run(path)
    (path / "linked").unlink()
    np.testing.assert_array_equal(open_run(path).read_array("x"), np.arange(3))  # untouched


def test_overwrite_by_kind_replaces_only_a_run_of_that_kind(tmp_path):
    """The demo replaces its own run without --overwrite, and nothing else."""
    path = tmp_path / "run.zarr"
    run = create_run(path, kind="fkr")
    run.mark_complete()
    with pytest.raises(FileExistsError, match="holds a fkr run, and only a demo run there is "
                                              "replaced"):
        check_new_store(path, overwrite="demo")
    with pytest.raises(FileExistsError, match="only a demo run"):
        create_run(path, kind="demo", overwrite="demo")
    assert open_run(path).kind == "fkr"
    shutil.rmtree(path)
    create_run(path, kind="demo").mark_complete()
    create_run(path, kind="demo", overwrite="demo").mark_complete()
    assert open_run(path).kind == "demo"


def test_the_exists_message_offers_resume_for_a_resumable_unfinished_run(tmp_path):
    path = tmp_path / "run.zarr"
    create_run(path, kind="fce").close()  # interrupted: running, no lease
    with pytest.raises(FileExistsError, match=r"holds a fce run \(incomplete\).*resume=True.*"
                                              r"overwrite=True"):
        check_new_store(path)
    shutil.rmtree(path)
    create_run(path, kind="fkr").mark_complete()
    with pytest.raises(FileExistsError) as info:
        check_new_store(path)
    assert "(complete)" in str(info.value) and "--resume" not in str(info.value)


def test_a_link_made_although_nfs_reported_it_existing_is_our_lease(tmp_path, monkeypatch):
    """NFS retries a link whose reply was lost; the retry reports EEXIST for the link it
    made. The run holds the lease, not a refusal naming itself."""
    real_link = os.link

    def lost_reply(src, dst):
        real_link(src, dst)
        raise FileExistsError(17, "File exists", str(dst))

    monkeypatch.setattr(os, "link", lost_reply)
    run = create_run(tmp_path / "run.zarr", kind="t")
    monkeypatch.setattr(os, "link", real_link)
    run.write_array("x", np.arange(3))
    run.mark_complete()
    assert not (tmp_path / "run.zarr" / LEASE_NAME).exists()
    assert open_run(tmp_path / "run.zarr").array_names() == ["x"]


def test_the_refresh_survives_a_file_system_hiccup(tmp_path, monkeypatch):
    """One ESTALE while reading the lease does not stop the refresh; errors that last half
    the stale time do, and the run then stops writing."""
    import daskfair.store.lease as lease_mod

    real = lease_mod.read_lease
    calls = {"n": 0}

    def flaky(store):
        calls["n"] += 1
        if calls["n"] == 1:
            raise OSError(116, "Stale file handle")
        return real(store)

    monkeypatch.setattr(lease_mod, "read_lease", flaky)
    path = tmp_path / "run.zarr"
    with dask.config.set({"daskfair.lease-refresh": 0.05}):
        run = create_run(path, kind="t")
    deadline = time.time() + 10
    while calls["n"] < 4 and time.time() < deadline:
        time.sleep(0.05)
    run.write_array("x", np.arange(3))  # still its lease
    run.mark_complete()

    monkeypatch.setattr(lease_mod, "read_lease", lambda store: (_ for _ in ()).throw(
        OSError(5, "Input/output error")))
    with dask.config.set({"daskfair.lease-refresh": 0.05, "daskfair.lease-stale": 0.4}):
        run = create_run(tmp_path / "two.zarr", kind="t")
        time.sleep(0.6)
    monkeypatch.setattr(lease_mod, "read_lease", real)
    with pytest.raises(StoreLockedError, match="could not be read for"):
        run.write_array("x", np.arange(3))


def test_attributes_beyond_what_a_reader_takes_are_refused_when_written(tmp_path, monkeypatch):
    """A run whose attributes a reader would refuse (over ROOT_META_LIMIT) is refused when
    they are written, and left unfinished; a root that large is refused unread."""
    from daskfair.store import access
    from daskfair.store import run as run_module

    monkeypatch.setattr(run_module, "ROOT_META_LIMIT", 4096)
    run = create_run(tmp_path / "r.zarr", kind="t")
    with pytest.raises(StoreError, match=r"attributes hold .* bytes, more than the 4,096 a "
                                         r"reader takes \(table\)"):
        run.set_attrs(table=list(range(2000)))
    run.close()
    monkeypatch.setattr(access, "ROOT_META_LIMIT", 4096)
    with pytest.raises(StoreError, match=r"zarr.json holds .* bytes, more than a run's "
                                         r"attributes may \(4,096\); it is refused unread"):
        open_run(tmp_path / "r.zarr", allow_incomplete=True)
