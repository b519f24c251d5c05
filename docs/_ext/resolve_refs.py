"""Resolve the docstrings' short Python references, and tell broken ones from internal ones.

The docstrings refer to objects as their module sees them (``:func:`load_dataset``` inside
:mod:`daskfair.datasets`, ``:func:`daskfair.ensemble.consensus.auto_fairness```), while the
reference documents each public object once, under the name users import
(``daskfair.load_dataset``, ``daskfair.ensemble.auto_fairness``). For a reference Sphinx does
not find, this handler (with ``nitpicky`` on):

1. finds the Python object the reference names, trying it as written and relative to the
   module and class it is written in;
2. links to that object's page when the reference documents it under any name;
3. leaves it as plain code text, with no warning, when it exists but is not in the reference
   (a private helper, an internal module, another library: there is no page to link to);
4. lets Sphinx warn when it names nothing at all — a broken reference, which ``-W`` fails.
"""

from __future__ import annotations

import importlib

from docutils import nodes
from sphinx.addnodes import pending_xref
from sphinx.util.nodes import make_refnode


def _lookup(dotted: str):
    """The object a dotted name names, importing the longest module prefix; or None."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except Exception:
            continue
        try:
            for attr in parts[cut:]:
                obj = getattr(obj, attr)
        except AttributeError:
            return None
        return obj
    return None


def _candidates(node: pending_xref) -> list[str]:
    target = node["reftarget"].lstrip("~").lstrip(".")
    module, cls = node.get("py:module"), node.get("py:class")
    names = [target]
    if module and cls:
        names.append(f"{module}.{cls}.{target}")
    homes = [module] if module else []
    # an object documented under its public name was written in its own module: the class
    # the reference sits in, or the object of the page (api/generated/<name>)
    owners = [f"{module}.{cls}"] if module and cls else []
    page = node.get("refdoc", "")
    if page.startswith("api/generated/"):
        owners.append(page.rpartition("/")[2])
    for owner in owners:
        home = getattr(_lookup(owner), "__module__", None)
        if home and home not in homes:
            homes.append(home)
    for home in homes:
        names.append(f"{home}.{target}")
        parent = home.rpartition(".")[0]
        if parent:
            names.append(f"{parent}.{target}")
    return names


def _documented(env) -> dict[int, str]:
    """id(object) -> the name the reference documents it under (first one wins)."""
    cache = getattr(env, "_daskfair_documented", None)
    if cache is None:
        cache = {}
        for name in sorted(env.domains["py"].objects):
            obj = _lookup(name)
            if obj is not None:
                cache.setdefault(id(obj), name)
        env._daskfair_documented = cache
    return cache


def missing_reference(app, env, node, contnode):
    if node.get("refdomain") != "py":
        return None
    for name in _candidates(node):
        obj = _lookup(name)
        if obj is None:
            continue
        documented = _documented(env).get(id(obj))
        if documented is not None:
            entry = env.domains["py"].objects[documented]
            return make_refnode(app.builder, node["refdoc"], entry.docname, entry.node_id,
                                contnode, documented)
        return contnode if isinstance(contnode, nodes.Node) else None
    return None


def setup(app):
    app.connect("missing-reference", missing_reference)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
