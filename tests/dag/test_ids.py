"""`IdVector`, the graph's order: the same reads as a list, whatever the appends and chunks."""

from __future__ import annotations

import pickle

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctxrules.dag.ids import CHUNK, IdVector

IDS = st.lists(st.text(max_size=3), max_size=3 * CHUNK + 5)


@given(IDS, st.integers(-250, 250), st.integers(-250, 250))
def test_reads_equal_a_list(ids: list[str], start: int, stop: int) -> None:
    """Appended one by one or built at once, every read equals the list's: index, slice, order."""
    appended = IdVector()
    for node_id in ids:
        appended = appended.append(node_id)
    built = IdVector.of(ids)
    for vector in (appended, built):
        assert len(vector) == len(ids)
        assert list(vector) == ids
        assert list(reversed(vector)) == ids[::-1]
        assert list(vector[start:stop]) == ids[start:stop]
        assert list(vector[::2]) == ids[::2]
        assert [vector[i] for i in range(-len(ids), len(ids))] == ids + ids
        assert all(node_id in vector for node_id in ids)
    assert appended == built == ids
    assert hash(appended) == hash(built)
    assert pickle.loads(pickle.dumps(appended)) == appended  # noqa: S301 - our own bytes


@given(IDS)
def test_an_append_leaves_the_old_version_as_it_was(ids: list[str]) -> None:
    """Persistence: a new version shares chunks and never changes the one it came from."""
    vector = IdVector.of(ids)
    grown = vector.append("new")
    assert list(vector) == ids
    assert list(grown) == [*ids, "new"]
    assert vector != grown


def test_out_of_range_raises_index_error() -> None:
    """An index past either end raises IndexError, as a list does."""
    vector = IdVector.of(["a", "b"])
    for index in (2, -3):
        with pytest.raises(IndexError):
            vector[index]
