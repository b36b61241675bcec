"""The replay's outputs: a terminal table (rich) and a self-contained HTML report (plotly, optional)."""

from __future__ import annotations

import html
import itertools
from collections import Counter
from collections.abc import Mapping, Sequence
from decimal import Decimal
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
        **fidelity_totals(requests),
    }


#: The fidelity counts summed over requests (`ctxrules.fidelity.Fidelity`'s fields).
FIDELITY_COUNTS = ("references", "visible", "one_recall", "deeper", "lost", "round_trips")


def fidelity_totals(requests: Sequence[Request]) -> dict[str, float]:
    """The run's fidelity: references by reach, recall round trips, requests naming the trail."""
    sums = {key: float(sum(getattr(r.fidelity, key) for r in requests)) for key in FIDELITY_COUNTS}
    return {
        **sums,
        "trail_named": sum(1 for r in requests if r.fidelity.trail_named),
        "visible_share": sums["visible"] / sums["references"] if sums["references"] else 1.0,
    }


def request_json(request: Request) -> dict[str, object]:
    """One request's figures as plain JSON, its fidelity included."""
    return {
        "index": request.index,
        "node_id": request.node_id,
        "sent": request.sent,
        "naive": request.naive,
        "cost": request.cost,
        "naive_cost": request.naive_cost,
        "cached": request.cached_prefix,
        "extends": request.extends,
        "cause": request.cause,
        "batch": request.batch,
        "held": request.held,
        "compaction": request.compaction,
        "snipped": request.snipped,
        "fidelity": request.fidelity.to_json(),
    }


def replay_json(requests: Sequence[Request], source: str, provider: str) -> dict[str, object]:
    """The whole run as one JSON document: totals, then every request."""
    window = requests[0].window if requests else 0
    return {
        "source": source,
        "window": window,
        "provider": provider,
        "totals": totals(requests),
        "requests": [request_json(r) for r in requests],
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
        *fidelity_rows(f),
    ]


def share(part: float, whole: float) -> str:
    """``part`` as a percentage of ``whole``: whole percents, one significant digit below 1 %.

    >>> share(250, 1_000), share(4, 10_000), share(0, 1_000), share(996, 100_000)
    ('25%', '0.04%', '0%', '1%')
    """
    percent = 100 * part / whole if whole else 0.0
    if percent == 0 or percent >= 1:
        return f"{percent:.0f}%"
    # A cost of 0.04 % is no "0 %": the saving is large, not total.
    return f"{Decimal(f'{percent:.1g}'):f}%"


def cost_line(figures: Mapping[str, float], priced_as: str) -> str:
    """The replay's last figures line: tokens and cost against the naive resend's."""
    # A request snip cut is not a saving: the model would not have had what it needed.
    cut = f", {figures['snipped']:,.0f} requests cut to fit" if figures["snipped"] else ""
    return (
        f"tokens sent {figures['sent']:,.0f} vs naive {figures['naive']:,.0f}; "
        f"cost ({priced_as}) {figures['cost']:,.0f} vs {figures['naive_cost']:,.0f}"
        f" ({share(figures['cost'], max(figures['naive_cost'], 1))} of naive{cut})"
    )


def _of(part: float, whole: float) -> str:
    return f"{part:,.0f} ({part / whole:.1%})" if whole else f"{part:,.0f}"


