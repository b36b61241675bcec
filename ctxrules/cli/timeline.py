"""What `ctxrules show STORE SESSION` prints: a session's commits, newest first, read lazily.

Like ``git log --stat`` of the context: each commit's size and item states, whether it
extends the request before it (the provider can reuse the cached prefix) or where it breaks
that prefix and which batch point broke it, then the first items it added or changed.
Commits are read as the inspector reads them: headers one by one, chunks only where two
commits differ, so a 100,000-message session prints as quickly as a short one.
"""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime

import attrs
from returns.result import Failure, Result, Success

from ctxrules.cli.terminal import printable
from ctxrules.commit import ContextCommit, State
from ctxrules.commit.diff import ChangeKind, ItemChange
from ctxrules.inspect.delta import Delta, ReadChunk, delta, plain
from ctxrules.inspect.source import CommitSource
from ctxrules.render.item import shown_text
from ctxrules.rules.batching import BatchReason, held_back, last_batch

#: Changed items listed under a commit; `ctxrules inspect` lists them all.
CHANGES_SHOWN = 12

_MARKS = {
    ChangeKind.ADDED: "+",
    ChangeKind.TIGHTENED: "~",
    ChangeKind.REWRITTEN: "~",
    ChangeKind.FOLDED: "-",
}
_WHY = {
    BatchReason.START: "the first tightening",
    BatchReason.TURNS: "its turn interval",
    BatchReason.BUDGET: "the history crossing its budget share",
    BatchReason.COLD: "a cold cache",
    BatchReason.COMPACTION: "a compaction",
}


@attrs.frozen
class Shown:
    """One commit of the timeline and what changed since the request sent before it.

    ``sent`` is False for a commit a newer one for the same head replaced before the request
    (a pin's, or the one a compaction rewrote): the provider never read it.
    """

    commit: ContextCommit
    before: ContextCommit | None
    changes: Delta
    sent: bool = True


@attrs.frozen
class Timeline:
    """The newest commits of a chain (newest first) and how many older ones were left out."""

    shown: tuple[Shown, ...]
    older: int


def read_timeline(
    source: CommitSource, start: str, limit: int, read: ReadChunk = plain
) -> Result[Timeline, str]:
    """The chain of first parents from commit ``start``: ``limit`` commits (0: all) with diffs.

    Each commit is compared with the request sent before it, as the inspector's timeline
    compares them: the newest older commit of another head (the last commit of a head is
    the one sent). ``read`` reads a chunk's items (`chunk_cache` keeps them for the commits
    that share it).
    """
    reader = read
    chain: list[ContextCommit] = []
    current: str | None = start

    def more() -> bool:
        if limit <= 0 or len(chain) <= limit:
            return True
        # Past the oldest shown, on to the request sent before it (a head's earlier commits
        # were replaced before that request).
        return chain[-1].head_node_id == chain[limit - 1].head_node_id

    while current is not None and more():
        found = source.get(current)
        if isinstance(found, Failure):
            return Failure(found.failure())
        chain.append(found.unwrap())
        current = chain[-1].parent_ids[0] if chain[-1].parent_ids else None
    shown_count = len(chain) if limit <= 0 else min(limit, len(chain))
    older = len(chain) - shown_count
    while current is not None:
        older += 1
        current = source.parent_id(current)
    shown = []
    for i in range(shown_count):
        after = i + 1
        while after < len(chain) and chain[after].head_node_id == chain[i].head_node_id:
            after += 1
        before = chain[after] if after < len(chain) else None
        sent = i == 0 or chain[i - 1].head_node_id != chain[i].head_node_id
        changes = delta(before, chain[i], read=reader, limit=CHANGES_SHOWN)
        shown.append(Shown(chain[i], before, changes, sent))
    return Success(Timeline(tuple(shown), older))


def _cut(text: str, width: int = 60) -> str:
    flat = " ".join(text.split())
    return printable(flat if len(flat) <= width else flat[: width - 1] + "…")


def cache_line(shown: Shown) -> str:
    """Whether the commit reuses the previous one's cached prefix, or where and why it breaks it.

    >>> from ctxrules.commit import ContextCommit, State
    >>> cache_line(Shown(ContextCommit("s"), None, Delta(0, 0)))
    'cache: the first commit, nothing cached before it'
    """
    before, changes = shown.before, shown.changes
    if not shown.sent:
        return "cache: not sent: a newer commit for the same head replaced it before the request"
    if before is None:
        return "cache: the first commit, nothing cached before it"
    if changes.extends:
        held = (
            "; a turn-count batch point was weighed here and held back: landing the pending"
            " tightening would have freed too little of what it rewrites"
            if held_back(before, shown.commit)
            else ""
        )
        return (
            f"cache: extends the request before it "
            f"({changes.prefix_tokens:,} tokens can be read from the cache{held})"
        )
    count, why = last_batch(shown.commit)
    landed = why is not None and count != last_batch(before)[0]
    cause = f"; a batch point, from {_WHY[why]}" if landed and why is not None else ""
    return (
        f"cache: breaks at item {changes.prefix_end:,} of {len(shown.commit.items):,} "
        # An upper bound: a provider reads up to its last cache breakpoint before the break.
        f"({changes.prefix_tokens:,} tokens of history before it: at most these are read"
        f" from the cache{cause})"
    )


def _change_line(change: ItemChange) -> str:
    item = change.item
    attached = f" attached_from={printable(item.attached_from[:14])}" if item.attached_from else ""
    return (
        f"  {_MARKS[change.kind]} {item.state.value:<10} {item.tokens:>6}  "
        f"{item.role.value:<9} {printable(item.reason)}{attached}  {_cut(shown_text(item))}"
    )


def state_counts(commit: ContextCommit, read: ReadChunk) -> Counter[str]:
    """How many items the commit holds in each state, reading no chunk that is wholly summarized.

    A compaction's summarized spans are counted from the spans; other chunks are read
    through ``read``, so chunks the commits of a timeline share are read once.
    """
    spans = sorted(commit.hidden or ())
    counts: Counter[str] = Counter()
    start = 0
    for chunk in commit.items.chunks():
        stop = start + len(chunk)
        if any(a <= start and stop <= b for a, b in spans):
            counts[State.SUMMARIZED.value] += len(chunk)
        else:
            counts.update(item.state.value for item in read(chunk))
        start = stop
    return counts


def format_timeline(timeline: Timeline, read: ReadChunk = plain) -> str:
    """The timeline as text: per commit its header, states, cache line and changed items."""
    lines: list[str] = []
    for shown in timeline.shown:
        commit, changes = shown.commit, shown.changes
        states = state_counts(commit, read)
        when = datetime.fromtimestamp(commit.created_at, UTC).isoformat(timespec="seconds")
        lines.append(f"commit {commit.id[:18]}  head {printable(str(commit.head_node_id))}  {when}")
        lines.append(
            f"  {commit.total_tokens:,} tokens, {len(commit.items):,} items: "
            + ", ".join(f"{n:,} {s}" for s, n in sorted(states.items()))
        )
        lines.append("  " + cache_line(shown))
        if changes.folded:
            lines.append(f"  compaction: {changes.folded:,} items folded into a summary")
        lines += [_change_line(change) for change in changes.changes]
        more = changes.count - len(changes.changes)
        if more > 0:
            what = "items" if shown.before is None else "changed items"
            lines.append(f"  … and {more:,} more {what} (`ctxrules inspect` lists them)")
    if timeline.older:
        lines.append(f"({timeline.older} older commits not shown: --limit N shows more, 0 all)")
    return "\n".join(lines)
