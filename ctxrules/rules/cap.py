"""The single-result cap: a tool result (or call) over a size keeps its head and tail."""

from __future__ import annotations

import attrs

from ctxrules.commit import ContextCommit, ContextItem, State
from ctxrules.rules.arguments import cut_arguments
from ctxrules.rules.artifacts import reads_file
from ctxrules.rules.facts import Facts
from ctxrules.rules.handles import handle_for, handle_source
from ctxrules.rules.hints import READ_CHARS as HINT_READ_CHARS
from ctxrules.rules.hints import lookup_hints
from ctxrules.rules.marks import mark_key
from ctxrules.rules.scale import scaled, window_scale
from ctxrules.rules.scan import scan
from ctxrules.rules.text import head_and_tail
from ctxrules.rules.tighten import tighten

__all__ = ["CAPPED", "CapToolResult", "cap_marker", "cap_tool_result"]
#: The ``reason`` of a capped item: aged on arrival, still agable by the tail window.
CAPPED = "capped"


def cap_marker(cut: int, total: int, source_id: str, *, handles: bool = True) -> str:
    r"""What stands for the cut middle of a capped text: its size and recall handle.

    >>> cap_marker(6000, 10000, "n")
    '\n…[6000 of 10000 characters cut; recall h:dmlldx2t]…\n'
    >>> cap_marker(6000, 10000, "n", handles=False)
    '\n…[6000 characters cut]…\n'
    """
    if not handles:
        return f"\n…[{cut} characters cut]…\n"
    return f"\n…[{cut} of {total} characters cut; recall {handle_for(source_id)}]…\n"


