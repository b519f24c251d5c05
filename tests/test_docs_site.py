"""The built documentation site in a real browser (headless Chromium).

Serves ``docs/_build/html`` (``python3 dev.py docs`` builds it) on 127.0.0.1, loads the
landing page, a user-guide page, an API page and a gallery page, and fails on any console
error, uncaught exception or failed resource load; the search page must find
``FairKernelClassifierCV`` (its results are rendered by JavaScript). Screenshots of each page
go to ``$DASKFAIR_DOCS_SHOTS`` (default ``/tmp/docs-shots``).

Chromium is driven through its DevTools protocol (tornado's websocket client, which dask
already installs): the console messages of ``--enable-logging`` do not carry their level, so
``console.error`` could not be told from ``console.log`` there, and a 404 is not logged at all.
The first test shows the checker catches each kind of error.

Marked ``docs``: left out of the default run; ``.ci/run`` runs it after building the site.
"""

from __future__ import annotations

import asyncio
import base64
import functools
import http.server
import json
import os
import shutil
import subprocess
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

import pytest

pytestmark = pytest.mark.docs

ROOT = Path(__file__).resolve().parent.parent
SITE = ROOT / "docs" / "_build" / "html"
SHOTS = Path(os.environ.get("DASKFAIR_DOCS_SHOTS", "/tmp/docs-shots"))
PAGES = {
    "landing": "index.html",
    "guide": "guide/classification.html",
    "api": "api/generated/daskfair.FairKernelClassifierCV.html",
    "gallery": "auto_examples/fkr_cv_synthetic.html",
    "benchmarks": "benchmarks.html",
    "cli": "cli.html",
}


def _chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome", "chrome"):
        if path := shutil.which(name):
            return path
    return None


