#!/usr/bin/env python3
"""Set up a virtual environment for daskfair if needed, then run the demo or the tests.

Needs nothing but Python >= 3.11::

    python3 dev.py run      # daskfair demo on a LocalCluster it starts itself
    python3 dev.py test     # the test suite (pytest); extra arguments go to pytest
    python3 dev.py docs     # the documentation site, into docs/_build/html (warnings fail)
    python3 dev.py install  # only create or update the environment
    python3 dev.py lock     # upgrade every dependency, then rewrite constraints.txt

The environment lives in ``.venv`` next to this file (``DASKFAIR_VENV`` overrides) and is
reinstalled whenever ``pyproject.toml`` or ``constraints.txt`` changes. ``constraints.txt``
pins every dependency to the versions the suite last passed with (CI installs the same), so an
install does not change under you; ``lock`` refreshes it — run the tests, then commit it.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = Path(os.environ.get("DASKFAIR_VENV", ROOT / ".venv"))
EXTRAS = "test,plot,dashboard,hpc,parquet,docs"
CONSTRAINTS = ROOT / "constraints.txt"


def _bin(name: str) -> Path:
    return VENV / ("Scripts" if os.name == "nt" else "bin") / name


def ensure_venv() -> None:
    """Create the environment and install the package when missing or out of date."""
    if sys.version_info < (3, 11):
        sys.exit(f"daskfair needs Python >= 3.11, this is {sys.version.split()[0]}")
    stamp = VENV / ".daskfair-install"
    pins = CONSTRAINTS.read_bytes() if CONSTRAINTS.exists() else b""
    want = hashlib.sha256((ROOT / "pyproject.toml").read_bytes() + EXTRAS.encode()
                          + pins).hexdigest()
    if stamp.exists() and stamp.read_text() == want and _bin("python").exists():
        return
    if not _bin("python").exists():
        print(f"[dev] creating virtual environment in {VENV}", flush=True)
        venv.create(VENV, with_pip=True)
    print("[dev] installing daskfair and its dependencies", flush=True)
    pip = [str(_bin("python")), "-m", "pip", "--disable-pip-version-check"]
    subprocess.run([*pip, "install", "-q", "--upgrade", "pip"], check=True)
    pinned = ["-c", str(CONSTRAINTS)] if CONSTRAINTS.exists() else []
    subprocess.run([*pip, "install", "-q", *pinned, "-e", f"{ROOT}[{EXTRAS}]"], check=True)
    stamp.write_text(want)


def lock() -> int:
    """Upgrade every dependency to the newest the index has, and pin them in constraints.txt."""
    ensure_venv()
    pip = [str(_bin("python")), "-m", "pip", "--disable-pip-version-check"]
    subprocess.run([*pip, "install", "-q", "--upgrade", "--upgrade-strategy", "eager", "-e",
                    f"{ROOT}[{EXTRAS}]"], check=True)
    frozen = subprocess.run([*pip, "freeze", "--exclude-editable"], check=True,
                            capture_output=True, text=True).stdout
    CONSTRAINTS.write_text(
        "# Versions the test suite last passed with; dev.py and CI install exactly these.\n"
        "# Refresh: python3 dev.py lock && python3 dev.py test, then commit this file.\n"
        + frozen)
    (VENV / ".daskfair-install").unlink(missing_ok=True)  # reinstall against the new pins
    print(f"[dev] wrote {CONSTRAINTS.name}: {len(frozen.splitlines())} pinned packages")
    return 0


def docs(argv: list[str]) -> int:
    """Build the site with every warning an error; ``DASKFAIR_DOCS_FULL=1`` runs every example."""
    out = ROOT / "docs" / "_build" / "html"
    cmd = [str(_bin("python")), "-m", "sphinx", "-W", "--keep-going", "-j", "1", "-b", "html",
           str(ROOT / "docs"), str(out), *argv]
    code = subprocess.run(cmd, cwd=ROOT, env={**os.environ, "MPLBACKEND": "Agg"}).returncode
    if code == 0:
        print(f"[dev] site built: {out / 'index.html'}")
    return code


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in {"run", "test", "lock", "docs", "install"}:
        print(__doc__)
        return 2
    if argv[0] == "lock":
        return lock()
    ensure_venv()
    if argv[0] == "install":
        return 0
    if argv[0] == "docs":
        return docs(argv[1:])
    if argv[0] == "run":
        cmd = [str(_bin("daskfair")), "demo", *argv[1:]]
    else:
        cmd = [str(_bin("python")), "-m", "pytest", *argv[1:]]
    return subprocess.run(cmd, cwd=ROOT).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
