"""Assembling an import: node drafts, tool calls awaiting results, counts, the final session.

The builders are mutable, but each lives only inside one import call: the importers stay
pure functions from text to `ImportResult`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from pathlib import PurePath

import attrs
from returns.result import Failure, Result, Success

from ctxrules.dag import Call, Graph, Role, Session, Status
from ctxrules.dag.call_ids import PROVIDER_CALL_ID, CallIds
from ctxrules.dag.payload import freeze
from ctxrules.importers.formats import Format
from ctxrules.importers.result import BadRecord, ImportFailure, ImportResult, ImportStats

#: Names of the system nodes that mark a compaction and a micro-compaction.
COMPACT_BOUNDARY = "compact_boundary"
MICROCOMPACT_BOUNDARY = "microcompact_boundary"


def session_name(source: str) -> str:
    """A session id from a file name: the name without its log suffixes.

    >>> session_name("runs/django__django-11797.traj.json"), session_name("<text>")
    ('django__django-11797', '<text>')
    """
    name = PurePath(source).name or source
    for suffix in (".json", ".jsonl", ".traj"):
        name = name.removesuffix(suffix)
    return name or source


@attrs.define
class Tally:
    """What an import counted so far, and how it reacts to a bad record."""

    source: str
    format: Format
    skip_bad: bool
    records: int = 0
    skipped: Counter[str] = attrs.Factory(Counter)
    bad: list[BadRecord] = attrs.Factory(list)
    dangling: int = 0

    def reject(
        self, line: int, reason: str, unit: str, partial: Callable[[], ImportResult | None]
    ) -> Failure[ImportFailure] | None:
        """Record a bad record; the failure to return unless ``skip_bad`` goes on past it."""
        self.bad.append(BadRecord(line, reason, unit))
        if self.skip_bad:
            return None
        return Failure(ImportFailure(self.source, reason, line, unit, partial()))

    def result(self, session: Session) -> ImportResult:
        """The import result for ``session``, its figures counted from the graph."""
        roles: Counter[str] = Counter()
        names: Counter[str] = Counter()
        unanswered = 0
        for node in session.graph.nodes.values():
            roles[node.role.value] += 1
            if node.role is Role.SYSTEM:
                names[node.name] += 1
            unanswered += node.role is Role.TOOL and node.metadata.get("result_missing") is True
        stats = ImportStats(
            records=self.records,
            nodes_by_role=roles,
            tool_calls=roles[Role.TOOL.value],
            unanswered_tool_calls=unanswered,
            skipped=self.skipped,
            compactions=names[COMPACT_BOUNDARY],
            microcompactions=names[MICROCOMPACT_BOUNDARY],
            dangling_parents=self.dangling,
            bad_records=tuple(self.bad),
        )
        return ImportResult(session, self.format, stats, self.source)


@attrs.define
class Draft:
    """A node being assembled; its text and metadata may grow until the import ends."""

    id: str
    role: Role
    name: str = ""
    input: object = None
    output: object = None
    predecessor: str | None = None
    caller: str | None = None
    status: Status = Status.DONE
    metadata: dict[str, object] = attrs.Factory(dict)
    created_at: float = 0.0
    answered: bool = False

    def call(self) -> Call:
        """The finished node; a tool call that never got its result is an error with no output."""
        status, metadata = self.status, self.metadata
        if self.role is Role.TOOL and not self.answered:
            status, metadata = Status.ERROR, {**metadata, "result_missing": True}
        return Call(
            id=self.id,
            role=self.role,
            name=self.name,
            input=self.input,
            output=self.output,
            predecessor=self.predecessor,
            caller=self.caller,
            status=status,
            metadata=metadata,
            created_at=self.created_at,
        )


@attrs.define
class Builder:
    """Drafts in append order, tool calls by id, and the head; finished into a session."""

    tally: Tally
    session_id: str
    drafts: dict[str, Draft] = attrs.Factory(dict)
    tools: dict[str, Draft] = attrs.Factory(dict)
    head: str | None = None
    #: The tool call ids recorded: an id reused after its call was answered gets a fresh one.
    used: CallIds = attrs.Factory(CallIds)

    def add(self, draft: Draft) -> Draft:
        """Append a draft (its id checked free by the caller); a payload no node can hold raises.

        Checked here, while its record is read, so the fault is that record's (``guarded``
        reports it with its line) and never surfaces when the graph is built at the end.
        """
        for field, value in (("input", draft.input), ("metadata", draft.metadata)):
            if isinstance(frozen := freeze(value, field), Failure):
                raise TypeError(frozen.failure().message)
        self.drafts[draft.id] = draft
        return draft

    def tool_id_problem(self, call_id: object) -> str | None:
        """Why ``call_id`` cannot name a new tool call, or None."""
        if not isinstance(call_id, str) or not call_id:
            return "expected a non-empty string id"
        earlier = self.tools.get(call_id)
        if earlier is not None and not earlier.answered:
            # Its result could not be told from the earlier call's.
            return f"duplicate tool call id {call_id!r} (the earlier call has no result yet)"
        return None

    def add_tool(
        self,
        caller: Draft,
        call_id: str,
        name: str,
        arguments: object,
        metadata: dict[str, object] | None = None,
    ) -> None:
        """A tool node under ``caller``, awaiting its result.

        An id an earlier (answered) call had is recorded fresh (`ctxrules.dag.call_ids`);
        the log's later result under it goes to this call.
        """
        recorded = self.used.record(call_id)
        given = {PROVIDER_CALL_ID: call_id} if recorded != call_id else {}
        draft = Draft(
            f"tool:{recorded}",
            Role.TOOL,
            name=name,
            input=arguments,
            caller=caller.id,
            metadata={"tool_call_id": recorded, **given, **(metadata or {})},
            created_at=caller.created_at,
        )
        self.tools[call_id] = self.add(draft)

    def result_problem(self, call_id: object, noun: str) -> str | None:
        """Why a result cannot be given to ``call_id`` (``noun`` names the result), or None."""
        tool = self.tools.get(call_id) if isinstance(call_id, str) else None
        if tool is None:
            return f"{noun} for unknown tool call id {call_id!r}"
        if tool.answered:
            return f"second {noun} for tool call id {call_id!r}"
        return None

    def answer(self, call_id: str, output: str, *, is_error: bool = False) -> None:
        """Fill a tool call's result; an error result marks the node ``error``."""
        tool = self.tools[call_id]
        tool.output, tool.answered = output, True
        if is_error:
            tool.status = Status.ERROR
            tool.metadata["is_error"] = True

    def reject(self, line: int, reason: str, unit: str = "line") -> Failure[ImportFailure] | None:
        """Record a bad record; the failure (with what was read so far) unless skipping."""
        return self.tally.reject(line, reason, unit, lambda: self.finish().value_or(None))

    def finish(self) -> Result[ImportResult, ImportFailure]:
        """Append every draft to a new graph, in order, and set the head."""
        graph = Graph()
        for draft in self.drafts.values():
            appended = graph.append(draft.call())
            if isinstance(appended, Failure):
                reason = f"internal error at node {draft.id!r}: {appended.failure().message}"
                return Failure(ImportFailure(self.tally.source, reason))
            graph = appended.unwrap()
        head = self.head if self.head in self.drafts else self._last_conversation_node()
        return Success(self.tally.result(Session(self.session_id, graph, head)))

    def _last_conversation_node(self) -> str | None:
        return next((d.id for d in reversed(self.drafts.values()) if d.role is not Role.TOOL), None)
