"""A complete run's manifest: every file of it with its size and digest, and its check."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .._files import UnsafePathError, walk_plain
from .errors import CorruptStoreError
from .lease import LEASE_NAME, SCRATCH_PREFIX

__all__ = ["CHECKPOINT_PREFIX", "attributes_digest", "build_manifest", "is_scratch",
           "manifest_digest", "plain_files", "signed_files", "sync_dir", "sync_tree",
           "sync_tree_root", "verify"]

_META = "zarr.json"
#: Names of checkpoint groups start with this.
CHECKPOINT_PREFIX = "checkpoint_"
#: The keys of the ``daskfair`` marker that the manifest cannot cover (it is one of them).
_UNSIGNED_MARKER = ("manifest",)


def is_scratch(name: str) -> bool:
    """A zarr or lease scratch file (zarr writes a key to ``<key>.<uuid>.partial`` first)."""
    return name.endswith(".partial") or name.startswith(SCRATCH_PREFIX)


def plain_files(root: Path) -> dict[str, int]:
    """Every file of the store at ``root`` and its size; CorruptStoreError for a link, device,
    FIFO or socket anywhere in it (daskfair writes none, and never follows one out)."""
    try:
        return walk_plain(root)
    except UnsafePathError as exc:
        raise CorruptStoreError(f"the store {root} is refused unread: {exc}") from None


def signed_files(files: Mapping[str, int]) -> dict[str, int]:
    """The files a manifest covers: all but the root metadata (it holds the manifest), the
    lease, scratch files and checkpoint groups (which change after the marker)."""
    return {rel: size for rel, size in files.items()
            if rel not in (_META, LEASE_NAME) and not is_scratch(rel.rsplit("/", 1)[-1])
            and not rel.startswith(CHECKPOINT_PREFIX)}


def _file_digest(path: Path) -> str:
    h = hashlib.blake2b(digest_size=32)
    with path.open("rb") as fh:
        while block := fh.read(1 << 20):
            h.update(block)
    return h.hexdigest()


def attributes_digest(attrs: Mapping[str, Any]) -> str:
    """BLAKE2b of the run's attributes: all of them (the ``daskfair`` marker too) but the
    manifest and the checkpoint pointer."""
    signed = {k: v for k, v in attrs.items() if k != "checkpoint"}
    if isinstance(signed.get("daskfair"), dict):
        signed["daskfair"] = {k: v for k, v in signed["daskfair"].items()
                              if k not in _UNSIGNED_MARKER}
    text = json.dumps(signed, sort_keys=True, separators=(",", ":"), allow_nan=True)
    return hashlib.blake2b(text.encode(), digest_size=32).hexdigest()


def build_manifest(root: Path, attrs: Mapping[str, Any]) -> dict[str, Any]:
    """The manifest of a run about to be marked complete, ``attrs`` its attributes as they
    will be stored (the marker saying "complete")."""
    files = signed_files(plain_files(root))
    return {"files": {rel: [files[rel], _file_digest(root / rel)] for rel in sorted(files)},
            "attributes": attributes_digest(attrs)}


def manifest_digest(manifest: Mapping[str, Any]) -> str:
    """The digest of a whole run: BLAKE2b-256 of its manifest, which holds every file's digest
    and the attributes' (what a sender publishes so that a receiver can compare it)."""
    text = json.dumps(manifest, sort_keys=True, separators=(",", ":"))
    return hashlib.blake2b(text.encode(), digest_size=32).hexdigest()


def _valid(manifest: Any) -> bool:
    files = manifest.get("files") if isinstance(manifest, dict) else None
    return isinstance(files, dict) and isinstance(manifest.get("attributes"), str) and all(
        isinstance(v, list) and len(v) == 2 and type(v[0]) is int and isinstance(v[1], str)
        for v in files.values())


def verify(root: Path, manifest: Any, attrs: Mapping[str, Any], files: Mapping[str, int], *,
           contents: bool, prefix: str | None = None) -> list[str]:
    """What differs between the run's ``files`` (:func:`plain_files`) and its manifest (empty
    when nothing does); with ``prefix``, only the files of that array or group."""
    if not _valid(manifest):
        return ["it is marked complete but has no record of its files: the completion marker "
                "was not written by daskfair's completion step"]
    recorded: dict[str, list] = manifest["files"]
    present = signed_files(files)
    if prefix is not None:
        recorded = {k: v for k, v in recorded.items() if k.startswith(f"{prefix}/")}
        present = {k: v for k, v in present.items() if k.startswith(f"{prefix}/")}
    problems = []
    if prefix is None and manifest["attributes"] != attributes_digest(attrs):
        problems.append("its attributes (parameters, results or its marker) were changed "
                        "after it finished")
    problems += _node_problems(recorded, present)
    both = sorted(set(present) & set(recorded))
    problems += [f"{_where(rel)} has {present[rel]:,} bytes where {recorded[rel][0]:,} were "
                 "written (a chunk is truncated or grew)"
                 for rel in both if present[rel] != recorded[rel][0]]
    if contents and not problems:
        problems += [f"{_where(rel)} has other contents than were written (a chunk or its "
                     "metadata was altered)"
                     for rel in both if _file_digest(root / rel) != recorded[rel][1]]
    return problems[:8] + ([f"and {len(problems) - 8} more"] if len(problems) > 8 else [])


def _node(rel: str) -> tuple[str, str]:
    """The zarr node a file belongs to and its name in it: ``labels/c/3`` → (labels, c/3)."""
    parts = rel.split("/")
    if parts[-1] != _META and "c" in parts[1:]:
        at = len(parts) - 1 - parts[::-1].index("c")
        return "/".join(parts[:at]), "/".join(parts[at:])
    return "/".join(parts[:-1]), parts[-1]


def _where(rel: str) -> str:
    node, name = _node(rel)
    if node and (name == _META or name.split("/", 1)[0] == "c"):
        return f"array {node!r} (its file {name})"
    return f"file {rel!r}"


def _node_problems(recorded: Mapping[str, Any], present: Mapping[str, Any]) -> list[str]:
    """Whole arrays missing or added, then single files missing or added."""
    def nodes(files: Mapping[str, Any]) -> dict[str, set[str]]:
        out: dict[str, set[str]] = {}
        for rel in files:
            if _where(rel).startswith("array"):
                out.setdefault(_node(rel)[0], set()).add(rel)
        return out

    want, have = nodes(recorded), nodes(present)
    whole = set(want) ^ set(have)
    problems = [f"array {n!r} is missing" for n in sorted(set(want) - set(have))]
    problems += [f"array {n!r} was not part of the finished run"
                 for n in sorted(set(have) - set(want))]
    single = [rel for rel in sorted(set(recorded) ^ set(present))
              if not (_where(rel).startswith("array") and _node(rel)[0] in whole)]
    problems += [f"{_where(rel)} " + ("is missing" if rel in recorded
                                      else "was not part of the finished run")
                 for rel in single]
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
    folders = {root}
    for rel in signed_files(plain_files(root)):
        with contextlib.suppress(FileNotFoundError):  # a lease's scratch file, gone
            _fsync(root / rel, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        folders.update((root / rel).parents)
    for folder in sorted(f for f in folders if f == root or root in f.parents):
        sync_dir(folder)


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
