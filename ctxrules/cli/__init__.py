"""The `ctxrules` command line: thin argument parsing over the library."""

from ctxrules.cli.main import main

__all__ = ["main"]
