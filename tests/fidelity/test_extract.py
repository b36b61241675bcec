"""The reference extractor's rules (docs/replay.md#fidelity), one table of examples each way."""

from __future__ import annotations

import pytest

from ctxrules.fidelity.extract import atoms, is_distinctive, key_tokens, references

#: Tokens that are references, with the rule that admits each.
DISTINCTIVE = [
    ("parse_config", "snake_case"),
    ("MAX_CHARS", "snake_case in capitals"),
    ("ContextItem", "CamelCase"),
    ("getElementById", "camelCase"),
    ("HTTPServer", "capitals then CamelCase"),
    ("966e0df2", "hex hash"),
    ("2f112b29cac074466dd58aaefc6547b5ccd2d843", "full hash"),
    ("123e4567-e89b-12d3-a456-426614174000", "uuid"),
    ("src/app/main.py", "relative path"),
    ("/etc/nginx", "rooted path"),
    ("./run", "dot path"),
    ("a/b/c", "three segments"),
    ("setup.py", "file name"),
    ("ctxrules.engine.replay", "dotted name"),
    ("self.max_chars", "self and a distinctive rest"),
    ("--no-verify", "flag with an inner hyphen"),
    ("v0.4.3", "version"),
    ("3.11.2", "version without letters"),
    ("gpt-4o", "kebab with a digit"),
    (".env.local", "dot file with an extension"),
    ("/setup.py", "file at the root"),
    ("1048576KB", "long number with a unit"),
]

#: Tokens that are not, with the rule that keeps each out.
NOT_DISTINCTIVE = [
    ("hello", "English word"),
    ("Error", "capitalised word"),
    ("TODO", "capitals alone"),
    ("ValueError", "builtin name"),
    ("isinstance", "builtin name"),
    ("os.path.join", "standard-library root"),
    ("json.loads", "standard-library root"),
    ("self.x", "self and a plain rest"),
    ("t.Logf", "one-letter receiver"),
    ("and/or", "English with a slash"),
    ("read-only", "English compound"),
    ("--help", "flag without an inner hyphen"),
    ("__init__", "dunder"),
    ("abc", "too short"),
    ("12345678", "digits alone"),
    ("deadbeef", "hex without a digit"),
    ("3.14", "number"),
    ("GitHub", "stop list"),
    ("utf-8", "stop list"),
    ("/dev/null", "stop list"),
    (".values", "method after a dot"),
    ("/span", "closing tag"),
    ("//nolint", "comment marker"),
    ("1.5rem", "short number with a unit"),
    ("200ms", "short number with a unit"),
]


@pytest.mark.parametrize(("token", "rule"), DISTINCTIVE)
def test_distinctive_tokens_are_references(token: str, rule: str) -> None:
    """Each structural rule admits its example."""
    assert is_distinctive(token), rule


@pytest.mark.parametrize(("token", "rule"), NOT_DISTINCTIVE)
def test_boilerplate_is_kept_out(token: str, rule: str) -> None:
    """Words, builtins, standard-library names and the stop list are no references."""
    assert not is_distinctive(token), rule


def test_references_are_ordered_unique_and_trimmed() -> None:
    """Sentence punctuation is not part of a reference, and a repeat is listed once."""
    text = "Open src/app/main.py. Then main.py, then src/app/main.py again (see `ContextItem`)."
    assert references(text) == ("src/app/main.py", "main.py", "ContextItem")


def test_urls_are_one_reference() -> None:
    """A URL is taken whole, not cut at its colon."""
    assert references("see https://example.org/a/b_c?x=1.") == ("https://example.org/a/b_c?x=1",)


def test_a_quoted_span_with_spaces_is_a_reference_when_it_holds_a_distinctive_token() -> None:
    """Code quoted with spaces counts whole (beside its tokens); quoted English does not."""
    found = references("call `load(strict_mode=True, n=2)` and `git log --all` or `the thing`")
    assert found == ("strict_mode", "load(strict_mode=True, n=2)")
    assert "git log --all" not in found


def test_error_lines_are_references() -> None:
    """A line that starts with an error's name is taken whole, pytest's ``E`` prefix dropped."""
    text = "output:\nE   KeyError: 'session_id' in load_state\nnothing else"
    assert "KeyError: 'session_id' in load_state" in references(text)


def test_an_error_line_without_a_distinctive_token_is_not() -> None:
    """An error line is looked up by its distinctive tokens, so it needs one."""
    assert references("error: could not open the file") == ()


def test_key_tokens_of_a_multiword_reference() -> None:
    """A multi-word reference is looked up by its distinctive tokens."""
    assert key_tokens("load(strict_mode=True) in app/cfg.py") == ("strict_mode", "app/cfg.py")


def test_atoms_expand_paths_and_dotted_names() -> None:
    """A history text is indexed under each distinctive run of a path's segments and a name's parts."""
    found = atoms("from pkg.sub.mod_x import thing at /srv/repo/src/mod_x.py")
    assert {"pkg.sub.mod_x", "sub.mod_x", "mod_x", "src/mod_x.py", "mod_x.py"} <= found
    assert "pkg" not in found
    assert "src" not in found


def test_an_escaped_newline_is_not_part_of_the_next_word() -> None:
    r"""``"\\nUninstalling"`` in quoted code is the word Uninstalling, not the name nUninstalling."""
    assert references('print("\\nUninstalling hooks_dir")') == ("hooks_dir",)
