"""Data fetched on first use (daskfair.datasets.fetch): a local HTTP server on 127.0.0.1
stands in for the publishers (``DASKFAIR_DATA_URL``); no test reaches the internet."""

from __future__ import annotations

import dataclasses
import gzip
import hashlib
import http.server
import io
import shutil
import socket
import threading
import zipfile
from pathlib import Path

import numpy as np
import pytest

from daskfair import datasets as ds
from daskfair.cli.main import main as cli_main
from daskfair.datasets import DataIntegrityError, DataUnavailableError, load_dataset, load_fce_pool
from daskfair.datasets.fetch import fetch_file
from daskfair.datasets.sources import SOURCES, files_of

SHARED = ds.data_dir()
SERVED = ["fce_pools/bc_pool_jaffe.mat", "communities_crime/communities.names",
          "communities_crime/communities.data"]


class _Server:
    """A threaded HTTP server over ``root``; ``mode`` "cut" sends half of every file and
    closes the connection. Counts the requests."""

    def __init__(self, root: Path) -> None:
        server = self

        class Handler(http.server.SimpleHTTPRequestHandler):
            def __init__(self, *args, **kwargs):
                super().__init__(*args, directory=str(root), **kwargs)

            def log_message(self, *args):
                pass

            def do_GET(self):
                server.requests.append(self.path)
                if server.mode == "cut":
                    body = (root / self.path.lstrip("/")).read_bytes()
                    self.send_response(200)
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body[: len(body) // 2])
                    self.wfile.flush()
                    self.close_connection = True
                    return
                super().do_GET()

        self.requests: list[str] = []
        self.mode = "normal"
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def mirror(tmp_path, monkeypatch):
    """A mirror serving copies of a few files of the shared data under their registry paths,
    and an empty cache folder to download into."""
    served = tmp_path / "served"
    for rel in SERVED:
        (served / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(SHARED / rel, served / rel)
    server = _Server(served)
    monkeypatch.setenv("DASKFAIR_DATA_URL", server.url)
    cache = tmp_path / "cache"
    cache.mkdir()
    yield server, served, cache
    server.close()


def _left(cache: Path) -> list[str]:
    return sorted(str(p.relative_to(cache)) for p in cache.rglob("*") if p.is_file())


def test_the_registry_is_the_shared_data():
    sums = {line.split()[1].removeprefix("./"): line.split()[0]
            for line in (SHARED / "SHA256SUMS").read_text().splitlines() if line.strip()}
    assert set(sums) == set(SOURCES)
    for rel, src in SOURCES.items():
        assert src.sha256 == sums[rel] and src.size == (SHARED / rel).stat().st_size, rel
    assert all(SOURCES.get(rel) for name in ("all",) for rel in files_of(name))


def test_a_fresh_cache_downloads_checks_and_loads_what_the_shared_copy_loads(mirror, capsys):
    server, _, cache = mirror
    pool = load_fce_pool("jaffe", cache)
    crime = load_dataset("communities_crime", cache)
    assert _left(cache) == sorted(SERVED)
    # not a terminal: one line per download, for a batch job's log
    err = capsys.readouterr().err.splitlines()
    assert err == [f"downloading {rel} from {server.url}/{rel}: "
                   f"{SOURCES[rel].size / 1e6:.1f} MB" for rel in SERVED]
    for mine, theirs in zip(pool, load_fce_pool("jaffe", SHARED), strict=True):
        np.testing.assert_array_equal(mine, theirs)
    ref = load_dataset("communities_crime", SHARED)
    np.testing.assert_array_equal(crime.X, ref.X)
    np.testing.assert_array_equal(crime.y, ref.y)
    # on the second load nothing is downloaded again
    n = len(server.requests)
    load_fce_pool("jaffe", cache)
    assert len(server.requests) == n == len(SERVED)


def test_a_changed_byte_is_refused_and_nothing_is_kept(mirror):
    server, served, cache = mirror
    path = served / "fce_pools/bc_pool_jaffe.mat"
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))
    with pytest.raises(DataIntegrityError) as info:
        load_fce_pool("jaffe", cache)
    message = str(info.value)
    assert f"{server.url}/fce_pools/bc_pool_jaffe.mat gave" in message
    assert SOURCES["fce_pools/bc_pool_jaffe.mat"].sha256 in message
    assert hashlib.sha256(bytes(data)).hexdigest() in message
    assert _left(cache) == []


def test_a_connection_dropped_halfway_leaves_no_file(mirror):
    server, _, cache = mirror
    server.mode = "cut"
    with pytest.raises(DataUnavailableError, match="could not download fce_pools/bc_pool_jaffe"):
        load_fce_pool("jaffe", cache)
    assert server.requests and _left(cache) == []


