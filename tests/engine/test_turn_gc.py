"""What a turn leaves for the cyclic GC: no new object the GC would walk session-wide.

A young object is traversed by every young collection that meets it, visiting what
``gc.get_referents`` returns: for pyrsistent's maps and vectors, every entry. The
engine's per-session maps and the reference tracker are HAMTs (`immutables.Map`) and a
commit's items are chunks in one (`ItemVector`), so a turn's new versions are small
objects and the old chunks are never young again.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

from ctxrules.dag import Session
from ctxrules.engine import DefaultContextEngine
from ctxrules.engine.turn import TurnPrep
from ctxrules.tokens import HeuristicCounter

TURNS = 400
#: A young container at least this long is one that grows with the session.
LARGE = TURNS // 2


@contextmanager
def turn_objects() -> Iterator[None]:
    """While the block runs, ``gc.get_objects(0)`` holds only what the block made and kept."""
    gc.collect()
    gc.disable()
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()
        gc.enable()


def _session() -> tuple[DefaultContextEngine, Session]:
    engine = DefaultContextEngine(
        tokenizer=HeuristicCounter(), summarizer=lambda _: "What happened so far."
    )
    session = Session("s_gc")
    for turn in range(TURNS):
        session = session.send("user", f"read src/pkg/mod_{turn}.py please").unwrap()
        session = session.send("assistant", f"mod_{turn} has {turn} lines " * 20).unwrap()
        engine.prepare(session, window=8_000, now=turn * 30.0).unwrap()
    session = session.send("user", "and now the tests").unwrap()
    return engine, session


def _large_young(prep: TurnPrep) -> list[object]:
    # What the GC visits when it traverses an object is what gc.get_referents returns.
    return [
        obj
        for obj in gc.get_objects(generation=0)
        if obj is not prep and len(gc.get_referents(obj)) >= LARGE
    ]


def test_a_turn_makes_no_session_sized_object_for_the_gc() -> None:
    """After 400 turns, one more leaves nothing young that the GC walks item by item."""
    engine, session = _session()
    state = engine.states["s_gc"]
    assert len(state.commits) >= TURNS
    assert len(state.references.index) > 0
    with turn_objects():
        prep = engine.prepare(session, window=8_000, now=TURNS * 30.0).unwrap()
        large = _large_young(prep)
    assert len(prep.commit.items) > 2 * TURNS
    assert len(prep.messages) < LARGE  # compaction keeps the request small
    assert large == []


def test_the_probe_sees_a_session_sized_map() -> None:
    """The probe is able to fail: a pyrsistent map of the commits, copied, is found."""
    from pyrsistent import pmap  # noqa: PLC0415 - only this test builds the old kind

    engine, session = _session()
    commits = dict(engine.states["s_gc"].commits.items())
    with turn_objects():
        prep = engine.prepare(session, window=8_000, now=TURNS * 30.0).unwrap()
        copied = pmap(commits).set("extra", prep.commit)
        large = _large_young(prep)
    # The map's bucket vector, one object with an entry per occupied bucket.
    assert any(obj is copied._buckets for obj in large)
