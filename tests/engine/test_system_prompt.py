"""System prompt assembly: stable-first order, skipped layers, skill index limits, byte identity."""

from __future__ import annotations

from pathlib import Path

from ctxrules.render.system_prompt import BEGIN, END, AgentProfile, Skill, build_system_prompt


def _agent(tmp_path: Path, **fields: object) -> AgentProfile:
    (tmp_path / "AGENTS.md").write_text("Use ruff.", encoding="utf-8")
    (tmp_path / "SOUL.md").write_text("   \n", encoding="utf-8")
    (tmp_path / "USER.md").write_text("The user is Ada.", encoding="utf-8")
    return AgentProfile(
        "Bob",
        "b1",
        mentions=("@bob",),
        system_prompt="Be precise.",
        workspace=str(tmp_path),
        **fields,
    )  # type: ignore[arg-type]


def test_layers_come_in_stable_first_order_between_markers(tmp_path: Path) -> None:
    """Identity, workspace files (empty ones skipped), inline prompt, skills, memory; wrapped in markers."""
    agent = _agent(tmp_path, skills=(Skill("pdf", "Read PDFs.\nMore.", "/skills/pdf/SKILL.md"),))
    text = build_system_prompt(agent, memory=lambda: "Remember: tabs.").text
    assert text == (
        f"{BEGIN}\n"
        "You are Bob (agent_id=b1). Users may address you via: @bob.\n\n"
        "# AGENTS.md\nUse ruff.\n\n# USER.md\nThe user is Ada.\n\n"
        "Be precise.\n\n"
        "<available_skills>\n- pdf: Read PDFs. (/skills/pdf/SKILL.md)\n</available_skills>\n\n"
        "Remember: tabs.\n"
        f"{END}"
    )


def test_equal_inputs_give_byte_identical_text(tmp_path: Path) -> None:
    """Two builds from equal inputs are byte-identical (a cached prefix stays valid)."""
    agent = _agent(tmp_path)
    assert build_system_prompt(agent).text.encode() == build_system_prompt(agent).text.encode()


def test_a_failing_layer_is_skipped_with_a_warning(tmp_path: Path) -> None:
    """A memory backend that raises costs its layer and leaves a warning, not the turn."""

    def broken() -> str:
        raise ConnectionError("memory store down")

    prompt = build_system_prompt(_agent(tmp_path), memory=broken)
    assert prompt.warnings == ("system prompt: memory skipped: ConnectionError: memory store down",)
    assert "Be precise." in prompt.text


def test_unreadable_workspace_is_skipped(tmp_path: Path) -> None:
    """A workspace reader that fails skips the workspace layer only."""

    def denied(_: Path) -> str:
        raise PermissionError("denied")

    prompt = build_system_prompt(_agent(tmp_path), read_file=denied)
    assert "AGENTS.md" not in prompt.text
    assert prompt.warnings[0].startswith("system prompt: workspace files skipped: PermissionError")


def test_skill_index_is_limited_to_20_and_250_characters(tmp_path: Path) -> None:
    """At most 20 skills, each first line cut at 250 characters, then '... (+N more)'."""
    skills = tuple(Skill(f"s{i}", "x" * 400, f"/s{i}") for i in range(23))
    text = build_system_prompt(_agent(tmp_path, skills=skills)).text
    assert text.count("- s") == 20
    assert f"- s0: {'x' * 250} (/s0)" in text
    assert "... (+3 more)" in text
