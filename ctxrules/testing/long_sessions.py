"""Long agent sessions: enough turns, tool output and idle gaps to age results and reach batch points.

A generated session of a few steps never holds a tool result old enough to age, so a
batched spec never reaches a batch point in it. These sessions run tens of turns of user,
assistant and tool calls, with outputs from a few words to a few thousand, at a pace that
sometimes pauses past a cache's lifetime: every trigger of `ctxrules.rules.Batching` fires.
"""

from __future__ import annotations

import random

import attrs
from hypothesis import strategies as st

from ctxrules.dag import Session
from ctxrules.testing.histories import _TOOLS, _text

#: Seconds between two turns: mostly a working pace, sometimes a pause past a cache's TTL.
GAPS = (5.0, 20.0, 45.0, 90.0, 400.0, 4_000.0)
#: Words of a tool result: small ones, and ones past every cap.
SIZES = (5, 30, 120, 400, 900, 2_500)


@attrs.frozen
class LongSession:
    """A built session and the time of each branch node (``times[node_id]``), for the facts."""

    session: Session
    times: dict[str, float]


def long_session(
    seed: int, turns: int, names: tuple[str, ...] = (), *, parallel: bool = True
) -> LongSession:
    """A session of ``turns`` turns, the same for the same arguments.

    Each turn is a user message, an assistant reply and zero to three tool calls (tools of
    ``names`` among them), one time in five a pair of identical parallel calls.

    >>> built = long_session(1, 4)
    >>> len([c for c in built.session.branch() if c.role.value == "assistant"])
    4
    """
    rng = random.Random(seed)  # noqa: S311 - test data, not security
    tools = _TOOLS + names
    session, now = Session("s_long_session"), 0.0
    times: dict[str, float] = {}
    for turn in range(turns):
        now += rng.choice(GAPS)
        session = session.send("user", _text(rng, rng.randint(3, 20)), created_at=now).unwrap()
        times[str(session.head)] = now
        now += 2.0
        reply = _text(rng, rng.randint(5, 40))
        session = session.send("assistant", reply, created_at=now).unwrap()
        head = str(session.head)
        times[head] = now
        calls = [
            (rng.choice(tools), {"path": _text(rng, 2), "n": turn}, _text(rng, rng.choice(SIZES)))
            for _ in range(rng.choice((0, 1, 1, 2, 3)))
        ]
        if parallel and calls and rng.random() < 0.2:
            calls.append(calls[-1])
        for name, arguments, output in calls:
            session = session.record_call(head, name, arguments, output, created_at=now).unwrap()
    return LongSession(session, times)


@st.composite
def long_sessions(
    draw: st.DrawFn, *, min_turns: int = 10, max_turns: int = 40, names: tuple[str, ...] = ()
) -> LongSession:
    """Sessions of ``min_turns`` to ``max_turns`` turns from a drawn seed (see `long_session`)."""
    seed = draw(st.integers(0, 2**16), label="session seed")
    turns = draw(st.integers(min_turns, max_turns), label="turns")
    return long_session(seed, turns, names)
