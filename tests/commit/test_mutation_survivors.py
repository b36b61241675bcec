"""Exact behaviour of ``commit/`` that a mutation run found untested.

Reading a commit back from JSON (invariant 2: equal content, equal id), the spans of
summarized items that rendering steps over, hashing and pickling commits, and the small
helpers of the item vector.
"""

from __future__ import annotations

import pickle

import attrs
import pytest
from pyrsistent import pmap

from ctxrules.commit import ContextCommit, ContextItem, State
from ctxrules.commit.attach import OPEN, expand_pointer, failed_id
from ctxrules.commit.layout import visible_ranges, with_position
from ctxrules.commit.marks import as_marks
from ctxrules.commit.serialize import MalformedCommit, commit_from_json, commit_to_json
from ctxrules.commit.vector import ItemVector
from ctxrules.dag import Call, Role, Session
from ctxrules.generation import ensure_latest_commit
from ctxrules.render.item import SUMMARY_PREFIX
from ctxrules.rules import Facts, Pipeline
from ctxrules.tokens import HeuristicCounter


def _commit() -> ContextCommit:
    items = [ContextItem(f"n{i}", "user", rendered=f"m{i}", tokens=2) for i in range(3)]
    return ContextCommit("s", summary="so far").append_items(items).with_mark("rule", 2)


def test_a_commit_with_a_summary_reads_back_equal() -> None:
    """Invariant 2: every field comes back from JSON, so the id still matches the content."""
    commit = _commit()
    back = commit_from_json(commit_to_json(commit)).unwrap()
    assert back == commit
    assert back.id == commit.id
    assert back.summary == "so far"


def test_a_commit_without_marks_or_attachments_reads_back() -> None:
    """``marks`` and ``attached`` may be absent from the JSON: they read as empty."""
    data = commit_to_json(ContextCommit("s").append_items([ContextItem("n", "user", tokens=1)]))
    del data["marks"], data["attached"], data["id"]
    back = commit_from_json(data).unwrap()
    assert dict(back.marks) == {}
    assert set(back.attached) == set()


def test_what_is_wrong_with_a_malformed_commit_is_said() -> None:
    """Not an object, a missing field and a bad item field each give their own reason."""
    assert commit_from_json([]).failure() == MalformedCommit("expected an object, found list")
    missing = commit_to_json(_commit())
    del missing["summary"]
    assert commit_from_json(missing).failure() == MalformedCommit("missing field 'summary'")
    bad = commit_to_json(_commit())
    bad["items"] = [{"colour": "red"}]
    reason = commit_from_json(bad).failure()
    assert isinstance(reason, MalformedCommit)
    assert "colour" in reason.reason


def test_a_missing_node_has_no_index() -> None:
    """``index_of`` gives the first position of a node, or None when no item is for it."""
    commit = _commit()
    assert commit.index_of("n1") == 1
    assert commit.index_of("nowhere") is None


def test_a_position_already_in_its_state_leaves_the_spans() -> None:
    """Hiding a hidden position, or showing a visible one, changes no span."""
    assert with_position(((2, 5),), 3, hidden=True) == ((2, 5),)
    assert with_position(((2, 5),), 7, hidden=False) == ((2, 5),)


def test_showing_a_position_splits_its_span_just_around_it() -> None:
    """Showing position 3 of (2, 6) leaves (2, 3) and (4, 6)."""
    assert with_position(((2, 6),), 3, hidden=False) == ((2, 3), (4, 6))


def test_hiding_a_gap_of_one_joins_the_spans_on_both_sides() -> None:
    """Hiding the one position between two spans makes one span; the spans after it stay."""
    assert with_position(((0, 2), (3, 4), (6, 7)), 2, hidden=True) == ((0, 4), (6, 7))


def test_commits_and_their_parts_hash_and_pickle() -> None:
    """A commit, its items and its marks hash by value and survive a pickle equal."""
    commit = _commit()
    assert hash(commit) == hash(commit_from_json(commit_to_json(commit)).unwrap())
    assert hash(commit.items) == hash(ItemVector.of(list(commit.items)))
    assert hash(as_marks(pmap({"a": 1, "b": 2}))) == hash(as_marks(pmap({"b": 2, "a": 1})))
    back = pickle.loads(pickle.dumps(commit))  # noqa: S301 - our own pickle
    assert back == commit
    assert back.id == commit.id
    assert pickle.loads(pickle.dumps(commit.items)) == commit.items  # noqa: S301


