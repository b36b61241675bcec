"""A refusal is the model's reply: its text is the reply's text and the next request holds it.

A Chat Completions refusal has no ``content``, only ``refusal``: ctxrules read it as an
empty reply, so `Reply.text` was '' and the next request left the model's answer out (two
user messages in a row, the model unaware it had refused). A Responses ``refusal`` part
was kept as the placeholder ``[refusal]``.
"""

from __future__ import annotations

import warnings

import pytest

import ctxrules

pytest.importorskip("openai")

from openai.types.chat import ChatCompletion
from openai.types.responses import Response

from ctxrules.testing.fake_sdk import FakeOpenAI

SAID = "I can't help with that."


def test_a_chat_completions_refusal_is_the_reply_and_is_sent_back() -> None:
    """The refusal text is `Reply.text`, and the assistant message of the next request."""
    refusal = ChatCompletion.model_validate(
        {
            "id": "c1",
            "object": "chat.completion",
            "created": 1,
            "model": "gpt-4o",
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "stop",
                    "message": {"role": "assistant", "content": None, "refusal": SAID},
                }
            ],
        }
    )
    ctx = ctxrules.Context(model="gpt-4o")
    ctx.add({"role": "user", "content": "Do the forbidden thing."})
    ctx.openai()
    assert ctx.record(refusal).text == SAID
    ctx.add({"role": "user", "content": "Then summarise the README."})
    request = ctx.openai()
    assert request["messages"][-2] == {"role": "assistant", "content": SAID}  # type: ignore[index]
    FakeOpenAI(["Sure."]).chat.completions.create(**request)


def test_a_responses_refusal_part_is_its_text_with_no_warning() -> None:
    """A Responses message whose content is a refusal part is read as the refusal's text."""
    response = Response.model_validate(
        {
            "id": "resp_1",
            "object": "response",
            "created_at": 1,
            "model": "gpt-5",
            "parallel_tool_calls": True,
            "tool_choice": "auto",
            "tools": [],
            "output": [
                {
                    "type": "message",
                    "id": "msg_1",
                    "role": "assistant",
                    "status": "completed",
                    "content": [{"type": "refusal", "refusal": SAID}],
                }
            ],
        }
    )
    ctx = ctxrules.Context(model="gpt-5")
    ctx.add({"role": "user", "content": "Do the forbidden thing."})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert ctx.record(response).text == SAID
        ctx.add({"role": "user", "content": "Why not?"})
        ctx.add({"role": "assistant", "content": [{"type": "refusal", "refusal": SAID}]})
    assert [m["content"] for m in ctx.openai()["messages"][1::2]] == [SAID, SAID]  # type: ignore[index]


def test_an_audio_reply_is_its_transcript() -> None:
    """A spoken reply has no content: its transcript is the reply's text, sent back as text."""
    spoken = ChatCompletion.model_validate(
        {
            "id": "c2",
            "object": "chat.completion",
            "created": 1,
            "model": "gpt-4o-audio-preview",
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "stop",
                    "message": {
                        "role": "assistant",
                        "content": None,
                        "audio": {
                            "id": "audio_1",
                            "data": "UklGR",
                            "expires_at": 1,
                            "transcript": "It builds with setuptools.",
                        },
                    },
                }
            ],
        }
    )
    ctx = ctxrules.Context(model="gpt-4o")
    ctx.add({"role": "user", "content": "What builds it?"})
    assert ctx.record(spoken).text == "It builds with setuptools."
    ctx.add({"role": "user", "content": "And the tests?"})
    messages = ctx.openai()["messages"]
    assert messages[-2] == {"role": "assistant", "content": "It builds with setuptools."}  # type: ignore[index]
