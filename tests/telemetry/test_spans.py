"""OpenTelemetry spans of a live loop: one per request, usage as `record` read it, rules as the commit says."""

from __future__ import annotations

import sys
from collections import Counter

import pytest

pytest.importorskip("opentelemetry.sdk", reason="the OpenTelemetry SDK is a dev dependency")

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import ctxrules.telemetry.attributes as attributes_module
from ctxrules import Context
from ctxrules.commit.diff import ChangeKind, diff_commits
from ctxrules.rules.handles import item_handle
from ctxrules.telemetry import default_observer
from ctxrules.telemetry.spans import SpanObserver
from ctxrules.testing.responses import openai_response

CALLS = 50


def _loop(ctx: Context, calls: int) -> list[tuple[object, object]]:
    """A scripted agent: each call reads a file; the results are big enough to be aged."""
    seen = []
    ctx.add({"role": "user", "content": "Read every module and summarise the package."})
    for n in range(calls):
        ctx.openai()
        prep = ctx.last
        prompt = prep.request_tokens + 7 * n
        reply = ctx.record(
            openai_response(
                n,
                f"step {n}",
                [(f"c{n}", "read_file", {"path": f"m{n}.py"})],
                (prompt, (prompt // 2) // 64 * 64),
                completion_tokens=10 + n,
            )
        )
        seen.append((prep, reply.usage))
        ctx.add_tool_result(f"c{n}", f"def f{n}(x):\n    return x * {n}\n" * (40 + n % 7))
    return seen


def test_one_span_per_request_with_usage_and_rule_decisions() -> None:
    """50 calls give 50 request spans; usage equals `record`'s, per-rule tallies equal the commits' diff."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    ctx = Context("small-window", model="gpt-4o", window=16_000, clock=lambda: 1_000.0)
    ctx.engine.observer = SpanObserver(provider)
    seen = _loop(ctx, CALLS)
    spans = [s for s in exporter.get_finished_spans() if s.name == "ctxrules.prepare"]
    assert len(spans) == CALLS
    tightened = 0
    previous = None
    for span, (prep, usage) in zip(spans, seen, strict=True):
        found = dict(span.attributes or {})
        assert found["gen_ai.usage.input_tokens"] == usage.prompt_total
        assert found["gen_ai.usage.output_tokens"] == usage.completion_tokens
        assert found["gen_ai.usage.cache_read.input_tokens"] == usage.cache_read_tokens
        assert found["gen_ai.usage.cache_creation.input_tokens"] == usage.cache_write_tokens
        assert found["gen_ai.conversation.id"] == ctx.session.session_id
        assert found["gen_ai.conversation.compacted"] is (prep.active_summary_id is not None)
        assert found["ctxrules.commit.id"] == prep.commit.id
        assert found["ctxrules.rules_version"] == ctx.engine.pipeline.version
        # The rule decisions: per reason, the items the commit tightened since the last request.
        diff = diff_commits(previous, prep.commit)
        hidden = Counter(
            c.item.reason
            for c in diff.changes
            if c.kind in (ChangeKind.TIGHTENED, ChangeKind.FOLDED)
        )
        assert {r: found[f"ctxrules.rule.{r}.items"] for r in found["ctxrules.rules"]} == hidden
        assert hidden == Counter(dict(prep.changed))
        for reason in hidden:
            before = sum(c.tokens_before for c in diff.changes if c.item.reason == reason)
            assert found[f"ctxrules.rule.{reason}.tokens_before"] == before
        receipts = [e for e in span.events if e.name == "ctxrules.receipt"]
        assert len(receipts) == min(sum(hidden.values()), attributes_module.MAX_RECEIPTS)
        tightened += sum(hidden.values())
        previous = prep.commit
    # The loop is long enough for the small-window spec to land a batch of tightening.
    assert tightened > 0
    assert any(s.attributes.get("ctxrules.batch.point") for s in spans[1:])


def test_off_when_no_provider_is_configured(monkeypatch: pytest.MonkeyPatch) -> None:
    """With the API's default provider nothing is computed: no diff, no attributes, no span."""
    calls = []
    monkeypatch.setattr(
        attributes_module, "diff_commits", lambda *a: calls.append(a) or diff_commits(*a)
    )
    ctx = Context("small-window", model="gpt-4o", window=16_000, clock=lambda: 1_000.0)
    assert isinstance(ctx.engine.observer, SpanObserver)
    _loop(ctx, 5)
    assert calls == []
    assert isinstance(default_observer(), SpanObserver)


def _traced(**kwargs: object) -> tuple[Context, InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    ctx = Context("small-window", model="gpt-4o", window=16_000, clock=lambda: 1_000.0, **kwargs)
    ctx.engine.observer = SpanObserver(provider)
    return ctx, exporter


def test_compaction_summarizer_and_recall_spans() -> None:
    """A compaction, its summarizer call and a recall answer each get a span with their outcome."""
    ctx, exporter = _traced(summarizer=lambda messages: f"Summary of {len(messages)} messages.")
    seen = _loop(ctx, 12)
    ctx.openai()
    result = ctx.engine.compact(ctx.session.session_id, window=16_000, keep_recent_tokens=200)
    assert result.unwrap().outcome.value == "finished"
    spans = {s.name: s for s in exporter.get_finished_spans()}
    compaction = spans["ctxrules.compaction"].attributes
    assert compaction["ctxrules.compaction.outcome"] == "finished"
    assert compaction["ctxrules.compaction.folded"] == result.unwrap().summarised_count > 0
    assert compaction["gen_ai.conversation.compacted"] is True
    assert spans["ctxrules.summarize"].attributes["ctxrules.summary.chars"] > 0
    hidden = next(i for prep, _ in seen for i in prep.commit.items if i.state.value == "aged")
    call = {
        "id": "r1",
        "type": "function",
        "function": {"name": "recall", "arguments": f'{{"handle": "{item_handle(hidden)}"}}'},
    }
    ctx.record(
        openai_response(99, "Looking again.", [("r1", "recall", {"handle": item_handle(hidden)})])
    )
    assert ctx.answer_recall(call) is not None
    recall = next(s for s in exporter.get_finished_spans() if s.name == "ctxrules.recall")
    assert recall.attributes["gen_ai.tool.name"] == "recall"
    assert recall.attributes["ctxrules.recall.error"] is False


def test_the_core_works_without_the_api_package(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without opentelemetry installed the engine has no observer and prepares as before."""
    monkeypatch.setitem(sys.modules, "opentelemetry", None)
    monkeypatch.delitem(sys.modules, "ctxrules.telemetry.spans", raising=False)
    assert default_observer() is None
    ctx = Context("small-window", model="gpt-4o", window=16_000, clock=lambda: 1_000.0)
    assert ctx.engine.observer is None
    assert len(_loop(ctx, 3)) == 3


def test_no_error_span_without_a_summarizer_and_every_request_span_ends_at_close() -> None:
    """The default setup (no summarizer) compacts with no error span; `close` ends the last request's span."""
    ctx, exporter = _traced()
    _loop(ctx, 20)
    ctx.openai()
    result = ctx.engine.compact(ctx.session.session_id, window=16_000, keep_recent_tokens=200)
    assert result.unwrap().outcome.value == "finished"
    ctx.add({"role": "user", "content": "and now?"})
    ctx.openai()  # no response recorded: its span is open until the Context closes
    prepared = sum(1 for s in exporter.get_finished_spans() if s.name == "ctxrules.prepare")
    ctx.close()
    spans = exporter.get_finished_spans()
    assert sum(1 for s in spans if s.name == "ctxrules.prepare") == prepared + 1
    assert [s.name for s in spans if s.status.status_code.name == "ERROR"] == []
    assert "ctxrules.summarize" not in {s.name for s in spans}
    assert any(s.name == "ctxrules.compaction" for s in spans)