def test_extending_a_vector_appends_in_order() -> None:
    """``extend`` gives the vector with the new items at its end, in their order."""
    a, b, c = (ContextItem(n, "user") for n in "abc")
    assert list(ItemVector.of([a]).extend([b, c])) == [a, b, c]
    assert ItemVector.of([a]).extend([]) == ItemVector.of([a])


def test_summarized_positions_are_kept_as_spans_as_items_change() -> None:
    """Replacing items with summarized ones updates the spans to what a fresh count gives."""
    commit = _commit()
    folded = commit.replace_items(
        {i: ContextItem(f"n{i}", "user", state=State.SUMMARIZED, tokens=0) for i in (0, 1)}
    )
    assert folded.hidden == ((0, 2),)


def test_marks_equal_only_marks_with_the_same_positions() -> None:
    """Marks equal a mapping with the same keys and positions, and nothing else."""
    marks = as_marks(pmap({"a": 1}))
    assert marks == {"a": 1}
    assert marks != {"a": 2}
    assert marks != {"b": 1}


def test_a_vector_equals_a_sequence_of_equal_items_only() -> None:
    """A vector equals another vector or a list of equal items in order; not one of other items."""
    a, b = ContextItem("a", "user"), ContextItem("b", "user")
    vector = ItemVector.of([a, b])
    assert vector == ItemVector.of([ContextItem("a", "user"), ContextItem("b", "user")])
    assert vector != ItemVector.of([a, a])
    assert vector == [ContextItem("a", "user"), ContextItem("b", "user")]
    assert vector != [a, a]
    assert vector != [a]
    assert vector != 5
    assert repr(ItemVector.of([a])) == f"ItemVector([{a!r}])"


def test_a_chunk_pickles_to_its_items() -> None:
    """A chunk of a vector survives a pickle equal (its memo is not carried)."""
    vector = ItemVector.of([ContextItem(f"n{i}", "user") for i in range(5)])
    for chunk, _, _ in vector.runs(0, len(vector)):
        assert pickle.loads(pickle.dumps(chunk)) == chunk  # noqa: S301 - our own pickle


def test_an_attached_copy_starts_full_at_the_pointer_and_names_its_source() -> None:
    """Invariants 6 and 12: copies are full, of the pointer's turn and time, and a summary becomes text."""
    source_session = Session("s_src").send("user", "question").unwrap()
    source_session = source_session.send("assistant", "looking").unwrap()
    source_session = source_session.record_call(
        source_session.head, "grep", {"q": 1}, "found", metadata={"tool_call_id": "call_1"}
    ).unwrap()
    source_session = source_session.send("assistant", "answer").unwrap()
    built, _ = ensure_latest_commit(
        pmap(), source_session.graph, source_session.head, Pipeline(), Facts()
    ).unwrap()
    user, _, tool, answer = built.items
    source = built.replace_items(
        {
            0: attrs.evolve(user, state=State.SUMMARY, rendered="so far"),
            2: attrs.evolve(tool, state=State.AGED, reason="tail_window", merged_into="m"),
            3: attrs.evolve(answer, reason=OPEN),
        }
    )
    target = Session("s_dst").attach(source).unwrap()
    pointer = attrs.evolve(target.graph.require(target.head).unwrap(), created_at=42.0)
    items, _ = expand_pointer(
        pointer, ContextCommit("s_dst"), {source.id: source}, turn=7, tokenizer=HeuristicCounter()
    )
    summary, _, call, kept = items[1:-1]
    assert (summary.role, summary.state, summary.rendered) == (
        Role.ASSISTANT, State.FULL, SUMMARY_PREFIX + "so far"
    )  # fmt: skip
    assert (call.state, call.rendered, call.merged_into) == (State.FULL, tool.rendered, None)
    assert call.tool_call_id == f"{source.id[2:12]}_call_1"
    assert summary.tool_call_id is None
    assert call.reason == f"attached_from:{source.id}"
    assert kept.reason == OPEN
    assert (kept.role, kept.rendered) == (answer.role, answer.rendered)
    assert {(i.turn, i.changed_at) for i in items} == {(7, 42.0)}


