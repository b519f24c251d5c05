"""Data files downloaded on first use and checked before use (docs/design.md#data-files)."""

from __future__ import annotations

import gzip
import hashlib
import os
import shutil
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
import zipfile
from collections.abc import Callable
from http.client import HTTPException
from pathlib import Path
from typing import IO

import dask

from .errors import DataIntegrityError, DataUnavailableError
from .sources import SOURCES, Source

__all__ = ["fetch_file", "matches", "sha256_of", "source_url"]

CHUNK = 1 << 16
TIMEOUT = 60.0


def source_url(src: Source) -> tuple[str | None, str | None]:
    """The URL a file is fetched from and the member inside the archive there; with a mirror
    (``DASKFAIR_DATA_URL`` or the config key ``daskfair.data-url``) the mirror's URL."""
    mirror = os.environ.get("DASKFAIR_DATA_URL") or dask.config.get("daskfair.data-url", None)
    if mirror:
        return f"{mirror.rstrip('/')}/{src.path}", None
    return src.url, src.member


def fetch_file(rel: str, root: Path, *, progress: bool | None = None) -> Path:
    """Download ``rel`` into the cache directory ``root``, check it, and return its path
    (DataUnavailableError: no download; DataIntegrityError: a mismatch, nothing kept)."""
    src = SOURCES.get(rel)
    target = root / rel
    if src is None:
        raise DataUnavailableError(
            f"data file {rel} is not in daskfair's registry of public files; put it at "
            f"{target} by hand.")
    url, member = source_url(src)
    if url is None:
        raise DataUnavailableError(
            f"data file {rel} has no public download ({src.note}). Get it from "
            f"{src.origin}, check its SHA-256 is {src.sha256}, and put it at {target}.")
    target.parent.mkdir(parents=True, exist_ok=True)
    # one part file per process and thread: concurrent fetches of one file never share one
    part = target.with_name(f".{target.name}.{os.getpid()}-{threading.get_ident()}.part")
    raw = part.with_suffix(".download") if member else part
    show = True if progress is None else progress
    try:
        try:
            _download(url, raw, _progress(rel, url, show))
            if member:
                _extract(raw, member, part)
        except urllib.error.HTTPError as exc:
            raise DataUnavailableError(
                f"could not download {rel}: {url} answered HTTP {exc.code} {exc.reason}. The "
                "publisher may have moved or removed the file: download it from "
                f"{src.origin}"
                + (f", take {member} out of the archive" if member else "")
                + f", check its SHA-256 is {src.sha256}, and put it at {target}; or set "
                "DASKFAIR_DATA_URL to a mirror that has it.") from exc
        except (urllib.error.URLError, HTTPException, OSError, zipfile.BadZipFile) as exc:
            raise DataUnavailableError(
                f"could not download {rel} from {url}"
                + (f" (member {member})" if member else "") + f": {_reason(exc)}. With no "
                f"network: download {url} by hand"
                + (f", take {member} out of it" if member else "")
                + f", check its SHA-256 is {src.sha256}, and put it at {target}; or point "
                "DASKFAIR_DATA (or data_dir=) at a folder that holds the data sets.") from exc
        size, digest = part.stat().st_size, sha256_of(part)
        if not matches(src, part, digest):
            raise DataIntegrityError(
                f"{url} gave {rel} with {size:,} bytes and SHA-256 {digest}; expected "
                f"{src.size:,} bytes and {src.sha256}"
                + (" (or a gzip of bytes with SHA-256 " + src.content_sha256 + ")"
                   if src.content_sha256 else "") + ". The download is corrupt or the "
                "publisher changed the file: nothing was kept. Try again, or download it by "
                f"hand and put it at {target}.")
        try:
            os.replace(part, target)
        except PermissionError:
            # Windows: another process put the same file there first and it is open
            if not (target.exists() and matches(src, target)):
                raise
    finally:
        for p in (part, raw):
            p.unlink(missing_ok=True)
    return target


