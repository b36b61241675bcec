"""`ctxrules inspect`: a local web page of a store's sessions, history, commits and occupancy.

The views are plain JSON built from the store (`views`, `layout`); `server` serves them
with the page (the ``[inspect]`` extra: Starlette and uvicorn); `export` writes one
session's page as one self-contained file, with no extra needed.
"""

from ctxrules.inspect.export import export_html
from ctxrules.inspect.read import Reader

__all__ = ["Reader", "export_html"]
