"""Claude Code transcripts: JSON Lines records linked by ``uuid``/``parentUuid`` into the DAG.

One API response is often written as several records (one per content block) that share
``message.id``; they become one assistant node. ``tool_use`` blocks become tool nodes under
it, filled by the ``tool_result`` blocks of later user records. Records that are not part
of the conversation (``progress``, ``file-history-snapshot``, most ``system`` records) are
skipped and counted, but the records after them still find their parent through them.
"""

from __future__ import annotations

import attrs
from returns.result import Result

from ctxrules.dag import Role
from ctxrules.importers.builder import (
    COMPACT_BOUNDARY,
    MICROCOMPACT_BOUNDARY,
    Builder,
    Draft,
    Tally,
    session_name,
)
from ctxrules.importers.claude_blocks import AssistantBlocks, assistant_blocks, user_blocks
from ctxrules.importers.records import Unreadable, epoch, found, guarded, json_lines
from ctxrules.importers.result import ImportFailure, ImportResult

#: The system records kept as nodes, with the field that carries their figures.
_BOUNDARIES = {COMPACT_BOUNDARY: "compactMetadata", MICROCOMPACT_BOUNDARY: "microcompactMetadata"}

#: Record flags kept as node metadata, by the metadata key they become.
_FLAGS = {
    "isMeta": "is_meta",
    "isCompactSummary": "compact_summary",
    "isVisibleInTranscriptOnly": "transcript_only",
    "isSidechain": "sidechain",
    "isApiErrorMessage": "api_error",
}


def import_claude_code(
    text: str, *, source: str = "<text>", skip_bad: bool = False
) -> Result[ImportResult, ImportFailure]:
    r"""Import a Claude Code transcript.

    >>> lines = [
    ...     '{"type": "user", "uuid": "u1", "parentUuid": null, "message": {"content": "hi"}}',
    ...     '{"type": "progress", "uuid": "p1", "parentUuid": "u1"}',
    ...     '{"type": "assistant", "uuid": "a1", "parentUuid": "p1", "message": {"id": "m1",'
    ...     ' "content": [{"type": "tool_use", "id": "t1", "name": "ls", "input": {}}]}}',
    ... ]
    >>> result = import_claude_code("\n".join(lines)).unwrap()
    >>> nodes = [result.session.graph.nodes[i] for i in result.session.graph.order]
    >>> [(c.id, c.role.value, c.predecessor or c.caller) for c in nodes]
    [('u1', 'user', None), ('a1', 'assistant', 'u1'), ('tool:t1', 'tool', 'a1')]
    >>> result.stats.skipped, result.stats.unanswered_tool_calls
    (pmap({'progress': 1}), 1)
    """
    reader = _Reader(Builder(Tally(source, "claude-code", skip_bad), session_name(source)))
    for line, value in json_lines(text):
        reader.out.tally.records += 1
        problem = value.reason if isinstance(value, Unreadable) else guarded(reader.read, value)
        if problem is not None and (stop := reader.out.reject(line, problem)) is not None:
            return stop
    return reader.out.finish()


def _envelope_problem(kind: object, uuid: object, parent: object) -> str | None:
    if not isinstance(kind, str):
        return f"type: expected a string, found {found(kind)}"
    if uuid is not None and (not isinstance(uuid, str) or not uuid):
        return f"uuid: expected a non-empty string, found {found(uuid)}"
    if parent is not None and not isinstance(parent, str):
        return f"parentUuid: expected a string or null, found {found(parent)}"
    return None


def _flags(record: dict[str, object]) -> dict[str, object]:
    return {key: True for flag, key in _FLAGS.items() if record.get(flag) is True}


def _join(existing: object, more: list[str]) -> str:
    # The text blocks of one response are separate paragraphs; a blank line keeps them so.
    parts = [existing] if isinstance(existing, str) and existing else []
    return "\n\n".join(parts + [text for text in more if text])