def matches(src: Source, path: Path, digest: str | None = None) -> bool:
    """Whether ``path`` is the registry's file: its SHA-256 (``digest`` if known), or for a gzip
    its publisher compresses otherwise, that of its decompressed bytes."""
    if (digest or sha256_of(path)) == src.sha256:
        return True
    if src.content_sha256 is None:
        return False
    try:
        with gzip.open(path, "rb") as f:
            return _sha256(f) == src.content_sha256
    except (OSError, EOFError):
        return False


def _download(url: str, dest: Path, report: Callable[[int, int | None], None]) -> None:
    """Stream ``url`` to ``dest``, reporting the bytes done; an early close is an error."""
    request = urllib.request.Request(url, headers={"User-Agent": "daskfair"})
    with urllib.request.urlopen(request, timeout=TIMEOUT) as response, open(dest, "wb") as out:
        length = response.headers.get("Content-Length")
        total = int(length) if length and length.isdigit() else None
        done = 0
        while chunk := response.read(CHUNK):
            out.write(chunk)
            done += len(chunk)
            report(done, total)
        if total is not None and done != total:
            raise HTTPException(f"the connection closed after {done:,} of {total:,} bytes")
        report(done, done)


def _extract(archive: Path, member: str, dest: Path) -> None:
    """Write ``member`` of a zip archive, or of a 7z one (by the ``7z`` program), to ``dest``;
    OSError when it cannot."""
    if zipfile.is_zipfile(archive):
        with zipfile.ZipFile(archive) as z:
            names = z.namelist()
            if member not in names:
                held = ", ".join(names[:5]) + (", …" if len(names) > 5 else "")
                raise OSError(f"the archive has no {member} (it holds {held})")
            with z.open(member) as f, open(dest, "wb") as out:
                shutil.copyfileobj(f, out, CHUNK)
        return
    program = next((p for p in ("7z", "7za", "7zr") if shutil.which(p)), None)
    if program is None:
        raise OSError(f"{member} is inside a 7z archive, and no 7z program (7z, 7za or 7zr; "
                      "Debian/Ubuntu: apt install p7zip-full, macOS: brew install p7zip) is "
                      "on the PATH to unpack it")
    with open(dest, "wb") as out:
        done = subprocess.run([program, "e", "-so", str(archive), member], stdout=out,
                              stderr=subprocess.PIPE, check=False)
    if done.returncode != 0 or dest.stat().st_size == 0:
        raise OSError(f"{program} could not take {member} out of the archive: "
                      f"{done.stderr.decode(errors='replace').strip()[-300:]}")


def _sha256(f: IO[bytes]) -> str:
    """The SHA-256 of what ``f`` reads, in 1 MiB pieces (hexadecimal)."""
    h = hashlib.sha256()
    for chunk in iter(lambda: f.read(1 << 20), b""):
        h.update(chunk)
    return h.hexdigest()


def sha256_of(path: Path) -> str:
    """The file's SHA-256 (hexadecimal)."""
    with open(path, "rb") as f:
        return _sha256(f)


def _reason(exc: BaseException) -> str:
    """Why a download failed, in the error's own words."""
    reason = getattr(exc, "reason", None)
    return str(reason if reason is not None else exc) or type(exc).__name__


def _progress(rel: str, url: str, show: bool, stream: IO[str] | None = None
              ) -> Callable[[int, int | None], None]:
    """A progress line rewritten on a terminal (at most ten a second); elsewhere one line at the
    end; nothing with ``show=False``."""
    out = stream or sys.stderr
    last = [0.0]
    live = show and out.isatty()
    ended = [False]

    def report(done: int, total: int | None) -> None:
        final = total is not None and done >= total
        if not show or ended[0] or not (final or live):
            return
        ended[0] = final
        now = time.monotonic()
        if not final and now - last[0] < 0.1:
            return
        last[0] = now
        size = f"{done / 1e6:.1f} MB" + (f" of {total / 1e6:.1f} MB" if total and not final
                                         else "")
        start = "\r" if live else ""
        out.write(f"{start}downloading {rel} from {url}: {size}" + ("\n" if final else ""))
        out.flush()

    return report
