"""Tool-result aging: stub results outside the tail window (the cap lives in `cap`)."""

from __future__ import annotations

from collections.abc import Iterator

import attrs

from ctxrules.commit import ContextCommit, ContextItem, State
from ctxrules.commit.layout import Spans
from ctxrules.rules.arguments import cut_arguments
from ctxrules.rules.cap import CAPPED, cap_marker, cap_tool_result
from ctxrules.rules.facts import Facts
from ctxrules.rules.handles import handle_source, with_note
from ctxrules.rules.hints import (
    item_failure,
    item_names,
    last_written,
    lookup_hints,
    shown_names,
    written_names,
)
from ctxrules.rules.marks import mark_key
from ctxrules.rules.pipeline import Rule
from ctxrules.rules.protected import PROTECTED_TOOLS, is_protected, protected_keys
from ctxrules.rules.scale import scaled, scaled_turns, window_scale
from ctxrules.rules.scan import scan
from ctxrules.rules.text import head, one_line
from ctxrules.rules.tighten import retightened, tighten

__all__ = [
    "CAPPED",
    "PROTECTED_TOOLS",
    "age_tool_results",
    "cap_marker",
    "cap_tool_result",
    "tool_stub",
]


def tool_stub(
    item: ContextItem,
    head_chars: int,
    tail_chars: int,
    *,
    handles: bool = True,
    hint_chars: int = 0,
    shown: str = "",
    seen: frozenset[str] = frozenset(),
) -> str:
    r"""The one-line stub of an aged result: ``[tool <name>] output: <head>… <tail> [recall <handle>]``.

    With ``hint_chars``, the result's most distinctive names that head and tail leave out
    follow them (``| names: …``), so the model still sees what it may need to recall;
    names in ``shown`` (what the request shows beside the stub, such as its call's
    arguments) or in ``seen`` are left out, so the room goes to names not in view.

    >>> tool_stub(ContextItem("n", "tool", rendered="line one\nline two\nend", tool_name="cat"), 8, 3)
    '[tool cat] output: line one… end [recall h:dmlldx2t]'
    >>> tool_stub(ContextItem("n", "tool", rendered="def load_config(): ...\n" * 9, tool_name="cat"), 4, 3, hint_chars=40)
    '[tool cat] output: def … ... | names: load_config [recall h:dmlldx2t]'
    """
    body, short = _stub_body(item, head_chars, tail_chars)
    hints = (
        ""
        if short or not hint_chars
        else lookup_hints(
            item.rendered,
            hint_chars,
            f"{body}\n{shown}" if shown else body,
            seen,
            failure=item_failure(item),
        )
    )
    body = f"{body} | {hints}" if hints else body
    return with_note(
        f"[tool {item.tool_name or 'unknown'}] output: {body}", handle_source(item), on=handles
    )


#: The key under which an item keeps its text's ends on one line (a stub's head and tail).
_ENDS_KEY = "one_line_ends"
#: The most characters of each end kept with an item: a stub's head or tail past it is cut
#: from the whole text again (the default stubs keep none).
_ENDS = 512


def _stub_body(item: ContextItem, head_chars: int, tail_chars: int) -> tuple[str, bool]:
    """A stub's body (the text on one line, or its head and tail) and whether it is whole.

    The length and the ends of `one_line` of the item's text are kept with the item:
    pending results are stubbed again at every batch point weighed and declined, and the
    ends, not a copy of the whole text, bound what each item keeps.
    """
    memo = item.memo
    ends: tuple[int, str, str] | None = memo.get(_ENDS_KEY) if memo is not None else None  # type: ignore[assignment]
    text = None
    if ends is None:
        text = one_line(item.rendered)
        ends = (len(text), text[:_ENDS], text[max(0, len(text) - _ENDS) :])
        item.remember(_ENDS_KEY, ends)
    length, head, tail = ends
    short = length <= head_chars + tail_chars
    if text is None and (length > _ENDS if short else max(head_chars, tail_chars) > _ENDS):
        text = one_line(item.rendered)  # more than the kept ends hold
    if text is not None:
        head = tail = text
    if short:
        return head, True
    return f"{head[:head_chars]}… {tail[len(tail) - tail_chars :] if tail_chars else ''}", False


def _agable(item: ContextItem, protected: frozenset[str]) -> bool:
    """Whether the rule may stub the item: a result whole or only capped, of a tool not protected."""
    # The state first: past a held result most items are summarized, and this is per item.
    state = item.state
    if state is not State.FULL and (state is not State.AGED or item.reason != CAPPED):
        return False
    return item.is_tool and not is_protected(item.tool_name, protected)


#: Distinct names of a result the assistant must have written lately for it to stay whole.
USED_NAMES = 2


