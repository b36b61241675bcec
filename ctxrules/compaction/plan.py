"""Planning a compaction, purely: which items fold, where the summary goes, what the LLM reads."""

from __future__ import annotations

import attrs

from ctxrules.commit import ContextCommit, ContextItem, State
from ctxrules.commit.layout import visible_ranges
from ctxrules.compaction.cut import CutParams, attach_blocks, fold_bounds
from ctxrules.compaction.prompts import prompt_messages
from ctxrules.render import Message
from ctxrules.rules.arguments import cut_arguments
from ctxrules.rules.artifacts import reads_file
from ctxrules.rules.handles import HANDLE_PATTERN, handle_source, with_note
from ctxrules.rules.hints import item_names, lookup_hints, wrote
from ctxrules.rules.text import head, one_line
from ctxrules.tokens.budget import input_budget_for

#: Characters of each folded message the structural summary keeps (reference 001 §4.5).
HEAD_CHARS = 60
#: Characters of a folded call's arguments its structural line keeps (short fields whole).
LINE_ARGS_CHARS = 120
#: Characters of a folded result's most distinctive names its structural line keeps.
LINE_HINT_CHARS = 120
#: Input budgets under this many tokens keep the plain lines: their summary has room for few.
LINE_HINTS_FROM = 16_000
#: What a summary line shows for a handle in a call's arguments (no handle: it cannot dangle).
ASKED_HANDLE = "h:…"
#: Distinct names of a file read the assistant must have written after it for it to count as used.
USED_NAMES = 2


def label(item: ContextItem) -> str:
    """How a folded item is introduced in the transcript: its role, and a tool's name.

    >>> label(ContextItem("n", "tool", tool_name="grep")), label(ContextItem("n", "user"))
    ('tool grep', 'user')
    """
    if item.is_tool:
        return f"tool {item.tool_name}" if item.tool_name else "tool"
    return item.role.value


def item_text(item: ContextItem) -> str:
    """The text of an item as the model saw it; a tool shows its arguments, then its result."""
    if item.is_tool:
        return f"({_asked(item.arguments)}) {item.rendered}".strip()
    return item.rendered


def _asked(arguments: str) -> str:
    """A call's arguments with each handle in them shown as `ASKED_HANDLE`.

    A handle the model asked for may resolve to nothing (a guess, a typo): quoted by a
    summary it would be a dead handle in every later request, and the summary's line for
    the call ends with its answer's own handle.

    >>> _asked('{"handle": "h:abcdefgh", "page": 2}')
    '{"handle": "h:…", "page": 2}'
    """
    return HANDLE_PATTERN.sub(ASKED_HANDLE, arguments) if "h:" in arguments else arguments


def structural_line(item: ContextItem, *, hints: bool = True) -> str:
    r"""The structural summary's line for one folded item: its label and the head of its text.

    With ``hints``, a tool's line holds its call's short arguments, then the result's most
    distinctive names and its recall handle, so what the summary folded is still named
    and one recall away.

    >>> print(structural_line(ContextItem("n1", "user", rendered="explain the schema")))
    [user] explain the schema
    >>> read = ContextItem("n2", "tool", tool_name="Read", arguments='{"file_path":"src/app.py"}',
    ...     rendered="def load_config(): ...\n" * 9)
    >>> print(structural_line(read))
    [tool Read] {"file_path":"src/app.py"} | names: load_config [recall h:asakspjo]
    >>> print(structural_line(read, hints=False))
    [tool Read] ({"file_path":"src/app.py"}) def load_config(): ... def load…
    """
    if not (hints and item.is_tool):
        return f"[{label(item)}] {head(one_line(item_text(item)), HEAD_CHARS)}"
    arguments = item.arguments.strip()
    cut = cut_arguments(arguments, LINE_ARGS_CHARS) if arguments else ""
    shown = _asked(one_line(cut if cut is not None else head(arguments, LINE_ARGS_CHARS)))
    names = lookup_hints(item.rendered, LINE_HINT_CHARS, shown)
    body = " | ".join(part for part in (shown, names) if part)
    return with_note(f"[{label(item)}] {body}".rstrip(), handle_source(item))


def _used_read(item: ContextItem, written: set[str]) -> bool:
    """A file read already tightened (stub or cut), unlocked, two of whose names are in ``written``."""
    if not item.is_tool or item.state is not State.AGED or item.locked:
        return False
    if not reads_file(item.tool_name, item.arguments):
        return False
    return sum(1 for name in item_names(item) if name in written) >= USED_NAMES


