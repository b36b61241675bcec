"""Plain-JSON round trip of calls and graphs, and JSON Lines (one node per line, seq order)."""

from __future__ import annotations

import json
from collections.abc import Mapping

from returns.result import Failure, Result, Success

from ctxrules.dag.call import Call, Role, Status
from ctxrules.dag.errors import DagError, MalformedRecord
from ctxrules.dag.graph import Graph
from ctxrules.dag.json_values import read_json
from ctxrules.dag.payload import freeze

#: Every field of a call in the JSON Lines interchange, in the order they are written.
CALL_FIELDS = (
    "id",
    "seq",
    "created_at",
    "role",
    "name",
    "input",
    "output",
    "predecessor",
    "caller",
    "reads",
    "status",
    "metadata",
)


def call_to_json(call: Call) -> dict[str, object]:
    """A call as a plain JSON object (every field, payloads thawed)."""
    return {
        "id": call.id,
        "seq": call.seq,
        "created_at": call.created_at,
        "role": call.role.value,
        "name": call.name,
        "input": call.input_value(),
        "output": call.output_value(),
        "predecessor": call.predecessor,
        "caller": call.caller,
        "reads": list(call.reads),
        "status": call.status.value,
        "metadata": call.metadata_value(),
    }


def _problem(record: Mapping[str, object]) -> str | None:  # noqa: C901, PLR0911, PLR0912 - one flat check per field reads best
    missing = [field for field in ("id", "role") if field not in record]
    if missing:
        return f"missing field(s) {missing}"
    unknown = sorted(set(record) - set(CALL_FIELDS))
    if unknown:
        return f"unknown field(s) {unknown}; expected only {list(CALL_FIELDS)}"
    if not isinstance(record["id"], str) or not record["id"]:
        return f"id: expected a non-empty string, found {record['id']!r}"
    if not isinstance(record["role"], str) or record["role"] not in {r.value for r in Role}:
        return f"role: expected one of {[r.value for r in Role]}, found {record['role']!r}"
    status = record.get("status", "done")
    if not isinstance(status, str) or status not in {s.value for s in Status}:
        return f"status: expected one of {[s.value for s in Status]}, found {record['status']!r}"
    for edge in ("predecessor", "caller"):
        if not isinstance(record.get(edge), str | None):
            return f"{edge}: expected a node id or null, found {record[edge]!r}"
    if not isinstance(record.get("name", ""), str):
        return f"name: expected a string, found {record['name']!r}"
    reads = record.get("reads", [])
    if not isinstance(reads, list) or not all(isinstance(r, str) for r in reads):
        return f"reads: expected a list of node ids, found {reads!r}"
    if not isinstance(record.get("metadata", {}), dict):
        return f"metadata: expected an object, found {record['metadata']!r}"
    created: object = record.get("created_at", 0.0)
    if isinstance(created, bool) or not isinstance(created, int | float):
        return f"created_at: expected a number, found {created!r}"
    for payload in ("input", "output", "metadata"):
        frozen = freeze(record.get(payload), payload)
        if isinstance(frozen, Failure):
            message: str = frozen.failure().message
            return message
    return None


def call_from_json(record: object, line: int = 1) -> Result[Call, DagError]:
    """Read a call from a plain JSON object; ``seq`` is kept as recorded."""
    if not isinstance(record, dict):
        return Failure(MalformedRecord(line, f"expected a JSON object, found {record!r}"))
    problem = _problem(record)
    if problem is not None:
        return Failure(MalformedRecord(line, problem))
    seq = record.get("seq", -1)
    if isinstance(seq, bool) or not isinstance(seq, int):
        return Failure(MalformedRecord(line, f"seq: expected an integer, found {seq!r}"))
    return Success(
        Call(
            id=record["id"],
            seq=seq,
            created_at=float(record.get("created_at", 0.0)),
            role=record["role"],
            name=record.get("name", ""),
            input=record.get("input"),
            output=record.get("output"),
            predecessor=record.get("predecessor"),
            caller=record.get("caller"),
            reads=tuple(record.get("reads", ())),
            status=record.get("status", "done"),
            metadata=record.get("metadata", {}),
        )
    )


def graph_to_jsonl(graph: Graph) -> str:
    """The graph as JSON Lines: one node per line, in seq order.

    >>> from ctxrules.dag.session import Session
    >>> s = Session("d").send("user", "hi").unwrap()
    >>> graph_from_jsonl(graph_to_jsonl(s.graph)).unwrap() == s.graph
    True
    """
    return "".join(
        json.dumps(call_to_json(graph.nodes[i]), ensure_ascii=False, sort_keys=True) + "\n"
        for i in graph.order
    )


def graph_from_jsonl(text: str) -> Result[Graph, DagError]:
    """Rebuild a graph from JSON Lines; a bad line fails with its line number."""
    graph = Graph()
    # Split on "\n" only: str.splitlines also breaks on U+0085 and U+2028, which JSON
    # strings written with ensure_ascii=False may contain.
    for number, raw in enumerate(text.split("\n"), start=1):
        if not raw.strip():
            continue
        try:
            record = read_json(raw)
        except json.JSONDecodeError as err:
            return Failure(
                MalformedRecord(number, f"invalid JSON: {err.msg} at column {err.colno}")
            )
        except ValueError as err:  # JsonRefused: a value no layer can keep
            return Failure(MalformedRecord(number, f"invalid JSON: {err}"))
        parsed = call_from_json(record, number)
        if isinstance(parsed, Failure):
            return parsed
        call = parsed.unwrap()
        if call.seq not in (-1, graph.next_seq):
            return Failure(
                MalformedRecord(
                    number, f"seq: expected {graph.next_seq} (seq order), found {call.seq}"
                )
            )
        appended = graph.append(call)
        if isinstance(appended, Failure):
            return Failure(MalformedRecord(number, appended.failure().message))
        graph = appended.unwrap()
    return Success(graph)