@pytest.fixture(scope="module")
def browser():
    exe = _chromium()
    if exe is None:
        pytest.skip("no Chromium on PATH (chromium, chromium-browser or google-chrome): "
                    "the browser check of the docs site needs one")
    profile = tempfile.mkdtemp(prefix="daskfair-chromium-")
    proc = subprocess.Popen(
        [exe, "--headless", "--disable-gpu", "--no-sandbox", "--no-first-run",
         "--remote-debugging-port=0", "--remote-debugging-address=127.0.0.1",
         f"--user-data-dir={profile}", "--window-size=1280,900", "about:blank"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    port_file = Path(profile) / "DevToolsActivePort"
    deadline = time.monotonic() + 30
    while not (port_file.exists() and port_file.read_text().strip()):
        if time.monotonic() > deadline or proc.poll() is not None:
            proc.kill()
            pytest.fail("Chromium did not open its DevTools port")
        time.sleep(0.1)
    port = int(port_file.read_text().split()[0])
    try:
        yield port
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
        shutil.rmtree(profile, ignore_errors=True)


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def _serve(directory: Path):
    handler = functools.partial(_Quiet, directory=str(directory))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


@pytest.fixture(scope="module")
def site():
    if not (SITE / "index.html").exists():
        pytest.skip(f"no built site at {SITE}: run `python3 dev.py docs` first")
    server = _serve(SITE)
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


async def _visit(port: int, url: str, *, wait_for: str | None = None,
                 shot: Path | None = None, settle: float = 1.0) -> dict:
    """Load ``url`` in a fresh tab; return its errors, title and (optionally) a JS value.

    ``wait_for`` is a JavaScript expression polled until it is truthy (at most 20 s).
    """
    from tornado.websocket import websocket_connect

    req = urllib.request.Request(f"http://127.0.0.1:{port}/json/new?about:blank", method="PUT")
    with urllib.request.urlopen(req, timeout=10) as r:
        target = json.load(r)
    ws = await websocket_connect(target["webSocketDebuggerUrl"], max_message_size=2**28)
    errors: list[str] = []
    pending: dict[int, asyncio.Future] = {}
    loaded = asyncio.Event()
    counter = iter(range(1, 10**9))

    async def reader():
        while (msg := await ws.read_message()) is not None:
            m = json.loads(msg)
            if "id" in m and m["id"] in pending:
                pending.pop(m["id"]).set_result(m)
                continue
            method, p = m.get("method"), m.get("params", {})
            if method == "Runtime.exceptionThrown":
                d = p["exceptionDetails"]
                errors.append("exception: " + d.get("exception", {}).get(
                    "description", d.get("text", "")))
            elif method == "Runtime.consoleAPICalled" and p["type"] in ("error", "assert"):
                errors.append("console.error: " + " ".join(
                    str(a.get("value", a.get("description", ""))) for a in p["args"]))
            elif method == "Log.entryAdded" and p["entry"]["level"] == "error":
                errors.append(f"log ({p['entry']['source']}): {p['entry']['text']} "
                              f"{p['entry'].get('url', '')}")
            elif method == "Page.loadEventFired":
                loaded.set()

    async def call(method: str, **params):
        i = next(counter)
        fut = asyncio.get_running_loop().create_future()
        pending[i] = fut
        await ws.write_message(json.dumps({"id": i, "method": method, "params": params}))
        reply = await asyncio.wait_for(fut, 30)
        if "error" in reply:
            raise RuntimeError(f"{method}: {reply['error']}")
        return reply.get("result", {})

    task = asyncio.create_task(reader())
    try:
        for domain in ("Page", "Runtime", "Log"):
            await call(f"{domain}.enable")
        await call("Page.navigate", url=url)
        await asyncio.wait_for(loaded.wait(), 30)
        value = None
        if wait_for is not None:
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline:
                r = await call("Runtime.evaluate", expression=wait_for, returnByValue=True)
                value = r.get("result", {}).get("value")
                if value:
                    break
                await asyncio.sleep(0.25)
        await asyncio.sleep(settle)  # late scripts (theme, search index) report here
        title = (await call("Runtime.evaluate", expression="document.title",
                            returnByValue=True))["result"]["value"]
        if shot is not None:
            shot.parent.mkdir(parents=True, exist_ok=True)
            png = await call("Page.captureScreenshot", format="png")
            shot.write_bytes(base64.b64decode(png["data"]))
        return {"errors": errors, "title": title, "value": value}
    finally:
        ws.close()
        task.cancel()
        urllib.request.urlopen(f"http://127.0.0.1:{port}/json/close/{target['id']}",
                               timeout=10).close()


def visit(port: int, url: str, **kw) -> dict:
    return asyncio.run(_visit(port, url, **kw))


def test_the_checker_sees_each_kind_of_error(browser, tmp_path):
    (tmp_path / "ok.html").write_text(
        "<html><head><title>ok</title></head><body>"
        "<script>console.log('fine')</script></body></html>")
    (tmp_path / "throws.html").write_text(
        "<html><body><script>undefinedFunction()</script></body></html>")
    (tmp_path / "favicon.ico").write_bytes(b"")
    (tmp_path / "logs.html").write_text(
        "<html><body><script>console.error('boom')</script></body></html>")
    (tmp_path / "missing.html").write_text(
        "<html><body><script src='nowhere.js'></script></body></html>")
    server = _serve(tmp_path)
    base = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        assert visit(browser, f"{base}/ok.html", settle=0.2)["errors"] == []
        assert "undefinedFunction" in " ".join(
            visit(browser, f"{base}/throws.html", settle=0.2)["errors"])
        assert "boom" in " ".join(visit(browser, f"{base}/logs.html", settle=0.2)["errors"])
        assert "nowhere.js" in " ".join(
            visit(browser, f"{base}/missing.html", settle=0.2)["errors"])
    finally:
        server.shutdown()


@pytest.mark.parametrize("name", list(PAGES))
def test_page_renders_without_errors(browser, site, name):
    page = visit(browser, f"{site}/{PAGES[name]}", shot=SHOTS / f"{name}.png",
                 wait_for="document.querySelector('article') !== null")
    assert page["value"], f"{PAGES[name]} has no article element"
    assert page["errors"] == [], f"{PAGES[name]}: {page['errors']}"
    assert "daskfair" in page["title"]


def test_search_finds_the_cv_classifier(browser, site):
    page = visit(
        browser, f"{site}/search.html?q=FairKernelClassifierCV", shot=SHOTS / "search.png",
        wait_for="Array.from(document.querySelectorAll('#search-results a'))"
                 ".map(a => a.textContent).join('\\n')")
    assert page["errors"] == [], page["errors"]
    assert "FairKernelClassifierCV" in (page["value"] or ""), page["value"]


def test_every_public_name_has_a_page(site):
    import sys

    sys.path.insert(0, str(ROOT / "docs" / "_ext"))
    try:
        from api_pages import MODULES, public_names
    finally:
        sys.path.pop(0)
    import daskfair

    top = {n for n in daskfair.__all__ if n != "__version__"}
    expected = {f"daskfair.{n}" for n in top}
    for module, _ in MODULES:
        expected |= {f"{module}.{n}" for n in public_names(module) if n not in top}
    missing = sorted(n for n in expected
                     if not (SITE / "api" / "generated" / f"{n}.html").exists())
    assert not missing, f"public names without a page: {missing}"
