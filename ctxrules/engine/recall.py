"""The recall tools as `Context` offers them: schemas in the request and answers.

The shell around `ctxrules.recall`: it reads a tool call in whichever shape the host has
(OpenAI, Anthropic, an SDK object or a `Reply`'s `ToolCall`), answers it from the session
(searching with the store's full-text index when there is a store). Large originals need
no copy: a stored session keeps every node whole.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager

import attrs
from returns.result import Failure, Result

from ctxrules.commit import ContextCommit
from ctxrules.dag import Session
from ctxrules.engine.shapes import ToolCall, plain
from ctxrules.importers.claude_blocks import assistant_blocks
from ctxrules.importers.messages import openai_tool_calls
from ctxrules.importers.records import Unreadable
from ctxrules.recall.growing import CommitHandles, NodeHandles, SessionHandles
from ctxrules.recall.lookup import RecallIndex
from ctxrules.recall.tools import (
    RECALL,
    SEARCH_HISTORY,
    HistoryHit,
    HistorySearch,
    ToolAnswer,
    answer_tool_call,
    not_an_object,
    recall_tools,
)
from ctxrules.spec.recall import RecallOptions
from ctxrules.store.search import literal
from ctxrules.store.sqlite import SqliteStore
from ctxrules.tokens import Tokenizer


def read_tool_call(raw: object) -> ToolCall | Unreadable:
    """A tool call in any shape the host holds: a `ToolCall`, OpenAI's or Anthropic's (dict or SDK object).

    >>> read_tool_call({"id": "c1", "type": "function", "function": {"name": "recall", "arguments": '{"handle": "h:abcdefgh"}'}})
    ToolCall(id='c1', name='recall', arguments={'handle': 'h:abcdefgh'})
    >>> read_tool_call({"type": "tool_use", "id": "t1", "name": "recall", "input": {"handle": "h:abcdefgh"}})
    ToolCall(id='t1', name='recall', arguments={'handle': 'h:abcdefgh'})
    """
    if isinstance(raw, ToolCall):
        return raw
    call = plain(raw)
    if isinstance(call, Mapping) and "function" in call:
        found = openai_tool_calls([dict(call)])
        if isinstance(found, Unreadable):
            return found
        return ToolCall(found[0].call_id or "", found[0].name, found[0].arguments)
    if isinstance(call, Mapping) and call.get("type") == "tool_use":
        blocks = assistant_blocks([dict(call)])
        if isinstance(blocks, Unreadable):
            return blocks
        use = blocks.tool_uses[0]
        return ToolCall(use.id, use.name, use.input)
    return Unreadable("expected an OpenAI tool call (with function) or an Anthropic tool_use block")


def store_search(store: object, session: Session) -> HistorySearch | None:
    """The store's full-text search over one session as `search_history` needs it, if it has one.

    The recall tools' own calls and results are left out: they only repeat the history.
    """
    search = getattr(store, "search", None)
    if not callable(search):
        return None
    nodes = session.graph.nodes

    def echoes(hit: HistoryHit) -> bool:
        node = nodes.get(hit.node_id)
        return node is not None and node.name in {RECALL, SEARCH_HISTORY}

    def run(query: str, limit: int) -> Sequence[HistoryHit] | str:
        found: Result[list[HistoryHit], object] = search(
            literal(query), session_id=session.session_id, limit=limit * 2
        )
        if isinstance(found, Failure):
            return "the store's search failed"
        return [hit for hit in found.unwrap() if not echoes(hit)][:limit]

    return run


@contextmanager
def memory_search(session: Session) -> Iterator[HistorySearch | None]:
    """The session's full-text search in an in-memory store, for replays and audits without one."""
    opened = SqliteStore.open(":memory:")
    if isinstance(opened, Failure):
        yield None
        return
    store = opened.unwrap()
    try:
        kept = store.create_session(session.session_id).bind(
            lambda _: store.append_graph(session.session_id, session.graph)
        )
        yield None if isinstance(kept, Failure) else store_search(store, session)
    finally:
        store.close()


@attrs.define
class SessionRecall:
    """One session's recall: the options from the spec and its handles so far.

    ``nodes`` and ``in_commit`` are the handle index, grown on each ``recall`` by the nodes
    appended and the items changed since the last one (a `Context` resumed from a store
    starts empty and walks the graph once, on its first recall).
    """

    options: RecallOptions
    tokenizer: Tokenizer
    nodes: NodeHandles = attrs.field(factory=NodeHandles)
    in_commit: CommitHandles = attrs.field(factory=CommitHandles)
    #: Nodes and commit items the handle index has looked at so far (work counted too).
    indexed: int = 0

    def tools(self) -> tuple[dict[str, object], ...]:
        """The two tool schemas when the spec offers them (either request shape reads them)."""
        return recall_tools("anthropic") if self.options.tools else ()

    def answer(
        self,
        call: ToolCall,
        session: Session,
        commit: ContextCommit | None,
        store: object,
        *,
        max_chars: int | None = None,
    ) -> ToolAnswer | None:
        """The answer to a ``recall`` or ``search_history`` call; None for any other tool.

        ``max_chars`` is the longest tool result the pipeline keeps whole (its cap): the
        answer is paged to fit, so it reaches the model byte for byte.
        """
        if call.name not in {RECALL, SEARCH_HISTORY}:
            return None
        if not isinstance(call.arguments, Mapping):
            # Arguments that did not parse are kept as their text: the answer says so.
            return not_an_object(call.name, call.arguments)
        arguments = call.arguments
        return answer_tool_call(
            call.name,
            {str(k): v for k, v in arguments.items()},
            index=self.handles(session, commit, arguments.get("handle"))
            if call.name == RECALL
            else RecallIndex(),
            tokenizer=self.tokenizer,
            search=store_search(store, session) if store is not None else None,
            page_tokens=self.options.page_tokens,
            max_chars=max_chars,
        )

    def handles(
        self, session: Session, commit: ContextCommit | None, wanted: object = None
    ) -> SessionHandles:
        """The session's handles now: the index grown by what is new since the last call.

        On a resumed session the stored nodes are not hashed: the store names those that
        hold ``wanted`` (the handle asked for), so the index answers it exactly.
        """
        self.nodes = self.nodes.grown(session.graph)
        self.indexed += self.nodes.visited
        nodes = self.nodes
        if isinstance(wanted, str):
            nodes = self.nodes.answering(wanted.strip(), session.graph)
            if not nodes.use_source:
                # The store could not tell (rows older than stored handles): keep the whole index.
                self.nodes = nodes
                self.indexed += nodes.visited
        if commit is None:
            self.in_commit = CommitHandles()
        else:
            self.in_commit = self.in_commit.moved_to(commit, session.graph)
            self.indexed += self.in_commit.visited
        return SessionHandles(session.graph, nodes, self.in_commit)
