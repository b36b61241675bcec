"""What a replay knows of the history so far: where each reference appears, found when asked.

The index takes each DAG node once, when it enters the history, and each summary once,
when a compaction makes it: a request never re-reads the history. It keeps the texts in
the order they entered (so the first holding a string is its first occurrence); the recall
handle of each text; which handles contain which (a summary names the items it folded, a
fold lists them); and the artifact trail. Where an atom (`ctxrules.fidelity.extract.atoms`)
appears is found when a reply first names it, by a substring search in C over the texts
that entered since it was last asked for; only the region around each occurrence is read
by the extractor. The tool results are most of the history and most of their words are
never named again: reading every word of them was most of a replay's fidelity cost. It is
an accumulator owned by one replay, not a shared value.
"""

from __future__ import annotations

import bisect
import operator
import re
import string
from collections.abc import Iterable, Iterator, Mapping, Sequence
from itertools import compress, islice, repeat

import attrs

from ctxrules.commit import ContextCommit
from ctxrules.dag import Call, Frozen, Graph, Role
from ctxrules.fidelity.extract import TokenMemo, key_tokens, pieces, pieces_of
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


#: Searches of a block before its pieces are read (`_Block.pieces`): reading them costs
#: about what sixty searches of the block do; most blocks are searched a few times, and
#: one searched this often is searched many more times.
PIECES_AFTER = 8


#: The pieces of a block not read yet (`_Block.pieces`): it may hold anything.
_UNREAD: frozenset[int] = frozenset()


def piece_keys(found: Iterable[str]) -> frozenset[int]:
    """The pieces as their hashes: what a block keeps of them, and what an atom looks for.

    A block holds its pieces to rule out searching it, so a hash that two pieces share
    only costs a search, never a miss. Hashes, not the pieces: the pieces of a 165 MB
    session's outputs were 7.7 million strings, 442 MB of a replay's 1.1 GB.
    """
    return frozenset(map(hash, found))


@attrs.define
class _Block:
    """The texts that entered the history between two lookups, joined by newlines.

    One substring search in C runs over the block instead of one per text; ``starts`` maps
    an offset back to its text (the text at ``first + i`` begins at ``starts[i]``).
    ``pieces`` are those of its words (`ctxrules.fidelity.extract.pieces`, as
    `piece_keys`), read once the block was searched `PIECES_AFTER` times (`_UNREAD` until
    then): an atom with a piece not among them is in none of its texts, and the block is
    not searched.
    """

    text: str
    first: int
    starts: list[int]
    pieces: frozenset[int] = _UNREAD
    searches: int = 0

    def position(self, offset: int) -> int:
        """The history position of the text holding ``offset``."""
        return self.first + bisect.bisect_right(self.starts, offset) - 1

    def end_of(self, position: int) -> int:
        """The offset of the newline after the text at ``position`` (or the block's end)."""
        after = position - self.first + 1
        return self.starts[after] - 1 if after < len(self.starts) else len(self.text)


@attrs.define
class _Hits:
    """What the search for one atom found: its texts' positions, and where it stopped.

    The history only grows: what was searched holds no other text to find.
    """

    positions: list[int]
    block: int = 0
    offset: int = 0


#: Where a region ends: a space or a newline, which no word, URL or escape of the
#: extractor crosses (`ctxrules.fidelity.extract`'s scan), so the atoms of a text are the
#: union of its regions' atoms (a tab inside one only makes it longer).
_RUN = re.compile(r"[^ \n]*")


def region_at(text: str, start: int, end: int) -> tuple[int, int]:
    """The bounds of the run of ``text`` between ASCII whitespace that holds ``text[start:end]``.

    >>> text = "see src/app.py now"
    >>> left, right = region_at(text, 8, 11)
    >>> text[left:right]
    'src/app.py'
    """
    left = max(text.rfind(" ", 0, start), text.rfind("\n", 0, start)) + 1
    match = _RUN.match(text, end)
    return left, match.end() if match else end


#: The characters of a word (`ctxrules.fidelity.extract`'s tokens) but the slash.
_WORD_CHARS = frozenset(string.ascii_letters + string.digits + "_.~@+-")


#: What a word, or a piece of one, cannot start after nor end before (`_may_start`).
_ALNUM = frozenset(string.ascii_letters + string.digits + "_")


def _may_start(text: str, at: int, url: bool) -> bool:
    r"""Whether an atom may begin at ``at``: after no letter or digit, but an escape's.

    A word or a piece of one starts after a cut or a space, or after ``\n`` (an escape ends
    the word before it); a URL anywhere.
    """
    if url or not at or text[at - 1] not in _ALNUM:
        return True
    return text[at - 1] in "nrt" and at > 1 and text[at - 2] == "\\"


