"""The pytest plugin: a ``ctxrules_check`` fixture and ``pytest --ctxrules-spec PATH`` (or a built-in name).

Registered through the ``pytest11`` entry point, so a user's suite can write
``def test_my_spec(ctxrules_check): ctxrules_check("specs/mine.toml")``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from returns.result import Failure

from ctxrules.spec import load_spec
from ctxrules.spec.builtin import find_spec

#: What the fixture returns: call it with a spec path; it fails the test on a violation.
SpecChecker = Callable[..., None]


def check_spec(
    spec: str | Path, *, examples: int = 100, seed: int | None = None, allow_imports: bool = False
) -> None:
    """Load ``spec`` and check every rule and the pipeline; fail the test with the counterexample."""
    # Imported here: the plugin loads in every pytest run, even where hypothesis is absent.
    from ctxrules.checker.spec_check import check_pipeline  # noqa: PLC0415
    from ctxrules.cli.report import format_counterexample  # noqa: PLC0415

    if not isinstance(examples, int) or isinstance(examples, bool) or examples < 1:
        # Said as the command line says it, not as Hypothesis's settings raise it.
        pytest.fail(f"examples={examples!r}: expected a positive whole number", pytrace=False)
    # A built-in name ("default") as `ctxrules check` takes it; a file of that name wins.
    found = find_spec(str(spec))
    if isinstance(found, Failure):
        pytest.fail(f"spec {spec} does not load:\n{found.failure()}", pytrace=False)
    path = Path(found.unwrap())
    loaded = load_spec(path, allow_imports=allow_imports)
    if isinstance(loaded, Failure):
        pytest.fail(f"spec {spec} does not load:\n{loaded.failure()}", pytrace=False)
    report = check_pipeline(
        str(path), loaded.unwrap(), examples=examples, seed=seed, allow_imports=allow_imports
    )
    if report.counterexample is not None:
        pytest.fail(format_counterexample(report.counterexample), pytrace=False)


@pytest.fixture
def ctxrules_check() -> SpecChecker:
    """A function that checks a spec against the invariants and fails the test on a violation."""
    return check_spec


def pytest_addoption(parser: pytest.Parser) -> None:
    """``--ctxrules-spec PATH`` (repeatable) adds one check per spec to the run."""
    group = parser.getgroup("ctxrules")
    group.addoption(
        "--ctxrules-spec",
        action="append",
        default=[],
        metavar="PATH",
        help="check this pipeline spec",
    )
    group.addoption(
        "--ctxrules-examples", type=_examples, default=100, help="generated commits per rule"
    )
    group.addoption(
        "--ctxrules-allow-imports", action="store_true", help="allow Python rules in the specs"
    )


def _examples(text: str) -> int:
    """``--ctxrules-examples`` checked as ``ctxrules check --examples`` is (a positive whole number)."""
    # Imported when the option is given: the plugin loads in every pytest run.
    from ctxrules.cli.guard import positive_int  # noqa: PLC0415

    return positive_int(text)


class SpecItem(pytest.Item):
    """One spec named on the command line, checked as a test."""

    def __init__(self, *, spec: str, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.spec = spec

    def runtest(self) -> None:
        """Check the spec."""
        config = self.config
        check_spec(
            self.spec,
            examples=config.getoption("--ctxrules-examples"),
            allow_imports=config.getoption("--ctxrules-allow-imports"),
        )

    def reportinfo(self) -> tuple[Path, int, str]:
        """Where the test comes from, for pytest's report."""
        return Path(self.spec), 0, f"ctxrules check {self.spec}"


class SpecCollector(pytest.Collector):
    """Collects one `SpecItem` per ``--ctxrules-spec``."""

    def collect(self) -> Iterator[pytest.Item]:
        """The spec items."""
        for spec in self.config.getoption("--ctxrules-spec"):
            yield SpecItem.from_parent(self, name=f"ctxrules-check[{spec}]", spec=spec)


def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    """Append the spec checks to the collected tests."""
    if not config.getoption("--ctxrules-spec"):
        return
    collector = SpecCollector.from_parent(session, name="ctxrules-specs")
    items.extend(collector.collect())
