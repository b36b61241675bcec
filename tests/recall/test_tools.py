"""The recall and search_history tools: schemas, paging, answers and errors."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctxrules.dag import Call, Graph
from ctxrules.recall import (
    answer_tool_call,
    handle_for,
    page_bounds,
    recall_index,
    recall_tools,
)
from ctxrules.store import SqliteStore, literal
from ctxrules.testing import texts
from ctxrules.tokens import HeuristicCounter

RULER = HeuristicCounter()
BIG = "".join(f"line {i}: {'data ' * 12}\n" for i in range(400))


def _graph() -> Graph:
    graph = Graph().append(Call("u1", "user", output="read the log")).unwrap()
    graph = graph.append(Call("a1", "assistant", output="", predecessor="u1")).unwrap()
    return graph.append(
        Call("t1", "tool", name="cat", input={"path": "app.log"}, output=BIG, caller="a1")
    ).unwrap()


def _recall(index, handle: str, page: object = 1):
    return answer_tool_call(
        "recall", {"handle": handle, "page": page}, index=index, tokenizer=RULER, page_tokens=500
    )


def test_schemas_for_both_providers_name_the_same_tools_and_parameters() -> None:
    """OpenAI and Anthropic schemas describe recall(handle, page) and search_history(query, limit)."""
    openai = {t["function"]["name"]: t["function"]["parameters"] for t in recall_tools("openai")}
    anthropic = {t["name"]: t["input_schema"] for t in recall_tools("anthropic")}
    assert openai == anthropic
    assert openai["recall"]["required"] == ["handle"]
    assert set(openai["search_history"]["properties"]) == {"query", "limit"}


def test_pages_join_back_to_the_original_byte_for_byte() -> None:
    """A 20k-character result recalled page by page, each within the token limit, gives back every byte."""
    index = recall_index(_graph())
    first = _recall(index, handle_for("t1"))
    assert first.pages > 1
    bodies = [first.body] + [
        _recall(index, handle_for("t1"), p).body for p in range(2, first.pages + 1)
    ]
    assert "".join(bodies) == BIG
    assert all(RULER.count(body) <= 500 for body in bodies)
    assert '"path":"app.log"' in first.text.splitlines()[0]


@given(text=texts(200), limit=st.integers(1, 60))
def test_page_bounds_cover_the_text_within_the_limit(text: str, limit: int) -> None:
    """Pages are contiguous, cover the text, and each fits the limit unless it is one character."""
    bounds = page_bounds(text, limit, RULER)
    assert bounds[0][0] == 0
    assert bounds[-1][1] == len(text)
    assert all(a[1] == b[0] for a, b in itertools.pairwise(bounds))
    assert all(RULER.count(text[s:e]) <= limit or e - s == 1 for s, e in bounds)


@pytest.mark.parametrize(
    ("name", "arguments", "says"),
    [
        ("recall", {}, "recall needs a handle"),
        ("recall", {"handle": "h:zzzzzzzz"}, "no item in this session has"),
        ("recall", {"handle": handle_for("t1"), "page": 0}, "page must be an integer >= 1"),
        ("recall", {"handle": handle_for("t1"), "page": 999}, "page 999 does not exist"),
        ("search_history", {"query": " "}, "needs a query"),
        ("search_history", {"query": "x"}, "not available"),
        ("forget", {}, "unknown tool 'forget'"),
    ],
)
def test_bad_calls_answer_with_an_error_never_raise(name: str, arguments: dict, says: str) -> None:
    """Every bad call gets an error answer saying what was wrong."""
    answer = answer_tool_call(name, arguments, index=recall_index(_graph()), tokenizer=RULER)
    assert answer.is_error
    assert says in answer.text


def test_search_history_finds_hidden_text_with_its_handle() -> None:
    """search_history over the store's full-text index returns snippets headed by the node's handle."""
    with SqliteStore.open(":memory:").unwrap() as store:
        store.create_session("s").unwrap()
        store.append_graph("s", _graph()).unwrap()

        def search(query: str, limit: int):
            return store.search(literal(query), session_id="s", limit=limit).value_or("failed")

        answer = answer_tool_call(
            "search_history",
            {"query": "line 399"},
            index=recall_index(_graph()),
            tokenizer=RULER,
            search=search,
        )
    assert not answer.is_error
    assert answer.text.startswith(handle_for("t1") + " ")


def test_the_spec_opts_in_to_the_tools_and_its_faults_are_reported() -> None:
    """`[recall] tools = true` offers both tools; without it none; a bad table fails load_spec too."""
    from ctxrules.recall import offered_tools  # noqa: PLC0415
    from ctxrules.spec import load_spec  # noqa: PLC0415
    from ctxrules.spec.recall import recall_options  # noqa: PLC0415

    on = '[recall]\ntools = true\npage_tokens = 500\n[[rules]]\nuse = "cap_tool_result"\n'
    assert load_spec(on).unwrap().rules[0].name == "cap_tool_result"
    assert [t["name"] for t in offered_tools(recall_options(on).unwrap(), "anthropic")] == [
        "recall",
        "search_history",
    ]
    assert offered_tools(recall_options('[[rules]]\nuse = "clear_idle"\n').unwrap(), "openai") == ()
    bad = '[recall]\ntools = "yes"\npage_tokens = 0\n'
    assert str(load_spec(bad).failure()).splitlines() == [
        "<string>: recall.tools: expected true or false, found 'yes' (str)",
        "<string>: recall.page_tokens: expected an integer >= 1, found 0",
    ]
