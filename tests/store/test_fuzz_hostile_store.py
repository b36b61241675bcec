"""Fuzz target: hostile session ids, handles, head names and queries on each backend (issue 33).

Every store method returns a `Result` for any text (lone surrogates, NULs, escapes,
parentheses thousands deep, huge words): never an exception, and every `Failure` is a
`StoreError` with a message, never one blaming a damaged row. Under the ci profile each
backend runs 2,000 inputs.
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from returns.result import Failure, Result

from ctxrules.dag import Call
from ctxrules.store import Store, StoreError
from tests.fuzz.hostile import hostile_texts
from tests.fuzz.mutations import FUZZ_SURFACES

_OPERATIONS = ("create", "append", "head", "move", "search", "blob", "load", "literal")


@settings(
    FUZZ_SURFACES,
    suppress_health_check=[
        HealthCheck.function_scoped_fixture,
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
    ],
)
@given(st.sampled_from(_OPERATIONS), hostile_texts(), hostile_texts())
def test_the_store_answers_hostile_text_with_a_result(
    store: Store, operation: str, text: str, other: str
) -> None:
    """One operation with hostile arguments: a `Result`, a located `StoreError` on failure."""
    store.create_session("s").unwrap()
    results: list[Result[object, StoreError]] = []
    if operation == "create":
        results.append(store.create_session(text, title=other))
    elif operation == "append":
        results.append(store.append_node("s", Call(text or "n", "user", output=other)))
    elif operation == "head":
        results.append(store.get_head(text, other))
    elif operation == "move":
        results.append(store.move_head("s", text, None, other))
    elif operation == "search":
        results.append(store.search(text + other, session_id="s"))
    elif operation == "blob":
        results += [store.put_blob(text, other, "x"), store.get_blob("s", other)]
    elif operation == "load":
        results += [store.load_session(text), store.last_commit(text), store.commits_for(text)]
    else:
        from ctxrules.store import literal  # noqa: PLC0415 - only this branch uses it

        results.append(store.search(literal(text + " " + other), session_id="s"))
    for result in results:
        if isinstance(result, Failure):
            error = result.failure()
            assert isinstance(error, StoreError), error
            message = str(error)
            assert message
            # A refused argument is the caller's fault, never a damaged row.
            assert "cannot be read" not in message, message
