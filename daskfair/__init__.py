"""daskfair: fair machine learning at any scale with Dask."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("daskfair")
except PackageNotFoundError:  # pragma: no cover - running from a source tree
    __version__ = "0.0.0"

__all__ = ["__version__"]
