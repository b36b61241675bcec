"""`ctxrules verify` reads what a session's commits share once: invariants 2, 5, 6, 12 and 16.

Stored commits, and the commits built turn by turn, share every chunk but the last few
with the commit before (the same objects). Each check here keeps what it found per chunk
or per commit and must answer exactly as the whole-commit predicate does: the properties
compare them on commit sequences broken at random, and the work counts bound the items
read (exact, unlike time).
"""

from __future__ import annotations

import importlib

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxrules.check import attached_once, content_addressed, one_summary, recoverable
from ctxrules.check.compaction import summary_items_outside
from ctxrules.check.history import contents_addressed
from ctxrules.check.invariants import one_ruler, protocol_valid
from ctxrules.check.notable import NotableChecks
from ctxrules.check.recorded import _turn_heads, session_head
from ctxrules.check.recoverable import RecoverableChecks
from ctxrules.check.rendered import RenderedChecks, RequestRenderer
from ctxrules.commit import ContextCommit, ContextItem
from ctxrules.commit.attach import MARKER_PREFIX
from ctxrules.dag import Call, Graph
from ctxrules.generation import NO_COMMITS, ensure_latest_commit
from ctxrules.recall.lookup import node_index
from ctxrules.render import render_commit
from ctxrules.rules import Facts
from ctxrules.spec import load_spec
from ctxrules.spec.builtin import find_spec
from ctxrules.tokens import HeuristicCounter
from tests.check.test_verify_work import session

#: The module (the package exports a function of the same name as another module).
history_module = importlib.import_module("ctxrules.check.history")

#: What a step of a random commit sequence does to the commit before it.
STEPS = ("plain", "plain", "plain", "summary", "copy", "marker", "replace", "replace_summary")


def _item(kind: str, n: int) -> ContextItem:
    """A new item of ``kind``: a plain result, an active summary, an attached copy or a marker."""
    if kind == "summary":
        return ContextItem(f"sm_{n}", "assistant", state="summary", rendered=f"summary {n}")
    if kind == "copy":
        return ContextItem(f"t{n % 7}", "tool", rendered="copy", attached_from=f"c_{n % 3}")
    if kind == "marker":
        return ContextItem(f"{MARKER_PREFIX}c_{n % 3}", "user", rendered="[attached]")
    return ContextItem(f"t{n}", "tool", rendered=f"out {n}")


def _commits(steps: list[tuple[str, int, int]], base: int) -> list[ContextCommit]:
    """A sequence of commits, each the one before with one step applied (sharing its chunks)."""
    commit = ContextCommit("s").append_items([_item("plain", n) for n in range(base)])
    built = [commit]
    for n, (kind, at, count) in enumerate(steps, base):
        if kind.startswith("replace") and len(commit.items):
            new = _item("summary" if kind == "replace_summary" else "copy", n)
            commit = commit.replace_items({at % len(commit.items): new})
        elif not kind.startswith("replace"):
            commit = commit.append_items([_item(kind, n * 10 + k) for k in range(count)])
        built.append(commit)
    return built


@settings(max_examples=80, deadline=None)
@given(
    steps=st.lists(
        st.tuples(st.sampled_from(STEPS), st.integers(0, 10_000), st.integers(1, 70)), max_size=25
    ),
    base=st.integers(0, 200),
    recorded=st.booleans(),
)
def test_notable_checks_answer_as_the_whole_commit_does(
    steps: list[tuple[str, int, int]], base: int, recorded: bool
) -> None:
    """Invariants 5, 6 and 12 read per shared chunk equal `summary_items_outside`, `attached_once`, `one_summary`.

    Summaries, attached copies and markers are added and swapped in at random positions,
    so commits break invariants 6 and 12 (two active summaries, a copy twice, unrecorded
    sources) and, with a graph holding a summary's id, invariant 5.
    """
    graph = Graph().append(Call("sm_0", "assistant", output="a node named like a summary")).unwrap()
    checks = NotableChecks(graph)
    for built in _commits(steps, base):
        commit = (
            attrs.evolve(built, attached=built.attached | {"c_0", "c_1"}) if recorded else built
        )
        assert checks.check(commit) == one_summary(commit) + attached_once(commit)
        assert checks.outside() == summary_items_outside(commit.items, graph)


def test_notable_checks_read_each_chunk_once() -> None:
    """Two hundred commits that each add three items to 640 read one chunk each, not every item."""
    commits = _commits([("plain", 0, 3)] * 200, 640)
    checks = NotableChecks(Graph())
    for commit in commits:
        assert checks.check(commit) == []
    whole = sum(len(commit.items) for commit in commits)
    assert checks.read <= 640 + 200 * 64
    assert whole > 20 * checks.read


def _built(turns: int) -> tuple[Graph, list[ContextCommit]]:
    """A session's commit at every turn through the default spec at a small window (aging, compactions)."""
    graph = session(turns)
    pipeline = load_spec(find_spec("default").unwrap()).unwrap()
    facts = Facts(tokenizer=HeuristicCounter(), context_window=6_000)
    commits, known = [], NO_COMMITS
    for stop in _turn_heads(graph, session_head(graph) or ""):
        commit, known = ensure_latest_commit(known, graph, stop.id, pipeline, facts).unwrap()
        commits.append(commit)
    return graph, commits


GRAPH, COMMITS = _built(60)


