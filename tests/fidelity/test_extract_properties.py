"""The extractor and the history index agree: a reference read from a text is found in that text."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from ctxrules.dag import Call, Graph
from ctxrules.fidelity import HistoryIndex, atoms, is_distinctive, references
from ctxrules.fidelity.extract import key_tokens

#: Pieces real tool output is made of: names, paths, hashes, punctuation, words, error lines.
PIECES = st.sampled_from(
    [
        "parse_config",
        "ContextItem",
        "src/app/main.py",
        "/repo/lib/x_y.go",
        "966e0df2",
        "os.path.join",
        "ctxrules.engine.replay",
        "hello",
        "the",
        "Error",
        "--no-verify",
        "`load(strict_mode=True, n=2)`",
        "\nKeyError: 'db_url' in load_settings\n",
        "\nE   ValueError: bad max_chars\n",
        "(",
        ")",
        ".",
        ",",
        ":",
        "'",
        '"',
        " ",
        "\n",
        "/",
        "-",
        "_",
        "x",
        "7",
    ]
)
TEXTS = st.lists(PIECES, max_size=30).map("".join)


@given(TEXTS)
def test_every_single_token_reference_is_an_atom_of_its_text(text: str) -> None:
    """A token the extractor finds in a text is a key the index files that text under."""
    keys = atoms(text)
    for reference in references(text):
        if " " not in reference and is_distinctive(reference):
            assert reference in keys
        else:
            assert reference in text
            assert any(token in keys for token in key_tokens(reference))


@given(TEXTS, TEXTS)
def test_a_reference_first_read_in_a_tool_result_is_found_there(said: str, result: str) -> None:
    """Every reference of a tool's output that the user did not write first counts as from the tool."""
    graph = Graph()
    for call in (
        Call("u1", "user", output=said or "hi"),
        Call("a1", "assistant", output="", predecessor="u1"),
        Call("t1", "tool", name="Read", input={}, output=result, caller="a1"),
    ):
        graph = graph.append(call).unwrap()
    index = HistoryIndex()
    index.add_call(graph, graph.nodes["u1"])
    index.add_call(graph, graph.nodes["a1"])
    words = atoms(said or "hi")
    for reference in references(result):
        where = index.containing(reference)
        assert where, reference
        # A token is matched whole (``parse_config`` is not in ``parse_configs``); a
        # multi-word reference verbatim.
        whole = " " not in reference and is_distinctive(reference)
        user_first = reference in words if whole else reference in (said or "hi")
        assert index.sources[where[0]].kind == ("said" if user_first else "tool"), reference
