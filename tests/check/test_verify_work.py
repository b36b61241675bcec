"""`ctxrules verify` counts each text of a session once: its work grows with the session, not its square.

Invariant 10 is checked on the commit of every turn, and each commit holds most of the
texts of the one before. Counted afresh each time, a 180-turn store with outputs up to
5 MB took over five minutes; the commits' own counts were a second full count. Work is
counted in characters given to the ruler, which is exact.
"""

from __future__ import annotations

from ctxrules.check.recorded import _turn_heads, session_head, verify_commits, verify_graph
from ctxrules.dag import Call, Graph
from ctxrules.generation import NO_COMMITS, ensure_latest_commit
from ctxrules.rules import Facts, Pipeline
from ctxrules.tokens import HeuristicCounter
from tests.counting_ruler import CountingRuler


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
