"""The user's folders of daskfair: downloaded data sets and compiled block functions."""

from __future__ import annotations

import os
import sys
from pathlib import Path

__all__ = ["user_cache_dir"]


def user_cache_dir(name: str) -> Path:
    """The user's cache folder ``name`` of daskfair (not created here).

    Parameters
    ----------
    name : str
        The subfolder: ``"data"`` for data sets, ``"compiled"`` for block functions.

    Returns
    -------
    pathlib.Path
        ``~/.cache/daskfair/NAME`` on Linux (or under an absolute ``XDG_CACHE_HOME``),
        ``~/Library/Caches/daskfair/NAME`` on macOS, ``%LOCALAPPDATA%\\daskfair\\Cache\\NAME``
        on Windows.
    """
    if sys.platform == "win32":
        base = Path(os.environ.get("LOCALAPPDATA") or Path.home() / "AppData" / "Local")
        return base / "daskfair" / "Cache" / name
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Caches" / "daskfair" / name
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    base = Path(xdg) if os.path.isabs(xdg) else Path.home() / ".cache"  # XDG: relative ignored
    return base / "daskfair" / name
