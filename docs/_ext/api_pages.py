"""Write the API reference's index from the public names the packages export.

Every name of ``daskfair.__all__`` gets a page under ``daskfair.``; then every public module
(a subpackage or a module whose name does not start with ``_``) gets a section with the names
of its ``__all__`` that the top level does not already export.
"""

from __future__ import annotations

import importlib
import inspect
from pathlib import Path

import daskfair

#: The public modules, in the order of the reference page, with a one-line title.
MODULES = [
    ("daskfair.fkr", "FKR-F²E: fair kernel classification and regression"),
    ("daskfair.safairkm", "SAfairKM, VfairKM and SA2GD: fair k-means fronts"),
    ("daskfair.ensemble", "FCE: fair clustering ensembles"),
    ("daskfair.metrics", "Fairness and clustering metrics"),
    ("daskfair.datasets", "Data sets and synthetic data"),
    ("daskfair.tables", "Tables: reading and encoding your own data"),
    ("daskfair.store", "Run stores"),
    ("daskfair.models", "Saved models and predictions for tables"),
    ("daskfair.runtime", "Where the work runs: clients, SLURM/PBS clusters"),
    ("daskfair.kernels", "Kernels"),
    ("daskfair.nystroem", "Nyström features"),
    ("daskfair.progress", "Progress bars"),
]


def public_names(module: str) -> list[str]:
    """The names of ``module.__all__`` that are not private."""
    mod = importlib.import_module(module)
    return [n for n in getattr(mod, "__all__", []) if not n.startswith("_")]


def _entry(module: str, name: str) -> tuple[str, str]:
    obj = getattr(importlib.import_module(module), name)
    kind = "class" if inspect.isclass(obj) else "function" if callable(obj) else "data"
    return name, kind


def _table(module: str, names: list[str]) -> list[str]:
    lines = [f".. currentmodule:: {module}", ""]
    for kind in ("class", "function", "data"):
        chosen = [n for n, k in (_entry(module, n) for n in names) if k == kind]
        if not chosen:
            continue
        lines += [".. autosummary::", "   :toctree: generated/",
                  "", *[f"   {n}" for n in chosen], ""]
    return lines


def write_api_index(path: Path) -> None:
    """Write the reference's index page (an autosummary per module) to ``path``."""
    top = [n for n in daskfair.__all__ if n != "__version__"]
    top_objects = {id(getattr(daskfair, n)) for n in top}
    lines = [
        ".. This file is written by docs/_ext/api_pages.py at every build; do not edit.",
        "",
        "API reference",
        "=============",
        "",
        "Everything ``import daskfair`` exports, then each public module's own names (those",
        "the top level does not export). Modules whose names start with ``_`` are private.",
        "The command line has its own page: :doc:`../cli`.",
        "",
        "daskfair",
        "--------",
        "",
        ".. automodule:: daskfair",
        "   :no-members:",
        "   :no-index:",
        "",
        *_table("daskfair", top),
    ]
    for module, title in MODULES:
        names = [n for n in public_names(module)
                 if id(getattr(importlib.import_module(module), n)) not in top_objects]
        lines += [module, "-" * len(module), "", title + ".", "",
                  f".. automodule:: {module}", "   :no-members:", "   :no-index:", ""]
        shared = [n for n in public_names(module) if n in top
                  and getattr(importlib.import_module(module), n) is getattr(daskfair, n)]
        if shared:
            refs = ", ".join(f":obj:`~daskfair.{n}`" for n in shared)
            lines += [f"Also here, documented above: {refs}.", ""]
        if names:
            lines += _table(module, names)
    text = "\n".join(lines) + "\n"
    path.parent.mkdir(parents=True, exist_ok=True)  # api/ holds only generated files
    if not path.exists() or path.read_text() != text:
        path.write_text(text)
