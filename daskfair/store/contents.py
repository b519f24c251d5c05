"""What a store path holds, and removing exactly what daskfair wrote there."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any, Literal

from .lease import LEASE_NAME, SCRATCH_PREFIX

__all__ = ["classify", "list_entries", "read_root", "remove_run", "symlinks_in"]

Kind = Literal["missing", "file", "empty", "run", "foreign", "unreadable"]
_META = "zarr.json"


def read_root(path: Path) -> dict[str, Any] | None:
    """The root ``zarr.json`` of ``path`` as a dict; None when absent; ValueError when not
    a JSON object."""
    try:
        meta = json.loads((path / _META).read_text())
    except FileNotFoundError:
        return None
    except UnicodeDecodeError as exc:
        raise ValueError(str(exc)) from None
    if not isinstance(meta, dict):
        raise ValueError("not a JSON object")
    return meta


def _is_scratch(name: str) -> bool:
    """A zarr or lease scratch file (zarr writes a key to ``<key>.<uuid>.partial`` first)."""
    return name.endswith(".partial") or name.startswith(SCRATCH_PREFIX)


def list_entries(path: Path) -> list[str]:
    """The directory's entries other than the lease and scratch files (dirs end with /)."""
    return sorted(p.name + ("/" if p.is_dir() else "") for p in path.iterdir()
                  if p.name != LEASE_NAME and not _is_scratch(p.name))


def classify(path: Path) -> Kind:
    """What ``path`` is, as far as daskfair may touch it (only "empty" and "run" are
    written to)."""
    if not path.exists():
        return "missing"
    if not path.is_dir():
        return "file"
    try:
        meta = read_root(path)
    except (OSError, ValueError):
        return "unreadable"
    if meta is None:
        return "empty" if not list_entries(path) else "foreign"
    info = meta.get("attributes", {}).get("daskfair")
    return "run" if isinstance(info, dict) and "format" in info else "foreign"


def describe_entries(path: Path, limit: int = 5) -> str:
    """The directory's entries in words: how many, and the first ``limit`` (default 5)."""
    entries = list_entries(path)
    shown = ", ".join(entries[:limit]) + (", …" if len(entries) > limit else "")
    return f"{len(entries)} entr{'y' if len(entries) == 1 else 'ies'}: {shown}"


def symlinks_in(path: Path, limit: int = 3) -> list[str]:
    """Symbolic links below ``path`` (daskfair never makes one), not followed; at most
    ``limit``."""
    found: list[str] = []
    for root, dirs, files in os.walk(path):  # os.walk does not descend into linked dirs
        found += [str(Path(root, n).relative_to(path)) for n in (*dirs, *files)
                  if Path(root, n).is_symlink()]
        if len(found) >= limit:
            break
    return found[:limit]


def _remove_node(node: Path) -> None:
    """Remove a zarr node's children, chunks, scratch files and metadata, then its directory
    if nothing else is left in it."""
    for child in node.iterdir():
        if child.is_symlink():  # never followed (create_run refuses such a run)
            continue
        if child.is_dir() and (child / _META).exists():
            _remove_node(child)
        elif child.is_dir() and child.name == "c" and _is_array(node):
            shutil.rmtree(child)  # the chunks (zarr v3's default chunk key encoding)
        elif child.is_file() and _is_scratch(child.name) and child.name != LEASE_NAME:
            child.unlink()
    (node / _META).unlink(missing_ok=True)
    try:
        node.rmdir()
    except OSError:  # something that is not daskfair's is left in it
        pass


def _is_array(node: Path) -> bool:
    """Whether the node's metadata says it is an array."""
    try:
        return json.loads((node / _META).read_text()).get("node_type") == "array"
    except (OSError, ValueError):
        return False


def remove_run(path: Path) -> None:
    """Remove the run's nodes below the root of ``path``, the root's metadata last: an
    interruption leaves a run the next overwrite recognises."""
    for child in path.iterdir():
        if child.is_symlink():
            continue
        if child.is_dir() and (child / _META).exists():
            _remove_node(child)
        elif child.is_file() and child.name.endswith(".partial"):
            child.unlink()
    (path / _META).unlink(missing_ok=True)
