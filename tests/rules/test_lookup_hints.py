"""Lookup hints: what a stub or a cut keeps of the names the model may go on to use."""

from __future__ import annotations

import pytest

import ctxrules.rules.hints as hints_module
from ctxrules.commit import ContextItem
from ctxrules.rules.cap import cap_tool_result
from ctxrules.rules.facts import Facts
from ctxrules.rules.hints import lookup_hints, names
from ctxrules.rules.tool_aging import tool_stub

GO_FILE = "\n".join(
    [
        "package agent",
        'import "github.com/entireio/cli/cmd/entire/cli/paths"',
        *(
            f"func handler{n}(input *HookInput) {{ paths.RepoRoot(); input.field_{n} = {n} }}"
            for n in range(200)
        ),
        "// error: missing_field in agent.HookType",
    ]
)


def test_names_keeps_compound_names_and_skips_words() -> None:
    """Paths, dotted, snake and camel names are names; English words and numbers are not."""
    found = names("the parser calls load_config and cli.main in src/app/run.py 12345 Hello world")
    assert found == ["load_config", "cli.main", "src/app/run.py"]


def test_hints_are_bounded_deterministic_and_skip_what_is_shown() -> None:
    """Within the room, the same every time, never repeating the kept head."""
    first = lookup_hints(GO_FILE, 160, shown="paths.RepoRoot")
    assert first == lookup_hints(GO_FILE, 160, shown="paths.RepoRoot")
    assert len(first) <= 160
    assert "paths.RepoRoot" not in first
    assert "HookInput" in first
    assert lookup_hints(GO_FILE, 3) == ""


def test_a_failure_line_comes_first() -> None:
    """The first line reporting a failure leads the hints when it fits half the room."""
    text = "ok step_one\nok step_two\nFAILED tests/test_x.py::test_y - AssertionError\nmore_output here"
    assert lookup_hints(text, 200).startswith("names: FAILED tests/test_x.py::test_y")


def test_a_stub_names_what_its_head_leaves_out() -> None:
    """The aged stub: a short head, then the result's most used names, then the handle."""
    item = ContextItem("n", "tool", rendered=GO_FILE, tool_name="Read")
    stub = tool_stub(item, 40, 0, hint_chars=160)
    assert stub.startswith("[tool Read] output: package agent")
    assert "| names: " in stub
    assert "HookInput" in stub
    assert stub.endswith("[recall h:dmlldx2t]")
    assert "names" not in tool_stub(item, 40, 0)


def test_a_capped_result_names_its_cut_middle_within_max_chars() -> None:
    """The marker says what the middle holds; the capped text stays within max_chars."""
    item = ContextItem("n", "tool", rendered=GO_FILE, tool_name="Read")
    capped = cap_tool_result(4000, 0.33, hint_chars=1600).on_arrival(item, Facts())
    assert 3900 <= len(capped.rendered) <= 4000
    assert "[names: " in capped.rendered
    assert "input.field_100" in capped.rendered
    plain = cap_tool_result(4000, 0.33).on_arrival(item, Facts())
    assert "[names: " not in plain.rendered
    assert "input.field_100" not in plain.rendered
    # A middle with no name the ends do not show: no hints, and the room goes to the ends.
    same = ContextItem("m", "tool", rendered="same_name\n" * 2_000, tool_name="cat")
    assert (
        len(cap_tool_result(4000, 0.33, hint_chars=1600).on_arrival(same, Facts()).rendered) == 4000
    )


def test_hints_of_a_huge_result_read_a_bounded_part(monkeypatch: pytest.MonkeyPatch) -> None:
    """A 50 MB output: the hints read at most READ_CHARS of its middle, not the whole."""
    read: list[int] = []
    real = hints_module._known_names

    def counting(text: str) -> tuple[str, ...]:
        read.append(len(text))
        return real(text)

    monkeypatch.setattr(hints_module, "_known_names", counting)
    huge = ContextItem("n", "tool", rendered="some_name value\n" * 3_200_000, tool_name="cat")
    cap_tool_result(4000, 0.33, hint_chars=1600).on_arrival(huge, Facts())
    assert read
    assert max(read) <= hints_module.READ_CHARS + 1


