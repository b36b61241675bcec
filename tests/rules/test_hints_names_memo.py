"""`names` remembers its answers: the same text is read once, and every caller gets its own list."""

from __future__ import annotations

import pytest

from ctxrules.rules import hints as hints_module
from ctxrules.rules.hints import names


def test_names_reads_a_text_once_and_answers_a_new_list(monkeypatch: pytest.MonkeyPatch) -> None:
    """The second call for a text is answered from the memo, equal to the first, never shared."""
    read: list[str] = []
    real = hints_module._names

    def counting(text: str) -> list[str]:
        read.append(text)
        return real(text)

    monkeypatch.setattr(hints_module, "_names", counting)
    text = "run parse_args in src/app/run.py then parse_args via cli.main # names_memo_marker_41"
    first = names(text)
    assert first == ["parse_args", "src/app/run.py", "cli.main", "names_memo_marker_41"]
    first.append("spoiled")
    second = names(text)
    assert second == first[:-1]
    assert second is not first
    assert read == [text]
    # Another text is read anew.
    assert names(text + " other_name") == [*second, "other_name"]
    assert len(read) == 2


def test_a_remembered_answer_is_the_one_worked_out_anew() -> None:
    """For texts of every kind the memo answers what `_names` computes (the function is pure)."""
    texts = ["", "plain words only", "a.b c_d e/f/g.py 0xdeadbeef1 camelCase " * 3, "x" * 300_000]
    for text in texts:
        assert names(text) == hints_module._names(text)
        assert names(text) == hints_module._names(text)
