"""Adapter benchmarks: rendered messages translated to the OpenAI and Anthropic formats."""

from __future__ import annotations

from typing import Any

import pytest

from ctxrules.render import Message, render_commit, to_anthropic, to_openai


@pytest.fixture
def messages(history: Any) -> tuple[Message, ...]:
    """The rendered messages of the history's commit."""
    return render_commit(history.ruled)


def test_to_openai(benchmark: Any, history: Any, messages: tuple[Message, ...]) -> None:
    """Chat Completions messages from the rendered history."""
    benchmark.extra_info.update(kind="to_openai", size=history.size)
    out = benchmark(to_openai, messages)
    assert out


def test_to_anthropic(benchmark: Any, history: Any, messages: tuple[Message, ...]) -> None:
    """An Anthropic Messages request from the rendered history."""
    benchmark.extra_info.update(kind="to_anthropic", size=history.size)
    request = benchmark(to_anthropic, messages)
    assert request.messages
