"""Fuzzed logs: valid ones import exactly, damaged ones fail cleanly, nothing ever raises.

Each format gets a strategy for valid logs (so the interesting paths — split responses,
parallel tool calls, compactions, branches — are reached), and `damaged` breaks them the
way real files break: a record or a nested field replaced by junk, a field dropped, a
record repeated or moved, a line cut short.
"""

from __future__ import annotations

import itertools
import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from ctxrules.dag import Role, graph_to_jsonl
from ctxrules.importers import FORMATS, ImportFailure, ImportResult, import_text
from ctxrules.importers.records import lines
from ctxrules.testing import json_values, sessions

TEXTS = st.text(max_size=12)
junk = json_values(max_leaves=4)
formats = st.sampled_from([None, *FORMATS])


def _record(kind: str, uuid: str, parent: str | None, **fields: Any) -> dict[str, Any]:
    return {"type": kind, "uuid": uuid, "parentUuid": parent, "sessionId": "s", **fields}


def _block(kind: str, number: int, draw: st.DrawFn) -> dict[str, Any]:
    if kind == "tool_use":
        return {"type": "tool_use", "id": f"t{number}", "name": "Bash", "input": draw(junk)}
    return {"type": kind, kind: draw(TEXTS)}


@st.composite
def claude_transcripts(draw: st.DrawFn) -> tuple[list[dict[str, Any]], int]:
    """Valid Claude Code transcripts and their number of tool calls.

    Responses are split one block per record, tool results follow (sometimes never),
    progress records sit in the chain, a turn may branch off an earlier record and a
    compaction may follow a turn.
    """
    records: list[dict[str, Any]] = []
    numbers = itertools.count()
    parent: str | None = None
    calls = 0
    for turn in range(draw(st.integers(0, 3))):
        earlier = [r["uuid"] for r in records]
        parent = draw(st.sampled_from([parent, *earlier])) if earlier else None
        records.append(_record("user", f"u{turn}", parent, message={"content": draw(TEXTS)}))
        parent = f"u{turn}"
        for step in range(draw(st.integers(0, 3))):
            kinds = ["text", "thinking", "tool_use", "tool_use"]
            pending = []
            for kind in draw(st.lists(st.sampled_from(kinds), min_size=1, max_size=4)):
                number = next(numbers)
                message = {
                    "id": f"m{turn}.{step}",
                    "model": "m",
                    "content": [_block(kind, number, draw)],
                }
                records.append(_record("assistant", f"a{number}", parent, message=message))
                parent = f"a{number}"
                pending += [f"t{number}"] if kind == "tool_use" else []
            calls += len(pending)
            for call_id in draw(st.permutations(pending)):
                if draw(st.integers(0, 5)) == 0:
                    continue  # the result never arrives
                number = next(numbers)
                result = {"type": "tool_result", "tool_use_id": call_id, "content": draw(TEXTS)}
                records.append(_record("user", f"r{number}", parent, message={"content": [result]}))
                parent = f"r{number}"
            if draw(st.booleans()):
                records.append(_record("progress", f"p{next(numbers)}", parent))
                parent = records[-1]["uuid"]
        if draw(st.integers(0, 3)) == 0:
            compaction = {"preTokens": draw(st.integers(0, 10**6)), "trigger": "auto"}
            boundary = _record("system", f"c{turn}", None, subtype="compact_boundary")
            records.append({**boundary, "logicalParentUuid": parent, "compactMetadata": compaction})
            summary = {"content": draw(TEXTS)}
            records.append(
                _record("user", f"s{turn}", f"c{turn}", message=summary, isCompactSummary=True)
            )
            parent = f"s{turn}"
    return records, calls


def _tool_calls(style: str, numbers: itertools.count[int], draw: st.DrawFn) -> list[dict[str, Any]]:
    calls = []
    for _ in range(draw(st.integers(0, 3))):
        call_id = f"c{next(numbers)}"
        arguments = draw(junk)
        if style == "openai":
            function = {"name": "bash", "arguments": json.dumps(arguments)}
            calls.append({"id": call_id, "type": "function", "function": function})
        else:
            calls.append({"id": call_id, "name": "bash", "args": arguments, "type": "tool_call"})
    return calls