def _may_end(text: str, end: int) -> bool:
    """Whether an atom may end at ``end``: before no letter or digit, but a URL's start."""
    return end >= len(text) or text[end] not in _ALNUM or text.startswith("http", end)


def gap_regions(text: str) -> Iterator[tuple[int, int]]:
    """The regions whose atoms need not be substrings: where a run skips an empty part.

    ``a//b/c.py`` yields the run ``a/b/c.py``; a flag's dotted parts skip ``..`` likewise
    (with ``..`` in it only a flag, which starts with ``-``, is distinctive). Elsewhere an
    atom is a substring of its text, which a search finds. A run across ``https://`` holds
    the colon, which no word holds, and is never looked up (`HistoryIndex.positions`): only
    a gap between word characters counts, so ``...`` ending a sentence and ``../`` are
    passed over without reading their region.
    """
    size = len(text)
    for gap in ("//", ".."):
        mark = gap[0]
        at = text.find(gap)
        while at >= 0:
            end = at + 2
            while end < size and text[end] == mark:
                end += 1
            if at and end < size and text[at - 1] in _WORD_CHARS and text[end] in _WORD_CHARS:
                left, right = region_at(text, at, end)
                if mark == "/" or "-" in text[left:right]:
                    yield left, right
                    end = right
            at = text.find(gap, end)


