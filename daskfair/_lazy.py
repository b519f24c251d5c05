"""Packages whose public names are imported when first used (``import daskfair`` and a fit of
one estimator load only what they need: docs/design.md#first-calls)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from importlib import import_module
from typing import Any

__all__ = ["lazy_names"]


def lazy_names(package: str, names: Mapping[str, str]
               ) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """A package's ``__getattr__`` and ``__dir__`` for ``names`` (public name → submodule).

    Parameters
    ----------
    package : str
        The package's ``__name__``.
    names : mapping of str to str
        Each public name and the submodule (relative to ``package``) that defines it.

    Returns
    -------
    (callable, callable)
        ``__getattr__`` and ``__dir__``.
    """

    def getattr_(name: str) -> Any:
        if name in names:
            return getattr(import_module(f".{names[name]}", package), name)
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    def dir_() -> list[str]:
        return sorted(names)

    return getattr_, dir_
