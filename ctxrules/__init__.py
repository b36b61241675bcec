"""ctxrules: decide what an LLM reads on every call of a long agent session."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("ctxrules")
except PackageNotFoundError:  # pragma: no cover - running from a source tree without install
    __version__ = "0.0.0"

__all__ = ["__version__"]
