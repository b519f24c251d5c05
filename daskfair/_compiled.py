"""numba block functions compiled once per machine and user: their cache folder
(docs/design.md#first-calls)."""

from __future__ import annotations

import functools
import hashlib
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any, ClassVar

import numba
from numba.core import caching

from ._folders import user_cache_dir

try:
    import fcntl
except ImportError:  # Windows: no lock, each process compiles on its own
    fcntl = None

__all__ = ["compile_cache_dir", "compiled"]

#: Seconds a process waits for another one compiling the same function before it compiles too.
COMPILE_WAIT = 600.0


def compile_cache_dir() -> Path:
    """The folder of compiled block functions: one per numba version, shared by every
    environment, checkout and process of this user (``NUMBA_CACHE_DIR`` overrides it); code
    compiled with ``NUMBA_BOUNDSCHECK=1`` has a folder of its own."""
    # numba's cache entries are keyed by signature, CPU and bytecode, not by the bounds-check
    # switch: one folder would hand unchecked code to a process that asked for checks
    checks = "-boundscheck" if numba.config.BOUNDSCHECK else ""
    return user_cache_dir("compiled") / f"numba-{numba.__version__}{checks}"


@functools.cache
def _digest(path: str, mtime_ns: int, size: int) -> str:
    # one read per source file, not per function (a changed file is read again)
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


class _UserFolderLocator(caching._SourceFileBackedLocatorMixin, caching._CacheLocator):
    # A source file's functions are cached in a subfolder named by the file's content, and an
    # entry is stamped with that content, not with where the file is installed or when it was
    # written: a new virtual environment or clone with the same source loads what another
    # compiled. numba keys each entry by its signature and the CPU, so nodes of several CPU
    # models can share the folder. The mixin's from_function gives None when the folder
    # cannot be written, and numba's own locators are tried next.
    def __init__(self, py_func: Callable[..., Any], py_file: str) -> None:
        self._py_file = py_file
        self._lineno = py_func.__code__.co_firstlineno
        source = Path(py_file)
        stat = source.stat()
        self._digest = _digest(py_file, stat.st_mtime_ns, stat.st_size)
        self._cache_path = str(compile_cache_dir() /
                               f"{source.parent.name}.{source.stem}-{self._digest[:16]}")

    def get_cache_path(self) -> str:
        return self._cache_path

    def get_source_stamp(self) -> str:
        return self._digest


_NUMBA_LOCATORS = caching.CompileResultCacheImpl._locator_classes


class _CacheImpl(caching.CompileResultCacheImpl):
    # numba's first locator (NUMBA_CACHE_DIR) first; then daskfair's folder; then numba's
    # others (next to the source, the user-wide folder)
    _locator_classes: ClassVar[list[type]] = [_NUMBA_LOCATORS[0], _UserFolderLocator,
                                              *_NUMBA_LOCATORS[1:]]


class _FunctionCache(caching.FunctionCache):
    # A process that finds no compiled code takes the function's lock file before it
    # compiles, and looks again once it holds it: the processes of one machine (the workers
    # of a cluster, or jobs sharing the folder) compile a function once, the others wait and
    # load it. The lock is released when the dispatcher's compile returns or raises.
    _impl_class = _CacheImpl

    def __init__(self, py_func: Callable[..., Any]) -> None:
        super().__init__(py_func)
        self._held: IO[bytes] | None = None
        self._release_lock = threading.Lock()  # threads of a worker may end compiles together

    @property
    def lock_path(self) -> Path:
        return Path(self.cache_path) / f"{self._impl.filename_base}.lock"

    def load_overload(self, sig: Any, target_context: Any) -> Any:
        found = super().load_overload(sig, target_context)
        if found is not None or fcntl is None or self._held is not None:
            return found
        self._held = self._lock()
        return super().load_overload(sig, target_context)

    def _lock(self) -> IO[bytes] | None:
        try:
            self.lock_path.parent.mkdir(parents=True, exist_ok=True)
            handle = open(self.lock_path, "a+b")
        except OSError:
            return None
        deadline = time.monotonic() + COMPILE_WAIT
        while True:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return handle
            except BlockingIOError:
                if time.monotonic() > deadline:
                    break
                time.sleep(0.05)
            except OSError:  # a file system without locks: compile without one
                break
        handle.close()
        return None

    def release(self) -> None:
        with self._release_lock:
            held, self._held = self._held, None
        if held is not None:
            held.close()  # closing the file releases its lock


def compiled(fn: Callable[..., Any] | None = None, **options: Any) -> Any:
    """``numba.njit(nogil=True, **options)`` whose compiled code is cached in
    :func:`compile_cache_dir` (usable as ``@compiled`` or ``@compiled(inline="always")``).

    Parameters
    ----------
    fn : callable, optional
        The function to compile.
    **options
        Further ``numba.njit`` options.

    Returns
    -------
    numba dispatcher, or a decorator without ``fn``
    """
    if fn is None:
        return lambda f: compiled(f, **options)
    dispatcher = numba.njit(nogil=True, **options)(fn)
    # what njit(cache=True) does, with daskfair's folder and a lock around each compile
    dispatcher._cache = cache = _FunctionCache(fn)
    compile_ = dispatcher.compile

    @functools.wraps(compile_)
    def compile_once(sig: Any) -> Any:
        try:
            return compile_(sig)
        finally:
            cache.release()

    dispatcher.compile = compile_once
    return dispatcher