@settings(max_examples=40, deadline=None)
@given(broken=st.sets(st.integers(0, 59), max_size=6), hide=st.booleans())
def test_recoverable_checks_answer_as_the_whole_commit_does(broken: set[int], hide: bool) -> None:
    """Invariant 16 on commits in turn equals `recoverable` on each, with handles broken at random.

    A broken commit has its tightened items' handles cut from their text (or names an
    unknown handle); the commits after it extend it, so its answers are carried forward.
    """
    nodes = node_index(GRAPH)
    checks = RecoverableChecks(GRAPH, nodes)
    before: ContextCommit | None = None
    for step, built in enumerate(COMMITS):
        commit = built
        if step in broken:
            changes = {
                i: attrs.evolve(item, rendered="[cut]" if hide else "[recall h:zzzzzzzz]")
                for i, item in enumerate(built.items)
                if item.state.value in {"aged", "cleared"}
            }
            commit = built.replace_items(changes) if changes else built
        elif before is not None and len(built.items) > len(before.items):
            # The next commit extends the broken one, as between batch points.
            added = built.items[len(before.items) :]
            if built.items[: len(before.items)] == tuple(COMMITS[step - 1].items):
                commit = before.append_items(added)
        assert checks.check(commit) == recoverable(commit, GRAPH, nodes=nodes)
        before = commit


def test_recoverable_checks_read_what_each_commit_adds() -> None:
    """A session's commits between batch points are checked for the items they add alone."""
    checks = RecoverableChecks(GRAPH, node_index(GRAPH))
    for commit in COMMITS:
        assert checks.check(commit) == []
    whole = sum(len(commit.items) for commit in COMMITS)
    assert checks.read < whole / 3
    # Something was reused: the session has batch points and extensions between them.
    assert checks.read >= len(COMMITS[-1].items)


def test_contents_addressed_rebuilds_each_shared_chunk_once() -> None:
    """Invariant 2 over shared chunks equals `content_addressed` per commit, tampering included.

    An item changed behind its class's back (its kept digest no longer its content's) is
    found in every commit that holds it, as the whole rebuild finds it.
    """
    commits = _commits([("plain", 0, 5)] * 30, 300)
    assert contents_addressed(commits) == []
    shared = commits[10].items[-1]  # added by the tenth step, held by every commit after
    object.__setattr__(shared, "rendered", "changed behind its back")
    expected = [v for commit in commits for v in content_addressed(commit)]
    assert len(expected) == len(commits) - 10
    assert contents_addressed(commits) == expected


def test_contents_addressed_hashes_each_shared_chunk_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Thirty commits of 300 to 450 items: each item's digest worked out again about once, not per commit."""
    commits = _commits([("plain", 0, 5)] * 30, 300)
    hashed: list[str] = []
    real = history_module.item_digest

    def counting(item: ContextItem) -> str:
        hashed.append(item.source_node_id)
        return real(item)

    monkeypatch.setattr(history_module, "item_digest", counting)
    assert contents_addressed(commits) == []
    # Each commit rehashes only its last, partly filled chunk (the one it appended to).
    assert len(hashed) <= len(commits[-1].items) + 64 * len(commits)
    assert sum(len(commit.items) for commit in commits) > 3 * len(hashed)


def test_requests_rendered_from_where_they_differ_equal_render_commit() -> None:
    """Invariants 10 and 11 read the same messages `render_commit` gives, at every turn.

    The session ages results, lands batch points and folds its oldest items (summarized
    spans appear and grow), and is then replayed backwards, so every commit differs from the one
    before somewhere before its end.
    """
    # Every tenth turn folds the oldest items, as a compaction does: the span grows.
    folded = [
        built.replace_items(
            {i: attrs.evolve(built.items[i], state="summarized") for i in range(step // 10 * 20)}
        )
        if step >= 10
        else built
        for step, built in enumerate(COMMITS)
    ]
    assert folded[-1].hidden
    renderer = RequestRenderer()
    for commit in [*folded, *reversed(folded), folded[-1]]:
        before = list(renderer.messages)
        messages, same = renderer.render(commit)
        whole = render_commit(commit)
        assert tuple(messages) == tuple(whole)
        # The messages said to be unchanged are the very objects of the request before.
        assert all(a is b for a, b in zip(messages[:same], before, strict=False))
        assert same <= len(before)


@settings(max_examples=60, deadline=None)
@given(
    steps=st.lists(
        st.tuples(st.sampled_from(STEPS), st.integers(0, 10_000), st.integers(1, 70)), max_size=25
    ),
    base=st.integers(0, 200),
    folded=st.sets(st.integers(0, 300), max_size=40),
)
def test_rendered_requests_check_as_whole_requests_do(
    steps: list[tuple[str, int, int]], base: int, folded: set[int]
) -> None:
    """Invariants 10 and 11 read from where each commit differs equal `one_ruler` and `protocol_valid`.

    Random commits, with items folded (summarized spans) at random positions.
    """
    ruler = HeuristicCounter()
    incremental, renderer = RenderedChecks(ruler), RequestRenderer()
    for built in _commits(steps, base):
        hide = {
            i: attrs.evolve(built.items[i], state="summarized")
            for i in folded
            if i < len(built.items)
        }
        commit = built.replace_items(hide) if hide else built
        whole = render_commit(commit)
        assert tuple(renderer.render(commit)[0]) == tuple(whole)
        assert incremental.check(commit) == one_ruler(commit, ruler) + protocol_valid(whole)


def test_requests_render_the_chunks_a_turn_changed() -> None:
    """Two hundred commits that each add three items to 640 read a chunk or two each, not all."""
    commits = _commits([("plain", 0, 3)] * 200, 640)
    renderer = RequestRenderer()
    for commit in commits:
        renderer.render(commit)
    assert renderer.read <= 10 + 2 * len(commits)
    assert sum(-(-len(c.items) // 64) for c in commits) > 5 * renderer.read
