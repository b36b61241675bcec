"""An error answer names no handle that does not resolve: aged or folded later, it would show one."""

from __future__ import annotations

import pytest

from ctxrules.check.recoverable import recoverable
from ctxrules.commit import ContextCommit, ContextItem
from ctxrules.dag import Call, Graph
from ctxrules.recall import answer_tool_call, handle_for, handles_in, recall_index
from ctxrules.tokens import HeuristicCounter

RULER = HeuristicCounter()


def _index():
    return recall_index(Graph().append(Call("t1", "tool", name="cat", output="x" * 50)).unwrap())


@pytest.mark.parametrize(
    ("name", "arguments"),
    [
        ("recall", {"handle": "h:zzzzzzzz"}),
        ("recall", {"handle": " see h:zzzzzzzz "}),
        ("recall", {}),
        ("recall", {"handle": handle_for("t1"), "page": "2"}),
        ("search_history", {"query": "h:zzzzzzzz"}),
        ("search_history", {"query": ""}),
    ],
)
def test_an_error_answer_shows_no_handle_that_does_not_resolve(name: str, arguments: dict) -> None:
    """An unknown handle, the example in the usage line, an echoed query: none is handle-shaped."""
    index = _index()
    answer = answer_tool_call(
        name, arguments, index=index, tokenizer=RULER, search=lambda _q, _n: []
    )
    assert answer.text.startswith("[")
    assert [h for h in handles_in(answer.text) if index.get(h) is None] == []


def test_an_unknown_handle_that_is_no_handle_is_named() -> None:
    """Text that is not handle-shaped is echoed, so the model sees what it sent."""
    answer = answer_tool_call("recall", {"handle": "foo"}, index=_index(), tokenizer=RULER)
    assert answer.is_error
    assert "'foo'" in answer.text


def test_an_aged_error_answer_keeps_the_commit_recoverable() -> None:
    """Aged, a short answer keeps its own text (a stub would be longer): it must pass invariant 16."""
    arguments = {"handle": "h:zzzzzzzz"}
    graph = Graph().append(Call("a1", "assistant", output="")).unwrap()
    answer = answer_tool_call("recall", arguments, index=_index(), tokenizer=RULER)
    graph = graph.append(
        Call("r1", "tool", name="recall", input=arguments, output=answer.text, caller="a1")
    ).unwrap()
    aged = ContextItem(
        "r1",
        "tool",
        state="aged",
        reason="tail_window",
        rendered=answer.text,
        arguments='{"handle":"h:zzzzzzzz"}',
    )
    commit = ContextCommit("s").with_items([aged])
    assert list(recoverable(commit, graph)) == []
