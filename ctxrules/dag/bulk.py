"""A whole graph built in one pass from records in seq order: how a store reads a session back.

`Graph.append` checks and copies one node and makes a new version of every index per node;
a session read back from a store has every node at once, so the indexes are built as plain
dicts and frozen once, and each payload is frozen once (``call_from_json`` and the `Call`
converters would freeze it twice). The checks are the same: a record `call_from_json`
refuses, or one `Graph.append` refuses, is refused here with the same reason.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from immutables import Map
from pyrsistent import PMap, PVector, pvector
from returns.result import Failure, Result, Success

from ctxrules.dag.call import Call, Role, Status
from ctxrules.dag.graph import Graph, new_node_problem
from ctxrules.dag.ids import IdVector
from ctxrules.dag.json_values import clean_text
from ctxrules.dag.jsonl import CALL_FIELDS, call_from_json
from ctxrules.dag.payload import freeze_all

_FIELDS = frozenset(CALL_FIELDS)
_ROLES: dict[object, Role] = {role.value: role for role in Role}
_STATUSES: dict[object, Status] = {status.value: status for status in Status}
_NEW = object.__new__
_SET = object.__setattr__


def _fast_call(record: Mapping[str, object], seq: int) -> Call | None:
    """The call, or None when the record is anything but plainly well formed."""
    role = _ROLES.get(record.get("role"))
    status = _STATUSES.get(record.get("status", "done"))
    node_id, name = record.get("id"), record.get("name", "")
    reads, created = record.get("reads", []), record.get("created_at", 0.0)
    predecessor, caller = record.get("predecessor"), record.get("caller")
    plain = (
        role is not None
        and status is not None
        and isinstance(node_id, str)
        and node_id
        and isinstance(name, str)
        and isinstance(predecessor, str | None)
        and isinstance(caller, str | None)
        and isinstance(reads, list)
        and all(isinstance(r, str) for r in reads)
        and isinstance(created, int | float)
        and not isinstance(created, bool)
        and _FIELDS.issuperset(record)
    )
    payloads = (
        freeze_all(
            {
                "input": record.get("input"),
                "output": record.get("output"),
                "metadata": record.get("metadata", {}),
            }
        )
        if plain
        else None
    )
    if payloads is None or not isinstance(payloads[2], PMap):
        return None
    call: Call = _NEW(Call)
    for field, value in (
        ("id", clean_text(node_id)),  # type: ignore[arg-type]
        ("role", role),
        ("name", clean_text(name)),  # type: ignore[arg-type]
        ("input", payloads[0]),
        ("output", payloads[1]),
        ("predecessor", predecessor),
        ("caller", caller),
        ("reads", tuple(reads)),  # type: ignore[arg-type]
        ("status", status),
        ("metadata", payloads[2]),
        ("seq", seq),
        ("created_at", float(created)),  # type: ignore[arg-type]
    ):
        _SET(call, field, value)
    return call


def record_call(record: object, seq: int) -> Call | str:
    """The call a stored JSON record holds, given its seq, or what `call_from_json` says is wrong.

    >>> record_call({"id": "u", "role": "user", "output": "hi"}, 0).output
    'hi'
    """
    call = _fast_call(record, seq) if isinstance(record, dict) else None
    if call is None:
        # The full reader names exactly what is wrong, or reads what the fast one would not.
        parsed = call_from_json(record, seq + 1)
        if isinstance(parsed, Failure):
            return str(parsed.failure().message)
        call = parsed.unwrap()
        _SET(call, "seq", seq)
    return call


def graph_from_records(
    records: Iterable[tuple[str, int, object]],
) -> Result[Graph, tuple[str, str]]:
    """The graph of ``(node id, seq, JSON record)`` rows in seq order, or the first bad row.

    A bad row fails with its id and what `call_from_json` or `Graph.append` would say of it.

    >>> rows = [("u", 0, {"id": "u", "role": "user", "output": "hi"}),
    ...         ("a", 1, {"id": "a", "role": "assistant", "predecessor": "u"})]
    >>> graph_from_records(rows).unwrap().children_of("u")
    pvector(['a'])
    >>> graph_from_records([("a", 0, rows[1][2])]).failure()
    ('a', "unknown node 'u' given as predecessor")
    """
    nodes: dict[str, Call] = {}
    children: dict[str, list[str]] = {}
    callees: dict[str, list[str]] = {}
    roots: list[str] = []
    order: list[str] = []
    for row_id, seq, record in records:
        if seq != len(order):
            return Failure((row_id, f"seq {seq}, expected {len(order)}"))
        call = record_call(record, seq)
        if isinstance(call, str):
            return Failure((row_id, call))
        problem = new_node_problem(call, nodes)
        if problem is not None:
            return Failure((row_id, problem.message))
        nodes[call.id] = call
        order.append(call.id)
        if call.predecessor is not None:
            children.setdefault(call.predecessor, []).append(call.id)
        elif call.caller is not None:
            callees.setdefault(call.caller, []).append(call.id)
        else:
            roots.append(call.id)
    return Success(
        Graph(
            nodes=Map(nodes),
            children=_frozen_index(children),
            callees=_frozen_index(callees),
            roots=pvector(roots),
            order=IdVector.of(order),
        )
    )


def _frozen_index(index: dict[str, list[str]]) -> Map[str, PVector[str]]:
    return Map({key: pvector(value) for key, value in index.items()})
