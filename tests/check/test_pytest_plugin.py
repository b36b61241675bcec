"""The pytest plugin: the ctxrules_check fixture and --ctxrules-spec, run in a child pytest."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest_plugins = ["pytester"]
SPECS = Path(__file__).resolve().parents[2] / "specs"


def test_fixture_passes_a_shipped_spec(pytester: pytest.Pytester) -> None:
    """A user's test calling ctxrules_check on specs/default.toml passes."""
    pytester.makepyfile(
        f"""
        def test_my_spec(ctxrules_check):
            ctxrules_check({str(SPECS / "default.toml")!r}, examples=20, seed=1)
        """
    )
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)


def test_fixture_fails_a_broken_spec_with_the_counterexample(pytester: pytest.Pytester) -> None:
    """A declarative rule that clears everything is fine, but a bad spec fails with its errors."""
    bad = pytester.makefile(".toml", bad='[[rules]]\nuse = "age_tool_result"\n')
    pytester.makepyfile(
        f"""
        def test_my_spec(ctxrules_check):
            ctxrules_check({str(bad)!r}, examples=10)
        """
    )
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*did you mean 'age_tool_results'?*"])


def test_command_line_option_adds_a_check_per_spec(pytester: pytest.Pytester) -> None:
    """Pytest --ctxrules-spec PATH runs one check item per spec."""
    # The spec paths lead the child pytest to this repository's pyproject.toml: without
    # `-o addopts=` it would take its options too and start two xdist workers of its own.
    result = pytester.runpytest(
        "-p",
        "no:cacheprovider",
        "-o",
        "addopts=",
        "--ctxrules-spec",
        str(SPECS / "default.toml"),
        "--ctxrules-spec",
        str(SPECS / "cache-sensitive.toml"),
        "--ctxrules-examples",
        "15",
    )
    result.assert_outcomes(passed=2)


def test_a_number_of_examples_under_one_is_said_in_one_line(pytester: pytest.Pytester) -> None:
    """``examples=0`` failed deep in Hypothesis's settings with a long traceback."""
    pytester.makepyfile(
        f"""
        def test_my_spec(ctxrules_check):
            ctxrules_check({str(SPECS / "default.toml")!r}, examples=0)
        """
    )
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*examples=0: expected a positive whole number*"])
    result.stdout.no_fnmatch_line("*InvalidArgument*")
    option = pytester.runpytest(
        "-p", "no:cacheprovider", "-o", "addopts=", "--ctxrules-examples", "0"
    )
    assert option.ret == pytest.ExitCode.USAGE_ERROR
    option.stderr.fnmatch_lines(["*expected a positive whole number, found '0'*"])


def test_a_built_in_spec_name_is_checked_as_the_command_checks_it(
    pytester: pytest.Pytester,
) -> None:
    """``ctxrules_check("cache-sensitive")`` and ``--ctxrules-spec default`` find the shipped specs."""
    pytester.makepyfile(
        """
        def test_my_spec(ctxrules_check):
            ctxrules_check("cache-sensitive", examples=10, seed=1)

        def test_misspelt(ctxrules_check):
            ctxrules_check("defualt", examples=10)
        """
    )
    result = pytester.runpytest("-p", "no:cacheprovider", "-o", "addopts=")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*did you mean 'default'?*"])
    option = pytester.runpytest(
        "-p", "no:cacheprovider", "-o", "addopts=", "--ctxrules-spec", "default",
        "--ctxrules-examples", "10", "-k", "ctxrules",
    )  # fmt: skip
    option.assert_outcomes(passed=1)
