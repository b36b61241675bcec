"""The page's files (HTML, script, style), shipped as package data: no build step, no network."""

from __future__ import annotations

from importlib import resources


def static_text(name: str) -> str:
    """A file of the page by name (``index.html``, ``app.js``, ``app.css``)."""
    return resources.files("ctxrules.inspect").joinpath("static", name).read_text("utf-8")
