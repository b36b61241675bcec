"""Where a spec comes from: paths, text, unreadable and undecodable files."""

from __future__ import annotations

from pathlib import Path

from ctxrules.spec import SpecError, SpecErrors, is_text, load_spec


def test_text_and_paths_are_told_apart() -> None:
    """A str with a newline or '=' is text; any other str, and every Path, is a path."""
    assert is_text("a = 1")
    assert is_text("\n")
    assert not is_text("specs/default.toml")
    assert not is_text(Path("weird=name.toml"))


def test_a_missing_file_is_an_error_value(tmp_path: Path) -> None:
    """A path that does not exist fails with the path and the reason."""
    path = tmp_path / "missing.toml"
    assert (
        str(load_spec(path).failure())
        == f"{path}: expected a readable file, found FileNotFoundError: No such file or directory"
    )


def test_a_directory_is_an_error_value(tmp_path: Path) -> None:
    """A directory is not a spec file."""
    assert (
        str(load_spec(str(tmp_path)).failure())
        == f"{tmp_path}: expected a readable file, found IsADirectoryError: Is a directory"
    )


def test_a_file_that_is_not_utf8_is_an_error_value(tmp_path: Path) -> None:
    """Bytes that are not UTF-8 are reported with their offset."""
    path = tmp_path / "latin1.toml"
    path.write_bytes('name = "caf\xe9"\n'.encode("latin-1"))
    assert (
        str(load_spec(path).failure())
        == f"{path}: expected UTF-8 text, found byte 0xe9 at offset 11"
    )


def test_errors_in_a_file_name_the_file(tmp_path: Path) -> None:
    """Errors in a spec file carry its path as given."""
    path = tmp_path / "mine.toml"
    path.write_text(
        '[[rules]]\nuse = "clear_idle"\n[rules.params]\nidle_seconds = -1\n', encoding="utf-8"
    )
    assert (
        str(load_spec(path).failure())
        == f"{path}: rules[0].params.idle_seconds: expected a number >= 0, found -1 (int)"
    )


def test_a_path_holding_an_equals_sign_can_be_passed_as_a_path(tmp_path: Path) -> None:
    """A Path is never read as TOML text, whatever its name holds."""
    path = tmp_path / "a=b.toml"
    path.write_text("version = 1\n", encoding="utf-8")
    assert load_spec(path).unwrap().rules == ()


def test_errors_have_accurate_reprs() -> None:
    """SpecError and SpecErrors print as the constructor calls that rebuild them."""
    errors = load_spec("version = 3\n").failure()
    assert repr(errors) == (
        "SpecErrors(errors=(SpecError(file='<string>', path='version', expected='the spec format version 1', "
        "found='3', fault='out_of_bounds', suggestion=None),))"
    )
    assert eval(repr(errors), {"SpecErrors": SpecErrors, "SpecError": SpecError}) == errors  # noqa: S307 - round-trips our own repr


def test_error_fields_carry_data_not_only_text() -> None:
    """Each error exposes its parts, so a tool can act on them without parsing the message."""
    error = load_spec('[[rules]]\nuse = "clear_idel"\n').failure().errors[0]
    assert (error.file, error.path, error.fault, error.suggestion) == (
        "<string>",
        "rules[0].use",
        "unknown_name",
        "clear_idle",
    )
