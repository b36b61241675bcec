"""The library's own JSON Lines interchange (`ctxrules.dag.graph_to_jsonl`) back into a session.

Each line is read by `ctxrules.dag.call_from_json` and appended as `graph_from_jsonl`
does; reading line by line is what lets a bad line be skipped or reported with what was
read before it.
"""

from __future__ import annotations

from returns.result import Failure, Result, Success

from ctxrules.dag import Graph, Role, Session, Status, call_from_json
from ctxrules.importers.builder import Tally, session_name
from ctxrules.importers.records import Unreadable, json_lines
from ctxrules.importers.result import ImportFailure, ImportResult


def _head(graph: Graph) -> str | None:
    # The last node appended on the conversation chain: tool calls hang off it, never lead.
    return next((i for i in reversed(graph.order) if graph.nodes[i].caller is None), None)


def _append(graph: Graph, value: object, line: int, expected_seq: int) -> Graph | str:
    if isinstance(value, Unreadable):
        return value.reason
    for field, allowed in (("role", Role), ("status", Status)):
        # call_from_json looks these up in a set, which raises on a list or an object.
        if isinstance(value, dict) and isinstance(value.get(field), list | dict):
            return f"{field}: expected one of {[v.value for v in allowed]}, found {value[field]!r}"
    parsed = call_from_json(value, line)
    if isinstance(parsed, Failure):
        reason: str = parsed.failure().reason
        return reason
    call = parsed.unwrap()
    if call.seq not in (-1, expected_seq):
        return f"seq: expected {expected_seq} (seq order), found {call.seq}"
    appended = graph.append(call)
    if isinstance(appended, Failure):
        message: str = appended.failure().message
        return message
    return appended.unwrap()


def import_ctxrules_jsonl(
    text: str, *, source: str = "<text>", skip_bad: bool = False
) -> Result[ImportResult, ImportFailure]:
    """Import JSON Lines written by `graph_to_jsonl`; the head is the last conversation node.

    >>> from ctxrules.dag import Session, graph_to_jsonl
    >>> s = Session("d").send("user", "hi").bind(lambda s: s.send("assistant", "hello")).unwrap()
    >>> result = import_ctxrules_jsonl(graph_to_jsonl(s.graph)).unwrap()
    >>> result.session.graph == s.graph, result.session.head == s.head
    (True, True)
    """
    tally = Tally(source, "ctxrules-jsonl", skip_bad)
    graph = Graph()

    def result() -> ImportResult:
        return tally.result(Session(session_name(source), graph, _head(graph)))

    for line, value in json_lines(text):
        tally.records += 1
        # A skipped line leaves a gap in the recorded seqs; later lines are expected after it.
        appended = _append(graph, value, line, graph.next_seq + len(tally.bad))
        if isinstance(appended, Graph):
            graph = appended
        elif (stop := tally.reject(line, appended, "line", result)) is not None:
            return stop
    return Success(result())
