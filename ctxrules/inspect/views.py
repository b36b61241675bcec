"""The inspector's views as plain JSON values, built from what a store holds (pure).

The live page and the exported file read the same values: a session's history (the DAG
placed in rows and lanes), its requests (one per prepared head, with the diff against the
previous request), a request's items, the occupancy record and a node whole.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import attrs

from ctxrules.cache.pricing import CacheState
from ctxrules.cache.profiles import CacheProfile
from ctxrules.commit import ContextCommit, ContextItem, State
from ctxrules.commit.vector import CHUNK
from ctxrules.compaction.occupancy import Measurement, occupancy
from ctxrules.dag import Call, Frozen, thaw
from ctxrules.generation.generate import node_text
from ctxrules.inspect.delta import Delta, ReadChunk, delta, plain
from ctxrules.inspect.layout import node_kind, place_window, window_edges
from ctxrules.render.item import shown_text
from ctxrules.rules.batching import held_back, last_batch
from ctxrules.rules.handles import item_handle
from ctxrules.tokens import allocate
from ctxrules.tokens.usage import UsageState

Json = dict[str, Any]

#: The built-in rule behind each reason a built-in writes (a declarative rule writes its name).
REASON_RULES = {
    "capped": "cap_tool_result",
    "tail_window": "age_tool_results",
    "gated": "gate_tool_results",
    "idle": "clear_idle",
    "compacted": "compaction",
    "new": "",
}
#: Characters of an item's text a request view carries; the node view has it whole.
ITEM_CHARS = 240


@attrs.frozen
class Request:
    """One request: the commit that was sent, the one sent before it and what changed."""

    index: int
    commit: ContextCommit
    previous: ContextCommit | None
    steps: int
    diff: Delta


def requests_of(
    chain: Sequence[ContextCommit],
    known: Sequence[Request] = (),
    *,
    first: int = 0,
    before: ContextCommit | None = None,
    read: ReadChunk = plain,
) -> list[Request]:
    """The requests of a first-parent chain (oldest first): the last commit of each head.

    A compaction stores a second commit for the same head; the request is the later one.
    ``known`` are requests read before: those the chain still starts with are kept as they
    are, so a live session costs its new requests, not its whole history. ``first`` is the
    index of the chain's first request and ``before`` the request sent before it, when the
    chain is the newest part of a longer one.
    """
    groups: list[list[ContextCommit]] = []
    for commit in chain:
        if groups and groups[-1][-1].head_node_id == commit.head_node_id:
            groups[-1].append(commit)
        else:
            groups.append([commit])
    kept = {r.commit.id: r for r in known}
    found: list[Request] = []
    previous = before
    for index, group in enumerate(groups, start=first):
        sent = group[-1]
        same = kept.get(sent.id)
        if same is not None and same.steps == len(group) and same.previous is previous:
            found.append(same)
        else:
            found.append(
                Request(index, sent, previous, len(group), delta(previous, sent, read=read))
            )
        previous = sent
    return found


def rule_of(reason: str) -> str:
    """The rule that wrote ``reason``.

    >>> rule_of("tail_window"), rule_of("clear_old_logs")
    ('age_tool_results', 'clear_old_logs')
    """
    return REASON_RULES.get(reason, reason)


def _batch(request: Request) -> str | None:
    count, why = last_batch(request.commit)
    before = last_batch(request.previous)[0] if request.previous is not None else 0
    return why.name.lower() if why is not None and count != before else None


def request_row(request: Request) -> Json:
    """The timeline row of a request: tokens, items by state, the diff's counts, marks."""
    commit, diff = request.commit, request.diff
    return {
        "index": request.index,
        "commit": commit.id,
        "head": commit.head_node_id,
        "at": commit.created_at,
        "tokens": commit.total_tokens,
        "items": len(commit.items),
        "added": diff.added,
        "tightened": diff.tightened,
        "folded": diff.folded,
        "rewritten": diff.rewritten,
        "extends": diff.extends,
        "prefix_end": diff.prefix_end,
        "prefix_tokens": diff.prefix_tokens,
        "batch": _batch(request),
        # A turn-count point weighed and not landed: why pending tightening is still pending.
        "held": held_back(request.previous, commit),
        "compaction": bool(diff.folded or diff.summary_added),
        "steps": request.steps,
    }


