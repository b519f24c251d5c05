"""The library never imports the paper reproduction (``daskfair.reproduce``).

Only the command line (``daskfair.cli``) and the reproduction itself may: every other module
of the package is read with ``ast`` and each of its imports, relative ones resolved, is
checked — lazy imports inside functions included, and strings naming the package that
``importlib.import_module`` could be given (how ``daskfair/__init__.py`` imports its public
names).
"""

import ast
import re
from pathlib import Path

import daskfair

PACKAGE = Path(daskfair.__file__).parent
FORBIDDEN = "daskfair.reproduce"
ALLOWED = ("daskfair.cli", "daskfair.reproduce")
# a module name that is the reproduction's, absolute or relative, as a string
NAMED = re.compile(r"\.*(daskfair\.)?reproduce(\.\w+)*")


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imported(tree: ast.AST, module: str, is_package: bool) -> list[str]:
    """Every module name ``tree`` imports, absolute; ``from M import n`` gives M and M.n."""
    package = module if is_package else module.rpartition(".")[0]
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[:len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            names += [base, *(f"{base}.{alias.name}" for alias in node.names)]
        elif (isinstance(node, ast.Constant) and isinstance(node.value, str)
              and NAMED.fullmatch(node.value)):
            names.append(FORBIDDEN)
    return names


def _offenders(names: list[str]) -> list[str]:
    return [n for n in names if n == FORBIDDEN or n.startswith(FORBIDDEN + ".")]


def test_the_checker_sees_every_form_of_import():
    sources = {
        "import daskfair.reproduce.methods": ("daskfair.metrics", False),
        "from daskfair import reproduce": ("daskfair.metrics", False),
        "from ..reproduce import methods": ("daskfair.fkr.cv", False),
        "from .. import reproduce": ("daskfair.fkr.cv", False),
        "from . import reproduce": ("daskfair", True),
        "def f():\n    from .reproduce.fkr_paper import run_method": ("daskfair.metrics", False),
        "_PUBLIC = {'run_method': 'reproduce.fkr_paper'}": ("daskfair", True),
    }
    for source, (module, is_package) in sources.items():
        assert _offenders(_imported(ast.parse(source), module, is_package)), source
    assert not _offenders(_imported(ast.parse("from ..fkr import cv"), "daskfair.fkr.x", False))


def test_the_library_does_not_import_the_reproduction():
    offenders = {}
    checked = 0
    for path in sorted(PACKAGE.rglob("*.py")):
        module = _module_name(path)
        if any(module == a or module.startswith(a + ".") for a in ALLOWED):
            continue
        checked += 1
        found = _offenders(_imported(ast.parse(path.read_text(encoding="utf-8")), module,
                                     path.name == "__init__.py"))
        if found:
            offenders[module] = sorted(set(found))
    assert checked > 20  # the walk found the package
    assert not offenders, f"the library imports {FORBIDDEN}: {offenders}"
