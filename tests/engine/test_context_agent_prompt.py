"""`Context(agent=..., memory=...)`: the engine's layered system prompt reaches every request."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ctxrules.engine.context import ConfigError, Context
from ctxrules.render import Message, TextBlock, count_messages
from ctxrules.render.system_prompt import AgentProfile, Skill, build_system_prompt
from ctxrules.tokens import HeuristicCounter

PDF = Skill("pdf", "Read PDFs.\nLonger text.", "/skills/pdf/SKILL.md")


def agent_in(folder: Path, **fields: Any) -> AgentProfile:
    """An agent with every layer: identity, a workspace file, an inline prompt and a skill."""
    (folder / "AGENTS.md").write_text("Run the tests before you answer.", encoding="utf-8")
    return AgentProfile(
        "Ada",
        "a1",
        mentions=("@ada",),
        system_prompt="Be brief.",
        workspace=str(folder),
        skills=(PDF,),
        **fields,
    )


def test_every_layer_reaches_the_request_and_memory_is_read_each_time(tmp_path: Path) -> None:
    """The OpenAI system message is the built prompt; a changed memory shows in the next request."""
    agent = agent_in(tmp_path)
    notes = ["The user prefers tabs."]
    ctx = Context(model="gpt-4o", agent=agent, memory=lambda: notes[-1])
    ctx.add({"role": "user", "content": "Hi."})
    first = ctx.openai()["messages"][0]
    assert first == {
        "role": "system",
        "content": build_system_prompt(agent, memory=lambda: "The user prefers tabs.").text,
    }
    for layer in ("Ada (agent_id=a1)", "# AGENTS.md\nRun the tests", "Be brief.", "- pdf: "):
        assert layer in first["content"]
    notes.append("The user now prefers spaces.")
    second = ctx.openai()["messages"][0]["content"]
    assert second.endswith("The user now prefers spaces.\n── End of agent prompt ──")
    assert ctx.last is not None
    assert ctx.last.system == second


def test_the_anthropic_request_and_the_count_use_the_same_prompt(tmp_path: Path) -> None:
    """The Anthropic system block is the built prompt, and the engine counts its tokens as fixed."""
    agent = agent_in(tmp_path)
    counter = HeuristicCounter()
    plain = Context(model="claude-sonnet-4-5", tokenizer=counter)
    layered = Context(model="claude-sonnet-4-5", agent=agent, tokenizer=counter)
    for ctx in (plain, layered):
        ctx.add({"role": "user", "content": "Hi."})
    assert layered.anthropic()["system"][0]["text"] == build_system_prompt(agent).text
    plain.anthropic()
    assert plain.last is not None
    assert layered.last is not None
    prompt = (Message("system", (TextBlock(build_system_prompt(agent).text),)),)
    assert layered.last.budget.system == count_messages(prompt, counter)
    assert plain.last.budget.system == 0


def test_a_failing_memory_is_skipped_with_a_warning(tmp_path: Path) -> None:
    """Memory that raises leaves it out of the prompt and says so in the turn's warnings."""

    def broken() -> str:
        raise OSError("notes.db is locked")

    ctx = Context(model="gpt-4o", agent=agent_in(tmp_path), memory=broken)
    ctx.add({"role": "user", "content": "Hi."})
    ctx.openai()
    assert ctx.last is not None
    assert ctx.last.system == build_system_prompt(agent_in(tmp_path)).text
    assert "system prompt: memory skipped: OSError: notes.db is locked" in ctx.last.warnings


def test_without_an_agent_the_system_text_is_sent_as_it_is() -> None:
    """``system=`` alone is unchanged: no markers, no layers."""
    ctx = Context(model="gpt-4o", system="You are a coding agent.")
    ctx.add({"role": "user", "content": "Hi."})
    assert ctx.openai()["messages"][0] == {"role": "system", "content": "You are a coding agent."}


#: id, keyword arguments of Context, the whole message.
BAD: list[tuple[str, dict[str, Any], str]] = [
    (
        "agent a str",
        {"agent": "Ada"},
        "agent='Ada': expected None or an AgentProfile (identity, workspace, inline prompt, skills)",
    ),
    (
        "memory a str",
        {"agent": AgentProfile("Ada", "a1"), "memory": "notes"},
        "memory='notes': expected a function returning the memory text",
    ),
    (
        "system beside an agent",
        {"agent": AgentProfile("Ada", "a1"), "system": "Be brief."},
        (
            "system='Be brief.': the agent= builds the system prompt; "
            "pass the text as AgentProfile(system_prompt=...) instead"
        ),
    ),
    (
        "memory without an agent",
        {"memory": lambda: "notes"},
        (
            "memory=<lambda>: the memory is a layer of the agent's system prompt; "
            "pass agent=AgentProfile(...) too, or put the text in system="
        ),
    ),
    (
        "a prompt that fills the window",
        {"agent": AgentProfile("Ada", "a1", system_prompt="word " * 4_000), "window": 2_048},
        (
            "window=2,048 leaves 1,024 tokens for the input (1,024 are kept for the answer), "
            "and the system prompt (5,295) and tool schemas (0) alone take 5,295; "
            "pass a larger window, a shorter system= or fewer tools="
        ),
    ),
]


@pytest.mark.parametrize(("kwargs", "message"), [c[1:] for c in BAD], ids=[c[0] for c in BAD])
def test_bad_prompt_settings_say_what_to_pass(kwargs: dict[str, Any], message: str) -> None:
    """Each bad agent or memory setting is a ConfigError with the whole fix in its text."""
    with pytest.raises(ConfigError) as raised:
        Context(model="gpt-4o", tokenizer=HeuristicCounter(), **kwargs)
    assert str(raised.value) == message