@st.composite
def message_logs(draw: st.DrawFn, style: str) -> tuple[list[dict[str, Any]], int]:
    """Valid OpenAI (``style="openai"``) or LangChain message lists and their tool calls."""
    role = "role" if style == "openai" else "type"
    names = {"user": "user", "assistant": "assistant", "tool": "tool"}
    if style != "openai":
        names = {"user": "human", "assistant": "ai", "tool": "tool"}
    messages: list[dict[str, Any]] = [{role: "system", "content": draw(TEXTS)}]
    numbers = itertools.count()
    total = 0
    for _ in range(draw(st.integers(0, 3))):
        parts = st.lists(
            st.fixed_dictionaries({"type": st.just("text"), "text": TEXTS}), max_size=2
        )
        messages.append({role: names["user"], "content": draw(TEXTS | parts)})
        for _ in range(draw(st.integers(0, 3))):
            calls = _tool_calls(style, numbers, draw)
            total += len(calls)
            extra = {"reasoning_content": draw(TEXTS)} if style == "openai" else {}
            messages.append(
                {role: names["assistant"], "content": draw(TEXTS), "tool_calls": calls, **extra}
            )
            for call in draw(st.permutations(calls)):
                if draw(st.integers(0, 5)):
                    result = {role: "tool", "tool_call_id": call["id"], "content": draw(TEXTS)}
                    messages.append(result)
    return messages, total


def _paths(value: Any) -> list[tuple[Any, Any]]:
    """Every (container, key) inside ``value``, so one nested field can be replaced."""
    found: list[tuple[Any, Any]] = []
    stack = [value]
    while stack:
        container = stack.pop()
        keys = container.keys() if isinstance(container, dict) else range(len(container))
        for key in keys:
            found.append((container, key))
            if isinstance(container[key], dict | list):
                stack.append(container[key])
    return found


@st.composite
def damaged(draw: st.DrawFn, records: list[Any]) -> list[Any]:
    """``records`` after one to three breakages: junk, a dropped field, a repeat, a move."""
    records = json.loads(json.dumps(records))
    for _ in range(draw(st.integers(1, 3))):
        if not records:
            break
        index = draw(st.integers(0, len(records) - 1))
        how = draw(st.sampled_from(["junk record", "junk field", "drop field", "repeat", "move"]))
        paths = _paths(records[index]) if isinstance(records[index], dict | list) else []
        if how == "junk record" or not paths:
            records[index] = draw(junk)
        elif how in ("junk field", "drop field"):
            container, key = draw(st.sampled_from(paths))
            if how == "drop field" and isinstance(container, dict):
                del container[key]
            else:
                container[key] = draw(junk)
        elif how == "repeat":
            records.insert(draw(st.integers(0, len(records))), records[index])
        else:
            records.insert(draw(st.integers(0, len(records))), records.pop(index))
    return records


def _check(result: Any) -> ImportResult | None:
    """No internal error; on success, tool nodes sit under assistants and the graph round-trips."""
    value = result.value_or(None)
    if value is None:
        failure = result.failure()
        assert isinstance(failure, ImportFailure)
        assert not failure.reason.startswith("internal error"), failure.message
        return None
    assert isinstance(value, ImportResult)
    graph, head = value.session.graph, value.session.head
    assert value.stats.nodes == len(graph)
    assert head is None or head in graph
    if value.format != "ctxrules-jsonl":
        for node in graph.nodes.values():
            if node.role is Role.TOOL:
                assert graph.nodes[node.caller or ""].role is Role.ASSISTANT
    if len(graph):
        again = import_text(graph_to_jsonl(graph), format="ctxrules-jsonl").unwrap()
        assert again.session.graph == graph
    return value


