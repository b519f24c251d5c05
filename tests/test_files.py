"""daskfair/_files.py: what a store's reader and an output's writer trust of the file system:
plain files only, bounded reads, new files created exclusively and renamed into place."""

from __future__ import annotations

import os

import pytest

from daskfair._files import (
    UnsafePathError,
    check_output_path,
    plain_folder,
    read_bounded,
    read_head,
    walk_plain,
    write_new,
)


def test_the_walk_lists_plain_files_and_refuses_anything_else(tmp_path):
    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "a" / "b" / "x").write_bytes(b"12345")
    (tmp_path / "y").write_bytes(b"")
    assert walk_plain(tmp_path) == {"a/b/x": 5, "y": 0}
    with pytest.raises(UnsafePathError, match="more than 1 folders deep"):
        walk_plain(tmp_path, max_depth=1)
    with pytest.raises(UnsafePathError, match="more than 2 entries"):
        walk_plain(tmp_path, max_entries=2)
    os.mkfifo(tmp_path / "a" / "pipe")
    with pytest.raises(UnsafePathError, match=r"a/pipe is a FIFO"):
        walk_plain(tmp_path)
    (tmp_path / "a" / "pipe").unlink()
    (tmp_path / "a" / "up").symlink_to(tmp_path, target_is_directory=True)
    with pytest.raises(UnsafePathError, match=r"a/up is a symbolic link"):
        walk_plain(tmp_path)
    assert plain_folder(tmp_path, "a/b") == tmp_path / "a" / "b"
    for rel, what in (("a/up/a", "symbolic link"), ("y/z", "a file"), ("a/../a", "not a path")):
        with pytest.raises(UnsafePathError, match=what):
            plain_folder(tmp_path, rel)


def test_a_bounded_read_never_follows_blocks_or_reads_past_its_limit(tmp_path):
    (tmp_path / "f").write_bytes(b"x" * 100)
    assert read_bounded(tmp_path / "f", 100) == b"x" * 100
    assert read_head(tmp_path / "f", 7) == b"x" * 7
    with pytest.raises(UnsafePathError, match="holds 100 bytes, more than the 99"):
        read_bounded(tmp_path / "f", 99)
    os.mkfifo(tmp_path / "pipe")  # opened without blocking, refused before any read
    with pytest.raises(UnsafePathError, match="is a FIFO"):
        read_bounded(tmp_path / "pipe", 10)
    (tmp_path / "zero").symlink_to("/dev/zero")
    with pytest.raises(UnsafePathError, match="is a symbolic link"):
        read_head(tmp_path / "zero", 10)
    with pytest.raises(FileNotFoundError):
        read_bounded(tmp_path / "none", 10)


def test_a_new_file_is_written_whole_and_never_through_a_link(tmp_path):
    victim = tmp_path / "victim"
    victim.write_text("keep")
    out = tmp_path / "out.html"
    write_new(out, b"one")
    with pytest.raises(FileExistsError, match="exists; it is not replaced"):
        write_new(out, b"two")
    write_new(out, b"two", replace=True)
    assert out.read_bytes() == b"two"
    assert [p.name for p in tmp_path.iterdir() if "partial" in p.name] == []
    (tmp_path / "link").symlink_to(victim)
    for call in (lambda: check_output_path(tmp_path / "link", "the report"),
                 lambda: write_new(tmp_path / "link", b"x", replace=True)):
        with pytest.raises(UnsafePathError, match="link is a symbolic link"):
            call()
    with pytest.raises(UnsafePathError, match="is a folder"):
        write_new(tmp_path, b"x", replace=True)
    assert victim.read_text() == "keep"