def _in_use(item: ContextItem, used: frozenset[str]) -> bool:
    """Whether the assistant lately wrote at least `USED_NAMES` of the result's names."""
    if not used:
        return False
    # A result's names are distinct: the intersection counts them, in C, not name by name.
    return len(used.intersection(item_names(item))) >= USED_NAMES


def _used_after(item: ContextItem, index: int, last: dict[str, int]) -> bool:
    """Whether the assistant wrote `USED_NAMES` of the result's names after it (`last_written`)."""
    found = 0
    for name in item_names(item):
        if last.get(name, -1) > index:
            found += 1
            if found >= USED_NAMES:
                return True
    return False


#: The key under which a result keeps its last stub's inputs, the ruler and the tightened result.
_AGED_KEY = "aged_stub"
_Aged = tuple[object, object, ContextItem | None]


@attrs.define
class _Stubs:
    """The stubs of one run of the rule: sizes, and what is read once per run.

    ``sizes`` are the stub's head and tail, ``hints`` the names' room of a stub and of a
    used result's stub. The names in view (``unseen``) and the assistant's last use of each
    name are read once, on the first stub that needs them.
    """

    commit: ContextCommit
    facts: Facts
    start: int
    sizes: tuple[int, int]
    hints: tuple[int, int]
    unseen: bool
    handles: bool
    seen: frozenset[str] | None = None
    last: dict[str, int] | None = None
    used: frozenset[str] | None = None
    #: Whether a result held the mark this run: past it only a result that can age matters.
    held: bool = False

    def holds(self, item: ContextItem, used_since: int | None, cited_cutoff: int) -> bool:
        """Whether the result stays whole: the assistant wrote its names lately, or a later message cites it.

        The mark stops at a held result, so that the next batch point looks at it again.
        ``used_since`` is None when the rule does not look at what the assistant wrote.
        """
        if used_since is not None and item.is_tool and item.state is not State.CLEARED:
            # Read once, and only when a result could age: what the assistant wrote lately.
            if self.used is None:
                self.used = written_names(self.commit, used_since)
            if _in_use(item, self.used):
                return True
        return item.turn >= cited_cutoff and item.source_node_id in self.facts.cited

    def aged(self, item: ContextItem, index: int, args_chars: int) -> ContextItem | None:
        """The result at ``index`` as its stub, with its call's arguments cut; None if unchanged.

        What the stub depends on (its sizes, its names' room, the names in view among its
        text's) is kept with the item beside the answer: at the next batch point weighed,
        a pending result whose inputs are the same is only dated again (`retightened`).
        """
        room = self.room(item, index)
        seen = self.seen_of(item)
        key = (args_chars, self.sizes, room, self.handles, self.unseen, seen)
        ruler = self.facts.tokenizer
        memo = item.memo
        kept: _Aged | None = memo.get(_AGED_KEY) if memo else None  # type: ignore[assignment]
        # The same ruler object, as `tighten`'s memo asks: counts are the ruler's.
        if kept is not None and kept[1] is ruler and kept[0] == key:
            previous = kept[2]
            return None if previous is None else retightened(previous, item, self.facts)
        arguments = aged_arguments(item.arguments, args_chars)
        stub = tool_stub(
            item,
            *self.sizes,
            handles=self.handles,
            hint_chars=room,
            shown=arguments if self.unseen else "",
            seen=seen,
        )
        aged = tighten(
            item, State.AGED, self.facts, rendered=stub, arguments=arguments, reason="tail_window"
        )
        # Unchanged is an answer of the item alone (locked, or tightened to itself): kept too.
        found = aged if aged is not None and aged != item else None
        item.remember(_AGED_KEY, (key, ruler, found))
        return found

    def room(self, item: ContextItem, index: int) -> int:
        """The characters of names the stub of the result at ``index`` may hold: more once it was used."""
        room, used_room = self.hints
        if used_room > room:
            if self.last is None:
                # Only writes after a result tell of its use, and results come in position
                # order: from past the first one on is enough (not the mark, which a held
                # result keeps before history a resumed session would read from the store).
                self.last = last_written(self.commit, index + 1, self.facts)
            room = used_room if _used_after(item, index, self.last) else room
        return room

    def seen_of(self, item: ContextItem) -> frozenset[str]:
        """The names in view that the item's text holds: the only ones its stub's hints leave out.

        None but those change its hints (`lookup_hints`), so the stub is the same while they are.
        """
        if not self.unseen:
            return frozenset()
        if self.seen is None:
            # Once history is folded, what is in view is bounded by the window: all of it is
            # read (the head no fold takes included), not only what follows the mark.
            start = 0 if self.commit.hidden else self.start
            self.seen = shown_names(self.commit, start, self.facts)
        return self.seen.intersection(item_names(item))