def test_no_network_says_what_to_download_and_where(tmp_path, monkeypatch):
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    monkeypatch.setenv("DASKFAIR_DATA_URL", f"http://127.0.0.1:{port}")
    with pytest.raises(DataUnavailableError) as info:
        load_fce_pool("yale", tmp_path)
    message = str(info.value)
    target = tmp_path / "fce_pools" / "bc_pool_yale.mat"
    assert f"download http://127.0.0.1:{port}/fce_pools/bc_pool_yale.mat by hand" in message
    assert f"put it at {target}" in message
    assert SOURCES["fce_pools/bc_pool_yale.mat"].sha256 in message
    assert _left(tmp_path) == []


def test_a_folder_kept_by_hand_is_used_as_it_is(mirror, tmp_path):
    server, _, _ = mirror
    kept = tmp_path / "kept"
    kept.mkdir()
    (kept / "SHA256SUMS").write_text("")
    with pytest.raises(FileNotFoundError, match="used as it is"):
        load_fce_pool("jaffe", kept)
    assert server.requests == []


def test_a_member_of_the_publishers_archive(mirror, monkeypatch):
    server, served, cache = mirror
    rel = "fce_pools/bc_pool_jaffe.mat"
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.write(served / rel, "pools/jaffe.mat")
    (served / "archive.zip").write_bytes(buf.getvalue())
    monkeypatch.delenv("DASKFAIR_DATA_URL")
    monkeypatch.setitem(SOURCES, rel, dataclasses.replace(
        SOURCES[rel], url=f"{server.url}/archive.zip", member="pools/jaffe.mat"))
    path = fetch_file(rel, cache, progress=False)
    assert path.read_bytes() == (SHARED / rel).read_bytes()
    assert _left(cache) == [rel]  # the archive itself is not kept


def test_datasets_fetch_and_list(mirror, capsys):
    _, _, cache = mirror
    assert cli_main(["datasets", "--data-dir", str(cache), "--fetch", "jaffe"]) == 0
    out = capsys.readouterr().out
    assert "a cache: missing files are downloaded" in out
    rows = {line.split()[0]: line for line in out.splitlines()[2:] if line.strip()}
    assert "cached" in rows["pool_jaffe"] and "not downloaded" in rows["pool_har"]
    assert _left(cache) == ["fce_pools/bc_pool_jaffe.mat"]
    # a cache is verified for what it holds: the rest is not downloaded, not an error
    assert cli_main(["datasets", "--data-dir", str(cache), "--verify"]) == 0
    out = capsys.readouterr().out
    assert f"1 of {len(SOURCES)} files ok" in out and "not downloaded fce_pools/bc_pool_har" in out
    (cache / "fce_pools/bc_pool_jaffe.mat").write_bytes(b"x")
    assert cli_main(["datasets", "--data-dir", str(cache), "--verify"]) == 1
    assert "0 of 36 files ok, 1 corrupt" in capsys.readouterr().out


def _entry(monkeypatch, rel, data, **changes):
    """A registry entry for ``rel`` whose file is ``data``."""
    src = dataclasses.replace(
        SOURCES["fce_pools/bc_pool_jaffe.mat"], path=rel, size=len(data),
        sha256=hashlib.sha256(data).hexdigest(), **changes)
    monkeypatch.setitem(SOURCES, rel, src)
    return src


def test_a_publishers_other_gzip_of_the_same_bytes_is_accepted(mirror, monkeypatch):
    _, served, cache = mirror
    text = b"".join(b"row %d,%d\n" % (i, i * i) for i in range(5000))
    ours = gzip.compress(text, compresslevel=9, mtime=0)
    theirs = gzip.compress(text, compresslevel=1, mtime=12345)
    assert ours != theirs
    _entry(monkeypatch, "extra/rows.csv.gz", ours,
           content_sha256=hashlib.sha256(text).hexdigest())
    (served / "extra").mkdir()
    (served / "extra/rows.csv.gz").write_bytes(theirs)
    path = fetch_file("extra/rows.csv.gz", cache, progress=False)
    assert gzip.decompress(path.read_bytes()) == text
    # other rows are refused, however they are compressed
    (cache / "extra/rows.csv.gz").unlink()
    (served / "extra/rows.csv.gz").write_bytes(gzip.compress(text + b"x"))
    with pytest.raises(DataIntegrityError, match="or a gzip of bytes with SHA-256"):
        fetch_file("extra/rows.csv.gz", cache, progress=False)
    assert _left(cache) == []


