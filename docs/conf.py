"""Sphinx configuration of daskfair's documentation site (``python3 dev.py docs``).

The gallery runs only the examples listed in ``FAST_EXAMPLES`` unless ``DASKFAIR_DOCS_FULL=1``
is set: the others read whole data sets or start clusters, too slow for CI. The API reference
page is written here from the packages' ``__all__`` lists, so a new public name gets its page
without anyone editing the docs.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(DOCS / "_ext"))

from api_pages import write_api_index  # noqa: E402

import daskfair  # noqa: E402

project = "daskfair"
author = "daskfair developers"
copyright = "daskfair developers"
release = daskfair.__version__
version = release

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "numpydoc",
    "myst_parser",
    "sphinx_gallery.gen_gallery",
    "cli_reference",
    "benchmark_plots",
    "resolve_refs",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "**.ipynb_checkpoints", "auto_examples/*.ipynb",
                    "auto_examples/*.py", "auto_examples/*.zip", "auto_examples/*.json"]
templates_path = ["_templates"]

# -- API reference ------------------------------------------------------------------------
write_api_index(DOCS / "api" / "index.rst")
autosummary_generate = True
autosummary_imported_members = True
autodoc_typehints = "none"
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_attributes_as_param_list = False
# every cross-reference must resolve (docs/_ext/resolve_refs.py says which may stay text)
nitpicky = True
numpydoc_validation_checks = {
    "GL08",  # no docstring
    "PR01",  # a parameter not documented
    "PR02",  # a documented parameter the signature does not have
    "RT01",  # no Returns section
}

# -- Markdown pages -------------------------------------------------------------------------
myst_enable_extensions = ["colon_fence", "dollarmath"]
myst_heading_anchors = 3

# -- Gallery --------------------------------------------------------------------------------
FULL = os.environ.get("DASKFAIR_DOCS_FULL") == "1"
FAST_EXAMPLES = [
    "metrics_audit.py",
    "own_table.py",
    "fkr_cv_synthetic.py",
    "fair_blobs_front.py",
    "store_resume.py",
    "fce_synthetic.py",
    "determinism.py",
]
fast = "|".join(re.escape(name) for name in FAST_EXAMPLES)
sphinx_gallery_conf = {
    "examples_dirs": str(ROOT / "examples"),
    "gallery_dirs": "auto_examples",
    "filename_pattern": ".*" if FULL else rf"/({fast})$",
    "ignore_pattern": r"__init__\.py|/_",
    "abort_on_example_error": False,
    "only_warn_on_example_error": False,
    "download_all_examples": False,
    "remove_config_comments": True,
    "within_subsection_order": "FileNameSortKey",
    "image_scrapers": ("matplotlib",),
    "capture_repr": (),
    "show_memory": False,
    "plot_gallery": "True",
}



def _note_not_run(app, docname, source):
    """Say on a heavy example's page, in the quick build, that its output is not shown."""
    name = docname.rpartition("/")[2]
    if FULL or not docname.startswith("auto_examples/") or f"{name}.py" in FAST_EXAMPLES:
        return
    if not (ROOT / "examples" / f"{name}.py").exists():
        return
    text = source[0]
    if "sphx-glr-script-out" in text:  # run by an earlier full build, output kept
        return
    title = re.search(r"^(=+)\n", text, re.M)
    if title:
        note = ("\n.. note::\n\n   This example reads a whole data set or starts a Dask "
                "cluster, so the quick build of this site (CI's) does not run it and shows "
                "no output: ``DASKFAIR_DOCS_FULL=1 python3 dev.py docs`` runs it, as does "
                f"``python examples/{name}.py``.\n")
        source[0] = text[:title.end()] + note + text[title.end():]


def setup(app):
    app.connect("source-read", _note_not_run)


# -- HTML -----------------------------------------------------------------------------------
html_theme = "pydata_sphinx_theme"
html_title = f"daskfair {release}"
html_static_path = ["_static"]
html_favicon = "_static/favicon.svg"
# without it the theme writes an empty mode and logs a console error on a first visit
html_context = {"default_mode": "auto"}
html_theme_options = {
    "navigation_with_keys": False,
    "header_links_before_dropdown": 5,
    "show_toc_level": 2,
    "footer_start": ["copyright"],
    "footer_end": [],
}
html_sidebars = {"index": [], "getting_started": []}
html_show_sourcelink = False
