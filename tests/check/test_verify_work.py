"""`ctxrules verify` counts each text of a session once: its work grows with the session, not its square.

Invariant 10 is checked on the commit of every turn, and each commit holds most of the
texts of the one before. Counted afresh each time, a 180-turn store with outputs up to
5 MB took over five minutes; the commits' own counts were a second full count. Work is
counted in characters given to the ruler, which is exact.
"""

from __future__ import annotations

import importlib

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxrules.check.invariants import one_ruler, protocol_valid, ruler_violations
from ctxrules.check.recorded import _turn_heads, session_head, verify_commits, verify_graph
from ctxrules.check.rendered import RenderedChecks
from ctxrules.commit import ContextCommit, ContextItem
from ctxrules.dag import Call, Graph
from ctxrules.generation import NO_COMMITS, ensure_latest_commit
from ctxrules.render import Message, count_messages, render_commit
from ctxrules.rules import Facts, Pipeline
from ctxrules.rules.handles import fold_handle
from ctxrules.spec import load_spec
from ctxrules.spec.builtin import find_spec
from ctxrules.tokens import HeuristicCounter
from tests.counting_ruler import CountingRuler

#: The module (the package exports a function of the same name).
recoverable_module = importlib.import_module("ctxrules.check.recoverable")


def session(turns: int) -> Graph:
    """``turns`` turns of a user message, an assistant calling a tool, and its 3,000-character output."""
    graph, last = Graph(), None
    for turn in range(turns):
        graph = graph.append(
            Call(f"u{turn}", "user", output=f"step {turn}", predecessor=last)
        ).unwrap()
        graph = graph.append(
            Call(f"a{turn}", "assistant", output=f"reading {turn}", predecessor=f"u{turn}")
        ).unwrap()
        output = f"line {turn} of the file\n" * 120
        graph = graph.append(
            Call(f"t{turn}", "tool", name="cat", output=output, caller=f"a{turn}")
        ).unwrap()
        last = f"a{turn}"
    return graph


def history_characters(graph: Graph) -> int:
    """The characters of every text the session holds."""
    return sum(len(node.output or "") for node in graph.nodes.values())


def test_a_session_is_counted_once_whatever_its_length() -> None:
    """Forty turns are read about as often per character as ten: once to build, none to check."""
    for turns in (10, 40):
        graph = session(turns)
        ruler = CountingRuler()
        assert verify_graph(graph, Pipeline(), Facts(tokenizer=ruler)) == []
        # Each text once (tool names and arguments besides), not once per later turn.
        assert ruler.characters <= 1.1 * history_characters(graph), (turns, ruler.characters)


def test_stored_commits_are_checked_with_each_text_counted_once() -> None:
    """Every turn's commit, as a store holds them: their texts counted once in all."""
    graph = session(30)
    facts = Facts(tokenizer=HeuristicCounter())
    commits, known = [], NO_COMMITS
    for stop in _turn_heads(graph, session_head(graph) or ""):
        commit, known = ensure_latest_commit(known, graph, stop.id, Pipeline(), facts).unwrap()
        commits.append(commit)
    assert len(commits) == 30
    assert len(commits[-1].items) == 90
    ruler = CountingRuler()
    assert verify_commits(commits, graph, ruler) == []
    assert ruler.characters <= 1.1 * history_characters(graph)


def _requests(graph: Graph, pipeline: Pipeline) -> list[tuple[ContextCommit, tuple[Message, ...]]]:
    facts = Facts(tokenizer=HeuristicCounter(), context_window=6_000)
    built, known = [], NO_COMMITS
    for stop in _turn_heads(graph, session_head(graph) or ""):
        commit, known = ensure_latest_commit(known, graph, stop.id, pipeline, facts).unwrap()
        built.append((commit, render_commit(commit)))
    return built


