"""`SpanObserver`: the engine's decisions as OpenTelemetry spans, through the API package only.

A request's span starts when `prepare` returns and ends when `record` reads the response's
usage (or at the next `prepare` of the session, if no usage came): it covers the model call
whose input ctxrules decided. Compactions, summarizer calls and recall answers get spans of
their own. With no tracer provider configured every method returns at its first line.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from opentelemetry import trace

from ctxrules import __version__
from ctxrules.commit import ContextCommit
from ctxrules.compaction import CompactResult, Summarizer
from ctxrules.recall.tools import ToolAnswer
from ctxrules.telemetry.attributes import (
    Value,
    compaction_attributes,
    receipts,
    request_attributes,
    usage_attributes,
    warning_events,
)
from ctxrules.tokens.usage import ProviderUsage

if TYPE_CHECKING:
    from ctxrules.engine.turn import TurnPrep

_OFF = (trace.ProxyTracerProvider, trace.NoOpTracerProvider)


def tracing() -> bool:
    """Whether an application configured a tracer provider (the API's default records nothing)."""
    return not isinstance(trace.get_tracer_provider(), _OFF)


def _events(span: trace.Span, events: Iterable[tuple[str, Mapping[str, Value]]]) -> None:
    for name, attributes in events:
        span.add_event(name, dict(attributes))


class SpanObserver:
    """An engine `Observer` that writes spans; one open request span per session at most.

    ``provider`` is the tracer provider to use; by default the global one, once the
    application sets it.
    """

    def __init__(self, provider: trace.TracerProvider | None = None) -> None:
        self._provider = provider
        self._tracer = trace.get_tracer("ctxrules", __version__, tracer_provider=provider)
        self._open: dict[str, trace.Span] = {}

    def _on(self) -> bool:
        return self._provider is not None or tracing()

    def _end(self, session_id: str) -> None:
        span = self._open.pop(session_id, None)
        if span is not None:
            span.end()

    def prepared(self, prep: TurnPrep, before: ContextCommit | None, rules_version: str) -> None:
        """Start the request's span with its decisions; the previous one ends if still open."""
        if not self._on():
            return
        self._end(prep.session_id)
        span = self._tracer.start_span("ctxrules.prepare", kind=trace.SpanKind.CLIENT)
        if not span.is_recording():
            span.end()
            return
        attributes, diff = request_attributes(prep, before, rules_version)
        span.set_attributes(attributes)
        _events(span, receipts(diff))
        _events(span, warning_events(prep.warnings))
        self._open[prep.session_id] = span

    def recorded(self, session_id: str, usage: ProviderUsage, prep: TurnPrep) -> None:
        """Set the usage the response reported on the request's span, and end it."""
        span = self._open.get(session_id)
        if span is None:
            return
        span.set_attributes(usage_attributes(usage))
        span.set_attribute("ctxrules.request.estimated_tokens", prep.request_tokens)
        self._end(session_id)

    def compacted(self, session_id: str, result: CompactResult) -> None:
        """A span for one compaction, with its outcome and its events."""
        if not self._on():
            return
        with self._tracer.start_as_current_span("ctxrules.compaction") as span:
            if span.is_recording():
                span.set_attributes(compaction_attributes(session_id, result))
                for event in result.events:
                    span.add_event(
                        f"ctxrules.compaction.{event.kind.value}",
                        {
                            "tokens_before": event.tokens_before,
                            "tokens_after": event.tokens_after,
                        },
                    )

    def summarizing(self, session_id: str, summarizer: Summarizer) -> Summarizer:
        """``summarizer`` wrapped in a span per call (itself when tracing is off)."""
        if not self._on():
            return summarizer
        traced: Summarizer = _traced(self._tracer, session_id, summarizer)
        return traced

    def recalled(self, session_id: str, tool: str, answer: ToolAnswer) -> None:
        """A span for one recall or search answer: the tool, the page, the size, an error."""
        if not self._on():
            return
        with self._tracer.start_as_current_span("ctxrules.recall") as span:
            span.set_attributes(
                {
                    "gen_ai.operation.name": "execute_tool",
                    "gen_ai.tool.name": tool,
                    "gen_ai.conversation.id": session_id,
                    "ctxrules.recall.error": answer.is_error,
                    "ctxrules.recall.chars": len(answer.text),
                    "ctxrules.recall.page": answer.page,
                    "ctxrules.recall.pages": answer.pages,
                }
            )

    def ended(self, session_id: str) -> None:
        """End the session's request span if it is still open: its `Context` was closed."""
        self._end(session_id)

    def close(self) -> None:
        """End every request span still open (no response came)."""
        for session_id in list(self._open):
            self._end(session_id)


def _traced(tracer: trace.Tracer, session_id: str, summarizer: Any) -> Any:  # noqa: ANN401 - sync or async
    def attributes(span: trace.Span, messages: tuple[object, ...]) -> None:
        span.set_attribute("gen_ai.operation.name", "chat")
        span.set_attribute("gen_ai.conversation.id", session_id)
        span.set_attribute("ctxrules.summarizer.messages", len(messages))

    if inspect.iscoroutinefunction(summarizer):

        @functools.wraps(summarizer)
        async def traced_async(messages: tuple[object, ...]) -> str:
            with tracer.start_as_current_span("ctxrules.summarize") as span:
                attributes(span, messages)
                text: str = await summarizer(messages)
                span.set_attribute("ctxrules.summary.chars", len(text))
                return text

        return traced_async

    def traced(messages: tuple[object, ...]) -> str:
        with tracer.start_as_current_span("ctxrules.summarize") as span:
            attributes(span, messages)
            text: str = summarizer(messages)
            span.set_attribute("ctxrules.summary.chars", len(text))
            return text

    return traced
