"""The item-by-item laws read only the items a rule did not return as the very objects it was given.

Counted by chunks read: the input's chunks are placeholders that count their reads
(`LazyChunk`, as a store hands them out), so a law that walked an unchanged chunk would
read it. Invariants 3, 4, 11, 13 and 16 (`ctxrules.check.laws.RULE_LAWS`).
"""

from __future__ import annotations

import attrs
import pytest

from ctxrules.check.differing import differing_pairs
from ctxrules.check.identity import identity_kept, pairing_kept
from ctxrules.check.invariants import items_kept, locked_untouched, monotone_tightening
from ctxrules.check.tightened import changed_pairs, handles_named
from ctxrules.commit import ContextCommit, ContextItem, State
from ctxrules.commit.vector import CHUNK, Chunk, ItemVector, LazyChunk

SIZE = 20 * CHUNK + 7


def _item(position: int) -> ContextItem:
    return ContextItem(
        f"n{position}",
        "tool",
        rendered=f"output {position}",
        tokens=10,
        tool_name="cat",
        tool_call_id=f"call_{position}",
        locked=position % 5 == 0,
        turn=position,
    )


def _lazy_input(reads: list[int]) -> ContextCommit:
    """A commit of `SIZE` items whose chunks count each read in ``reads``."""
    items = [_item(p) for p in range(SIZE)]
    chunks = []
    for number, start in enumerate(range(0, SIZE, CHUNK)):
        part = Chunk(items[start : start + CHUNK])

        def load(part: Chunk = part, number: int = number) -> Chunk:
            reads.append(number)
            return part

        chunks.append(LazyChunk(f"k{number}", len(part), load))
    return ContextCommit(
        "s", items=ItemVector.from_chunks(chunks), digest=0, hidden=(), summary_at=-1
    )


ITEM_LAWS = (
    items_kept,
    monotone_tightening,
    locked_untouched,
    pairing_kept,
    identity_kept,
    handles_named,
)


@pytest.mark.parametrize("position", [0, 130, SIZE - 1])
def test_item_laws_read_only_the_chunk_a_rule_changed(position: int) -> None:
    """One item changed of 1,287: the laws read its chunk, never the 20 others."""
    reads: list[int] = []
    before = _lazy_input(reads)
    old = before.items[position]
    after = before.replace_items({position: attrs.evolve(old, state=State.FULL, tokens=99)})
    assert reads == [position // CHUNK]
    for law in ITEM_LAWS:
        law(before, after)
    assert reads == [position // CHUNK]
    assert [p for p, _, _ in differing_pairs(before, after)] == [position]
    assert [p for p, _, _ in changed_pairs(before, after)] == [position]


@pytest.mark.parametrize("position", [0, CHUNK - 1, CHUNK, 130, SIZE - 1])
def test_item_laws_still_find_a_change_in_any_chunk(position: int) -> None:
    """Invariants 3, 4, 11 and 13: a change anywhere is reported, at its position."""
    before = ContextCommit("s").append_items(_item(p) for p in range(SIZE))
    old = before.items[position]
    grown = attrs.evolve(old, tokens=99, turn=old.turn + 1, tool_call_id="other", locked=False)
    after = before.replace_items({position: grown})
    node = (old.source_node_id,)
    assert [v.invariant for v in monotone_tightening(before, after)] == [3]
    assert [v.ids for v in pairing_kept(before, after)] == [node]
    assert [(v.invariant, v.ids) for v in identity_kept(before, after)] == [(13, node)] + (
        [(4, node)] if old.locked else []
    )
    assert [v.ids for v in locked_untouched(before, after)] == ([node] if old.locked else [])
    # The same items in another order: every position differs, the reorder is reported.
    swapped = before.with_items(
        [
            *before.items[:position],
            *reversed(before.items[position : position + 2]),
            *before.items[position + 2 :],
        ]
    )
    assert [v.invariant for v in items_kept(before, swapped)] == (
        [13] if position < SIZE - 1 else []
    )


def test_no_pairs_between_commits_of_other_lengths() -> None:
    """A dropped item is reported once, by `items_kept`, never item by item."""
    before = ContextCommit("s").append_items(_item(p) for p in range(3))
    after = before.with_items(list(before.items)[:2])
    assert list(differing_pairs(before, after)) == []
    assert [v.invariant for v in items_kept(before, after)] == [13]
