"""Invariant 16 (`ctxrules.check.recoverable`) on hand-made commits: each violation, exactly, and when not."""

from __future__ import annotations

import attrs

from ctxrules.check.recoverable import recoverable
from ctxrules.check.violations import Violation
from ctxrules.commit import ContextCommit, ContextItem
from ctxrules.dag import Call, Graph
from ctxrules.recall.lookup import node_index
from ctxrules.rules.handles import fold_handle, handle_for, item_handle, recall_note

#: Two node ids whose handles are equal (found by a birthday search over ``n0``, ``n1``, …).
TWINS = ("n175561", "n804706")


def _graph(*calls: Call) -> Graph:
    graph = Graph()
    for call in calls:
        graph = graph.append(call).unwrap()
    return graph


def _commit(*items: ContextItem) -> ContextCommit:
    return ContextCommit("s").with_items(items)


def _violation(item: str, handle: str, expected: str, found: str) -> Violation:
    return Violation(16, (item, handle), expected, found)


CAT = _graph(Call("t", "tool", name="cat", input={"path": "a"}, output="file body"))
H_T = handle_for("t")
#: The cat result aged, with its recall note.
AGED_T = _commit(ContextItem("t", "tool", state="aged", rendered=f"[aged] {recall_note(H_T)}"))


def test_a_handle_nothing_resolves_names_the_item_and_its_handle() -> None:
    """A tightened item whose node is unknown has no original: reported once, with its id and handle."""
    ghost = _commit(ContextItem("ghost", "tool", state="aged", rendered="[aged]"))
    assert recoverable(ghost, Graph()) == [
        _violation(
            "ghost", handle_for("ghost"), "a handle that resolves to the original", "no original"
        )
    ]


def test_a_shown_handle_that_resolves_to_nothing_is_unknown() -> None:
    """Every handle a tightened item or a summary shows must resolve; one that does not is named."""
    summary = ContextItem("s1", "assistant", state="summary", rendered="see h:aaaaaaaa")
    assert recoverable(_commit(summary), Graph()) == [
        _violation("s1", "h:aaaaaaaa", "every shown handle resolves", "unknown")
    ]
    # A full item is not asked to: it shows its original whole.
    full = ContextItem("u", "user", rendered="see h:aaaaaaaa")
    assert recoverable(_commit(full), _graph(Call("u", "user", output="see h:aaaaaaaa"))) == []


def test_an_offloaded_text_that_differs_is_reported_from_the_blob_store() -> None:
    """An ``offloaded`` text other than the DAG's breaks invariant 16, and the blob store is named."""
    expected = [_violation("t", H_T, "the original byte for byte", "other text in the blob store")]
    blobs = {H_T: "tampered"}
    assert recoverable(AGED_T, CAT) == []
    assert recoverable(AGED_T, CAT, blobs) == expected
    assert recoverable(AGED_T, CAT, offloaded=blobs) == expected
    assert recoverable(AGED_T, CAT, {H_T: "file body"}) == []


def test_a_given_node_index_is_used_as_it_is() -> None:
    """``nodes`` is not rebuilt: the blob texts it was built with are the ones checked."""
    tampered = node_index(CAT, {H_T: "tampered"})
    assert recoverable(AGED_T, CAT, nodes=tampered) == [
        _violation("t", H_T, "the original byte for byte", "other text in the blob store")
    ]
    assert recoverable(AGED_T, CAT, nodes=node_index(CAT)) == []


def test_an_index_text_that_differs_is_reported_from_the_index() -> None:
    """An index whose (not offloaded) text is not the DAG's is reported as other text in the index."""
    other = _graph(Call("t", "tool", name="cat", input={"path": "a"}, output="other body"))
    assert recoverable(AGED_T, CAT, nodes=node_index(other)) == [
        _violation("t", H_T, "the original byte for byte", "other text in the index")
    ]


def test_an_item_that_hides_its_handle_shows_the_head_of_its_text() -> None:
    """A cleared item without its handle is reported with the first 80 characters of its text."""
    text = "[cleared] " + "y" * 90
    hidden = _commit(ContextItem("t", "tool", state="cleared", rendered=text))
    assert recoverable(hidden, CAT) == [
        _violation("t", H_T, "the handle named in the item's text", text[:80])
    ]
    assert len(text[:80]) == 80


