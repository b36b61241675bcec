"""Fuzz targets for the surfaces a model or a host drives (issue 33): `Context`, recall, ``show``.

Each asserts: nothing but the documented error escapes (`ContextError` from `Context`),
every error says what and where, every recall answer is bounded, and ``ctxrules show``
writes no control character from a session to the terminal. The store's own target
(hostile ids and queries on each backend) is ``tests/store/test_fuzz_hostile_store.py``.
"""

from __future__ import annotations

import contextlib
import io
import shutil
import warnings
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctxrules.cli.main import main
from ctxrules.dag import Call, Graph
from ctxrules.engine.context import Context, ContextError
from ctxrules.recall.lookup import recall_index
from ctxrules.recall.tools import answer_tool_call, handle_for
from ctxrules.store import SqliteStore
from ctxrules.tokens import HeuristicCounter
from tests.fuzz.hostile import (
    hostile_messages,
    hostile_recall_calls,
    hostile_responses,
    hostile_texts,
)
from tests.fuzz.mutations import FUZZ_SURFACES

#: The longest answer a recall call may get without a cap (a page of 2,000 tokens, a header).
ANSWER_CHARS = 20_000


def _context() -> Context:
    return Context(model="gpt-4o", window=16_000, tokenizer=HeuristicCounter(), clock=lambda: 1.0)


@FUZZ_SURFACES
@given(st.lists(st.one_of(hostile_messages(), hostile_responses()), min_size=1, max_size=4))
def test_context_raises_only_its_own_errors(steps: list[object]) -> None:
    """add, record and openai on hostile input: a `ContextError` with a message, or success."""
    ctx = _context()
    ctx.add({"role": "user", "content": "start"})
    errors: list[ContextError] = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for step in steps:
            try:
                if isinstance(step, dict) and "role" in step:
                    ctx.add(step)
                else:
                    ctx.openai()
                    ctx.record(step)
            except ContextError as error:
                errors.append(error)
        request = ctx.openai()
    assert isinstance(request["messages"], list)
    assert all(str(error) for error in errors), errors


@FUZZ_SURFACES
@given(hostile_recall_calls(), hostile_texts())
def test_recall_answers_are_bounded(call: tuple[str, dict[str, object]], text: str) -> None:
    """Any call a model makes gets an answer (an error one at worst) of bounded length."""
    graph = Graph().append(Call("t1", "tool", name="cat", output=text)).unwrap()
    arguments = dict(call[1])
    if arguments.get("handle") == "known":
        arguments["handle"] = handle_for("t1")
    answer = answer_tool_call(
        call[0],
        arguments,
        index=recall_index(graph),
        tokenizer=HeuristicCounter(),
        search=lambda _query, _limit: [],
    )
    assert len(answer.text) <= ANSWER_CHARS
    answer.text.encode("utf-8")


@pytest.fixture(scope="module")
def show_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder of the show test's stores (pytest's, removed with its other old folders)."""
    # Module-scoped: Hypothesis runs every example in one call of the test. A folder made
    # with tempfile at import time was left in /tmp by every run.
    folder = tmp_path_factory.mktemp("fuzz-show")
    SqliteStore.open(folder / "empty.db").unwrap().close()
    return folder


@FUZZ_SURFACES
@given(session=hostile_texts(), texts=st.lists(hostile_texts(), min_size=1, max_size=3))
def test_show_writes_no_control_character(
    show_folder: Path, session: str, texts: list[str]
) -> None:
    """A session with hostile id and content: ``show`` exits 0 or 2, no control byte written."""
    show = show_folder / "show.db"
    # A copy of an empty store each time: the listing stays one session long.
    shutil.copyfile(show_folder / "empty.db", show)
    with SqliteStore.open(show).unwrap() as store:
        if store.create_session(session or "empty").value_or(None) is None:
            graph = Graph()
            for text in texts:
                node = Call(
                    f"n{len(graph)}",
                    "user",
                    output=text,
                    predecessor=graph.order[-1] if len(graph) else None,
                )
                graph = graph.append(node).value_or(graph)
            store.append_graph(session or "empty", graph)
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(["show", str(show), "--", session or "empty"])
        listed = main(["show", str(show)])
    assert status in (0, 2)
    assert listed == 0
    for char in out.getvalue() + err.getvalue():
        assert char == "\n" or not (ord(char) < 0x20 or 0x7F <= ord(char) <= 0x9F), repr(char)