def test_a_7z_archive_without_a_7z_program_says_what_to_install(mirror, monkeypatch):
    server, served, cache = mirror
    (served / "FCE.7z").write_bytes(b"7z\xbc\xaf\x27\x1c" + bytes(100))
    rel = "fce_pools/bc_pool_jaffe.mat"
    monkeypatch.delenv("DASKFAIR_DATA_URL")
    monkeypatch.setitem(SOURCES, rel, dataclasses.replace(
        SOURCES[rel], url=f"{server.url}/FCE.7z", member="FCE/FCE/data/bc_pool_jaffe.mat"))
    monkeypatch.setattr(shutil, "which", lambda name: None)
    with pytest.raises(DataUnavailableError, match="no 7z program .* is on the PATH"):
        fetch_file(rel, cache, progress=False)
    assert _left(cache) == []


@pytest.mark.skipif(shutil.which("7z") is None, reason="no 7z program on this machine")
def test_a_member_of_a_7z_archive(mirror, monkeypatch, tmp_path):
    import subprocess

    server, served, cache = mirror
    rel = "fce_pools/bc_pool_jaffe.mat"
    inner = tmp_path / "pack" / "FCE" / "data"
    inner.mkdir(parents=True)
    shutil.copyfile(SHARED / rel, inner / "bc_pool_jaffe.mat")
    subprocess.run(["7z", "a", str(served / "FCE.7z"), "FCE"], cwd=tmp_path / "pack",
                   check=True, capture_output=True)
    monkeypatch.delenv("DASKFAIR_DATA_URL")
    monkeypatch.setitem(SOURCES, rel, dataclasses.replace(
        SOURCES[rel], url=f"{server.url}/FCE.7z", member="FCE/data/bc_pool_jaffe.mat"))
    path = fetch_file(rel, cache, progress=False)
    assert path.read_bytes() == (SHARED / rel).read_bytes() and _left(cache) == [rel]


def test_progress_on_a_terminal_is_one_line_rewritten():
    from daskfair.datasets.fetch import _progress

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    out = Terminal()
    report = _progress("adult/adult.data", "http://x/adult.data", True, out)
    report(1_000_000, 4_000_000)
    report(4_000_000, 4_000_000)
    report(4_000_000, 4_000_000)  # the end is said once
    text = out.getvalue()
    assert text == ("\rdownloading adult/adult.data from http://x/adult.data: 1.0 MB of 4.0 MB"
                    "\rdownloading adult/adult.data from http://x/adult.data: 4.0 MB\n")


def test_an_http_error_names_the_status_and_a_missing_member_the_archive(mirror, monkeypatch):
    server, served, cache = mirror
    rel = "fce_pools/bc_pool_yale.mat"  # not served: HTTP 404
    with pytest.raises(DataUnavailableError, match="answered HTTP 404 .* may have moved"):
        fetch_file(rel, cache, progress=False)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("other.txt", b"x")
    (served / "archive.zip").write_bytes(buf.getvalue())
    monkeypatch.delenv("DASKFAIR_DATA_URL")
    monkeypatch.setitem(SOURCES, rel, dataclasses.replace(
        SOURCES[rel], url=f"{server.url}/archive.zip", member="pools/yale.mat"))
    with pytest.raises(DataUnavailableError, match="has no pools/yale.mat .it holds other.txt"):
        fetch_file(rel, cache, progress=False)
    assert _left(cache) == []


def test_fetch_all_fetches_what_it_can_and_lists_the_rest(mirror, capsys):
    server, _, cache = mirror
    # the mirror holds three of the files: every other one fails, the three are kept, and
    # the command says so in one line per file, without a traceback
    assert cli_main(["datasets", "--data-dir", str(cache), "--fetch", "all"]) == 2
    err = capsys.readouterr().err
    assert f"{len(SOURCES) - len(SERVED)} of {len(SOURCES)} files could not be downloaded" in err
    assert "Traceback" not in err and _left(cache) == sorted(SERVED)
    # a mirror is asked for every file, also those with no public source
    assert len(server.requests) == len(SOURCES)


def test_a_file_with_no_public_source_says_where_to_get_it(tmp_path, monkeypatch):
    monkeypatch.delenv("DASKFAIR_DATA_URL")
    rel = "credit_default/UCI_Credit_Card.csv"
    with pytest.raises(DataUnavailableError, match="has no public download .Kaggle") as info:
        load_dataset("credit_default", tmp_path)
    assert f"put it at {tmp_path / rel}" in str(info.value) and _left(tmp_path) == []