def _walk(commit: ContextCommit, start: int, stubs: _Stubs) -> Iterator[tuple[int, ContextItem]]:
    """The items from ``start``; once ``stubs.held`` is set, the summarized spans are stepped over.

    Past a held result the mark stays put and only a result that can age matters: a
    summarized one never can (invariant 3), so its spans go unread. Before, every item is
    read, since any may hold the mark. Summarized history piles up behind a held result: a
    batch point at 10k messages read 9,545 items to stub 158.
    """
    hidden: Spans = commit.hidden or ()
    position = start
    past: Spans = ()
    while True:
        for index, item in scan(commit, position, stubs.facts, past=past):
            yield index, item
            if stubs.held and hidden and past is not hidden:
                # Held now: from the next item on, the spans are stepped over.
                position, past = index + 1, hidden
                break
        else:
            return


def aged_arguments(arguments: str, chars: int) -> str:
    """An aged call's arguments: its short fields whole when they are a JSON object, else the head."""
    cut = cut_arguments(arguments, chars)
    return cut if cut is not None else head(arguments, chars)


def age_tool_results(
    tail_turns: int,
    max_args_chars: int,
    stub_head_chars: int,
    stub_tail_chars: int,
    protected_tools: tuple[str, ...],
    *,
    handles: bool = True,
    stub_hint_chars: int = 0,
    cited_tail_turns: int = 0,
    used_tail_turns: int = 0,
    stub_hints_unseen: bool = False,
    used_hint_chars: int = 0,
    scale_below: int = 0,
) -> Rule:
    """Tool results older than the last ``tail_turns`` assistant turns become one-line stubs.

    The call keeps its name and its arguments cut to ``max_args_chars``; the stub names the
    result's recall handle unless ``handles`` is false, and up to ``stub_hint_chars`` of the
    result's most distinctive names (paths, compound identifiers, ids) beyond its head and
    tail. With ``used_tail_turns``, a result some of whose distinctive names the assistant
    itself wrote (in its text or its calls' arguments) in the last that many assistant turns
    stays whole: the model is still working with it. With ``stub_hints_unseen``, a stub's
    names leave out those its call's kept arguments and the user's and assistant's messages
    from the rule's mark on already show (every such message in view, once some history is
    folded into a summary). Items are visited from the rule's mark up to the
    tail window only (and to the end for ``stub_hints_unseen``). With
    ``scale_below``, a window whose input budget is under that many tokens shrinks the tail
    window (to one turn at least) and every character size in proportion.
    """
    optional = {
        "stub_hint_chars": stub_hint_chars,
        "cited_tail_turns": cited_tail_turns,
        "used_tail_turns": used_tail_turns,
        "stub_hints_unseen": stub_hints_unseen,
        "used_hint_chars": used_hint_chars,
        "scale_below": scale_below,
    }
    key = mark_key(
        "age_tool_results",
        {
            "tail_turns": tail_turns,
            "max_args_chars": max_args_chars,
            "stub_head_chars": stub_head_chars,
            "stub_tail_chars": stub_tail_chars,
            "protected_tools": protected_tools,
            "handles": handles,
            # Only the options set: a spec without them keeps the key (and mark) it had.
            **{name: value for name, value in optional.items() if value},
        },
    )
    protected = protected_keys(protected_tools)

    def rule(commit: ContextCommit, facts: Facts) -> ContextCommit:
        scale = window_scale(facts, scale_below)
        tail = scaled_turns(tail_turns, scale)
        args_chars = scaled(max_args_chars, scale)
        cutoff = facts.head_turn - tail
        cited_cutoff = facts.head_turn - max(scaled_turns(cited_tail_turns, scale), tail)
        used_since = facts.head_turn - scaled_turns(used_tail_turns, scale)
        changes: dict[int, ContextItem] = {}
        stop = commit.marks.get(key, 0)
        stubs = _Stubs(
            commit,
            facts,
            stop,
            (scaled(stub_head_chars, scale), scaled(stub_tail_chars, scale)),
            (scaled(stub_hint_chars, scale), scaled(used_hint_chars, scale)),
            unseen=stub_hints_unseen,
            handles=handles,
        )
        for index, item in _walk(commit, stop, stubs):
            if item.turn >= cutoff:
                break
            if stubs.held and not _agable(item, protected):
                # Past a held result the mark stays put: only a result that can age matters.
                continue
            if stubs.holds(item, used_since if used_tail_turns else None, cited_cutoff):
                stubs.held = True
                continue
            if not stubs.held:
                stop = index + 1
            aged = stubs.aged(item, index, args_chars) if _agable(item, protected) else None
            if aged is not None:
                changes[index] = aged
        return commit.replace_items(changes).with_mark(key, stop)

    return rule
