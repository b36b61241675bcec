"""A recall answer reaches the model byte for byte: pages fit under the pipeline's cap (issue 28)."""

from __future__ import annotations

import json

import attrs
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import ctxrules
from ctxrules.dag import Call, Graph
from ctxrules.recall import handle_for
from ctxrules.recall.lookup import RecallIndex, recall_index
from ctxrules.recall.tools import answer_recall, answer_tool_call
from ctxrules.spec.recall import RecallOptions
from ctxrules.testing.fake_sdk import FakeAnthropic, FakeOpenAI
from ctxrules.tokens import HeuristicCounter

pytest.importorskip("openai")
pytest.importorskip("anthropic")

#: Prose of about 20,000 characters: over the default cap, more than one page at 2,000 tokens.
PROSE = "".join(
    f"Paragraph {i}: the parser reads each record, checks its header and keeps going.\n"
    for i in range(240)
)
TOOLS = [{"name": "read_file", "description": "Read a file", "input_schema": {"type": "object"}}]


def _tool_messages(request: dict[str, object], provider: str) -> list[str]:
    """The tool results of a request, as text, oldest first."""
    messages = request["messages"]
    assert isinstance(messages, list)
    if provider == "openai":
        return [m["content"] for m in messages if m["role"] == "tool"]
    return [
        block["content"] if isinstance(block["content"], str) else block["content"][0]["text"]
        for m in messages
        if isinstance(m["content"], list)
        for block in m["content"]
        if block.get("type") == "tool_result"
    ]


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_every_page_of_a_capped_result_reaches_the_model_whole(provider: str) -> None:
    """Default spec: each recalled page is in the next request byte for byte, and the pages join to the original."""
    ctx = ctxrules.Context("default", model="gpt-4o", tools=TOOLS, recall=RecallOptions(tools=True))
    ctx.add({"role": "user", "content": "what does notes.md say?"})
    script = [[("read_file", {"path": "notes.md"})]]
    client = FakeOpenAI(script) if provider == "openai" else FakeAnthropic(script)

    def send() -> ctxrules.Reply:
        if provider == "openai":
            return ctx.record(client.chat.completions.create(**ctx.openai()))
        return ctx.record(client.messages.create(**ctx.anthropic()))

    reply = send()
    ctx.add_tool_result(reply.tool_calls[0].id, PROSE)
    handle = handle_for(ctx.session.graph.callees_of(ctx.session.head or "")[0])
    bodies, page, pages = [], 1, 1
    while page <= pages:
        client.script.append([("recall", {"handle": handle, "page": page})])
        call = send().tool_calls[0]
        answer = ctx.answer_recall(call)
        assert answer is not None
        request = ctx.openai() if provider == "openai" else ctx.anthropic()
        assert _tool_messages(request, provider)[-1] == answer
        header, body = answer.split("\n", 1)
        pages = int(header.split(" of ")[-1].split(";")[0].rstrip("]"))
        bodies.append(body)
        page += 1
    assert "".join(bodies) == PROSE


@settings(max_examples=60, deadline=None)
@given(
    text=st.text(min_size=0, max_size=3_000),
    arguments=st.text(max_size=600) | st.text(min_size=1_000, max_size=4_000),
    max_chars=st.integers(200, 2_000),
    page_tokens=st.integers(1, 800),
)
def test_every_page_fits_and_the_pages_join(
    text: str, arguments: str, max_chars: int, page_tokens: int
) -> None:
    """Under any cap from its minimum up, each answer fits in ``max_chars`` and shows all.

    The output's pages join to the output; the arguments are shown whole in the first
    header or, when too long for it, in pages of their own that come first and join to them.
    """
    # Every page is asked for in turn, and each answer cuts the text into its pages again:
    # the work grows with the square of the pages. The smallest pages are tried on shorter
    # texts (with one-token pages and 7,000 characters, one example took minutes).
    assume(len(text) + len(arguments) <= 40 * page_tokens)
    graph = Graph().append(Call("t1", "tool", name="cat", input=arguments, output=text)).unwrap()
    index, ruler = recall_index(graph), HeuristicCounter()
    original = index.get(handle_for("t1"))
    assert original is not None
    first = answer_recall(
        index,
        {"handle": handle_for("t1")},
        tokenizer=ruler,
        page_tokens=page_tokens,
        max_chars=max_chars,
    )
    answers = [first] + [
        answer_recall(
            index,
            {"handle": handle_for("t1"), "page": page},
            tokenizer=ruler,
            page_tokens=page_tokens,
            max_chars=max_chars,
        )
        for page in range(2, first.pages + 1)
    ]
    assert all(len(a.text) <= max_chars and not a.is_error for a in answers)
    assert "".join(a.body for a in answers if a.part == "output") == text
    parts = [a.part for a in answers]
    assert parts == sorted(parts)  # "arguments" pages, if any, before "output" pages
    argument_pages = [a.body for a in answers if a.part == "arguments"]
    if argument_pages:
        assert "".join(argument_pages) == original.arguments
    else:
        assert f"; arguments {original.arguments}" in first.text or not original.arguments


def test_long_arguments_are_recalled_whole_in_pages_of_their_own() -> None:
    """A Write whose content is far longer than an answer: every character of it comes back."""
    content = "".join(f"line {i}: value_{i} = compute({i})\n" for i in range(400))
    call = Call(
        "t1",
        "tool",
        name="Write",
        input={"file_path": "src/app.py", "content": content},
        output="ok",
    )
    index = recall_index(Graph().append(call).unwrap())
    ruler = HeuristicCounter()
    answers, page = [], 1
    while True:
        answer = answer_recall(
            index, {"handle": handle_for("t1"), "page": page}, tokenizer=ruler, max_chars=4_000
        )
        answers.append(answer)
        if page == answer.pages:
            break
        page += 1
    arguments = "".join(a.body for a in answers if a.part == "arguments")
    assert json.loads(arguments)["content"] == content
    assert answers[-1].part == "output"
    assert answers[-1].body == "ok"
    assert answers[0].text.startswith(f"[{handle_for('t1')}: original of tool Write, page 1 of ")
    assert "; its arguments; recall page 2 for more]" in answers[0].text


@attrs.frozen
class _Hit:
    node_id: str
    snippet: str


def test_a_search_answer_lists_the_hits_that_fit() -> None:
    """Twenty long snippets under a 2,000-character cap: the answer fits and says how many it left out."""
    hits = [_Hit(f"n{i}", f"match {i} " + "word " * 80) for i in range(20)]
    answer = answer_tool_call(
        "search_history",
        {"query": "match", "limit": 20},
        index=RecallIndex(),
        tokenizer=HeuristicCounter(),
        search=lambda _q, _n: hits,
        max_chars=2_000,
    )
    assert len(answer.text) <= 2_000
    shown = answer.text.count("\nh:") + 1
    assert answer.text.endswith(f"[{20 - shown} more matches not shown; narrow the query]")
    unbounded = answer_tool_call(
        "search_history",
        {"query": "match", "limit": 20},
        index=RecallIndex(),
        tokenizer=HeuristicCounter(),
        search=lambda _q, _n: hits,
    )
    assert unbounded.text.count("h:") == 20