def _jsonl(records: list[Any], cut: int | None = None) -> str:
    lines = [json.dumps(r) for r in records]
    if cut is not None and lines:
        # Truncate one line, as a crash mid-write leaves it.
        line = lines[cut % len(lines)]
        lines[cut % len(lines)] = line[: max(1, len(line) // 2)]
    return "\n".join(lines)


@given(claude_transcripts())
def test_valid_claude_code_imports_exactly(transcript: tuple[list[Any], int]) -> None:
    """A valid transcript imports with no bad record and one tool node per tool_use."""
    records, calls = transcript
    result = _check(import_text(_jsonl(records) or "\n", format="claude-code"))
    if records:
        assert result is not None
        assert (result.stats.bad_records, result.stats.tool_calls) == ((), calls)
        assert result.stats.compactions == sum(
            r.get("subtype") == "compact_boundary" for r in records
        )


@given(
    st.sampled_from(["openai", "langchain"]).flatmap(
        lambda s: st.tuples(st.just(s), message_logs(s))
    )
)
def test_valid_message_lists_import_exactly(log: tuple[str, tuple[list[Any], int]]) -> None:
    """A valid OpenAI or LangChain list imports, detected, with one tool node per tool call."""
    style, (messages, calls) = log
    result = _check(import_text(json.dumps(messages)))
    assert result is not None
    assert result.format == ("openai-chat" if style == "openai" else "langchain")
    assert (result.stats.bad_records, result.stats.tool_calls) == ((), calls)


@given(
    claude_transcripts().flatmap(lambda t: damaged(t[0])),
    st.none() | st.integers(0, 9),
    st.booleans(),
)
def test_damaged_claude_code_never_raises(
    records: list[Any], cut: int | None, skip_bad: bool
) -> None:
    """A damaged transcript, maybe with a cut line, imports or fails cleanly."""
    _check(import_text(_jsonl(records, cut), format="claude-code", skip_bad=skip_bad))


@given(
    st.sampled_from(["openai", "langchain"]).flatmap(message_logs).flatmap(lambda m: damaged(m[0])),
    st.booleans(),
    st.booleans(),
    formats,
)
def test_damaged_message_lists_never_raise(
    messages: list[Any], wrapped: bool, skip_bad: bool, format_: str | None
) -> None:
    """A damaged message list, bare or wrapped, imports or fails cleanly under any format."""
    document: object = {"messages": messages} if wrapped else messages
    _check(import_text(json.dumps(document), format=format_, skip_bad=skip_bad))


@given(
    sessions(max_steps=12).flatmap(
        lambda s: damaged(
            [json.loads(line) for line in graph_to_jsonl(s.graph).split("\n") if line]
        )
    ),
    st.none() | st.integers(0, 9),
    st.booleans(),
)
def test_damaged_ctxrules_jsonl_never_raises(
    records: list[Any], cut: int | None, skip_bad: bool
) -> None:
    """Damaged ctxrules JSON Lines import or fail cleanly."""
    _check(import_text(_jsonl(records, cut), format="ctxrules-jsonl", skip_bad=skip_bad))


@given(st.text(max_size=200), formats, st.booleans())
def test_random_text_never_raises(text: str, format_: str | None, skip_bad: bool) -> None:
    """Any text under any format is a Success or a Failure, never an exception."""
    _check(import_text(text, format=format_, skip_bad=skip_bad))


@given(junk, formats)
def test_any_json_value_never_raises(value: object, format_: str | None) -> None:
    """Any JSON value, as a document or as one JSON Lines record, imports or fails cleanly."""
    _check(import_text(json.dumps(value), format=format_))


@given(st.text(alphabet=st.sampled_from("ab\n\r\u2028 ")))
def test_a_log_s_lines_are_its_split_on_newlines(text: str) -> None:
    """`lines` gives what ``str.split`` on a newline gives, one line at a time (U+2028 is no break)."""
    assert list(lines(text)) == text.split("\n")
