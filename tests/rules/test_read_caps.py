"""``read_names_share``: a file read's cut keeps the middle's names, a command's output its ends."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from ctxrules.commit import ContextCommit, ContextItem, State
from ctxrules.rules import Facts
from ctxrules.rules.artifacts import reads_file
from ctxrules.rules.cap import cap_tool_result
from ctxrules.rules.handles import handles_in
from ctxrules.spec import load_spec
from ctxrules.tokens import HeuristicCounter

RULER = HeuristicCounter()
DEFAULT = Path(__file__).resolve().parents[2] / "specs" / "default.toml"
#: A Go file of 120 handlers, each name once in a signature and once in a call: about
#: 9,400 characters, most of its names in the middle a 2,500-character cap cuts.
SOURCE = "package hooks\n\n" + "".join(
    f"func handleEvent{n:03d}(ctx *hookContext) error {{\n\treturn dispatchStep{n:03d}(ctx)\n}}\n\n"
    for n in range(120)
)
READ = '{"file_path": "/repo/cmd/hooks/handlers.go"}'
COMMAND = '{"command": "go test ./cmd/hooks/... 2>&1"}'


def _item(arguments: str, tool: str, text: str = SOURCE, node: str = "t0") -> ContextItem:
    return ContextItem(
        node,
        "tool",
        rendered=text,
        tool_name=tool,
        tool_call_id=f"c_{node}",
        arguments=arguments,
        tokens=RULER.count(text),
    )


def _capped(item: ContextItem, share: float) -> str:
    cap = cap_tool_result(2500, 0.33, hint_chars=1600, read_names_share=share)
    return cap.on_arrival(item, Facts(tokenizer=RULER)).rendered


def _handlers(text: str) -> int:
    return sum(f"handleEvent{n:03d}" in text for n in range(120))


def test_a_file_read_keeps_more_of_the_middles_names_in_the_same_room() -> None:
    """At 0.9 the cut of a Read names a third more handlers than at 0, in as many characters."""
    read = _item(READ, "Read")
    plain, named = _capped(read, 0.0), _capped(read, 0.9)
    assert len(named) <= len(plain)
    assert _handlers(plain) <= 55
    assert _handlers(named) >= 68
    # Head and tail are still there, shorter: the package line and the last brace.
    assert named.startswith("package hooks")
    assert named.rstrip().endswith("}")


def test_a_commands_output_is_cut_as_before() -> None:
    """A command's output keeps its ends (its errors): the share does not touch it."""
    log = "".join(
        f"=== RUN TestHook{n:03d}\n--- PASS: TestHook{n:03d} (0.00s)\n" for n in range(200)
    )
    log += "FAIL: TestHook_final_step expected 3 got 2\nFAIL\tgithub.com/x/hooks\t0.412s\n"
    command = _item(COMMAND, "bash", log)
    assert _capped(command, 0.9) == _capped(command, 0.0)
    assert "FAIL\tgithub.com/x/hooks" in _capped(command, 0.9)


def test_what_counts_as_a_file_read() -> None:
    """A call naming a path and writing nothing; an edit, a write or a shell command is not one."""
    assert reads_file("Read", READ)
    assert reads_file("Grep", '{"pattern": "handleEvent", "path": "cmd/hooks"}')
    assert reads_file("str_replace_editor", '{"command": "view", "path": "/repo/a.py"}')
    assert not reads_file("str_replace_editor", '{"command": "create", "path": "/repo/a.py"}')
    assert not reads_file("Edit", '{"file_path": "/repo/a.py", "old_string": "x"}')
    assert not reads_file("Write", '{"file_path": "/repo/a.py", "content": "x"}')
    assert not reads_file("apply_patch", '{"path": "a.py", "input": "*** Update File: a.py"}')
    assert not reads_file("bash", COMMAND)
    assert not reads_file(None, "")


@given(
    words=st.lists(
        st.from_regex(r"[a-z]{2,9}(_[a-z]{2,9})?|[A-Z][a-z]{2,6}[A-Z][a-z]{2,6}", fullmatch=True),
        min_size=1,
        max_size=80,
    ),
    repeat=st.integers(1, 400),
    share=st.floats(0.0, 1.0),
    limit=st.integers(200, 6000),
)
def test_a_read_cut_never_grows_and_names_its_handle(
    words: list[str], repeat: int, share: float, limit: int
) -> None:
    """Invariants 3 and 16: whatever the share, the cut is no longer than the result and names its handle."""
    text = "\n".join(words * repeat)
    item = _item(READ, "Read", text)
    cap = cap_tool_result(limit, 0.33, hint_chars=1600, read_names_share=share)
    capped = cap.on_arrival(item, Facts(tokenizer=RULER))
    if len(text) <= limit:
        assert capped == item
        return
    assert capped.state is State.AGED
    assert len(capped.rendered) <= len(text)
    assert len(capped.rendered) <= limit + 8
    assert handles_in(capped.rendered)


def _said(node: str, text: str, turn: int) -> ContextItem:
    return ContextItem(node, "assistant", rendered=text, turn=turn, tokens=RULER.count(text))


def test_a_used_file_read_keeps_its_names_long_after_it_ages() -> None:
    """The default spec, 40 turns on: the stub of a Read the assistant worked with still names most handlers.

    The model writes its own files after the file it read, by name, long after the read
    aged; before ``read_names_share`` the cap kept about a third of these names and the
    stub fewer.
    """
    items = [
        ContextItem("u0", "user", rendered="Add an OpenClaw hook set like the Gemini one.", turn=0),
        _said("a0", "Reading the handlers first.", 0),
        _item(READ, "Read"),
        _said("a1", "handleEvent001 calls dispatchStep001; I will follow that shape.", 1),
    ] + [_said(f"a{t}", f"step {t}", t) for t in range(2, 41)]
    pipeline = load_spec(DEFAULT).unwrap()
    facts = Facts(now=1e6, tokenizer=RULER, head_turn=40, context_window=200_000)
    after = pipeline.run(ContextCommit("s").with_items(items), facts)
    stub = next(i for i in after.items if i.is_tool)
    assert stub.state is State.AGED
    assert stub.reason == "tail_window"
    assert _handlers(stub.rendered) > 60
    assert handles_in(stub.rendered)
