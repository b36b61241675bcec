"""`ItemVector.first_difference`: the first changed position, without reading shared chunks.

What the batching's rewrite weighing reads (`rules.batching.rewritten`): on a resumed
session every chunk not touched since the restart is a placeholder the store would read.
"""

from __future__ import annotations

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st

import ctxrules.commit.vector as vector_module
from ctxrules.commit import ContextCommit, ContextItem
from ctxrules.commit.vector import CHUNK, Chunk, ItemVector, LazyChunk
from ctxrules.rules.batching import rewritten


def item(n: int, tokens: int = 5) -> ContextItem:
    """A tool item numbered ``n``."""
    return ContextItem(f"n{n}", "tool", rendered=f"r{n}", tokens=tokens)


def old_first(a: ItemVector, b: ItemVector) -> int | None:
    """The position as `rewritten` found it before: every item compared in turn."""
    found = next(
        (at for at, (x, y) in enumerate(zip(a, b, strict=False)) if x is not y and x != y),
        None,
    )
    if found is None and len(a) != len(b):
        return min(len(a), len(b))
    return found


@given(
    st.integers(0, 300),
    st.dictionaries(st.integers(0, 299), st.integers(1, 9), max_size=4),
    st.integers(-3, 3),
)
def test_the_same_position_as_comparing_every_item(
    size: int, changes: dict[int, int], grow: int
) -> None:
    """Changed, grown or cut: the position found item by item before, whatever the chunks."""
    before = ItemVector.of([item(n) for n in range(size)])
    after = before.set_many({at: item(at, tokens) for at, tokens in changes.items() if at < size})
    if grow > 0:
        after = after.extend(item(size + n) for n in range(grow))
    elif grow < 0:
        after = ItemVector.of(list(after)[: max(0, size + grow)])
    assert before.first_difference(after) == old_first(before, after)


def test_shared_placeholders_are_not_read() -> None:
    """Weighing a landing at a resumed session's batch point reads only the changed chunk."""
    # Ten chunks a store has not read, shared by both versions; only the last chunk changes.
    reads: list[int] = []

    def placeholder(number: int) -> LazyChunk:
        def load() -> Chunk:
            reads.append(number)
            return Chunk(item(number * CHUNK + n) for n in range(CHUNK))

        return LazyChunk(f"k{number}", CHUNK, load)

    whole = ContextCommit("s").with_items(item(n) for n in range(641))
    # As a store gives it back: the header's digest, tokens and spans, the chunks unread.
    stored = ItemVector.from_chunks([*(placeholder(n) for n in range(10)), Chunk([item(640)])])
    held = attrs.evolve(whole, items=stored)
    landed = held.replace_items({640: item(640, tokens=2)})
    assert rewritten(held, landed) == 2
    assert reads == []


def test_an_extension_is_compared_in_a_few_nodes_at_any_length(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """At 100k items an extension is found after one node per level, not 1,563 chunks."""
    visited: list[int] = []
    walk = vector_module._differing

    def counted(mine: object, theirs: object, level: int, first: int) -> int | None:
        visited.append(level)
        return walk(mine, theirs, level, first)  # type: ignore[arg-type]

    monkeypatch.setattr(vector_module, "_differing", counted)
    for size in (1_000, 100_000):
        visited.clear()
        before = ItemVector.of([item(n) for n in range(size)])
        after = before.extend(item(size + n) for n in range(5))
        assert before.first_difference(after) == size
        depth = 1 if size <= CHUNK * 32 else 3
        assert visited == list(range(depth, 0, -1))
        visited.clear()
        changed = after.set(size // 3, item(-1))
        assert after.first_difference(changed) == size // 3
        assert len(visited) == depth