@attrs.define
class ItemTable:
    """Items by digest, each once: requests name their items by index into ``rows``."""

    index: dict[str, int] = attrs.Factory(dict)
    rows: list[Json] = attrs.Factory(list)

    def add(self, item: ContextItem) -> int:
        """The item's index, adding its row the first time it is seen."""
        found = self.index.get(item.digest)
        if found is not None:
            return found
        text = shown_text(item)
        self.rows.append(
            {
                "node": item.source_node_id,
                "role": item.role.value,
                "state": item.state.value,
                "tokens": item.tokens,
                "reason": item.reason,
                "rule": rule_of(item.reason),
                "handle": item_handle(item) if item.state is not State.FULL else None,
                "attached_from": item.attached_from,
                "tool": item.tool_name,
                "locked": item.locked,
                "text": text[:ITEM_CHARS],
                "chars": len(text),
            }
        )
        self.index[item.digest] = len(self.rows) - 1
        return len(self.rows) - 1


#: Items and changes a request's view lists at most (the newest items; the first changes).
DETAIL_ROWS = 2_000


def request_detail(
    request: Request, table: ItemTable, *, read: ReadChunk = plain, rows: int = DETAIL_ROWS
) -> Json:
    """A request's items (indexes into ``table``) and its diff against the previous request.

    At most ``rows`` items are listed (the newest, with the first position given) and at
    most ``rows`` changes (the first); the counts say how many there are in all.
    """
    commit = request.commit
    full = delta(request.previous, commit, read=read, limit=rows)
    start = max(len(commit.items) - rows, 0)
    # Read through ``read``: chunks the row's diff read are not read again.
    shown = [item for chunk, lo, hi in _runs(commit, start, read) for item in chunk[lo:hi]]
    return {
        "index": request.index,
        "commit": commit.id,
        "items": [table.add(item) for item in shown],
        "items_start": start,
        "items_total": len(commit.items),
        "diff": [
            {
                "position": c.position,
                "kind": c.kind.value,
                "item": table.add(c.item),
                "before": table.add(c.before) if c.before is not None else None,
            }
            for c in full.changes
        ],
        "changes_total": full.count,
        "removed": full.removed,
        "prefix_end": full.prefix_end,
        "prefix_tokens": full.prefix_tokens,
        "previous_items": len(request.previous.items) if request.previous is not None else 0,
    }