@attrs.define
class _Reader:
    """Reads records in file order; ``links`` maps every uuid seen to the node it resolves to."""

    out: Builder
    links: dict[str, str | None] = attrs.Factory(dict)
    named: bool = False

    def read(self, record: object) -> str | None:
        """Add one record to the import; the reason it is bad, or None."""
        if not isinstance(record, dict):
            return f"expected a JSON object, found {found(record)}"
        kind, uuid, parent = record.get("type"), record.get("uuid"), record.get("parentUuid")
        problem = _envelope_problem(kind, uuid, parent)
        if problem is None and isinstance(uuid, str) and uuid in self.links:
            problem = f"duplicate uuid {uuid!r}"
        if problem is not None:
            return problem
        named = record.get("sessionId")
        # An empty id names nothing (the store refuses it): the file's name or a later id does.
        if not self.named and isinstance(named, str) and named:
            self.out.session_id, self.named = named, True
        problem = self._dispatch(record, str(kind), uuid, parent)
        if problem is None and isinstance(parent, str) and parent not in self.links:
            self.out.tally.dangling += 1
        if problem is not None and isinstance(uuid, str):
            # The bad record is left out, but the records after it still reach its parent.
            self.links[uuid] = self._resolve(parent)
        return problem

    def _dispatch(
        self, record: dict[str, object], kind: str, uuid: object, parent: object
    ) -> str | None:
        subtype = record.get("subtype")
        is_boundary = kind == "system" and isinstance(subtype, str) and subtype in _BOUNDARIES
        is_node = kind in ("user", "assistant") or is_boundary
        if not is_node:
            label = f"system:{subtype}" if kind == "system" and isinstance(subtype, str) else kind
            self.out.tally.skipped[label] += 1
            if isinstance(uuid, str):
                self.links[uuid] = self._resolve(parent)
            return None
        if not isinstance(uuid, str) or uuid in self.out.drafts:
            # A node needs an id of its own; the envelope check already refused other types.
            return (
                f"uuid: missing (every {kind!r} record needs one)"
                if uuid is None
                else f"duplicate node id {uuid!r}"
            )
        if kind == "system":
            return self._boundary(record, uuid, parent, str(subtype))
        message = record.get("message")
        if not isinstance(message, dict):
            return f"message: expected an object, found {found(message)}"
        if kind == "user":
            return self._user(record, message, uuid, parent)
        return self._assistant(record, message, uuid, parent)

    def _resolve(self, parent: object) -> str | None:
        return self.links.get(parent) if isinstance(parent, str) else None

    def _link(self, record: dict[str, object], uuid: str, node_id: str | None) -> None:
        self.links[uuid] = node_id
        if node_id is not None and record.get("isSidechain") is not True:
            self.out.head = node_id

    def _user(
        self, record: dict[str, object], message: dict[str, object], uuid: str, parent: object
    ) -> str | None:
        parts = user_blocks(message.get("content"))
        if isinstance(parts, Unreadable):
            return parts.reason
        texts, results = parts
        seen: set[str] = set()
        for result in results:
            problem = self.out.result_problem(result.tool_use_id, "tool_result")
            if problem is None and result.tool_use_id in seen:
                problem = f"second tool_result for tool call id {result.tool_use_id!r}"
            if problem is not None:
                return problem
            seen.add(result.tool_use_id)
        for result in results:
            self.out.answer(result.tool_use_id, result.text, is_error=result.is_error)
        node_id = self._resolve(parent)
        if texts or not results:
            # A record that only carries tool results is not a message of the user.
            node = Draft(
                uuid,
                Role.USER,
                output="\n".join(texts),
                predecessor=node_id,
                metadata=_flags(record),
                created_at=epoch(record.get("timestamp")),
            )
            node_id = self.out.add(node).id
        self._link(record, uuid, node_id)
        return None

    def _assistant(
        self, record: dict[str, object], message: dict[str, object], uuid: str, parent: object
    ) -> str | None:
        blocks = assistant_blocks(message.get("content"))
        if isinstance(blocks, Unreadable):
            return blocks.reason
        seen: set[str] = set()
        for use in blocks.tool_uses:
            problem = self.out.tool_id_problem(use.id)
            if problem is None and use.id in seen:
                problem = f"duplicate tool call id {use.id!r}"
            if problem is not None:
                return f"tool_use: {problem}"
            seen.add(use.id)
        node = self._response(record, message, uuid, self._resolve(parent))
        self._extend(node, record, message, blocks)
        for use in blocks.tool_uses:
            self.out.add_tool(node, use.id, use.name, use.input)
        self._link(record, uuid, node.id)
        return None

    def _response(
        self,
        record: dict[str, object],
        message: dict[str, object],
        uuid: str,
        predecessor: str | None,
    ) -> Draft:
        message_id = message.get("id")
        previous = self.out.drafts.get(predecessor) if predecessor is not None else None
        if (
            previous is not None
            and previous.role is Role.ASSISTANT
            and isinstance(message_id, str)
            and previous.metadata.get("message_id") == message_id
        ):
            merged = previous.metadata.get("merged_uuids")
            previous.metadata["merged_uuids"] = [
                *(merged if isinstance(merged, list) else ()),
                uuid,
            ]
            return previous
        model = message.get("model")
        metadata = _flags(record)
        if isinstance(message_id, str):
            metadata["message_id"] = message_id
        draft = Draft(
            uuid,
            Role.ASSISTANT,
            name=model if isinstance(model, str) else "",
            output="",
            predecessor=predecessor,
            metadata=metadata,
            created_at=epoch(record.get("timestamp")),
        )
        return self.out.add(draft)

    @staticmethod
    def _extend(
        node: Draft, record: dict[str, object], message: dict[str, object], blocks: AssistantBlocks
    ) -> None:
        node.output = _join(node.output, blocks.texts)
        meta = node.metadata
        if blocks.thinking:
            meta["thinking"] = _join(meta.get("thinking"), blocks.thinking)
        if blocks.other:
            kept = meta.get("other_blocks")
            meta["other_blocks"] = [*(kept if isinstance(kept, list) else ()), *blocks.other]
        # Split records repeat the usage; the last one seen is the most complete.
        for key, value in (
            ("usage", message.get("usage")),
            ("stop_reason", message.get("stop_reason")),
            ("request_id", record.get("requestId")),
        ):
            if value is not None:
                meta[key] = value

    def _boundary(
        self, record: dict[str, object], uuid: str, parent: object, subtype: str
    ) -> str | None:
        # A compaction starts a new root in the file (parentUuid null); logicalParentUuid
        # names the record it follows, so the DAG keeps one chain through it.
        logical = record.get("logicalParentUuid")
        anchor = parent if parent is not None else logical
        details = record.get(_BOUNDARIES[subtype])
        metadata = _flags(record)
        if isinstance(details, dict):
            metadata["compaction"] = details
            if isinstance(details.get("preTokens"), int):
                metadata["pre_tokens"] = details["preTokens"]
        if isinstance(logical, str):
            metadata["logical_parent"] = logical
        content = record.get("content")
        node = Draft(
            uuid,
            Role.SYSTEM,
            name=subtype,
            output=content if isinstance(content, str) else "",
            predecessor=self._resolve(anchor),
            metadata=metadata,
            created_at=epoch(record.get("timestamp")),
        )
        self._link(record, uuid, self.out.add(node).id)
        return None
