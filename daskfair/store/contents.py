"""What a store path holds, and removing exactly the files daskfair wrote there."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from .._files import UnsafePathError, read_bounded, walk_plain
from .integrity import CHECKPOINT_PREFIX, is_scratch
from .lease import LEASE_NAME, SCRATCH_PREFIX

__all__ = ["ROOT_META_LIMIT", "classify", "describe_entries", "list_entries", "read_root",
           "remove_run"]

Kind = Literal["missing", "file", "empty", "run", "foreign", "unreadable"]
_META = "zarr.json"
#: The most bytes a run's root ``zarr.json`` (its attributes, a saved model's tree) may hold.
ROOT_META_LIMIT = 16 * 2**20


def read_root(path: Path) -> dict[str, Any] | None:
    """The root ``zarr.json`` of ``path`` as a dict; None when absent; ValueError when not
    a JSON object, a link or a device, or larger than :data:`ROOT_META_LIMIT`."""
    try:
        text = read_bounded(path / _META, ROOT_META_LIMIT)
    except FileNotFoundError:
        return None
    try:
        meta = json.loads(text)
    except (UnicodeDecodeError, RecursionError) as exc:
        raise ValueError(str(exc)) from None
    if not isinstance(meta, dict):
        raise ValueError("not a JSON object")
    return meta


def list_entries(path: Path) -> list[str]:
    """The directory's entries other than the lease and scratch files (dirs end with /)."""
    return sorted(p.name + ("/" if p.is_dir() and not p.is_symlink() else "")
                  for p in path.iterdir() if p.name != LEASE_NAME and not is_scratch(p.name))


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


def _zarr_shaped(rel: str) -> bool:
    """A zarr v3 node's metadata, or a chunk key below an array (``…/c/0/1``)."""
    parts = rel.split("/")
    if parts[-1] == _META:
        return True
    if "c" not in parts[1:]:
        return False
    at = len(parts) - 1 - parts[::-1].index("c")
    return all(p.isdigit() for p in parts[at + 1:])


def _written(rel: str, info: Mapping[str, Any]) -> bool:
    """Whether daskfair wrote the file ``rel`` of a run whose marker is ``info``: its
    manifest lists it, or it is zarr's file of a node the run recorded or a checkpoint."""
    if rel in (_META, LEASE_NAME) or is_scratch(rel.rsplit("/", 1)[-1]):
        return True
    manifest = info.get("manifest")
    if isinstance(manifest, dict) and isinstance(manifest.get("files"), dict) \
            and rel in manifest["files"]:
        return True
    top = rel.split("/", 1)[0]
    nodes = info.get("nodes")
    recorded = isinstance(nodes, list) and top in nodes
    return "/" in rel and (recorded or top.startswith(CHECKPOINT_PREFIX)) and _zarr_shaped(rel)


def remove_run(path: Path, info: Mapping[str, Any], *, dry_run: bool = False) -> None:
    """Remove the files daskfair wrote in the run at ``path`` (its marker ``info``), the root's
    metadata last, so that an interruption leaves a run the next overwrite recognises.

    Nothing is removed when anything else is there: FileExistsError names it (a user's file,
    an array added by hand, a link), and the run stays as it is. ``dry_run`` only checks.
    """
    try:
        files = walk_plain(path)
    except UnsafePathError as exc:
        raise FileExistsError(f"{path} is not replaced: {exc}") from None
    foreign = sorted(rel for rel in files if not _written(rel, info))
    if foreign:
        shown = ", ".join(foreign[:5]) + (", …" if len(foreign) > 5 else "")
        raise FileExistsError(
            f"{path} holds a daskfair run and {len(foreign)} file(s) daskfair did not write "
            f"({shown}); nothing in it is removed. Move those files out, or choose another "
            "path.")
    if dry_run:
        return
    folders: set[Path] = set()
    for rel in sorted(files, key=lambda r: -r.count("/")):
        if rel in (_META, LEASE_NAME) or rel.startswith(SCRATCH_PREFIX):
            continue
        (path / rel).unlink(missing_ok=True)
        folders.update(p for p in (path / rel).parents if path in p.parents)
    for folder in sorted(folders, key=lambda p: -len(p.parts)):
        try:
            folder.rmdir()
        except OSError:  # not empty: a folder of a scratch file that is still being written
            pass
    (path / _META).unlink(missing_ok=True)
