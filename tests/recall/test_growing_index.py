"""The recall index kept per turn: it visits only what is new (work counted) and answers as `recall_index` does."""

from __future__ import annotations

from collections.abc import Iterator

import attrs
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pyrsistent import pmap

import ctxrules
from ctxrules.commit import ContextCommit, ContextItem, State
from ctxrules.compaction import CutParams, compact
from ctxrules.dag import Call, Graph, Session
from ctxrules.generation import ensure_latest_commit
from ctxrules.recall import (
    CommitHandles,
    NodeHandles,
    SessionHandles,
    fold_handle,
    growing,
    handle_for,
    recall_index,
)
from ctxrules.recall.lookup import Fold
from ctxrules.render import Message
from ctxrules.rules import Facts, Pipeline
from ctxrules.spec import load_spec
from ctxrules.testing.compaction import agent_sessions
from ctxrules.tokens import HeuristicCounter

RULER = HeuristicCounter()


def _grow(graph: Graph, start: int, count: int) -> Graph:
    """``count`` more nodes after node ``start - 1``: user, assistant, tool, in turn."""
    for i in range(start, start + count):
        role = ("user", "assistant", "tool")[i % 3]
        graph = graph.append(
            Call(f"n{i}", role, name="cat" if role == "tool" else "", output=f"text {i}")
        ).unwrap()
    return graph


def test_growing_computes_only_the_new_handles(hashed_handles: list[str]) -> None:
    """After 1,000 nodes, growing by 7 computes exactly those 7 handles; with nothing new, none."""
    graph = _grow(Graph(), 0, 1_000)
    first = NodeHandles().grown(graph)
    assert (first.visited, len(hashed_handles)) == (1_000, 1_000)
    hashed_handles.clear()
    grown = _grow(graph, 1_000, 7)
    second = first.grown(grown)
    assert (second.visited, hashed_handles) == (7, [f"n{i}" for i in range(1_000, 1_007)])
    hashed_handles.clear()
    again = second.grown(grown)
    assert (again.visited, hashed_handles, again.owners is second.owners) == (0, [], True)
    # The old version is a value: still the 1,000 nodes it was built from.
    assert (len(first.owners), len(second.owners)) == (1_000, 1_007)


def test_another_graph_is_indexed_afresh(hashed_handles: list[str]) -> None:
    """An index grown on one graph, given a graph that is not its continuation, walks the new one once."""
    index = NodeHandles().grown(_grow(Graph(), 0, 10))
    other = Graph()
    for i in range(12):
        other = other.append(Call(f"m{i}", "user", output="x")).unwrap()
    hashed_handles.clear()
    rebuilt = index.grown(other)
    assert (rebuilt.visited, len(hashed_handles)) == (12, 12)
    assert handle_for("n1") not in rebuilt.owners


def test_a_running_node_is_read_when_recalled() -> None:
    """A tool node indexed while running resolves to its output once completed, with no new visit."""
    graph = Graph().append(Call("t", "tool", name="cat", status="running")).unwrap()
    nodes = NodeHandles().grown(graph)
    done = graph.complete("t", "the whole output").unwrap()
    regrown = nodes.grown(done)
    found = SessionHandles(done, regrown).get(handle_for("t"))
    assert regrown.visited == 0
    assert found is not None
    assert found.text == "the whole output"


def test_a_shared_handle_is_ambiguous_as_in_recall_index(monkeypatch: pytest.MonkeyPatch) -> None:
    """Two nodes with one handle resolve to nothing, and both indexes say the same owners clash."""
    same = "h:aaaaaaaa"

    def clashing(source_id: str) -> str:
        return same if source_id in {"n1", "n2"} else handle_for(source_id)

    monkeypatch.setattr(growing, "handle_for", clashing)
    monkeypatch.setattr("ctxrules.recall.lookup.handle_for", clashing)
    graph = _grow(Graph(), 0, 4)
    handles = SessionHandles(graph, NodeHandles().grown(graph))
    expected = recall_index(graph)
    assert handles.ambiguous(same)
    assert handles.get(same) is None
    assert handles.nodes.clashes[same] == expected.collisions[same] == ("node:n1", "node:n2")


def _folded(graph_ids: int, folded: int) -> ContextCommit:
    """``graph_ids`` items, the first ``folded`` folded into summary ``s1`` placed after them."""
    items = [
        ContextItem(f"n{i}", "user", rendered=f"text {i}", turn=i)
        if i >= folded
        else ContextItem(
            f"n{i}", "user", rendered=f"text {i}", state=State.SUMMARIZED, merged_into="s1"
        )
        for i in range(graph_ids)
    ]
    summary = ContextItem("s1", "assistant", rendered="we talked", state=State.SUMMARY)
    return ContextCommit("s").with_items([*items[:folded], summary, *items[folded:]])


def _child(
    parent: ContextCommit, new: list[ContextItem], changes: dict[int, ContextItem]
) -> ContextCommit:
    """A commit generated from ``parent``, as `generate_commit` makes one: appended, then replaced."""
    grown = parent.begin_generation().append_items(new).replace_items(changes)
    return attrs.evolve(grown, parent_ids=(parent.id,))