def fidelity_rows(f: dict[str, float]) -> list[tuple[str, str, str]]:
    """The fidelity figures as rows; the naive resend sends every tool result whole."""
    refs, requests = f["references"], f["requests"]
    return [
        ("references used next (from tool results)", f"{refs:,.0f}", f"{refs:,.0f}"),
        ("  visible in the request", _of(f["visible"], refs), _of(refs, refs)),
        ("  one recall away", _of(f["one_recall"], refs), "0"),
        ("  deeper", _of(f["deeper"], refs), "0"),
        ("  lost", _of(f["lost"], refs), "0"),
        ("recall round trips needed", f"{f['round_trips']:,.0f}", "0"),
        (
            "requests naming every file written",
            _of(f["trail_named"], requests),
            _of(requests, requests),
        ),
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


#: Where a reference stood, the colour it is drawn in, best to worst.
REACH_COLOURS = (
    ("visible", "seagreen"),
    ("one_recall", "gold"),
    ("deeper", "darkorange"),
    ("lost", "firebrick"),
)


def cost_fidelity_points(
    requests: Sequence[Request], label: str = "pipeline"
) -> list[dict[str, float | str]]:
    """The run as points of the cost-against-fidelity plot: the pipeline's total and the naive resend."""
    f = totals(requests)
    refs = f["references"]
    ratio = f["cost"] / f["naive_cost"] if f["naive_cost"] else 1.0
    return [
        {
            "label": label,
            "cost_ratio": ratio,
            "visible": f["visible"] / refs if refs else 1.0,
            "reachable": (f["visible"] + f["one_recall"]) / refs if refs else 1.0,
        },
        {"label": "naive resend", "cost_ratio": 1.0, "visible": 1.0, "reachable": 1.0},
    ]


def cost_fidelity_figure(points: Sequence[dict[str, float | str]], title: str) -> Any:  # noqa: ANN401 - a plotly Figure
    """Cost ÷ naive against the share of references visible (filled) and within one recall (open).

    One pair of markers per point: a spec at a window, or the naive resend. Needs plotly.
    """
    import plotly.graph_objects as go  # noqa: PLC0415 - the optional 'report' extra

    figure = go.Figure()
    for key, name, symbol in (
        ("visible", "visible", "circle"),
        ("reachable", "visible or one recall away", "circle-open"),
    ):
        figure.add_trace(
            go.Scatter(
                x=[p["cost_ratio"] for p in points],
                y=[p[key] for p in points],
                text=[str(p["label"]) for p in points],
                mode="markers+text",
                textposition="top center",
                marker={"symbol": symbol, "size": 12},
                name=name,
            )
        )
    figure.update_xaxes(title_text="cache-weighted cost ÷ naive resend (lower is cheaper)")
    figure.update_yaxes(title_text="share of references (higher is better)", tickformat=".0%")
    figure.update_layout(title=title, height=500)
    return figure


def write_report(requests: Sequence[Request], source: str, path: Path) -> str | None:
    """One self-contained HTML file: tokens, cumulative cost, fidelity per request, cost against fidelity."""
    try:
        import plotly.graph_objects as go  # noqa: PLC0415 - the optional 'report' extra
        from plotly.subplots import make_subplots  # noqa: PLC0415
    except ImportError:
        return "the HTML report needs plotly: pip install 'ctxrules[report]'"
    index = [r.index for r in requests]
    figure = make_subplots(
        rows=3,
        cols=1,
        subplot_titles=(
            "tokens per request",
            "cumulative cache-weighted cost",
            "references the recorded reply used, by where they stood; files written, not named",
        ),
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
    for reach, colour in REACH_COLOURS:
        figure.add_trace(
            go.Bar(
                x=index,
                y=[getattr(r.fidelity, reach) for r in requests],
                name=reach.replace("_", " "),
                marker_color=colour,
            ),
            row=3,
            col=1,
        )
    figure.add_trace(
        go.Scatter(
            x=index,
            y=[len(r.fidelity.trail_missing) for r in requests],
            name="files written, not named",
            line={"color": "black", "dash": "dot"},
        ),
        row=3,
        col=1,
    )
    figure.update_layout(barmode="stack")
    _markers(figure, requests)
    for row in (1, 2, 3):
        figure.update_xaxes(title_text="request (LLM call)", row=row, col=1)
    figure.update_yaxes(title_text="prompt tokens", row=1, col=1)
    figure.update_yaxes(title_text="cost, uncached-input-token units", row=2, col=1)
    figure.update_yaxes(title_text="references, files", row=3, col=1)
    figure.update_layout(
        title=f"ctxrules replay of {source} (red dots: prefix breaks, purple: compactions)",
        height=1200,
    )
    tradeoff = cost_fidelity_figure(cost_fidelity_points(requests), "cost against fidelity")
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
    extra = tradeoff.to_html(include_plotlyjs=False, full_html=False)
    page = page.replace("</body>", f"{extra}\n</body>", 1)
    path.write_text(page, encoding="utf-8")
    return None