def _pointer(source: ContextCommit, **metadata: object) -> Call:
    """The attach pointer a session writes for ``source``, at time 42, with ``metadata`` set."""
    target = Session("s_dst").attach(source).unwrap()
    pointer = target.graph.require(target.head).unwrap()
    fields = {**pointer.metadata_value(), **metadata}
    return attrs.evolve(
        pointer, created_at=42.0, metadata={k: v for k, v in fields.items() if v is not None}
    )


def test_an_unloadable_source_is_one_unlocked_item_at_the_pointer() -> None:
    """Invariant 6: a failed attach is one item with the failed id, at the pointer's turn and time."""
    source = ContextCommit("s_src").append_items([ContextItem("n1", "user", tokens=1)])
    ruler = HeuristicCounter()
    items, _ = expand_pointer(
        _pointer(source, base=True), ContextCommit("s_dst"), {}, turn=7, tokenizer=ruler
    )
    (failed,) = items
    assert failed.source_node_id == failed_id("s_src", source.id)
    assert failed.locked is False
    assert (failed.turn, failed.created_at, failed.changed_at) == (7, 42.0, 42.0)
    (nameless,) = expand_pointer(
        _pointer(source, session=None), ContextCommit("s_dst"), {}, turn=7, tokenizer=ruler
    )[0]
    assert nameless.source_node_id == failed_id("", source.id)


def test_a_source_of_the_same_rules_and_its_nested_copies_are_attached_plainly() -> None:
    """A source built by the same rules gets no note, and its copies of other sources come along."""
    source = ContextCommit("s_src").append_items(
        [
            ContextItem("n1", "user", rendered="hi", tokens=1),
            ContextItem("n2", "user", rendered="nested", attached_from="c_other", tokens=1),
        ]
    )
    items, _ = expand_pointer(
        _pointer(source),
        ContextCommit("s_dst"),
        {source.id: source},
        turn=7,
        tokenizer=HeuristicCounter(),
    )
    assert [i.source_node_id for i in items[1:-1]] == ["n1", "n2"]
    assert items[2].attached_from == "c_other"
    assert items[0].rendered == (
        f"[attached context from session s_src, commit {source.id}: begin]"
    )


def test_a_source_of_other_rules_names_them_in_its_opening() -> None:
    """The opening marker names the first 12 characters of the source's rules, or ``unknown``."""
    ruler = HeuristicCounter()
    for version, shown, ours in (("abcdef0123456789", "abcdef012345", ""), ("", "unknown", "v2")):
        source = ContextCommit("s_src", rules_version=version).append_items(
            [ContextItem("n1", "user", rendered="hi", tokens=1)]
        )
        items, _ = expand_pointer(
            _pointer(source), ContextCommit("s_dst"), {source.id: source},
            turn=7, tokenizer=ruler, rules_version=ours,
        )  # fmt: skip
        assert items[0].rendered == (
            f"[attached context from session s_src, commit {source.id}, "
            f"built by rules {shown}: begin]"
        )


def test_a_new_item_list_drops_the_marks_and_the_replaced_positions() -> None:
    """After ``with_items`` every rule rescans once, and which positions were replaced is unknown."""
    commit = _commit().begin_generation()
    assert commit.replaced == ()
    renewed = commit.with_items(list(commit.items))
    assert dict(renewed.marks) == {}
    assert renewed.replaced is None


def test_the_next_turn_follows_an_assistant_or_tool_item() -> None:
    """After an assistant reply or a tool result the next item starts a new turn; after a user message not."""

    def last(role: str) -> ContextCommit:
        return ContextCommit("s").append_items([ContextItem("n", role, turn=3)])

    assert (last("assistant").next_turn(), last("tool").next_turn()) == (4, 4)
    assert last("user").next_turn() == 3
    assert ContextCommit("s").next_turn() == 0