def test_a_new_commit_visits_only_its_changed_items() -> None:
    """After a compaction the commit's handles are built once; each later turn looks at its changed items only."""
    graph = _grow(Graph(), 0, 100)
    parent = _folded(90, 60)
    built = CommitHandles.of(parent, graph)
    assert built.visited == 91
    assert {o.kind for o in built.entries.values()} == {"summary", "fold"}
    assert fold_handle([f"n{i}" for i in range(60)]) in built.entries
    new = [ContextItem(f"n{i}", "user", rendered=f"text {i}") for i in range(90, 93)]
    aged = attrs.evolve(parent.items[70], state=State.AGED, rendered="[aged]")
    child = _child(parent, new, {70: aged})
    moved = built.moved_to(child, graph)
    assert moved.visited == 30  # the last chunk (64 to 93), which the turn copied
    assert moved.entries is built.entries
    # A turn that changes a folded item changes its fold's listing: built again.
    refolded = attrs.evolve(child.items[3], rendered="other text")
    again = moved.moved_to(_child(child, [], {3: refolded}), graph)
    assert again.visited == len(child.items) + 64  # built again, after the first chunk
    fold = again.entries[fold_handle([f"n{i}" for i in range(60)])]
    assert isinstance(fold, Fold)
    assert "other text" in fold.original().text


def _walk(
    session: Session, sources: dict[str, ContextCommit], pipeline: Pipeline, data: st.DataObject
) -> Iterator[tuple[Graph, ContextCommit]]:
    """Each commit of the head's branch with the graph as it stood then, compacting now and then."""
    known = pmap()
    graph, order = Graph(), session.graph.order
    for call in session.branch():
        while len(graph) <= call.seq:
            graph = graph.append(session.graph.nodes[order[len(graph)]]).unwrap()
        facts = Facts(tokenizer=RULER)
        commit, known = ensure_latest_commit(
            known, graph, call.id, pipeline, facts, sources=sources
        ).unwrap()
        if data.draw(st.booleans(), label="compact"):
            result = compact(commit, _short, facts, params=CUT)
            if result.applied:
                commit = result.commit
                known = known.set(call.id, commit)
        yield graph, commit


def _short(_: tuple[Message, ...]) -> str:
    return "we worked"


CUT = CutParams(keep_min_tokens=0, keep_recent_tokens=40, keep_min_messages=1)
PIPELINE = load_spec('[[rules]]\nuse = "age_tool_results"\n[rules.params]\ntail_turns = 1').unwrap()


@settings(
    max_examples=min(settings.default.max_examples, 40),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(data=st.data(), drawn=agent_sessions(max_turns=6))
def test_the_grown_index_answers_as_recall_index_does(data: st.DataObject, drawn) -> None:
    """Over random sessions with compactions and attachments, every handle resolves as `recall_index` resolves it."""
    session, sources = drawn
    nodes, in_commit = NodeHandles(), CommitHandles()
    for graph, commit in _walk(session, sources, PIPELINE, data):
        nodes = nodes.grown(graph)
        in_commit = in_commit.moved_to(commit, graph, sources)
        handles = SessionHandles(graph, nodes, in_commit)
        expected = recall_index(graph, commit, sources=sources)
        assert dict(in_commit.entries) == dict(CommitHandles.of(commit, graph, sources).entries)
        for handle in {*expected.entries, *expected.collisions, *in_commit.entries}:
            assert handles.ambiguous(handle) == expected.ambiguous(handle)
            assert handles.get(handle) == expected.get(handle)


SPEC = """
[recall]
tools = true

[[rules]]
use = "cap_tool_result"
[rules.params]
max_chars = 400
"""
LOG = "".join(f"line {i}: all is well\n" for i in range(200))


def test_a_recall_after_n_turns_visits_only_the_new_nodes(hashed_handles: list[str]) -> None:
    """Through `Context`: each answer indexes exactly the nodes added since the previous one (first: all)."""
    ctx = ctxrules.Context(SPEC, model="gpt-4o", clock=lambda: 0.0)
    first_tool = None
    answered_at = 0
    for turn in range(12):
        ctx.add({"role": "user", "content": f"read the log, turn {turn}"})
        ctx.openai()
        read = {
            "id": f"r{turn}",
            "type": "function",
            "function": {"name": "cat", "arguments": "{}"},
        }
        ctx.add({"role": "assistant", "content": None, "tool_calls": [read]})
        ctx.add({"role": "tool", "tool_call_id": f"r{turn}", "content": f"turn {turn}\n{LOG}"})
        ctx.openai()
        first_tool = first_tool or next(
            n.id for n in ctx.session.graph.nodes.values() if n.name == "cat"
        )
        arguments = f'{{"handle": "{handle_for(first_tool)}"}}'
        recall = {
            "id": f"c{turn}",
            "type": "function",
            "function": {"name": "recall", "arguments": arguments},
        }
        ctx.add({"role": "assistant", "content": None, "tool_calls": [recall]})
        hashed_handles.clear()
        indexed = ctx.recall.indexed
        answer = ctx.answer_recall(recall)
        size = len(ctx.session.graph)
        assert ctx.recall.nodes.visited == len(hashed_handles) == size - answered_at
        assert ctx.recall.indexed - indexed == size - answered_at  # no summary: no item looked at
        assert answer is not None
        # Paged to fit under the 400-character cap, so the model reads it whole.
        assert len(answer) <= 400
        assert f"turn 0\n{LOG}".startswith(answer.split("\n", 1)[1])
        answered_at = size
    assert answered_at == 12 * 5