@attrs.frozen
class CapToolResult:
    """The rule `cap_tool_result` returns: its parameters, the rule, and the cut on arrival.

    ``on_arrival`` is the rule's work on one new item, done by commit generation before
    the item is counted or read (`ctxrules.rules.Pipeline.on_arrival`), so a 50 MB
    result costs what its head and tail cost, never what its whole text does.

    ``scale_below`` (0: off) is an input budget in tokens: at a window whose budget is
    smaller, the three sizes shrink in proportion (`ctxrules.rules.scale`).
    ``read_names_share`` (0: off) is the share of a file read's kept room given to the cut
    middle's names (`ctxrules.rules.artifacts.reads_file`), a share, so it needs no scaling.

    >>> CapToolResult(4000, 0.33)
    CapToolResult(max_chars=4000, tail_share=0.33, max_args_chars=0, handles=True, hint_chars=0, scale_below=0, read_names_share=0.0)
    >>> CapToolResult(4000, 0.33, hint_chars=1600, scale_below=16_000).at(Facts(context_window=16_000))
    CapToolResult(max_chars=2000, tail_share=0.33, max_args_chars=0, handles=True, hint_chars=800, scale_below=0, read_names_share=0.0)
    """

    max_chars: int
    tail_share: float
    max_args_chars: int = 0
    handles: bool = True
    hint_chars: int = 0
    scale_below: int = 0
    read_names_share: float = 0.0
    key: str = attrs.field(init=False, repr=False)

    @key.default
    def _key(self) -> str:
        params: dict[str, object] = {"max_chars": self.max_chars, "tail_share": self.tail_share}
        if self.max_args_chars:
            params["max_args_chars"] = self.max_args_chars
        params["handles"] = self.handles
        if self.hint_chars:
            params["hint_chars"] = self.hint_chars
        if self.scale_below:
            params["scale_below"] = self.scale_below
        if self.read_names_share:
            # Only when set: a spec without it keeps the key (and mark) it had.
            params["read_names_share"] = self.read_names_share
        return mark_key("cap_tool_result", params)

    def at(self, facts: Facts) -> CapToolResult:
        """The cap with its sizes for the window in ``facts`` (itself when they do not shrink)."""
        scale = window_scale(facts, self.scale_below)
        if scale >= 1:
            return self
        return CapToolResult(
            scaled(self.max_chars, scale),
            self.tail_share,
            scaled(self.max_args_chars, scale),
            self.handles,
            scaled(self.hint_chars, scale),
            read_names_share=self.read_names_share,
        )

    def __call__(self, commit: ContextCommit, facts: Facts) -> ContextCommit:
        """The commit with every new tool item over a limit capped (a `Rule`)."""
        changes: dict[int, ContextItem] = {}
        sized = self.at(facts)
        # Only a full item is cut: the summarized spans go unread (a reconfigured cap starts
        # from no mark, and they are most of a long history).
        start = commit.marks.get(self.key, 0)
        for index, item in scan(commit, start, facts, past=commit.hidden or ()):
            cut = sized._cut(item)  # noqa: SLF001 - the same class, at the window's sizes
            if cut is None:
                continue
            rendered, arguments = cut
            capped = tighten(
                item, State.AGED, facts, rendered=rendered, arguments=arguments, reason=CAPPED
            )
            if capped is not None and capped != item:
                changes[index] = capped
        return commit.replace_items(changes).with_mark(self.key, len(commit.items))

    def on_arrival(self, item: ContextItem, facts: Facts) -> ContextItem:
        """A new item as the rule will leave it, not yet counted: reads only what it keeps.

        Unlike the rule it cannot compare the cut's tokens with the whole text's (that
        would count the whole text): a new item is born capped, never tightened.

        >>> item = ContextItem("n", "tool", rendered="x" * 900, tool_name="cat")
        >>> capped = CapToolResult(300, 0.5).on_arrival(item, Facts(now=5.0))
        >>> (capped.state.value, capped.reason, len(capped.rendered), capped.changed_at)
        ('aged', 'capped', 300, 5.0)
        """
        if item.locked:
            return item
        cut = self.at(facts)._cut(item)  # noqa: SLF001 - the same class, at the window's sizes
        if cut is None:
            return item
        rendered, arguments = cut
        return attrs.evolve(
            item,
            state=State.AGED,
            rendered=rendered,
            arguments=arguments,
            reason=CAPPED,
            changed_at=facts.now,
        )

    def _cut(self, item: ContextItem) -> tuple[str, str] | None:
        """The item's capped result and arguments, or None when it is not a full tool item over a limit."""
        if not item.is_tool or item.state is not State.FULL:
            return None
        long_result = len(item.rendered) > self.max_chars
        long_args = bool(self.max_args_chars) and len(item.arguments) > self.max_args_chars
        if not (long_result or long_args):
            return None
        source = handle_source(item)
        # A file read is the workspace's content: the model edits it or writes its own
        # files after it, by name, often long after the result ages; its head is mostly
        # imports and its tail a closing brace. Its room goes to the cut middle's names.
        share = (
            self.read_names_share
            if long_result and self.read_names_share and reads_file(item.tool_name, item.arguments)
            else 0.0
        )
        rendered = (
            self._cut_text(item.rendered, self.max_chars, source, hints=True, names_share=share)
            if long_result
            else None
        )
        arguments = self._cut_arguments(item.arguments, source) if long_args else None
        return (rendered or item.rendered, arguments or item.arguments)

    def _cut_arguments(self, arguments: str, source_id: str) -> str:
        # A JSON object keeps its short fields (the path a call wrote) whole.
        total = len(arguments)
        marker = cap_marker(total - self.max_args_chars, total, source_id, handles=self.handles)
        cut = cut_arguments(arguments, self.max_args_chars, marker.strip("\n"))
        return cut if cut is not None else self._cut_text(arguments, self.max_args_chars, source_id)

    def _cut_text(
        self,
        text: str,
        limit: int,
        source_id: str,
        *,
        hints: bool = False,
        names_share: float = 0.0,
    ) -> str:
        marker = cap_marker(len(text) - limit, len(text), source_id, handles=self.handles)
        room = max(limit - len(marker), 0)
        if names_share:
            hint_room = int(room * names_share)
        else:
            hint_room = min(self.hint_chars, room // 2) if hints else 0
        room -= hint_room
        tail_chars = int(room * self.tail_share)
        head_chars = room - tail_chars
        if hint_room:
            # The cut middle's most distinctive names, in the marker: what is worth a recall.
            shown = f"{text[:head_chars]}\n{text[len(text) - tail_chars :]}"
            end = len(text) - tail_chars
            # Both ends of the middle only, so a 50 MB result costs what the hints read.
            half = HINT_READ_CHARS // 2
            middle = (
                text[head_chars:end]
                if end - head_chars <= HINT_READ_CHARS
                else f"{text[head_chars : head_chars + half]}\n{text[end - half : end]}"
            )
            found = lookup_hints(middle, hint_room - 2, shown)
            if found:
                marker = f"{marker.rstrip()}\n[{found}]\n"
            # What the hints leave unused goes back to the head and the tail.
            room += hint_room - (len(found) + 3 if found else 0)
            tail_chars = int(room * self.tail_share)
            head_chars = room - tail_chars
        return head_and_tail(text, head_chars, tail_chars, marker)


def cap_tool_result(
    max_chars: int,
    tail_share: float,
    max_args_chars: int = 0,
    *,
    handles: bool = True,
    hint_chars: int = 0,
    scale_below: int = 0,
    read_names_share: float = 0.0,
) -> CapToolResult:
    """Any tool result over ``max_chars`` keeps its head and tail (inside the tail window too).

    ``max_args_chars`` (0: off) does the same to a call's arguments, such as the content
    of a file the agent wrote, which would otherwise stay whole until the call ages. The
    capped item is ``aged`` with reason ``capped``; the marker between head and tail gives
    the full size and the recall handle (unless ``handles`` is false). Each item is
    examined once, when new, so capping never rewrites a request already sent. With
    ``hint_chars``, up to that much of the kept room names the cut middle's most distinctive
    names (paths, compound identifiers, ids, a failure line) after the marker. With
    ``scale_below``, a window whose input budget is under that many tokens gets every size
    shrunk in proportion. With ``read_names_share``, the cut of a call that reads files (it
    names a path and writes none: `ctxrules.rules.artifacts.reads_file`) gives that share of
    its kept room to the middle's names, and the rest to head and tail: a file's contents
    are looked up by name (a function to edit, a test to model), a command's output by its
    ends (the error at the end of a log).
    """
    return CapToolResult(
        max_chars, tail_share, max_args_chars, handles, hint_chars, scale_below, read_names_share
    )
