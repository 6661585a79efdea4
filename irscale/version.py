"""The installed package's version (``0+unknown`` in a source tree that is not installed)."""
from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("irscale")
except PackageNotFoundError:  # pragma: no cover  (running from a source tree that is not installed)
    __version__ = "0+unknown"
