"""System prompt assembly in stable-first order, so a provider's cached prefix survives (001 §1)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import attrs

BEGIN = "── Agent prompt ──"
END = "── End of agent prompt ──"
WORKSPACE_FILES = ("AGENTS.md", "SOUL.md", "USER.md")
MAX_SKILLS = 20
MAX_SKILL_LINE = 250


@attrs.frozen
class Skill:
    """An enabled skill: its name, description and the absolute path of its SKILL.md."""

    name: str
    description: str
    path: str


@attrs.frozen
class AgentProfile:
    """What the system prompt is built from: identity, inline prompt, skills, workspace, engine."""

    name: str
    agent_id: str
    mentions: tuple[str, ...] = ()
    system_prompt: str = ""
    skills: tuple[Skill, ...] = ()
    workspace: str | None = None
    context_engine: str | None = None


@attrs.frozen
class SystemPrompt:
    """The assembled text and a warning per layer that failed and was skipped."""

    text: str
    warnings: tuple[str, ...] = ()


def _identity(agent: AgentProfile) -> str:
    mentions = ", ".join(agent.mentions) or agent.name
    return (
        f"You are {agent.name} (agent_id={agent.agent_id}). Users may address you via: {mentions}."
    )


def _workspace(agent: AgentProfile, read_file: Callable[[Path], str]) -> str:
    if agent.workspace is None:
        return ""
    parts = []
    for name in WORKSPACE_FILES:
        path = Path(agent.workspace) / name
        text = read_file(path).strip()
        if text:
            parts.append(f"# {name}\n{text}")
    return "\n\n".join(parts)


def _skills(agent: AgentProfile) -> str:
    if not agent.skills:
        return ""
    lines = ["<available_skills>"]
    for skill in agent.skills[:MAX_SKILLS]:
        first = (skill.description.strip().splitlines() or [""])[0][:MAX_SKILL_LINE]
        lines.append(f"- {skill.name}: {first} ({skill.path})")
    if len(agent.skills) > MAX_SKILLS:
        lines.append(f"... (+{len(agent.skills) - MAX_SKILLS} more)")
    lines.append("</available_skills>")
    return "\n".join(lines)


def read_if_present(path: Path) -> str:
    """The file's text, or "" when it does not exist (a workspace file is optional)."""
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return ""


def build_system_prompt(
    agent: AgentProfile,
    *,
    read_file: Callable[[Path], str] = read_if_present,
    memory: Callable[[], str] = str,
) -> SystemPrompt:
    """Identity, workspace files, inline prompt, skill index, memory — most stable first.

    A layer that raises is skipped with a warning; equal inputs give byte-identical text.

    >>> print(build_system_prompt(AgentProfile("Ada", "a1", system_prompt="Be brief.")).text)
    ── Agent prompt ──
    You are Ada (agent_id=a1). Users may address you via: Ada.
    <BLANKLINE>
    Be brief.
    ── End of agent prompt ──
    """
    layers: list[tuple[str, Callable[[], str]]] = [
        ("identity", lambda: _identity(agent)),
        ("workspace files", lambda: _workspace(agent, read_file)),
        ("inline prompt", agent.system_prompt.strip),
        ("skill index", lambda: _skills(agent)),
        ("memory", lambda: str(memory()).strip()),
    ]
    parts: list[str] = []
    warnings: list[str] = []
    for name, layer in layers:
        try:
            text = layer()
        except Exception as error:  # noqa: BLE001 - a failing layer must never fail the turn
            warnings.append(f"system prompt: {name} skipped: {type(error).__name__}: {error}")
            continue
        if text:
            parts.append(text)
    return SystemPrompt(f"{BEGIN}\n" + "\n\n".join(parts) + f"\n{END}", tuple(warnings))
