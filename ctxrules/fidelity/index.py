"""What a replay knows of the history so far, grown node by node: where each reference appears.

The index visits each DAG node once, when it enters the history, and each summary once,
when a compaction makes it: a request never re-scans the history. It keeps, for every
atom (`ctxrules.fidelity.extract.atoms`), the texts it appears in, in the order they
entered (so the first is the string's first occurrence); the recall handle of each text;
which handles contain which (a summary names the items it folded, a fold lists them); and
the artifact trail. It is an accumulator owned by one replay, not a shared value.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence

import attrs

from ctxrules.commit import ContextCommit
from ctxrules.dag import Call, Frozen, Graph, Role
from ctxrules.fidelity.extract import TokenMemo, key_tokens
from ctxrules.fidelity.trail import written_files
from ctxrules.generation import node_text
from ctxrules.recall.lookup import Fold, commit_entries
from ctxrules.rules.handles import handle_for, handles_in, item_handle


@attrs.frozen
class Source:
    """One text of the history: whose it is, the handle that recalls it, and its kind.

    ``kind`` is ``tool`` for a tool result's original output, ``summary`` for a summary's
    text, and ``said`` for everything else (user and system messages, the assistant's text
    and its tool calls' arguments).
    """

    source_id: str
    handle: str
    kind: str
    text: str


def payload_strings(value: Frozen) -> Iterator[str]:
    """Every string inside a payload (a tool call's arguments), keys left out, in key order.

    A frozen payload's mapping iterates in its keys' hash order, which the hash seed
    changes: key order makes a reply's references come in the same order in every process.

    >>> list(payload_strings({"path": "a.py", "edits": [{"old": "x", "n": 2}]}))
    ['x', 'a.py']
    """
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for key in sorted(value, key=str):
            yield from payload_strings(value[key])
    elif isinstance(value, Sequence):
        for item in value:
            yield from payload_strings(item)


def reply_texts(graph: Graph, call: Call) -> tuple[str, ...]:
    """What an assistant call wrote: its text, then the string arguments of its tool calls."""
    texts = [node_text(call.output)]
    for callee in graph.callees_of(call.id):
        tool = graph.nodes[callee]
        if tool.role is Role.TOOL:
            texts.extend(payload_strings(tool.input))
    return tuple(text for text in texts if text)


@attrs.define
class HistoryIndex:
    """The replay's index of the history before the current request (see the module docstring).

    ``visited`` counts the texts indexed so far: each node's once, whatever the number of
    requests (work counted, for the test that guards it).
    """

    sources: list[Source] = attrs.field(factory=list)
    postings: dict[str, list[int]] = attrs.field(factory=dict)
    parents: dict[str, set[str]] = attrs.field(factory=dict)
    summaries: set[str] = attrs.field(factory=set)
    trail: dict[str, None] = attrs.field(factory=dict)
    visited: int = 0
    #: What the extractor read so far: the same names recur in every result, and a reply
    #: read for its references (`ctxrules.fidelity.measure.reply_references`) is not read again.
    memo: TokenMemo = attrs.field(factory=TokenMemo)

    def _add(self, source_id: str, kind: str, text: str, parts: tuple[str, ...] = ()) -> None:
        """Index ``text``; ``parts`` are the texts it joins with newlines, each read on its own."""
        if not text:
            return
        self.visited += 1
        position = len(self.sources)
        self.sources.append(Source(source_id, handle_for(source_id), kind, text))
        postings = self.postings
        for atom in self.memo.atoms(parts or (text,)):
            held = postings.get(atom)
            if held is None:
                postings[atom] = [position]
            else:
                held.append(position)

    def add_call(self, graph: Graph, call: Call) -> None:
        """Index one branch node; an assistant's tool calls come with it (arguments, then results)."""
        self._add(call.id, "said", node_text(call.output))
        if call.role is not Role.ASSISTANT:
            return
        tools = [graph.nodes[c] for c in graph.callees_of(call.id)]
        tools = [tool for tool in tools if tool.role is Role.TOOL]
        for tool in tools:
            parts = tuple(payload_strings(tool.input))
            self._add(tool.id, "said", "\n".join(parts), parts)
            self.trail.update(dict.fromkeys(written_files(tool)))
        for tool in tools:
            self._add(tool.id, "tool", node_text(tool.output))

    def add_summaries(self, commit: ContextCommit) -> None:
        """Index the summaries a compaction put in ``commit``, once each, and what they fold."""
        at = commit.summary_at
        if at < 0 or commit.items[at].source_node_id in self.summaries:
            return
        for entry in commit_entries(commit):
            if isinstance(entry, Fold):
                for member in entry.members:
                    self.parents.setdefault(item_handle(member), set()).add(entry.handle)
                continue
            if entry.source_id in self.summaries:
                continue
            self.summaries.add(entry.source_id)
            self._add(entry.source_id, "summary", entry.text)
            for named in handles_in(entry.text):
                self.parents.setdefault(named, set()).add(entry.handle)

    def containing(self, reference: str) -> list[int]:
        """The positions of the texts that contain ``reference``, oldest first.

        A token is looked up whole; a multi-word reference by the rarest of its tokens, then
        each candidate text is searched for the whole string.
        """
        if " " not in reference and self.memo.distinctive(reference):
            return self.postings.get(reference, [])
        found = [
            self.postings[t] for t in key_tokens(reference, self.memo.judged) if t in self.postings
        ]
        if not found:
            return []
        rarest = min(found, key=len)
        return [p for p in rarest if reference in self.sources[p].text]

    def first_kind(self, where: Sequence[int]) -> str | None:
        """The kind of the oldest of these texts (`containing`'s answer): ``tool`` when a result's."""
        return self.sources[where[0]].kind if where else None
