"""A log full of markup: nothing from it runs or becomes markup, on the served page or the export."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from inspect_pages import Server, open_page, run_cli, shot, wait_for

from ctxrules import Context
from ctxrules.testing.responses import openai_response
from ctxrules.tokens import HeuristicCounter

#: Each payload, if it ever ran, would set ``window.__xss``.
PAYLOADS = (
    "<script>window.__xss = 1</script>",
    "</script><script>window.__xss = 2</script>",
    '<img src=x onerror="window.__xss = 3">',
    "[click](javascript:window.__xss=4)",
    '<a href="javascript:window.__xss=5">link</a>',
    '" onmouseover="window.__xss = 6" data-x="',
    "<svg onload=window.__xss=7><circle r=9 /></svg>",
    "<iframe srcdoc='<script>parent.__xss=8</script>'></iframe>",
    "<!-- --><style>body{display:none}</style>",
    "${window.__xss = 9}` + alert(1) + `",
)
SESSION = '<img src=x onerror="window.__xss=10">'


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A store whose session id, messages, tool names, arguments and results are markup."""
    url = str(tmp_path_factory.mktemp("hostile") / "store.sqlite")
    ctx = Context(
        model="gpt-4o",
        window=16_000,
        store=url,
        session=SESSION,
        tokenizer=HeuristicCounter(),
        clock=lambda: 1_000.0,
    )
    try:
        for n, text in enumerate(PAYLOADS):
            ctx.add({"role": "user", "content": text})
            ctx.openai()
            call = (f"c{n}", f"tool{n}<b>", {"path": text})
            ctx.record(openai_response(n, text, [call], (500, 0)))
            ctx.add_tool_result(f"c{n}", text * 3)
        ctx.openai()
    finally:
        ctx.close()
    return url


def _visit_everything(page: Any) -> None:
    """Open every request and every node, hover every label: whatever could run, would."""
    for row in page.find_elements("css selector", "[data-request]"):
        page.execute_script("arguments[0].click()", row)
    page.execute_script(
        "for (const n of document.querySelectorAll('svg .node'))"
        " n.dispatchEvent(new MouseEvent('click', {bubbles: true}));"
        "for (const e of document.querySelectorAll('*'))"
        " e.dispatchEvent(new MouseEvent('mouseover', {bubbles: true}));"
    )
    wait_for(page, 'document.querySelector(\'[data-view="node"] pre[data-text="output"]\')')


def _nothing_ran(page: Any, own: dict[str, int]) -> None:
    """No payload ran, no element or attribute came from the log, the text is shown as text."""
    assert page.execute_script("return window.__xss") is None
    for tag in ("script", "style", "link"):
        count = page.execute_script(f"return document.querySelectorAll('{tag}').length")
        assert count == own.get(tag, 0), tag
    injected = page.execute_script(
        "return [...document.querySelectorAll('img, iframe, a, object, embed, form, meta[http-equiv=refresh]')]"
        ".map(e => e.outerHTML.slice(0, 80))"
    )
    assert injected == []
    handlers = page.execute_script(
        "return [...document.querySelectorAll('*')].flatMap(e => [...e.attributes]"
        ".filter(a => a.name.startsWith('on') || /javascript:/i.test(a.value))"
        ".map(a => e.tagName + ' ' + a.name))"
    )
    assert handlers == []
    assert page.execute_script("return getComputedStyle(document.body).display") != "none"
    text = page.execute_script("return document.body.textContent")
    for payload in PAYLOADS:
        assert payload[:30] in text


def test_nothing_from_a_log_runs_on_the_served_page(
    browser: Any, hostile: str, serve: Callable[..., Server]
) -> None:
    """The served page shows every payload as text; none runs, none becomes an element."""
    server = serve(hostile)
    open_page(browser, server.url)
    _visit_everything(browser)
    # The page's own links: its style sheet and its (empty, inline) icon.
    _nothing_ran(browser, {"script": 1, "link": 2})
    shot(browser, "untrusted")


def test_nothing_from_a_log_runs_in_the_export(browser: Any, hostile: str, tmp_path: Path) -> None:
    """The exported file keeps the payloads inert too (its data block is base64, never markup)."""
    target = tmp_path / "hostile.html"
    run_cli("inspect", hostile, "--export", str(target))
    html = target.read_text("utf-8")
    # The session id is in the title, escaped; everything else is inside the base64 block.
    assert "<script>window" not in html
    assert "<img" not in html
    assert "&lt;img src=x onerror=&quot;" in html
    open_page(browser, target.as_uri())
    _visit_everything(browser)
    _nothing_ran(browser, {"script": 2, "style": 1})
