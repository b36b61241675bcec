"""`to_anthropic` joins a commit's 64-item chunks: equal to a whole rebuild, turn after turn.

Each chunk keeps its part of the request (`render/anthropic.py` `_from_spans`); these tests
grow and change commits across chunk boundaries and compare every request with the one
gathered item by item, the way it was built before chunks were kept.
"""

from __future__ import annotations

import attrs
from hypothesis import given
from hypothesis import strategies as st

from ctxrules.commit import ContextCommit, ContextItem, State
from ctxrules.commit.vector import CHUNK
from ctxrules.render import render_commit, to_anthropic
from ctxrules.render.render import RenderedMessages

#: Item kinds: they merge into one turn or break one, put tool results before text, repeat
#: a call id, give blank or unsendable blocks, or go to the system blocks.
KINDS = ("user", "assistant", "tool", "blank", "empty", "system", "repeat", "bad_id")


def item(n: int, kind: str, edit: int = 0) -> ContextItem:
    """Item number ``n`` of this kind (``edit`` changes its text, not its shape)."""
    text = f"{kind} {n}.{edit}"
    if kind in {"tool", "blank", "repeat", "bad_id"}:
        call = {"repeat": "c0", "bad_id": f"bad id {n}"}.get(kind, f"c{n}")
        result = "" if kind == "blank" else text
        return ContextItem(f"n{n}", "tool", rendered=result, tool_name="ls", tool_call_id=call)
    if kind == "empty":
        return ContextItem(f"n{n}", "assistant", rendered="")
    return ContextItem(f"n{n}", kind, rendered=text)


_STEP = st.one_of(
    st.tuples(st.just("add"), st.lists(st.sampled_from(KINDS), min_size=1, max_size=CHUNK + 6)),
    st.tuples(st.just("change"), st.integers(0, 10_000), st.sampled_from(KINDS)),
    st.tuples(st.just("fold"), st.integers(0, 10_000), st.integers(1, CHUNK * 2)),
)


def _apply(commit: ContextCommit, step: tuple[object, ...], edit: int) -> ContextCommit:
    """One commit after another: items added, one changed in the middle, or a span folded."""
    size = len(commit.items)
    if step[0] == "add":
        kinds: list[str] = step[1]  # type: ignore[assignment]
        return commit.append_items([item(size + k, kind) for k, kind in enumerate(kinds)])
    if not size:
        return commit
    at = int(step[1]) % size  # type: ignore[call-overload]
    if step[0] == "change":
        return commit.replace_items({at: item(at, str(step[2]), edit)})
    span = range(at, min(size, at + int(step[2])))  # type: ignore[call-overload]
    folded = {p: attrs.evolve(commit.items[p], state=State.SUMMARIZED) for p in span}
    return commit.replace_items(folded)


@given(
    start=st.lists(st.sampled_from(KINDS), max_size=3 * CHUNK),
    steps=st.lists(_STEP, min_size=1, max_size=6),
    marks=st.lists(st.tuples(st.booleans(), st.booleans(), st.booleans()), min_size=7),
)
def test_invariant_8_joined_chunks_equal_a_whole_rebuild(
    start: list[str], steps: list[tuple[object, ...]], marks: list[tuple[bool, bool, bool]]
) -> None:
    """Invariant 8: every request of a growing, changing commit equals the one gathered item by item.

    Across chunk ends: turns merged over them, re-sorted tool results, the CONTINUED first
    turn, a repeated call id, and the cache marks on this request's last blocks only.
    """
    commit = ContextCommit("s").append_items([item(n, kind) for n, kind in enumerate(start)])
    for number, step in enumerate([("add", []), *steps]):
        if number:
            commit = _apply(commit, step, number)
        rendered = render_commit(commit)
        system, newest, prefix = marks[number]
        end = len(rendered) - 1 if prefix and rendered else None
        kwargs = {"cache_system": system, "cache_newest": newest, "cache_prefix_end": end}
        whole = RenderedMessages(rendered, items=rendered.items)  # no chunks: item by item
        joined = to_anthropic(rendered, **kwargs)  # type: ignore[arg-type]
        assert joined == to_anthropic(whole, **kwargs)  # type: ignore[arg-type]
        assert joined == to_anthropic(tuple(rendered), **kwargs)  # type: ignore[arg-type]
        assert to_anthropic(rendered) == to_anthropic(whole)  # no mark kept from a request


def test_a_turn_merged_across_a_chunk_end_is_sent_once() -> None:
    """Two user messages either side of a chunk end are one turn; the next request keeps it so."""
    items = [item(n, "user" if n % 2 else "assistant") for n in range(CHUNK)]
    items += [item(CHUNK, "user"), item(CHUNK + 1, "tool")]
    commit = ContextCommit("s").append_items(items)
    rendered = render_commit(commit)
    assert [len(part) for part, _, _ in rendered.spans] == [CHUNK, 2]
    for _ in range(2):  # gathered, then from the kept chunk
        turns = to_anthropic(rendered, cache_newest=True).messages
        texts = [b.get("text") for b in turns[-3]["content"]]  # type: ignore[attr-defined]
        assert texts == [f"user {CHUNK - 1}.0", f"user {CHUNK}.0"]
        assert turns[-1]["content"][-1]["cache_control"] == {"type": "ephemeral"}  # type: ignore[index]
        whole = RenderedMessages(rendered, items=rendered.items)
        assert turns == to_anthropic(whole, cache_newest=True).messages
        rendered = render_commit(commit.append_items([]))
