"""The package's shape: lines per package, longest functions, import layers, docstring share.

Prints JSON and writes ``results/code_shape.json``; ``--baseline-checkout DIR`` measures
another checkout of daskfair beside this one (``git worktree add DIR COMMIT``)::

    python3 benchmarks/code_shape.py [--top 12] [--baseline-checkout DIR]

Function length counts the lines of a ``def`` (decorators and nested functions included)
minus its docstring. The docstring share is the lines inside docstrings (module, class and
function) over all lines of ``daskfair/``. The import layers are read with ``ast``: each
edge is "folder or top-level module A imports from B".
"""

from __future__ import annotations

import argparse
import ast
import json
from collections import Counter, defaultdict
from pathlib import Path


def _unit(rel: Path) -> str:
    """The folder (or top-level module) a file of ``daskfair/`` belongs to."""
    parts = rel.parts
    return parts[1] if len(parts) > 2 else parts[1].removesuffix(".py")


def _docstring_lines(tree: ast.AST) -> int:
    total = 0
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(
                    getattr(body[0], "value", None), ast.Constant) and isinstance(
                    body[0].value.value, str):
                total += body[0].end_lineno - body[0].lineno + 1
    return total


def _function_lengths(tree: ast.AST, rel: str) -> list[tuple[int, str]]:
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            length = node.end_lineno - start + 1
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(
                    getattr(body[0], "value", None), ast.Constant) and isinstance(
                    body[0].value.value, str):
                length -= body[0].end_lineno - body[0].lineno + 1
            out.append((length, f"{rel}:{node.name}"))
    return out


def _imported_modules(tree: ast.AST, module: str) -> set[str]:
    """Absolute names of the daskfair modules a file imports (relative imports resolved)."""
    names = set()
    package = module.rsplit(".", 1)[0] if not module.endswith("__init__") else module
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join([*base, node.module] if node.module else base)
            else:
                target = node.module or ""
            if target.startswith("daskfair"):
                names.add(target)
                names.update(f"{target}.{a.name}" for a in node.names)
        elif isinstance(node, ast.Import):
            names.update(a.name for a in node.names if a.name.startswith("daskfair"))
    return names


def measure(root: Path, top: int = 12) -> dict:
    pkg = root / "daskfair"
    files = sorted(pkg.rglob("*.py"))
    lines_per_unit: Counter = Counter()
    doc_lines = 0
    total_lines = 0
    functions: list[tuple[int, str]] = []
    long_modules = {}
    edges: dict[str, set[str]] = defaultdict(set)
    units = {_unit(f.relative_to(root)) for f in files}
    for f in files:
        rel = f.relative_to(root)
        text = f.read_text()
        n = len(text.splitlines())
        tree = ast.parse(text)
        unit = _unit(rel)
        lines_per_unit[unit] += n
        total_lines += n
        doc_lines += _docstring_lines(tree)
        functions += _function_lengths(tree, str(rel))
        if n > 600:
            long_modules[str(rel)] = n
        module = ".".join(rel.with_suffix("").parts)
        for name in _imported_modules(tree, module):
            parts = name.split(".")
            if len(parts) > 1 and parts[1] in units and parts[1] != unit:
                edges[unit].add(parts[1])
    functions.sort(reverse=True)
    return {
        "total_lines": total_lines,
        "modules": len(files),
        "lines_per_package": dict(sorted(lines_per_unit.items(), key=lambda kv: -kv[1])),
        "docstring_lines": doc_lines,
        "docstring_share": round(doc_lines / total_lines, 3),
        "longest_functions": [{"lines": n, "function": name} for n, name in functions[:top]],
        "functions_over_60": sum(n > 60 for n, _ in functions),
        "modules_over_600": long_modules,
        "imports": {k: sorted(v) for k, v in sorted(edges.items())},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--top", type=int, default=12)
    parser.add_argument("--baseline-checkout", type=Path)
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args()
    result = {"package": measure(Path(__file__).resolve().parents[1], args.top)}
    if args.baseline_checkout is not None:
        result["baseline"] = measure(args.baseline_checkout, args.top)
    if args.no_write:
        print(json.dumps(result, indent=1))
        return
    from _common import write_result

    write_result("code_shape", result)


if __name__ == "__main__":
    main()
