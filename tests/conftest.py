"""Shared test configuration: Hypothesis profiles and the shared-data location."""

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, find, settings
from hypothesis import strategies as st

# `dev` keeps the edit-test loop fast; `ci` runs more examples with a fixed seed
# (derandomize) so any failure in CI reproduces byte for byte on a laptop.
# No per-example deadline in either: on a shared 2-core machine (and on two xdist workers)
# a wall-clock deadline times the neighbours, and Hypothesis reports a slow first run that
# is fast on replay as a flaky failure. The too_slow health check stays on in `dev`: it
# guards the cost of generation, which the strategies keep small.
settings.register_profile("dev", max_examples=50, deadline=None)
settings.register_profile(
    "ci",
    max_examples=300,
    deadline=None,
    derandomize=True,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
# Mutation runs (docs/mutation.md) run each covering test once per mutant, under tracing:
# few examples, a fixed seed, and no timing checks (tracing slows every draw alike). No
# shrinking either: a mutant is killed by the first failing example, and shrinking it under
# tracing ran past mutmut's time limit (a kill reported as a timeout).
settings.register_profile(
    "mutation",
    max_examples=20,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
    phases=[Phase.explicit, Phase.generate],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))


SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


@pytest.fixture(scope="session", autouse=True)
def unicode_table() -> None:
    """Build Hypothesis's table of Unicode characters once, before the first test draws text.

    On a fresh checkout it takes seconds, and was charged to whichever test drew text first:
    that test's too_slow health check failed, a different test on each machine.
    """
    find(st.characters(), lambda _: True)


@pytest.fixture
def shared_sessions() -> Path:
    """The real sessions beside the checkout; skip when this is a user's clone."""
    path = SHARED_DATA / "sessions"
    if not path.is_dir():
        pytest.skip(f"../shared/data/sessions not found at {path} (only present in CI)")
    return path


@pytest.fixture
def hashed_handles(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The source ids whose handle the growing recall index computes from here on, in order."""
    from ctxrules.recall import growing  # noqa: PLC0415 - only the tests that count it
    from ctxrules.rules.handles import handle_for  # noqa: PLC0415 - see above

    seen: list[str] = []

    def counted(source_id: str) -> str:
        seen.append(source_id)
        return handle_for(source_id)

    monkeypatch.setattr(growing, "handle_for", counted)
    return seen


@pytest.fixture
def recorded_calls(monkeypatch: pytest.MonkeyPatch) -> Callable[[object, str], list[Any]]:
    """``record(owner, name)`` wraps ``owner.name`` for the test; the list it returns gets each call's first argument.

    Work is counted by the calls a function gets (the words judged, the items converted).
    """

    def record(owner: object, name: str) -> list[Any]:
        seen: list[Any] = []
        real = getattr(owner, name)

        def recording(first: Any, *args: Any, **options: Any) -> Any:
            seen.append(first)
            return real(first, *args, **options)

        monkeypatch.setattr(owner, name, recording)
        return seen

    return record


def pytest_addoption(parser: pytest.Parser) -> None:
    """``--run-slow`` runs the tests marked slow (the 100k-item and kill -9 trials)."""
    parser.addoption("--run-slow", action="store_true", help="run tests marked slow")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Skip slow tests unless --run-slow is given or CTXRULES_RUN_SLOW=1 (as .ci/run sets)."""
    if config.getoption("--run-slow") or os.environ.get("CTXRULES_RUN_SLOW") == "1":
        return
    skip = pytest.mark.skip(reason="slow: run with --run-slow")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)
