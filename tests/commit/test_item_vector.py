"""`ItemVector` against a plain list: appends, replacements, slices, chunks and equality."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from ctxrules.commit.vector import CHUNK, ItemVector

#: An append (None) or a replacement (position, as a share of the length, and value).
OPERATIONS = st.lists(
    st.one_of(st.none(), st.tuples(st.floats(0, 0.999), st.integers())), max_size=300
)


def step_both(
    vector: ItemVector, model: list[int], step: int, operation: tuple[float, int] | None
) -> ItemVector:
    """Apply one operation to ``model`` (in place) and to ``vector``; the new vector."""
    if operation is None or not model:
        model.append(-step)
        return vector.append(-step)  # type: ignore[arg-type]
    at = int(operation[0] * len(model))
    model[at] = operation[1]
    return vector.set(at, operation[1])  # type: ignore[arg-type]


@given(st.integers(0, 3 * CHUNK), OPERATIONS)
def test_invariant_2_an_item_vector_behaves_as_a_list_and_old_versions_stay(
    start: int, operations: list[tuple[float, int] | None]
) -> None:
    """Invariant 2: every version equals the list it models, and earlier versions never change."""
    model = list(range(start))
    vector = ItemVector.of(model)  # type: ignore[arg-type]
    versions = [(vector, list(model))]
    for step, operation in enumerate(operations):
        vector = step_both(vector, model, step, operation)
        versions.append((vector, list(model)))
    for version, expected in versions:
        assert list(version) == expected
        assert len(version) == len(expected)
        assert [version[i] for i in range(-len(expected), len(expected))] == expected * 2
        assert list(version[3 : len(expected) - 2]) == expected[3 : len(expected) - 2]
        chunks = version.chunks()
        assert [x for chunk in chunks for x in chunk] == expected
        assert all(len(chunk) == CHUNK for chunk in chunks[:-1])
        assert ItemVector.from_chunks(chunks) == version
        assert version == ItemVector.of(expected)  # type: ignore[arg-type]
        assert hash(ItemVector.from_chunks(chunks)) == hash(version)
        spans = [(len(c), lo, hi) for c, lo, hi in version.runs(1, len(expected))]
        assert sum(hi - lo for _, lo, hi in spans) == max(len(expected) - 1, 0)


@given(
    st.sampled_from([31 * CHUNK, 32 * CHUNK, 33 * CHUNK - 1, 1024 * CHUNK - 2, 1024 * CHUNK + 5]),
    st.lists(st.one_of(st.none(), st.tuples(st.floats(0, 0.999), st.integers())), max_size=40),
)
def test_invariant_2_past_one_level_of_the_trie(
    start: int, operations: list[tuple[float, int] | None]
) -> None:
    """Invariant 2 where the trie over chunks grows a level (32 and 1,024 chunks)."""
    model = list(range(start))
    vector = ItemVector.of(model)  # type: ignore[arg-type]
    first = vector
    for step, operation in enumerate(operations):
        vector = step_both(vector, model, step, operation)
    assert list(vector) == model
    assert list(first) == list(range(start))
    assert [vector[i] for i in (0, -1, start // 2, len(model) - CHUNK)] == [
        model[0],
        model[-1],
        model[start // 2],
        model[len(model) - CHUNK],
    ]
    chunks = vector.chunks()
    assert [x for chunk in chunks for x in chunk] == model
    assert ItemVector.from_chunks(chunks) == vector == ItemVector.of(model)  # type: ignore[arg-type]
    changed = [at for at, (a, b) in enumerate(zip(first, model, strict=False)) if a != b]
    expected = changed[0] if changed else (None if len(model) == start else start)
    assert first.first_difference(vector) == expected
    assert list(vector.positioned([range(start - 3, len(model))])) == [
        (at, model[at]) for at in range(start - 3, len(model))
    ]
