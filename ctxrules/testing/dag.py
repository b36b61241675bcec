"""Strategies for DAG values: JSON payloads, operation sequences and whole sessions."""

from __future__ import annotations

import functools
from typing import Literal

import attrs
from hypothesis import strategies as st
from returns.result import Success

from ctxrules.dag import Session

JsonValue = None | bool | int | float | str | list["JsonValue"] | dict[str, "JsonValue"]

#: Kinds of step a generated session may take.
StepKind = Literal["send", "tool", "complete", "retry", "edit", "checkout", "fork"]


def json_values(max_leaves: int = 8) -> st.SearchStrategy[JsonValue]:
    """JSON-like payloads: scalars, lists and str-keyed dicts, nested.

    >>> from hypothesis import find
    >>> find(json_values(), lambda v: isinstance(v, list) and len(v) == 2)
    [None, None]
    """
    scalars = (
        st.none()
        | st.booleans()
        | st.integers(-(2**53), 2**53)
        | st.floats(allow_nan=False, allow_infinity=False)
        | st.text(max_size=20)
    )
    return st.recursive(
        scalars,
        lambda inner: (
            st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
        ),
        max_leaves=max_leaves,
    )


@attrs.frozen
class Step:
    """One operation on a session; ``pick`` chooses a target among the existing nodes."""

    kind: StepKind
    role: str = "user"
    payload: JsonValue = None
    pick: int = 0


@functools.cache
def session_steps() -> st.SearchStrategy[Step]:
    """Single steps of the operations `Session` supports, with random payloads and targets."""
    # One strategy, built once: a strategy built anew is validated anew at every draw.
    return st.builds(
        Step,
        kind=st.sampled_from(("send", "tool", "complete", "retry", "edit", "checkout", "fork")),
        role=st.sampled_from(("user", "assistant", "system")),
        payload=json_values(4),
        pick=st.integers(0, 10_000),
    )


def apply_step(session: Session, step: Step) -> Session:
    """Apply ``step`` to ``session``; a step the session refuses leaves it unchanged."""
    ids = list(session.graph.order)
    target = ids[step.pick % len(ids)] if ids else None
    running = sorted(session.running)
    match step.kind:
        case "send":
            result = session.send(step.role, step.payload)
        case "tool" if session.head is not None:
            status = "running" if step.pick % 2 else "done"
            result = session.record_call(session.head, "tool", {"p": step.payload}, status=status)
        case "complete" if running:
            result = session.complete(running[step.pick % len(running)], step.payload)
        case "retry" if target is not None:
            result = session.retry(target)
        case "edit" if target is not None:
            result = session.edit(target, step.payload)
        case "checkout" if target is not None:
            result = session.checkout(target)
        case "fork" if target is not None:
            result = session.fork(target)
        case _:
            return session
    return result.unwrap() if isinstance(result, Success) else session


@functools.cache
def _step_lists(max_steps: int) -> st.SearchStrategy[list[Step]]:
    return st.lists(session_steps(), max_size=max_steps)


@st.composite
def sessions(draw: st.DrawFn, max_steps: int = 30) -> Session:
    """Sessions built by a random sequence of sends, tool calls, retries, edits and checkouts."""
    session = Session("s_test")
    for step in draw(_step_lists(max_steps)):
        session = apply_step(session, step)
    return session