def test_each_request_is_read_from_where_it_differs_from_the_one_before() -> None:
    """Invariants 10 and 11 turn by turn read what each request adds or changes, not all of it.

    A 60-turn session at a small window (its results age, and batch points rewrite): the
    messages read are about those sent once, not the sum over the turns (the square).
    """
    graph = session(60)
    requests = _requests(graph, load_spec(find_spec("default").unwrap()).unwrap())
    checks = RenderedChecks(HeuristicCounter())
    for commit, _ in requests:
        assert checks.check(commit) == []
    whole = sum(len(messages) for _, messages in requests)
    assert checks.read <= 3 * len(requests[-1][1]) + 8 * len(requests)
    assert whole > 8 * checks.read


@settings(max_examples=60, deadline=None)
@given(
    turns=st.integers(1, 14),
    drops=st.sets(st.integers(0, 40), max_size=4),
    doubles=st.sets(st.integers(0, 40), max_size=3),
    wrong=st.sets(st.integers(0, 14), max_size=3),
)
def test_turn_by_turn_checks_answer_as_the_whole_request_does(
    turns: int, drops: set[int], doubles: set[int], wrong: set[int]
) -> None:
    """Invariants 10 and 11: the incremental answers equal `one_ruler` and `protocol_valid`'s.

    Requests are broken at random: messages dropped (orphan results, calls without
    results), repeated (repeated call ids, two results for one call), and counts made
    wrong; each request shares its head with the one before, as in a session.
    """
    graph = session(turns)
    ruler = HeuristicCounter()
    checks = RenderedChecks(ruler)
    before: tuple[Message, ...] = ()
    for step, (commit, messages) in enumerate(_requests(graph, Pipeline())):
        broken = [m for i, m in enumerate(messages) if i not in drops]
        broken += [m for i, m in enumerate(messages) if i in doubles]
        sent = tuple(broken)
        # The messages it shares with the request before: the same objects, from the start.
        same = next(
            (i for i, (a, b) in enumerate(zip(sent, before, strict=False)) if a is not b),
            min(len(sent), len(before)),
        )
        counted = (
            commit
            if step not in wrong
            else attrs.evolve(commit, total_tokens=commit.total_tokens + 1)
        )
        expected = ruler_violations(counted, count_messages(sent, ruler)) + protocol_valid(sent)
        if sent == messages and step not in wrong:
            assert expected == one_ruler(counted, ruler) + protocol_valid(render_commit(counted))
        assert checks.check_from(counted, sent, same) == expected
        before = sent


def test_a_commits_folded_items_are_checked_in_one_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    """Invariant 16 finds each folded item's summary from one reading of the commit, not one per item.

    300 results folded into one summary: the summaries are read once; a summary naming
    the fold's handle covers all of them, one naming nothing leaves each reported.
    """
    graph, items = Graph(), []
    for n in range(300):
        graph = graph.append(Call(f"t{n}", "tool", name="cat", output=f"out {n}")).unwrap()
        items.append(
            ContextItem(f"t{n}", "tool", state="summarized", rendered=f"out {n}", merged_into="sm")
        )
    named = fold_handle(f"t{n}" for n in range(300))
    reads: list[int] = []
    summary_reads: list[str] = []
    real_folds, real_handles = recoverable_module._folds, recoverable_module.handles_in

    def folds(commit: ContextCommit) -> dict[str, tuple[ContextItem, list[str]]]:
        reads.append(len(commit.items))
        return real_folds(commit)

    def handles(text: str) -> tuple[str, ...]:
        if text.startswith("[summary]"):
            summary_reads.append(text)
        return real_handles(text)

    monkeypatch.setattr(recoverable_module, "_folds", folds)
    monkeypatch.setattr(recoverable_module, "handles_in", handles)
    for text, expected in ((f"[summary] [recall {named}]", 0), ("[summary]", 300)):
        summary = ContextItem("sm", "assistant", state="summary", rendered=text)
        commit = ContextCommit("s").with_items([summary, *items])
        found = recoverable_module.recoverable(commit, graph)
        assert len([v for v in found if "summary that folded it" in v.expected]) == expected
    # Each summary's text is read for its handles twice in all (its own shown handles, and
    # the folds it covers), not once per item it folded.
    assert len(summary_reads) == 4
    assert reads == [301, 301]
