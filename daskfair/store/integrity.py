"""A complete run's manifest of its result files, and its check."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

__all__ = ["CHECKPOINT_PREFIX", "attributes_digest", "build_manifest", "result_arrays",
           "sync_dir", "sync_tree", "sync_tree_root", "verify"]

_META = "zarr.json"
#: Names of checkpoint groups start with this.
CHECKPOINT_PREFIX = "checkpoint_"
#: attributes that change after the marker (the checkpoint pointer is removed) or hold it
_UNSIGNED = ("daskfair", "checkpoint")


def _node_dirs(root: Path) -> Iterator[tuple[str, Path, dict[str, Any]]]:
    """(name, directory, metadata) of every zarr node below the root, checkpoints excluded."""
    for dirpath, dirnames, filenames in os.walk(root):
        here = Path(dirpath)
        rel = here.relative_to(root).as_posix()
        if rel == ".":
            dirnames[:] = [d for d in dirnames if not d.startswith(CHECKPOINT_PREFIX)]
            continue
        if _META not in filenames:
            continue
        try:
            meta = json.loads((here / _META).read_text())
        except (OSError, ValueError):
            meta = {"node_type": "unreadable"}
        yield rel, here, meta
        if meta.get("node_type") == "array":
            dirnames[:] = []  # its chunks are listed by _array_files


def _array_files(array: Path) -> list[Path]:
    """The files of an array's directory (metadata and chunks), in a fixed order."""
    files = [Path(d) / f for d, _, names in os.walk(array) for f in names
             if not f.endswith(".partial")]
    return sorted(files, key=lambda p: p.relative_to(array).as_posix())


def result_arrays(root: Path) -> dict[str, Path]:
    """Every array of the run but its checkpoints (and unreadable nodes), by name."""
    return {name: d for name, d, meta in _node_dirs(root)
            if meta.get("node_type") in ("array", "unreadable")}


def _record(array: Path, *, contents: bool) -> dict[str, Any]:
    """An array's file count and bytes, and with ``contents`` the BLAKE2b of its files."""
    files = _array_files(array)
    out: dict[str, Any] = {"files": len(files), "bytes": sum(f.stat().st_size for f in files)}
    if contents:
        h = hashlib.blake2b(digest_size=16)
        for f in files:
            h.update(f.relative_to(array).as_posix().encode() + b"\0")
            with f.open("rb") as fh:
                while block := fh.read(1 << 20):
                    h.update(block)
        out["blake2b"] = h.hexdigest()
    return out


def attributes_digest(attrs: Mapping[str, Any]) -> str:
    """BLAKE2b of the run's attributes but the marker and the checkpoint pointer."""
    signed = {k: v for k, v in attrs.items() if k not in _UNSIGNED}
    text = json.dumps(signed, sort_keys=True, separators=(",", ":"), allow_nan=True)
    return hashlib.blake2b(text.encode(), digest_size=16).hexdigest()


def build_manifest(root: Path, attrs: Mapping[str, Any]) -> dict[str, Any]:
    """The manifest of a run about to be marked complete."""
    return {"arrays": {name: _record(d, contents=True)
                       for name, d in sorted(result_arrays(root).items())},
            "attributes": attributes_digest(attrs)}


def verify(root: Path, manifest: Any, attrs: Mapping[str, Any], *, contents: bool,
           names: list[str] | None = None) -> list[str]:
    """What differs between the run's files and its manifest (empty when nothing does); with
    ``names``, only those arrays are checked."""
    if not isinstance(manifest, dict) or not isinstance(manifest.get("arrays"), dict):
        return ["it is marked complete but has no record of its files: the completion marker "
                "was not written by daskfair's completion step"]
    problems = []
    recorded: dict[str, Any] = manifest["arrays"]
    present = result_arrays(root)
    if names is None:
        if manifest.get("attributes") != attributes_digest(attrs):
            problems.append("its attributes (parameters or results) were changed after it "
                            "finished")
        problems += [f"array {name!r} is missing"
                     for name in sorted(set(recorded) - set(present))]
        problems += [f"array {name!r} was not part of the finished run"
                     for name in sorted(set(present) - set(recorded))]
    for name in sorted(set(present) & set(recorded) & set(names or present)):
        want, have = recorded[name], _record(present[name], contents=False)
        if (have["files"], have["bytes"]) != (want.get("files"), want.get("bytes")):
            problems.append(
                f"array {name!r} has {have['files']} files of {have['bytes']:,} bytes where "
                f"{want.get('files')} files of {want.get('bytes'):,} bytes were written (a chunk "
                "is truncated, missing or extra)")
        elif contents and _record(present[name], contents=True)["blake2b"] != want.get(
                "blake2b"):
            problems.append(f"array {name!r} has other contents than were written (a chunk "
                            "or its metadata was altered)")
    return problems


def _fsync(path: Path, flags: int) -> None:
    """Flush one file or directory to disk."""
    fd = os.open(path, flags)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def sync_tree(root: Path) -> None:
    """Flush every file and directory of the run but its checkpoints to disk."""
    for dirpath, dirnames, filenames in os.walk(root):
        here = Path(dirpath)
        if here == root:
            dirnames[:] = [d for d in dirnames if not d.startswith(CHECKPOINT_PREFIX)]
        for name in filenames:
            if not name.endswith(".partial"):
                with contextlib.suppress(FileNotFoundError):  # a lease's scratch file, gone
                    _fsync(here / name, os.O_RDONLY)
        sync_dir(here)


def sync_tree_root(root: Path) -> None:
    """Flush the root metadata (the completion marker) and the root directory."""
    _fsync(root / _META, os.O_RDONLY)
    sync_dir(root)


def sync_dir(path: Path) -> None:
    """Flush a directory's entries (a rename or a new file in it) to disk, where possible."""
    try:
        _fsync(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:  # some file systems cannot fsync a directory
        pass
