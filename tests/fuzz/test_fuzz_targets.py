"""Fuzz targets: mutated session files and specs through import, engine, store and CLI.

Each target asserts the issue-16 contract: no exception escapes, and every Failure says
where (a line, a key path, or the whole input when that is the fault). The default
profile runs a few inputs per target; HYPOTHESIS_PROFILE=ci runs 2,000.
"""

from __future__ import annotations

import contextlib
import io
import tempfile
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st
from returns.result import Failure

from ctxrules.cli.guard import INTERNAL
from ctxrules.cli.main import main
from ctxrules.dag import graph_to_jsonl
from ctxrules.engine import DefaultContextEngine
from ctxrules.importers import ImportFailure, import_text
from ctxrules.spec import load_spec
from ctxrules.store import SqliteStore
from ctxrules.tokens import HeuristicCounter
from tests.fuzz.mutations import FUZZ, session_files, spec_texts, texts_of

#: Faults of the input as a whole, which have no line to name.
WHOLE_INPUT = ("empty input", "cannot detect the format", "not UTF-8")


def _located(failure: ImportFailure) -> bool:
    return failure.line is not None or failure.reason.startswith(WHOLE_INPUT)


def _encodes(prep_messages: object) -> None:
    for message in prep_messages:  # type: ignore[attr-defined]
        for block in message.blocks:
            for text in (getattr(block, "text", ""), getattr(block, "arguments", "")):
                str(text).encode("utf-8")


@FUZZ
@given(session_files(), st.booleans())
def test_imports_fail_with_a_location_or_succeed(data: bytes, skip_bad: bool) -> None:
    """Import API: a Result every time; a Failure names its line; never an internal error."""
    result = import_text(texts_of(data), skip_bad=skip_bad)
    if isinstance(result, Failure):
        failure = result.failure()
        assert "internal error" not in failure.reason, failure
        assert _located(failure), failure
    else:
        for bad in result.unwrap().stats.bad_records:
            assert "internal error" not in bad.reason, bad
            assert bad.line >= 1


@FUZZ
@given(session_files(), st.sampled_from([1, 200, 4_000, 8_000, 200_000]), st.booleans())
def test_the_engine_prepares_every_imported_session(
    data: bytes, window: int, refused: bool
) -> None:
    """Engine: whatever imported prepares to a sendable (UTF-8) request, refusal included."""
    imported = import_text(texts_of(data), skip_bad=True)
    if isinstance(imported, Failure) or imported.unwrap().session.head is None:
        return
    engine = DefaultContextEngine(tokenizer=HeuristicCounter())
    session = imported.unwrap().session
    first = engine.prepare(session, window=window).unwrap()
    _encodes(first.messages)
    again = engine.prepare(session, window=window, prompt_too_long=refused).unwrap()
    _encodes(again.messages)
    if refused:
        # Shrunk, or at the floor snip cannot go below (the newest message) and says so.
        cannot = any("over the" in warning for warning in again.warnings)
        shrunk = again.request_tokens < first.request_tokens or first.request_tokens == 0
        assert shrunk or cannot, again.warnings


@FUZZ
@given(session_files())
def test_the_store_keeps_and_gives_back_every_imported_session(data: bytes) -> None:
    """Store: save, load, export and search an imported session; nothing raises."""
    imported = import_text(texts_of(data), skip_bad=True)
    if isinstance(imported, Failure):
        return
    session = imported.unwrap().session
    with SqliteStore.open(":memory:").unwrap() as store:
        store.save_session(session).unwrap()
        assert store.load_graph(session.session_id).unwrap() == session.graph
        exported = store.export_jsonl(session.session_id).unwrap()
        assert exported == graph_to_jsonl(session.graph)
        exported.encode("utf-8")
        store.search("the").unwrap()


@FUZZ
@given(spec_texts())
def test_specs_fail_with_a_key_path_or_a_line(text: str) -> None:
    """Specs: load_spec never raises; every error has a path or a line, none is internal."""
    result = load_spec(text if ("\n" in text or "=" in text) else text + "\n=")
    if isinstance(result, Failure):
        for error in result.failure().errors:
            assert error.fault != "internal", error
            assert error.path, error


COMMANDS = [
    ["replay", "{}", "--store", ":memory:", "--window", "8000"],
    ["export", "{}", "--skip-bad"],
    ["export", "{}"],
    ["verify", "{}"],
    ["show", "{}"],
    ["inspect", "{}", "--export", "{}.html"],
]


@FUZZ
@given(session_files(), st.sampled_from(COMMANDS))
def test_the_cli_never_prints_a_traceback(data: bytes, command: list[str]) -> None:
    """CLI, in process: exit 0, 1 or 2 on any file; never an internal fault or a traceback."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "input.jsonl"
        path.write_bytes(data)
        errors, output = io.StringIO(), io.StringIO()
        with contextlib.redirect_stderr(errors), contextlib.redirect_stdout(output):
            status = main([part.format(path) for part in command])
    err = errors.getvalue()
    assert status != INTERNAL, err
    assert status in (0, 1, 2), (status, err)
    assert "Traceback" not in err
