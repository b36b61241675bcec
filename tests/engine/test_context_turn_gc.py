"""What a `Context` turn leaves young for the cyclic GC: small objects, as many at any length.

A young object is traversed by every young collection that meets it, visiting what
``gc.get_referents`` returns. The graph's nodes and indexes are HAMTs and its order a
chunked vector (as the engine's state and a commit's items are), so a turn's new versions
are a few small objects whatever the session's length; a flat persistent map or vector
would be one young object visiting every node.
"""

from __future__ import annotations

import functools
import gc
from collections.abc import Iterator
from contextlib import contextmanager

from ctxrules.dag import Call, Graph
from ctxrules.engine.context import Context
from ctxrules.tokens import HeuristicCounter

#: A young container with at least this many references grows with the session.
LARGE = 150
#: Young references two lengths may differ by: a few chunks and runs of 64, a HAMT level.
SLACK = 6 * 64
#: A window small enough that what is sent stays the same size as the session grows.
WINDOW = 16_000


@contextmanager
def young_objects() -> Iterator[list[object]]:
    """Fills the list with what the block made and kept alive, as ``gc.get_objects(0)`` has it."""
    found: list[object] = []
    gc.collect()
    gc.disable()
    gc.freeze()
    try:
        yield found
        found.extend(gc.get_objects(generation=0))
    finally:
        gc.unfreeze()
        gc.enable()


def _turn(ctx: Context, turn: int) -> None:
    # An agent loop's turn: the user's message, a reply calling a tool, its result, a request.
    ctx.add({"role": "user", "content": f"read src/pkg/mod_{turn}.py please"})
    call = {"id": f"c{turn}", "type": "function", "function": {"name": "read", "arguments": "{}"}}
    reply = {"role": "assistant", "content": f"reading mod_{turn}", "tool_calls": [call]}
    ctx.record({"choices": [{"message": reply}]})
    ctx.add({"role": "tool", "tool_call_id": f"c{turn}", "content": f"mod_{turn} line " * 30})
    ctx.openai()


def _context(turns: int) -> Context:
    clock = [0.0]
    ctx = Context(
        model="gpt-4o",
        window=WINDOW,
        tokenizer=HeuristicCounter(),
        summarizer=lambda _: "What happened so far.",
        clock=lambda: clock[0],
    )
    for turn in range(turns):
        clock[0] = turn * 30.0
        _turn(ctx, turn)
    clock[0] = turns * 30.0
    return ctx


def _visits(objects: list[object]) -> tuple[int, list[int]]:
    # What one young collection visits: each young object's references; and the large ones.
    sizes = [len(gc.get_referents(obj)) for obj in objects]
    return sum(sizes), [size for size in sizes if size >= LARGE]


@functools.cache
def _one_turn(turns: int) -> tuple[int, int, list[int]]:
    ctx = _context(turns)
    with young_objects() as young:
        _turn(ctx, turns)
    assert ctx.last is not None
    # What is sent is kept with the turn (its messages and their items), and may be as long
    # as the window allows: the contract is O(new + sent), so those two are left out.
    sent = (young, ctx.last.messages, ctx.last.messages.items)
    visits, large = _visits([obj for obj in young if all(obj is not s for s in sent)])
    return len(ctx.session.graph), visits, large


def test_a_context_turn_leaves_nothing_young_that_grows_with_the_session() -> None:
    """At 400 turns, a turn leaves no young object but the request that refers to 150 others."""
    size, _, large = _one_turn(400)
    assert size > 1_200
    assert large == []


def test_a_context_turn_makes_as_much_young_work_at_twice_the_length() -> None:
    """From 200 to 400 turns, the references left young grow by less than a few chunks' worth.

    What may differ is how full the newest chunk and run of 64 are (each holds up to 64
    references, with their messages) and a level of HAMT depth; with pyrsistent's maps and
    vector the growth was 1,979 (2,382 to 4,361), one reference per node and more.
    """
    _, short, _ = _one_turn(200)
    _, long, _ = _one_turn(400)
    assert long - short <= SLACK


def test_the_probe_sees_a_flat_persistent_order() -> None:
    """The probe is able to fail: a pyrsistent vector of every node id, appended to, is found."""
    from pyrsistent import pvector  # noqa: PLC0415 - only this test builds the old kind

    graph = Graph()
    for n in range(400):
        graph = graph.append(Call(f"n{n}", "user")).unwrap()
    ids = list(graph.order)
    with young_objects() as young:
        grown = pvector(ids).append("x")
    _, large = _visits([obj for obj in young if obj is not young])
    assert len(grown) == 401
    assert large