def _runs(
    commit: ContextCommit, start: int, read: ReadChunk
) -> list[tuple[Sequence[ContextItem], int, int]]:
    chunks = commit.items.chunks()
    found = []
    for number in range(start // CHUNK, len(chunks)):
        base = number * CHUNK
        found.append((read(chunks[number]), max(start - base, 0), len(chunks[number])))
    return found


def occupancy_view(commit: ContextCommit, usage: UsageState | None, window: int) -> Json:
    """The ring's and the panel's one record: window, use by part, basis and calibration.

    ``window`` is used when the store does not say which window the session was prepared for.
    """
    usage = usage or UsageState()
    size = usage.window or window
    fixed = usage.system_tokens + usage.tools_tokens
    estimated = commit.total_tokens + fixed
    # The stored measurement describes this view when it measured a request of this size
    # and no compaction came after it (a compaction marks the usage ``estimate``).
    applies = usage.turn_count > 0 and usage.source != "estimate"
    measured = usage.last_prompt_tokens + usage.last_cache_read_tokens
    current = applies and usage.measured_estimate == estimated
    generation = usage.compaction_count
    record = occupancy(
        commit,
        size,
        generation=generation,
        measurement=Measurement(commit.head_node_id, generation, measured) if current else None,
        fixed_tokens=fixed,
    )
    budget = allocate(size, usage.system_tokens, commit.total_tokens, usage.tools_tokens)
    # At most one summary is active (invariant 12): the first item in the summary state.
    summary = commit.items[commit.summary_at].tokens if commit.summary_at >= 0 else 0
    used = budget.input_used + budget.output_reserve
    return {
        "commit": commit.id,
        "window": record.window,
        "window_known": bool(usage.window),
        "total_used": record.total_used,
        "basis": record.basis.value,
        "estimated": record.estimated,
        "calibration": record.calibration,
        "generation": record.generation,
        "history_tokens": commit.total_tokens,
        "parts": {
            "system": usage.system_tokens,
            "tools": usage.tools_tokens,
            "history": commit.total_tokens - summary,
            "summary": summary,
            "reserve": budget.output_reserve,
            "free": size - used,
        },
    }


def _text(value: Frozen) -> str:
    return node_text(value)


def node_view(call: Call, limit: int | None = None) -> Json:
    """A node whole (or its texts cut at ``limit`` characters, said so)."""
    texts = {"input": _text(call.input), "output": _text(call.output)}
    cut = {k: len(v) for k, v in texts.items() if limit is not None and len(v) > limit}
    return {
        "id": call.id,
        "seq": call.seq,
        "kind": node_kind(call),
        "role": call.role.value,
        "name": call.name,
        "status": call.status.value,
        "at": call.created_at,
        "predecessor": call.predecessor,
        "caller": call.caller,
        "reads": list(call.reads),
        "metadata": thaw(call.metadata),
        "input": texts["input"][:limit] if limit is not None else texts["input"],
        "output": texts["output"][:limit] if limit is not None else texts["output"],
        "cut": cut,
    }


def _label(call: Call) -> str:
    text = " ".join(_text(call.output).split())
    if call.caller is not None and call.name:
        text = f"{call.name}: {text}"
    return text[:80]


def history_view(
    ids: Sequence[str],
    nodes: Mapping[str, Call],
    first_child: Callable[[str], str | None],
    heads: Mapping[str, str],
    commit_heads: set[str],
    *,
    start: int = 0,
    total: int | None = None,
) -> Json:
    """The DAG placed for drawing: nodes with kind, row and lane; edges; heads; commits.

    ``ids`` are the nodes at positions ``start`` on of the seq order (``nodes`` holds them),
    ``total`` how many the session has: a long history is drawn a window at a time.
    """
    placed, lanes = place_window(ids, nodes, first_child)
    drawn = []
    for spot in placed:
        call = nodes[spot.node_id]
        drawn.append(
            {
                "id": call.id,
                "row": spot.row,
                "lane": spot.lane,
                "callee": spot.callee,
                "kind": node_kind(call),
                "status": call.status.value,
                "label": _label(call),
                "commit": call.id in commit_heads,
            }
        )
    return {
        "nodes": drawn,
        "edges": [list(edge) for edge in window_edges(ids, nodes)],
        "lanes": lanes,
        "heads": dict(heads),
        "start": start,
        "total": len(ids) if total is None else total,
    }


def prompt_cost(requests: Sequence[Request], fixed: int, profile: CacheProfile) -> float:
    """The cache-weighted prompt cost of the requests, in uncached input tokens (as replay).

    The shared prefix is counted in items (the unit every request is compared in here).
    """
    cache, total = CacheState(), 0.0
    for request in requests:
        priced, cache = cache.price(
            profile,
            now=request.commit.created_at,
            tokens=request.commit.total_tokens + fixed,
            messages=len(request.commit.items) + 1,
            shared_messages=request.diff.prefix_end + 1 if request.previous is not None else 0,
            shared_tokens=request.diff.prefix_tokens + fixed if request.previous else 0,
        )
        total += priced.cost
    return total


def session_row(
    info_id: str,
    title: str,
    fmt: str,
    ends: tuple[Call | None, Call | None],
    *,
    nodes: int,
    requests: int,
    cost: float,
) -> Json:
    """The sessions list's row: title, format, nodes, first and last time, requests, cost.

    The times are the first and the last node's (by seq: the order in time).
    """
    first, last = ends
    return {
        "id": info_id,
        "title": title,
        "format": fmt,
        "nodes": nodes,
        "first": first.created_at if first is not None else None,
        "last": last.created_at if last is not None else None,
        "requests": requests,
        "cost": round(cost),
    }