def test_a_tool_with_its_text_kept_but_arguments_capped_needs_its_handle() -> None:
    """A tightened tool result whose text is whole but whose arguments are not still hides something."""
    kept = ContextItem("t", "tool", state="aged", rendered="file body", tool_name="cat")
    whole = attrs.evolve(kept, arguments='{"path":"a"}')
    capped = attrs.evolve(kept, arguments="[capped]")
    assert recoverable(_commit(whole), CAT) == []
    assert recoverable(_commit(capped), CAT) == [
        _violation("t", H_T, "the handle named in the item's text", "file body")
    ]
    named = attrs.evolve(kept, arguments=f"[capped] {recall_note(H_T)}")
    assert recoverable(_commit(named), CAT) == []


def test_an_attached_tool_copy_whose_text_is_kept_needs_no_handle() -> None:
    """An attached copy's original has no arguments: a tool copy showing that text whole hides nothing."""
    source = _commit(
        ContextItem("t9", "tool", rendered="file body", tool_name="cat", arguments='{"path":"a"}')
    )
    copy = ContextItem(
        "t9",
        "tool",
        state="aged",
        rendered="file body",
        tool_name="cat",
        arguments='{"path":"a"}',
        attached_from="c1",
    )
    assert recoverable(_commit(copy), Graph(), sources={"c1": source}) == []
    hidden = ContextItem("t9", "tool", state="aged", rendered="[aged]", attached_from="c1")
    assert recoverable(_commit(hidden), Graph(), sources={"c1": source}) == [
        _violation("t9", item_handle(hidden), "the handle named in the item's text", "[aged]")
    ]


FOLDED = _graph(Call("u1", "user", output="first"), Call("u2", "user", output="second"))


def _folded(summary_text: str) -> ContextCommit:
    return _commit(
        ContextItem("u1", "user", state="summarized", rendered="first", merged_into="s1"),
        ContextItem("u2", "user", state="summarized", rendered="second", merged_into="s1"),
        ContextItem("s1", "assistant", state="summary", rendered=summary_text),
    )


def _not_named(*ids: str) -> list[Violation]:
    expected = "the handle named by the summary that folded it"
    return [_violation(i, handle_for(i), expected, "not named") for i in ids]


def test_a_summary_naming_each_folded_handle_covers_them() -> None:
    """A summary that names every folded item's own handle (and not its fold handle) covers them."""
    text = f"we talked {handle_for('u1')} {handle_for('u2')}"
    assert recoverable(_folded(text), FOLDED) == []


def test_a_summary_naming_its_fold_handle_covers_every_member() -> None:
    """A summary that names only the fold handle of exactly its members covers each of them."""
    text = f"we talked [recall {fold_handle(['u1', 'u2'])}]"
    assert recoverable(_folded(text), FOLDED) == []
    # The fold handle of other members (here, only one of them) covers nobody, nor resolves.
    wrong = fold_handle(["u1"])
    assert recoverable(_folded(f"we talked {wrong}"), FOLDED) == [
        *_not_named("u1", "u2"),
        _violation("s1", wrong, "every shown handle resolves", "unknown"),
    ]


def test_a_summary_naming_one_handle_covers_only_that_item() -> None:
    """Each folded item needs its own handle (or the fold's) in the summary; the other is reported."""
    assert recoverable(_folded(f"we talked {handle_for('u1')}"), FOLDED) == _not_named("u2")


def test_a_summary_naming_nothing_reports_each_folded_item() -> None:
    """A summary that names no handle leaves every item it folded unnamed, in order."""
    assert recoverable(_folded("we talked"), FOLDED) == _not_named("u1", "u2")


def test_a_summarized_item_without_its_summary_is_not_named() -> None:
    """A summarized item whose summary is absent (or that names none) is named by nobody."""
    graph = _graph(Call("u1", "user", output="first"))
    orphan = ContextItem("u1", "user", state="summarized", rendered="first")
    assert recoverable(_commit(orphan), graph) == _not_named("u1")
    lost = ContextItem("u1", "user", state="summarized", rendered="first", merged_into="gone")
    assert recoverable(_commit(lost), graph) == _not_named("u1")


def test_two_sources_of_one_handle_are_reported_and_resolve_to_neither() -> None:
    """Invariant 16: a handle two nodes share is a collision, and an item naming it has no original."""
    a, b = TWINS
    handle = handle_for(a)
    assert handle_for(b) == handle
    graph = _graph(
        Call(a, "tool", name="cat", output="one"), Call(b, "tool", name="cat", output="two")
    )
    aged = _commit(ContextItem(a, "tool", state="aged", rendered=f"[aged] {recall_note(handle)}"))
    assert recoverable(aged, graph) == [
        Violation(16, (handle, f"node:{a}", f"node:{b}"), "one source per handle", "2 sources"),
        _violation(a, handle, "a handle that resolves to the original", "no original"),
        _violation(a, handle, "every shown handle resolves", "unknown"),
    ]
