"""An empty path (an unset shell variable) is named as one, not taken for the current folder."""

from __future__ import annotations

import contextlib
import io

import pytest

from ctxrules.cli.main import main
from ctxrules.cli.options import bundled_session

LOG = str(bundled_session())


@pytest.mark.parametrize(
    "argv",
    [
        ["show", ""],
        ["inspect", ""],
        ["replay", ""],
        ["replay", LOG, "--store", ""],
        ["replay", LOG, "--report", " "],
    ],
)
def test_an_empty_path_is_one_line_that_says_so(argv: list[str]) -> None:
    """One line, exit 2, and no mention of a folder."""
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        status = main(argv)
    assert status == 2
    assert err.getvalue().count("\n") == 1
    assert "expected a path, found" in err.getvalue(), err.getvalue()
    assert "folder" not in err.getvalue()
