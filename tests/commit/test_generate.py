"""Generating commits from the DAG: items per node, tool pairs, reuse on checkout, errors."""

from __future__ import annotations

from pyrsistent import pmap

from ctxrules.commit import NotAnAncestor, State, UnknownHead
from ctxrules.dag import Session
from ctxrules.generation import ensure_latest_commit, generate_commit
from ctxrules.render import Message, TextBlock, ToolResultBlock, ToolUseBlock, render_commit
from ctxrules.rules import Facts, Pipeline
from ctxrules.tokens import HeuristicCounter

FACTS = Facts(now=100.0, tokenizer=HeuristicCounter())


def _session() -> Session:
    s = (
        Session("g")
        .send("user", "What is in src?")
        .bind(lambda s: s.send("assistant", ""))
        .unwrap()
    )
    s = s.record_call(
        s.head, "ls", {"path": "src"}, ["a.py"], metadata={"tool_call_id": "toolu_1"}
    ).unwrap()
    return s.send("assistant", "src holds a.py.").bind(lambda s: s.send("user", "Thanks")).unwrap()


def test_items_follow_the_branch_with_tool_calls_under_their_assistant() -> None:
    """Each branch node is a full item; a tool call follows its assistant and shares its turn."""
    s = _session()
    commit = generate_commit(None, s.graph, s.head, Pipeline(), FACTS, session_id="g").unwrap()
    assert [(i.role.value, i.state, i.turn) for i in commit.items] == [
        ("user", State.FULL, 0),
        ("assistant", State.FULL, 0),
        ("tool", State.FULL, 0),
        ("assistant", State.FULL, 1),
        ("user", State.FULL, 2),
    ]
    tool = commit.items[2]
    assert (tool.tool_name, tool.tool_call_id, tool.arguments, tool.rendered) == (
        "ls",
        "toolu_1",
        '{"path":"src"}',
        '["a.py"]',
    )
    assert (commit.session_id, commit.parent_ids, commit.created_at, commit.head_node_id) == (
        "g",
        (),
        100.0,
        s.head,
    )
    assert commit.rules_version == Pipeline().version


def test_rendered_commit_pairs_the_tool_call_with_its_result() -> None:
    """The empty assistant text is dropped and the tool call renders as a use/result pair."""
    s = _session()
    commit = generate_commit(None, s.graph, s.head, Pipeline(), FACTS).unwrap()
    assert render_commit(commit) == (
        Message("user", (TextBlock("What is in src?"),)),
        Message("assistant", (ToolUseBlock("toolu_1", "ls", '{"path":"src"}'),)),
        Message("tool", (ToolResultBlock("toolu_1", '["a.py"]'),)),
        Message("assistant", (TextBlock("src holds a.py."),)),
        Message("user", (TextBlock("Thanks"),)),
    )


def test_a_child_commit_copies_its_parent_and_adds_only_new_nodes() -> None:
    """The next turn's commit starts with the parent's items and names the parent."""
    s = _session()
    parent = generate_commit(None, s.graph, s.head, Pipeline(), FACTS).unwrap()
    s2 = s.send("assistant", "You're welcome.").unwrap()
    child = generate_commit(parent, s2.graph, s2.head, Pipeline(), FACTS).unwrap()
    assert list(child.items[: len(parent.items)]) == list(parent.items)
    assert [i.rendered for i in child.items[len(parent.items) :]] == ["You're welcome."]
    assert child.items[-1].turn == 2
    assert child.parent_ids == (parent.id,)


def test_ensure_latest_commit_reuses_a_commit_on_checkout() -> None:
    """Checking out a node that has a commit returns that very commit and adds nothing to the map."""
    s = _session()
    first_head = s.head
    older, known = ensure_latest_commit(pmap(), s.graph, first_head, Pipeline(), FACTS).unwrap()
    s2 = s.send("assistant", "More.").unwrap()
    newer, known = ensure_latest_commit(known, s2.graph, s2.head, Pipeline(), FACTS).unwrap()
    assert newer.parent_ids == (older.id,)
    again, known_after = ensure_latest_commit(
        known, s2.graph, first_head, Pipeline(), FACTS
    ).unwrap()
    assert again is older
    assert known_after is known


def test_an_edited_sibling_builds_on_the_common_ancestor_commit() -> None:
    """After an edit, the sibling's commit extends the nearest commit on its own branch."""
    s = _session()
    question = s.graph.order[0]
    base, known = ensure_latest_commit(pmap(), s.graph, question, Pipeline(), FACTS).unwrap()
    edited = s.edit(s.graph.order[1], "Let me list it.").unwrap()
    commit, _ = ensure_latest_commit(known, edited.graph, edited.head, Pipeline(), FACTS).unwrap()
    assert commit.parent_ids == (base.id,)
    assert [i.rendered for i in commit.items] == ["What is in src?", "Let me list it."]


def test_unknown_head_and_foreign_parent_fail() -> None:
    """A head not in the graph, or a parent from another branch, is a Failure with the ids."""
    s = _session()
    assert ensure_latest_commit(
        pmap(), s.graph, "ghost", Pipeline(), FACTS
    ).failure() == UnknownHead("ghost")
    parent = generate_commit(None, s.graph, s.head, Pipeline(), FACTS).unwrap()
    sibling = s.edit(s.graph.order[1], "other").unwrap()
    error = generate_commit(parent, sibling.graph, sibling.head, Pipeline(), FACTS).failure()
    assert error == NotAnAncestor(s.head, sibling.head)
    assert str(error).startswith(f"the parent commit's head {s.head!r} is not an ancestor")