def test_hints_of_a_text_seen_lately_are_not_worked_out_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The second request for the same hints is answered from the memo, equal to the first."""
    read: list[int] = []
    real = hints_module._known_names

    def counting(text: str) -> tuple[str, ...]:
        read.append(len(text))
        return real(text)

    monkeypatch.setattr(hints_module, "_known_names", counting)
    text = GO_FILE + "\n// seen_once_marker_7c1f"
    first = lookup_hints(text, 160, shown="paths.RepoRoot")
    assert lookup_hints(text, 160, shown="paths.RepoRoot") == first
    assert len(read) == 1
    # Another room or another shown text is another answer, worked out anew.
    assert lookup_hints(text, 120, shown="paths.RepoRoot") != first
    assert len(read) == 2


def test_the_hints_memo_forgets_its_oldest_within_its_bounds() -> None:
    """At most ``entries`` answers and ``characters`` of keys are kept; a key over the bound never.

    A seen name counts four characters: a run's set of names is in every key of that run.
    """
    memo = hints_module._Memo(entries=2, characters=30)
    none: frozenset[str] = frozenset()
    for text in ("aaaa", "bbbb", "cccc"):
        memo.keep((text, 10, "", none), text.upper())
    assert list(memo.found) == [("bbbb", 10, "", none), ("cccc", 10, "", none)]
    memo.keep(("d" * 20, 10, "e" * 6, none), "x")
    assert list(memo.found) == [("cccc", 10, "", none), ("d" * 20, 10, "e" * 6, none)]
    assert memo.held == 30
    memo.keep(("f" * 31, 10, "", none), "y")
    assert ("f" * 31, 10, "", none) not in memo.found
    assert memo.held == 30
    seen = frozenset({"load_config", "parse_args"})
    memo.keep(("g" * 20, 10, "", seen), "z")
    assert list(memo.found) == [("g" * 20, 10, "", seen)]
    assert memo.held == 28


def test_a_line_of_code_naming_an_error_type_is_not_a_failure_line() -> None:
    """Code that names an error (Go's ``error``, ``except ValueError:``) leaves the room to names."""
    code = "func Start(ctx context.Context) error {\n  return start_agent(ctx)\n}\nexcept ValueError:\n"
    assert lookup_hints(code, 200) == "names: context.Context, start_agent, ValueError"
    for report in (
        "ValueError: bad start_agent",
        "error[E0425]: cannot find value",
        "Traceback (most recent call last):",
        "E   AssertionError: assert 1 == 2",
        "bash: start_agent: command not found",
    ):
        assert lookup_hints(f"ok\n{report}\nmore", 200).startswith(
            f"names: {' '.join(report.split())}"
        )


def test_names_seen_elsewhere_key_the_memo_only_by_the_texts_own(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A request that grew names the result does not hold asks for the same hints: no new work.

    Pending results are stubbed again at every weighed batch point while the request's names
    in view grow; each answer still equals the hints worked out from the whole ``seen``.
    """
    worked: list[frozenset[str]] = []
    real = hints_module._lookup_hints

    def counting(
        text: str, chars: int, shown: str, seen: frozenset[str], failure: str | None
    ) -> str:
        worked.append(seen)
        return real(text, chars, shown, seen, failure)

    monkeypatch.setattr(hints_module, "_lookup_hints", counting)
    text = GO_FILE + "\n// seen_key_marker_9d2e"
    early = frozenset({"unrelated_name", "other.module"})
    later = early | {"written_since", "src/new/file.py"}
    first = lookup_hints(text, 160, seen=early)
    assert lookup_hints(text, 160, seen=later) == first
    assert len(worked) == 1
    assert first == real(text, 160, "", later, None)
    # A name of the text now in view changes the answer, and is worked out anew.
    in_view = later | {"HookInput"}
    changed = lookup_hints(text, 160, seen=in_view)
    assert changed == real(text, 160, "", in_view, None)
    assert "HookInput" in first
    assert "HookInput" not in changed
    assert len(worked) == 2