def test_visible_ranges_step_over_each_span_once() -> None:
    """Spans before ``start`` are skipped, not the end; a span at the cursor yields no empty range."""
    assert list(visible_ranges(((0, 1), (3, 4)), 6, start=2)) == [range(2, 3), range(4, 6)]
    assert list(visible_ranges(((0, 2),), 4)) == [range(2, 4)]


def test_runs_cover_exactly_the_positions_asked_for() -> None:
    """A run from 70 to 140 of 150 items uses chunks 1 and 2 only; an empty run uses none."""
    vector = ItemVector.of([ContextItem(f"n{i}", "user") for i in range(150)])
    assert [(len(c), lo, hi) for c, lo, hi in vector.runs(70, 140)] == [(64, 6, 64), (22, 0, 12)]
    assert list(vector.runs(10, 10)) == []


def test_a_span_ending_at_the_end_leaves_no_empty_range() -> None:
    """When the last span reaches the end, nothing visible is left after it."""
    assert list(visible_ranges(((2, 4),), 4)) == [range(2)]


def test_set_many_counts_negative_positions_from_the_end() -> None:
    """Position -1 is the last item, as for a list; a position past the end is an error."""
    a, b, c = (ContextItem(n, "user") for n in "abc")
    assert list(ItemVector.of([a, b]).set_many({-1: c})) == [a, c]
    with pytest.raises(IndexError, match=r"^ItemVector index out of range$"):
        ItemVector.of([a, b]).set_many({2: c})


def test_summary_at_stays_on_the_first_summary() -> None:
    """Invariant 12: a commit's ``summary_at`` is its first summary, whatever is added or replaced later."""
    summary = ContextItem("sm", "assistant", state=State.SUMMARY, rendered="so far", tokens=2)
    commit = ContextCommit("s").append_items([summary, *_commit().items])
    assert commit.summary_at == 0
    later = ContextItem("sm2", "assistant", state=State.SUMMARY, rendered="later", tokens=2)
    assert commit.append_items([later]).summary_at == 0
    assert commit.replace_items({2: later}).summary_at == 0


def test_only_a_summary_may_become_a_summary_and_then_only_summarized() -> None:
    """Invariant 3: no state moves to or from ``summary`` except a summary folded into another."""
    assert not State.FULL.may_become(State.SUMMARY)
    assert not State.SUMMARY.may_become(State.CLEARED)
    assert State.SUMMARY.may_become(State.SUMMARIZED)
    assert State.SUMMARY.may_become(State.SUMMARY)
    assert State.FULL.may_become(State.CLEARED)


def test_a_vector_slices_and_indexes_like_a_tuple() -> None:
    """Slices with any step give what the tuple gives; a position past the end is our own error."""
    items = [ContextItem(f"n{i}", "user") for i in range(70)]
    vector = ItemVector.of(items)
    for part in (slice(None, None, 2), slice(1, 3), slice(None, None, -1), slice(60, 68)):
        assert vector[part] == tuple(items)[part]
    assert vector[-1] is items[-1]
    with pytest.raises(IndexError, match=r"^ItemVector index out of range$"):
        ItemVector.of(items[:2])[2]


def test_a_new_vector_is_empty_and_grows() -> None:
    """``ItemVector()`` has no items, and items appended to it are its items."""
    a = ContextItem("a", "user")
    assert len(ItemVector()) == 0
    assert list(ItemVector()) == []
    assert list(ItemVector().append(a)) == [a]


def test_a_slice_inside_a_later_chunk_reads_from_that_chunk() -> None:
    """A slice of positions 130 to 135 gives those items, not the ones at 2 to 7."""
    items = [ContextItem(f"n{i}", "user") for i in range(150)]
    assert ItemVector.of(items)[130:135] == tuple(items[130:135])


def test_a_commit_without_a_summary_says_minus_one() -> None:
    """``summary_at`` is -1 when no item is a summary, however the commit was made."""
    plain = _commit()
    assert plain.summary_at == -1
    assert plain.with_items(list(plain.items)).summary_at == -1