def used_reads(view: list[ContextItem], start: int, cut: int, keep: int) -> frozenset[int]:
    """Positions in ``[start, cut)`` of the newest ``keep`` file reads the assistant used after them.

    A file the agent read and then wrote after (its names in the assistant's later text or
    calls) is the one it edits or models its own files on; its stub names what it holds.
    Folded, those names shrink to the summary line's 120 characters, while the model goes
    on citing them. These few stay out of the fold; older ones fold as newer ones come, so
    the fold keeps at most ``keep`` of them (each bounded by the aging rule's stub or the cap).
    Read from the newest item back, so each item's names are read once.
    """
    if keep <= 0 or start >= cut:
        return frozenset()
    written: set[str] = set()
    found: list[int] = []
    for j in range(len(view) - 1, start - 1, -1):
        item = view[j]
        if j < cut and _used_read(item, written):
            found.append(j)
            if len(found) == keep:
                break
        written.update(wrote(item))
    return frozenset(found)


@attrs.frozen
class NothingToFold:
    """A plan that needs no summarizer: why (``reason``), and the tokens now in use."""

    reason: str
    base_commit_id: str
    tokens: int


@attrs.frozen
class CompactionPlan:
    """What to fold, decided before any LLM call; ``positions`` index the base commit's items.

    ``positions`` are ascending and include the previous active summary when there is one
    (``previous_summary`` is then its text); the new summary goes at ``positions[0]``.
    ``summarised_count`` counts the items folded besides summaries; ``folded`` holds the
    label and text of each of them that has text, in order; ``lines`` the structural
    summary's line for each of them (empty: the plain lines of `structural_line`).
    """

    base_commit_id: str
    head_node_id: str | None
    positions: tuple[int, ...]
    summarised_count: int
    folded: tuple[tuple[str, str], ...]
    previous_summary: str | None
    prompt: tuple[Message, ...]
    tokens_before: int
    lines: tuple[str, ...] = ()

    @property
    def insert_at(self) -> int:
        """Where the summary item goes: where the folded run began."""
        return self.positions[0]


def _locked_blocks(view: list[ContextItem]) -> set[int]:
    """View positions of attached blocks holding a locked item: a block folds whole or not at all."""
    return {
        p
        for start, end in attach_blocks(view)
        if any(item.locked for item in view[start : end + 1])
        for p in range(start, end + 1)
    }


def plan_compaction(
    commit: ContextCommit,
    window: int,
    params: CutParams = CutParams(),  # noqa: B008 - frozen value
    *,
    fixed_tokens: int = 0,
    budget: int | None = None,
    ahead: int = 0,
) -> CompactionPlan | NothingToFold:
    """Fold the visible items before the cut (locked ones stay) and any previous summary.

    ``fixed_tokens`` (system prompt and tool schemas) is added to the commit's total so that
    ``tokens_before`` is the occupancy ruler's number. ``budget`` is the input budget the
    compaction serves (fixed tokens included); ``ahead`` the tokens the history will grow by
    before a background summary lands (see `find_cut_index`). Nothing new to fold is
    `NothingToFold`.
    """
    tokens = commit.total_tokens + fixed_tokens
    # The summarized spans go unread: a resumed session's are in the store, chunk by chunk.
    visible = list(commit.items.positioned(visible_ranges(commit.hidden or (), len(commit.items))))
    view = [item for _, item in visible]
    room = None if budget is None else max(budget - fixed_tokens, 0)
    start, cut = fold_bounds(view, window, params, room, ahead=ahead)
    active = [j for j, item in enumerate(view) if item.state is State.SUMMARY]
    if active and start < cut:
        # Never stack summaries: stretch the run over the active one.
        start, cut = min(start, active[0]), max(cut, active[-1] + 1)
    barred = _locked_blocks(view)
    hints = input_budget_for(window) >= LINE_HINTS_FROM
    if hints:
        barred |= used_reads(view, start, cut, params.keep_used_reads)
    chosen = [j for j in range(start, cut) if not view[j].locked and j not in barred]
    new = [j for j in chosen if view[j].state is not State.SUMMARY]
    if not any(view[j].tokens for j in new):
        return NothingToFold("nothing_to_fold", commit.id, tokens)
    if not set(active) <= set(chosen):
        return NothingToFold("active_summary_locked", commit.id, tokens)
    previous = "\n\n".join(view[j].rendered for j in active) if active else None
    folded = tuple((label(view[j]), item_text(view[j])) for j in new if item_text(view[j]))
    lines = tuple(structural_line(view[j], hints=hints) for j in new if item_text(view[j]))
    conversation = "\n\n".join(f"[{who}] {text}" for who, text in folded)
    return CompactionPlan(
        base_commit_id=commit.id,
        head_node_id=commit.head_node_id,
        positions=tuple(visible[j][0] for j in chosen),
        summarised_count=len(new),
        folded=folded,
        previous_summary=previous,
        prompt=prompt_messages(conversation, previous),
        tokens_before=tokens,
        lines=lines,
    )
