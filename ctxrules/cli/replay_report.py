"""The replay's outputs: a terminal table (rich) and a self-contained HTML report (plotly, optional)."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from ctxrules.engine.replay import Request


def totals(requests: Sequence[Request]) -> dict[str, float]:
    """The run's figures: tokens and cache-weighted cost, pipeline against naive."""
    return {
        "requests": len(requests),
        "sent": sum(r.sent for r in requests),
        "naive": sum(r.naive for r in requests),
        "largest": max((r.sent for r in requests), default=0),
        "over_window": sum(1 for r in requests if r.sent > r.window),
        "naive_overflows": sum(1 for r in requests if r.naive_overflows),
        "compactions": sum(1 for r in requests if (r.compaction or "").startswith("finished")),
        "snipped": sum(1 for r in requests if r.snipped),
        "cached": sum(r.cached_prefix for r in requests),
        "cost": sum(r.cost for r in requests),
        "naive_cost": sum(r.naive_cost for r in requests),
    }


def print_summary(requests: Sequence[Request], source: str, out: TextIO) -> None:
    """A table of the run's figures, drawn by rich."""
    from rich.console import Console  # noqa: PLC0415 - only the CLI needs the terminal library
    from rich.table import Table  # noqa: PLC0415

    figures = totals(requests)
    table = Table(title=f"replay of {source}")
    table.add_column("", style="bold")
    table.add_column("pipeline", justify="right")
    table.add_column("naive resend", justify="right")
    table.add_row("requests", f"{figures['requests']:,.0f}", f"{figures['requests']:,.0f}")
    table.add_row("tokens sent", f"{figures['sent']:,.0f}", f"{figures['naive']:,.0f}")
    table.add_row(
        "largest request",
        f"{figures['largest']:,.0f}",
        f"{max((r.naive for r in requests), default=0):,.0f}",
    )
    table.add_row(
        "over the window", f"{figures['over_window']:,.0f}", f"{figures['naive_overflows']:,.0f}"
    )
    table.add_row(
        "cache-reusable prefix",
        f"{figures['cached']:,.0f}",
        f"{sum(r.naive_cached_prefix for r in requests):,.0f}",
    )
    table.add_row("cache-weighted cost", f"{figures['cost']:,.0f}", f"{figures['naive_cost']:,.0f}")
    table.add_row(
        "compactions / snips", f"{figures['compactions']:.0f} / {figures['snipped']:.0f}", "-"
    )
    Console(file=out, width=100).print(table)


def write_report(requests: Sequence[Request], source: str, path: Path) -> str | None:
    """One self-contained HTML file: tokens per request and cumulative cost; None if written."""
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
    window = requests[0].window if requests else 0
    figure.add_hline(y=window, line_dash="dot", annotation_text=f"window {window:,}", row=1, col=1)
    figure.add_trace(
        go.Scatter(
            x=index, y=list(itertools.accumulate(r.cost for r in requests)), name="pipeline cost"
        ),
        row=2,
        col=1,
    )
    figure.add_trace(
        go.Scatter(
            x=index, y=list(itertools.accumulate(r.naive_cost for r in requests)), name="naive cost"
        ),
        row=2,
        col=1,
    )
    figure.update_layout(title=f"ctxrules replay of {source}", height=800)
    path.write_text(figure.to_html(include_plotlyjs=True, full_html=True), encoding="utf-8")
    return None
