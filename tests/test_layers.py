"""The package's shape, read from its source with ``ast``: imports run down the layers of
docs/design.md#layers and never in a circle; no function or module outgrows its limit.

The layers, top to bottom: the command line; the methods (which never import each other);
the runtime; the data layer (whose folders never import each other); the base modules.
"""

from __future__ import annotations

import ast
import importlib.util
import sys
from collections import defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "daskfair"

#: (layer, its units): a unit is a folder of daskfair/ or a top-level module.
LAYERS = [
    ("cli", {"cli"}),
    ("models", {"models"}),
    ("methods", {"fkr", "safairkm", "ensemble"}),
    ("runtime", {"runtime"}),
    ("data", {"tables", "store", "datasets", "metrics", "model_selection"}),
    ("base", {"_lazy", "_validation", "_groups", "_blocks", "_keyed", "_random", "_frames",
              "_nearest", "_folders", "_files", "_arrow", "_params", "_compiled", "_scratch",
              "kernels", "nystroem", "progress", "scaling"}),
]
RANK = {unit: i for i, (_, units) in enumerate(LAYERS) for unit in units}
#: Layers whose units may import each other (the base modules are one toolbox).
SHARED = {"base"}
MAX_FUNCTION_LINES = 60
MAX_MODULE_LINES = 600

_spec = importlib.util.spec_from_file_location("code_shape", ROOT / "benchmarks" /
                                               "code_shape.py")
code_shape = importlib.util.module_from_spec(_spec)
sys.modules["code_shape"] = code_shape
_spec.loader.exec_module(code_shape)


def _modules() -> dict[str, tuple[Path, ast.AST]]:
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(ROOT)
        name = ".".join(rel.with_suffix("").parts).removesuffix(".__init__")
        out[name] = (path, ast.parse(path.read_text()))
    return out


MODULES = _modules()


def _imports(name: str, path: Path, tree: ast.AST) -> set[str]:
    """The daskfair modules ``name`` imports, anywhere in it (function-level imports too)."""
    found = set()
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    for node in ast.walk(tree):
        targets = []
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                parts = parts[: len(parts) - (node.level - 1)]
                base = ".".join([*parts, *([node.module] if node.module else [])])
            names = [f"{base}.{a.name}" for a in node.names]
            # a name that is not a submodule is taken from the module ``base`` itself
            targets = names + ([base] if any(n not in MODULES for n in names) else [])
        elif isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        for target in targets:
            # the longest module name the target starts with (a name imported from a module
            # is that module)
            while target and target not in MODULES:
                target = target.rpartition(".")[0]
            # a module's own packages are initialised before it: not an edge
            if target.startswith("daskfair.") and not name.startswith(target + ".") \
                    and target != name:
                found.add(target)
    return found


GRAPH = {name: _imports(name, path, tree) for name, (path, tree) in MODULES.items()}


def _unit(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else None


def test_every_unit_has_a_layer():
    units = {_unit(m) for m in MODULES} - {None, "__init__"}
    assert units <= set(RANK), f"units without a layer: {sorted(units - set(RANK))}"


def test_imports_run_down_the_layers():
    wrong = []
    for module, targets in GRAPH.items():
        here = _unit(module)
        if here is None:  # daskfair/__init__.py: the lazy public names
            continue
        for target in targets:
            there = _unit(target)
            if there is None or there == here:
                continue
            if RANK[there] < RANK[here]:
                wrong.append(f"{module} -> {target} (up from {LAYERS[RANK[here]][0]})")
            elif RANK[there] == RANK[here] and LAYERS[RANK[here]][0] not in SHARED:
                wrong.append(f"{module} -> {target} (across the {LAYERS[RANK[here]][0]} layer)")
    assert not wrong, "\n".join(wrong)


def test_no_import_circle():
    # depth-first search over the module graph; a back edge is a circle
    state: dict[str, int] = defaultdict(int)
    circles = []

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(GRAPH.get(node, ())):
            if state[nxt] == 1:
                circles.append(" -> ".join([*path[path.index(nxt):], nxt]))
            elif state[nxt] == 0:
                visit(nxt, [*path, nxt])
        state[node] = 2

    for module in sorted(GRAPH):
        if state[module] == 0 and module != "daskfair":
            visit(module, [module])
    assert not circles, "\n".join(circles)


def test_no_function_or_module_outgrows_its_limit():
    shape = code_shape.measure(ROOT, top=10**6)
    long_functions = [f for f in shape["longest_functions"]
                      if f["lines"] > MAX_FUNCTION_LINES]
    assert not long_functions, long_functions
    assert not shape["modules_over_600"], shape["modules_over_600"]


@pytest.mark.parametrize("source, edge", [
    ("from ..fkr import FairKernelRegressor", "daskfair.fkr"),
    ("from ..metrics.fairness import error_rate", "daskfair.metrics.fairness"),
    ("def f():\n    from . import estimators", "daskfair.safairkm.estimators"),
])
def test_the_import_reader_sees_every_form(source, edge, monkeypatch):
    # a new module in safairkm/, to check the reader against known edges
    monkeypatch.setitem(MODULES, "daskfair.safairkm.estimators", (PACKAGE, ast.parse("")))
    monkeypatch.setitem(MODULES, "daskfair.metrics.fairness", (PACKAGE, ast.parse("")))
    found = _imports("daskfair.safairkm.probe", PACKAGE / "safairkm" / "probe.py",
                     ast.parse(source))
    assert edge in found
