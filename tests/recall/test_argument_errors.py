"""A malformed recall call is answered with what was wrong, so the model can send it right."""

from __future__ import annotations

import pytest

import ctxrules
from ctxrules.dag import Call, Graph
from ctxrules.recall import answer_tool_call, handle_for, recall_index
from ctxrules.spec.recall import RecallOptions
from ctxrules.tokens import HeuristicCounter

RULER = HeuristicCounter()


def _answer(arguments: dict) -> str:
    graph = Graph().append(Call("t1", "tool", name="cat", output="x" * 50)).unwrap()
    found = answer_tool_call("recall", arguments, index=recall_index(graph), tokenizer=RULER)
    assert found.is_error
    return found.text


@pytest.mark.parametrize(
    ("arguments", "says"),
    [
        ({}, "recall needs a handle"),
        ({"handle": ["h:a"]}, "recall needs a handle"),
        ({"handle": handle_for("t1"), "page": "2"}, "page must be an integer >= 1, not '2'"),
        ({"handle": handle_for("t1"), "page": 0}, "page must be an integer >= 1, not 0"),
        ({"handle": handle_for("t1"), "page": True}, "page must be an integer >= 1, not True"),
    ],
)
def test_the_answer_names_the_argument_that_is_wrong(arguments: dict, says: str) -> None:
    """A wrong page is not reported as a missing handle."""
    assert says in _answer(arguments)


def test_a_page_written_as_a_whole_float_is_read() -> None:
    """JSON has one number type: a model's 2.0 is page 2."""
    graph = Graph().append(Call("t1", "tool", name="cat", output="x" * 50)).unwrap()
    found = answer_tool_call(
        "recall",
        {"handle": handle_for("t1"), "page": 1.0},
        index=recall_index(graph),
        tokenizer=RULER,
    )
    assert not found.is_error


@pytest.mark.parametrize("raw", ['{"handle": h:abc', "[1, 2]", "null", '"h:abcdefgh"'])
def test_arguments_that_are_no_json_object_are_named_so(raw: str) -> None:
    """Arguments that do not parse, or parse to no object, get an answer saying so."""
    ctx = ctxrules.Context("default", model="gpt-4o", recall=RecallOptions(tools=True))
    ctx.add({"role": "user", "content": "go"})
    call = {"id": "c1", "type": "function", "function": {"name": "recall", "arguments": raw}}
    ctx.add({"role": "assistant", "content": None, "tool_calls": [call]})
    text = ctx.answer_recall(call)
    assert text is not None
    assert text.startswith("[recall's arguments must be a JSON object")


def test_aanswer_recall_answers_off_the_event_loop() -> None:
    """`await ctx.aanswer_recall(call)` answers as `answer_recall` does, in a worker thread, not the loop's."""
    import asyncio  # noqa: PLC0415 - only this test runs a loop
    import threading  # noqa: PLC0415 - see above

    import ctxrules  # noqa: PLC0415 - see above
    from ctxrules.spec.recall import RecallOptions  # noqa: PLC0415 - see above

    ctx = ctxrules.Context(model="gpt-4o", recall=RecallOptions(tools=True))
    ctx.add({"role": "user", "content": "go"})
    ctx.openai()
    ctx.record({"choices": [{"message": {"role": "assistant", "content": None, "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "recall", "arguments": '{"handle": "h:zzzzzzzz"}'}}]}}]})  # fmt: skip
    seen: list[str] = []
    answer = ctx.answer_recall

    def spy(call: object) -> str | None:
        seen.append(threading.current_thread().name)
        return answer(call)

    ctx.answer_recall = spy  # type: ignore[method-assign]

    async def main() -> str | None:
        loop_thread = threading.current_thread().name
        text = await ctx.aanswer_recall({"id": "c1", "type": "function", "function": {"name": "recall", "arguments": '{"handle": "h:zzzzzzzz"}'}})  # fmt: skip
        assert seen
        assert seen[0] != loop_thread
        return text

    text = asyncio.run(main())
    assert text is not None
    assert text.startswith("[no item in this session has the handle asked for")
