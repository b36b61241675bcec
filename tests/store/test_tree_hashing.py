"""A request hashes only the tree nodes it changed, whatever the session's length.

Counted, not timed: the tree nodes `put_objects` hashes (`text_digest` calls and their
bytes) and the leaves it visits when a vector grows by one item. The leaves remember their
digests in their chunks; the store's `KnownObjects` remembers the groups of 64 leaves and
the nodes above them, so the path to the new item is hashed (its leaf, one node a level)
only the leaves that changed are visited (a chunk still in its place in its group takes its
digest from the last tree) — at 100k messages a request visited 1,563 leaves and hashed 25
nodes of 64 digests.
"""

from __future__ import annotations

from typing import Any

import pytest

from ctxrules.commit import ContextItem
from ctxrules.commit.vector import CHUNK, ItemVector
from ctxrules.store import objects
from ctxrules.store.objects import KnownObjects, put_objects, tree_of


class NoRows:
    """`Rows` that keeps nothing: only what is hashed is counted here."""

    def many(self, _sql: str, rows: Any) -> None:
        list(rows)


def _vector(count: int) -> ItemVector:
    return ItemVector.of(
        [ContextItem(f"n{k}", "user", rendered=f"m{k}", tokens=1) for k in range(count)]
    )


def _hashed(monkeypatch: pytest.MonkeyPatch, leaves: int, known: KnownObjects) -> tuple[int, int]:
    """Nodes and bytes hashed storing a vector of ``leaves`` chunks, then one item more."""
    vector = _vector(leaves * CHUNK)
    put_objects(NoRows(), vector, known)  # type: ignore[arg-type]
    grown = vector.append(ContextItem("new", "user", rendered="new", tokens=1))
    calls: list[int] = []
    visits: list[object] = []
    real, leaf = objects.text_digest, objects._leaf

    def counted(text: str) -> str:
        calls.append(len(text))
        return real(text)

    def visited(chunk: Any) -> Any:
        visits.append(chunk)
        return leaf(chunk)

    with monkeypatch.context() as patched:
        patched.setattr(objects, "text_digest", counted)
        patched.setattr(objects, "_leaf", visited)
        root, _ = put_objects(NoRows(), grown, known)  # type: ignore[arg-type]
    assert root == tree_of(grown)[0]  # the same tree as hashed from nothing
    return len(calls), sum(calls), len(visits)


def test_a_grown_vector_hashes_its_path_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """Its new leaf, one node above it, the root: at 70 chunks as at 200."""
    small = _hashed(monkeypatch, 70, KnownObjects())
    large = _hashed(monkeypatch, 200, KnownObjects())
    assert small[0] == large[0] == 3
    # Only the new chunk's leaf: the chunks of its group still in their places take their
    # digests from the last tree (before, every leaf of the group was visited: 7 and 9).
    assert small[2] == large[2] == 1
    # Three nodes of at most 64 digests each, however many chunks the vector holds.
    widest = len(objects.node_text(1, ["0" * 64] * CHUNK))
    assert small[1] <= large[1] <= 3 * widest


def test_without_the_store_hint_every_node_above_is_hashed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The contrast: a plain set of digests (no remembered nodes) hashes the whole level above."""
    nodes, _, visits = _hashed(monkeypatch, 200, set())  # type: ignore[arg-type]
    assert nodes == 1 + 4 + 1  # the new leaf, every node of level 1, the root
    assert visits == 201


class CountedKnown(KnownObjects):
    """The store's hint, counting the digests asked for."""

    asked = 0

    def __contains__(self, digest: object) -> bool:
        CountedKnown.asked += 1
        return super().__contains__(digest)


def test_an_unchanged_group_known_stored_is_not_asked_for_again() -> None:
    """Growing a 200-chunk vector twice: the second write asks for its new path, not every leaf.

    Before, each write asked the hint for each leaf of each unchanged group: 200 a request
    at 200 chunks, 1,563 at 100k messages.
    """
    known = CountedKnown()
    vector = _vector(200 * CHUNK)
    for step in range(3):
        _, written = put_objects(NoRows(), vector, known)  # type: ignore[arg-type]
        known.update(written.digests)  # as the store does once the write has committed
        if step == 1:
            CountedKnown.asked = 0
        vector = vector.append(ContextItem(f"new{step}", "user", rendered="new", tokens=1))
    # The last write: its changed group's leaves and items, and the nodes above.
    # The last write: its changed group's chunks, their new items, the nodes above (16 here;
    # the old code also asked for the 192 leaves of the three unchanged groups).
    assert 0 < CountedKnown.asked < CHUNK