@attrs.define
class HistoryIndex:
    """The replay's index of the history before the current request (see the module docstring).

    ``visited`` counts the texts taken in so far: each node's once, whatever the number of
    requests; ``searched`` the texts' characters an atom's search ran over: each text once
    for each atom asked for after it entered, never again (work counted, for the tests that
    guard them).
    """

    sources: list[Source] = attrs.field(factory=list)
    parents: dict[str, set[str]] = attrs.field(factory=dict)
    summaries: set[str] = attrs.field(factory=set)
    trail: dict[str, None] = attrs.field(factory=dict)
    visited: int = 0
    searched: int = 0
    #: What the extractor read so far: the same names recur in every result.
    memo: TokenMemo = attrs.field(factory=TokenMemo)
    #: Each atom asked for: the texts found holding it, and where its search stopped.
    found: dict[str, _Hits] = attrs.field(factory=dict)
    #: The atoms no search finds (`gap_regions`), by the positions of the texts holding them.
    gaps: dict[str, list[int]] = attrs.field(factory=dict)
    #: The history's texts, a block for each lookup that found new ones, and their pieces.
    _blocks: list[_Block] = attrs.field(factory=list)
    _pieces: list[frozenset[int]] = attrs.field(factory=list)
    _sealed: int = 0
    #: The atoms of each region read, by its text: a path recurs in result after result.
    _regions: dict[str, set[str]] = attrs.field(factory=dict)

    def _add(self, source_id: str, kind: str, text: str) -> None:
        """Take ``text`` in; it is searched when an atom is next asked for."""
        if not text:
            return
        self.visited += 1
        self.sources.append(Source(source_id, handle_for(source_id), kind, text))

    def add_call(self, graph: Graph, call: Call) -> None:
        """Take one branch node in; an assistant's tool calls come with it (arguments, then results)."""
        self._add(call.id, "said", node_text(call.output))
        if call.role is not Role.ASSISTANT:
            return
        tools = [graph.nodes[c] for c in graph.callees_of(call.id)]
        tools = [tool for tool in tools if tool.role is Role.TOOL]
        for tool in tools:
            # Each argument is read on its own: a newline ends every word, URL and escape.
            self._add(tool.id, "said", "\n".join(payload_strings(tool.input)))
            self.trail.update(dict.fromkeys(written_files(tool)))
        for tool in tools:
            self._add(tool.id, "tool", node_text(tool.output))

    def add_summaries(self, commit: ContextCommit) -> None:
        """Take in the summaries a compaction put in ``commit``, once each, and what they fold."""
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

    def _atoms(self, region: str) -> set[str]:
        """`atoms` of one region, read once whatever the number of texts holding it."""
        known = self._regions.get(region)
        if known is None:
            known = self._regions[region] = self.memo.atoms((region,))
        return known

    def _seal(self) -> None:
        """Join the texts taken in since the last lookup into a block, and file its gaps' atoms."""
        first = self._sealed
        if first == len(self.sources):
            return
        texts = [source.text for source in self.sources[first:]]
        starts, offset = [], 0
        for text in texts:
            starts.append(offset)
            offset += len(text) + 1
        joined = "\n".join(texts)
        block = _Block(joined, first, starts)
        self._blocks.append(block)
        self._pieces.append(block.pieces)
        self._sealed = len(self.sources)
        gaps = self.gaps
        for left, right in gap_regions(block.text):
            region = block.text[left:right]
            position = block.position(left)
            for atom in self._atoms(region):
                # A substring of its region is found by the search; only the rest is filed.
                if atom not in region:
                    held = gaps.setdefault(atom, [])
                    if not held or held[-1] != position:
                        held.append(position)

    def _advance(self, atom: str, hits: _Hits, *, want: int | None = None) -> None:
        """Search on for ``atom`` from where ``hits`` stopped: to the end, or until ``want`` texts.

        Only blocks holding each of its pieces are searched; at each occurrence of the
        string there, its region is read (`region_at`); a text holding the atom is not
        searched further.
        """
        blocks, positions = self._blocks, hits.positions
        needed, url = piece_keys(pieces_of(atom)), atom.startswith("http")
        # The blocks that may hold it, picked in C: those holding each of its pieces, and
        # those whose pieces are not read yet.
        read = islice(self._pieces, hits.block, None)
        unread = islice(self._pieces, hits.block, None)
        may = map(
            operator.or_,
            map(frozenset.issuperset, read, repeat(needed)),
            map(operator.is_, unread, repeat(_UNREAD)),
        )
        for number in compress(range(hits.block, len(blocks)), may):
            block = blocks[number]
            if block.pieces is _UNREAD:
                block.searches += 1
                if block.searches >= PIECES_AFTER:
                    block.pieces = self._pieces[number] = piece_keys(pieces(block.text))
            text = block.text
            start = hits.offset if number == hits.block else 0
            at = text.find(atom, start)
            while at >= 0:
                if not _may_start(text, at, url) or not _may_end(text, at + len(atom)):
                    at = text.find(atom, at + 1)
                    continue
                position = block.position(at)
                left, right = region_at(text, at, at + len(atom))
                if atom in self._atoms(text[left:right]):
                    positions.append(position)
                    after = block.end_of(position)
                    self.searched += after - start
                    start = after
                    if want is not None and len(positions) >= want:
                        hits.block, hits.offset = number, after
                        return
                    at = text.find(atom, after)
                else:
                    at = text.find(atom, right)
            self.searched += len(text) - start
        hits.block, hits.offset = len(blocks), 0

    def _hits(self, atom: str) -> _Hits:
        self._seal()
        hits = self.found.get(atom)
        if hits is None:
            hits = self.found[atom] = _Hits([])
        return hits

    def positions(self, atom: str) -> tuple[int, ...]:
        """The positions of the texts holding ``atom`` (one of their `atoms`), oldest first.

        ``atom`` is a token (`ctxrules.fidelity.extract.key_tokens`): a word, or a URL whole.
        """
        hits = self._hits(atom)
        self._advance(atom, hits)
        gaps = self.gaps.get(atom)
        if gaps:
            return tuple(sorted({*hits.positions, *gaps}))
        return tuple(hits.positions)

    def first(self, atom: str) -> int | None:
        """The position of the oldest text holding ``atom``: the search stops at the first."""
        hits = self._hits(atom)
        if not hits.positions:
            self._advance(atom, hits, want=1)
        found = [*hits.positions[:1], *self.gaps.get(atom, ())[:1]]
        return min(found) if found else None

    def containing(self, reference: str) -> Sequence[int]:
        """The positions of the texts that contain ``reference``, oldest first.

        A token is looked up whole; a multi-word reference by the rarest of its tokens, then
        each candidate text is searched for the whole string.
        """
        if " " not in reference and self.memo.distinctive(reference):
            return self.positions(reference)
        found = [
            held for t in key_tokens(reference, self.memo.judged) if (held := self.positions(t))
        ]
        if not found:
            return ()
        rarest = min(found, key=len)
        return tuple(p for p in rarest if reference in self.sources[p].text)

    def first_source(self, reference: str) -> int | None:
        """``containing(reference)[0]``, or None; a token's search stops at its first text."""
        if " " not in reference and self.memo.distinctive(reference):
            return self.first(reference)
        where = self.containing(reference)
        return where[0] if where else None

    def first_kind(self, where: Sequence[int]) -> str | None:
        """The kind of the oldest of these texts (`containing`'s answer): ``tool`` when a result's."""
        return self.sources[where[0]].kind if where else None
