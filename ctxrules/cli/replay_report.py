"""The replay's outputs: a terminal table (rich) and a self-contained HTML report (plotly, optional)."""

from __future__ import annotations

import html
import itertools
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

from ctxrules.engine.replay import Request


def totals(requests: Sequence[Request]) -> dict[str, float]:
    """The run's figures: tokens, cache reads and cache-weighted cost, pipeline against naive."""
    sent = sum(r.sent for r in requests)
    naive = sum(r.naive for r in requests)
    cached = sum(r.cached_prefix for r in requests)
    naive_cached = sum(r.naive_cached_prefix for r in requests)
    return {
        "requests": len(requests),
        "sent": sent,
        "naive": naive,
        "largest": max((r.sent for r in requests), default=0),
        "over_window": sum(1 for r in requests if r.sent > r.window),
        "naive_overflows": sum(1 for r in requests if r.naive_overflows),
        "compactions": sum(1 for r in requests if (r.compaction or "").startswith("finished")),
        "snipped": sum(1 for r in requests if r.snipped),
        "cached": cached,
        "naive_cached": naive_cached,
        "hit_rate": cached / sent if sent else 0.0,
        "naive_hit_rate": naive_cached / naive if naive else 0.0,
        "extensions": sum(1 for r in requests if r.extends),
        "breaks": sum(1 for r in requests if not r.extends),
        "orphans": sum(r.protocol_violations for r in requests),
        "cost": sum(r.cost for r in requests),
        "naive_cost": sum(r.naive_cost for r in requests),
        "output_cost": sum(r.priced.output_cost for r in requests),
        "waited": sum(1 for r in requests if r.waited),
        "summary_cost": sum(r.summary_cost for r in requests),
    }


def break_causes(requests: Sequence[Request]) -> Counter[str]:
    """How many requests each cause broke the cached prefix of."""
    return Counter(r.cause for r in requests if r.cause is not None)


def figure_rows(requests: Sequence[Request]) -> list[tuple[str, str, str]]:
    """The figures as (name, pipeline, naive) rows, shared by the terminal and the HTML report."""
    f = totals(requests)
    causes = ", ".join(f"{k} {v}" for k, v in sorted(break_causes(requests).items())) or "none"
    return [
        ("requests", f"{f['requests']:,.0f}", f"{f['requests']:,.0f}"),
        ("tokens sent", f"{f['sent']:,.0f}", f"{f['naive']:,.0f}"),
        (
            "largest request",
            f"{f['largest']:,.0f}",
            f"{max((r.naive for r in requests), default=0):,.0f}",
        ),
        ("over the window", f"{f['over_window']:,.0f}", f"{f['naive_overflows']:,.0f}"),
        ("read from the cache", f"{f['cached']:,.0f}", f"{f['naive_cached']:,.0f}"),
        ("cache hit rate", f"{f['hit_rate']:.0%}", f"{f['naive_hit_rate']:.0%}"),
        (
            "requests extending the previous",
            f"{f['extensions']:,.0f} of {f['requests']:,.0f}",
            f"{f['requests']:,.0f} of {f['requests']:,.0f}",
        ),
        ("prefix breaks by cause", causes, "none"),
        ("cache-weighted cost (prompt)", f"{f['cost']:,.0f}", f"{f['naive_cost']:,.0f}"),
        ("compactions / snips", f"{f['compactions']:.0f} / {f['snipped']:.0f}", "-"),
        ("turns that waited for a summary", f"{f['waited']:.0f}", "-"),
        ("summarizer cost (in the cost above)", f"{f['summary_cost']:,.0f}", "-"),
        ("orphan tool pairs", f"{f['orphans']:.0f}", "-"),
    ]


def print_summary(requests: Sequence[Request], source: str, out: TextIO) -> None:
    """A table of the run's figures, drawn by rich."""
    from rich.console import Console  # noqa: PLC0415 - only the CLI needs the terminal library
    from rich.table import Table  # noqa: PLC0415

    table = Table(title=f"replay of {source}")
    table.add_column("", style="bold")
    table.add_column("pipeline", justify="right")
    table.add_column("naive resend", justify="right")
    for row in figure_rows(requests):
        table.add_row(*row)
    Console(file=out, width=110).print(table)


def _markers(figure: Any, requests: Sequence[Request]) -> None:  # noqa: ANN401 - a plotly Figure
    # Dotted red lines where the prefix broke, solid purple ones at compactions.
    for r in requests:
        if r.compaction == "finished":
            figure.add_vline(x=r.index, line_color="purple", line_width=1)
        elif r.cause is not None:
            figure.add_vline(x=r.index, line_color="red", line_dash="dot", line_width=1)


def write_report(requests: Sequence[Request], source: str, path: Path) -> str | None:
    """One self-contained HTML file: tokens per request, cumulative cost, breaks, figures; None if written."""
    try:
        import plotly.graph_objects as go  # noqa: PLC0415 - the optional 'report' extra
        from plotly.subplots import make_subplots  # noqa: PLC0415
    except ImportError:
        return "the HTML report needs plotly: pip install 'ctxrules[report]'"
    index = [r.index for r in requests]
    figure = make_subplots(
        rows=2, cols=1, subplot_titles=("tokens per request", "cumulative cache-weighted cost")
    )
    figure.add_trace(
        go.Scatter(x=index, y=[r.sent for r in requests], name="pipeline"), row=1, col=1
    )
    figure.add_trace(
        go.Scatter(x=index, y=[r.naive for r in requests], name="naive resend"), row=1, col=1
    )
    figure.add_trace(
        go.Scatter(x=index, y=[r.cached_prefix for r in requests], name="pipeline, from cache"),
        row=1,
        col=1,
    )
    window = requests[0].window if requests else 0
    figure.add_hline(y=window, line_dash="dot", annotation_text=f"window {window:,}", row=1, col=1)
    for name, costs in (
        ("pipeline cost", [r.cost for r in requests]),
        ("naive cost", [r.naive_cost for r in requests]),
    ):
        figure.add_trace(
            go.Scatter(x=index, y=list(itertools.accumulate(costs)), name=name), row=2, col=1
        )
    _markers(figure, requests)
    figure.update_xaxes(title_text="request (LLM call)", row=1, col=1)
    figure.update_xaxes(title_text="request (LLM call)", row=2, col=1)
    figure.update_yaxes(title_text="prompt tokens", row=1, col=1)
    figure.update_yaxes(title_text="cost, uncached-input-token units", row=2, col=1)
    figure.update_layout(
        title=f"ctxrules replay of {source} (red dots: prefix breaks, purple: compactions)",
        height=850,
    )
    rows = "".join(
        f"<tr><th>{html.escape(a)}</th><td>{html.escape(b)}</td><td>{html.escape(c)}</td></tr>"
        for a, b, c in figure_rows(requests)
    )
    table = (
        '<table border="1" cellpadding="4" style="border-collapse:collapse;font-family:sans-serif">'
        f"<tr><th></th><th>pipeline</th><th>naive resend</th></tr>{rows}</table>"
    )
    page = figure.to_html(include_plotlyjs=True, full_html=True)
    page = page.replace("<body>", f"<body>\n<h2>figures</h2>\n{table}", 1)
    path.write_text(page, encoding="utf-8")
    return None
