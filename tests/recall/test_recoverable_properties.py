"""Invariant 16 (recoverability) and invariant 15 with handles on, over random agent sessions."""

from __future__ import annotations

import attrs
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pyrsistent import pmap

from ctxrules.check import recoverable
from ctxrules.commit import ContextCommit, State
from ctxrules.compaction import CutParams, compact
from ctxrules.dag import Session
from ctxrules.generation import ensure_latest_commit
from ctxrules.render import Message
from ctxrules.rules import Facts, NamedRule, Pipeline, builtins
from ctxrules.rules.handles import handle_for, handles_in
from ctxrules.rules.tighten import tighten
from ctxrules.testing.compaction import agent_sessions
from ctxrules.testing.rules import builtin_params
from ctxrules.tokens import HeuristicCounter

RULER = HeuristicCounter()
#: Each example walks a whole session; the ci profile's 300 would cost minutes, 60 is plenty.
WALKS = settings(
    max_examples=min(settings.default.max_examples, 60),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
SMALL_CUT = CutParams(keep_min_tokens=0, keep_recent_tokens=40, keep_min_messages=1)


@st.composite
def handle_pipelines(draw: st.DrawFn) -> Pipeline:
    """Random pipelines of built-in rules with random valid parameters and handles on."""
    registry = builtins()
    names = draw(st.lists(st.sampled_from(sorted(registry)), min_size=1, max_size=5))
    rules = []
    for name in names:
        params = draw(builtin_params(registry[name]))
        if any(p.name == "handles" for p in registry[name].params):
            params["handles"] = True
        rules.append(NamedRule(name, registry[name].build(params).unwrap()))
    return Pipeline(tuple(rules), version=f"random:{names}")


def _structural(_: tuple[Message, ...]) -> str:
    raise RuntimeError("use the structural summary")


def _short(_: tuple[Message, ...]) -> str:
    return "we worked"


def _walk(session: Session, sources, pipeline: Pipeline, data: st.DataObject):
    """Each commit of the head's branch, clock advancing, compacting now and then."""
    known = pmap()
    now = 0.0
    for call in session.branch():
        now += data.draw(st.floats(0, 4000), label="seconds")
        facts = Facts(now=now, tokenizer=RULER)
        commit, known = ensure_latest_commit(
            known, session.graph, call.id, pipeline, facts, sources=sources
        ).unwrap()
        summarizer = data.draw(st.sampled_from([None, _structural, _short]), label="compact")
        if summarizer is not None:
            result = compact(commit, summarizer, facts, params=SMALL_CUT)
            if result.applied:
                commit = result.commit
                known = known.set(call.id, commit)
        yield commit


@WALKS
@given(data=st.data(), drawn=agent_sessions(max_turns=6), pipeline=handle_pipelines())
def test_invariant_16_every_tightened_item_resolves_to_its_original(
    data: st.DataObject, drawn, pipeline: Pipeline
) -> None:
    """Invariant 16: at every commit, every item tighter than full names a handle that gives back its original."""
    session, sources = drawn
    for commit in _walk(session, sources, pipeline, data):
        assert [v.message for v in recoverable(commit, session.graph, sources=sources)] == []


def _keys(commit: ContextCommit) -> list[tuple[str, str | None, int]]:
    """Each item's identity: source id, attached source, and which occurrence of the pair it is."""
    seen: dict[tuple[str, str | None], int] = {}
    keys = []
    for item in commit.items:
        pair = (item.source_node_id, item.attached_from)
        seen[pair] = seen.get(pair, 0) + 1
        keys.append((*pair, seen[pair]))
    return keys


@WALKS
@given(data=st.data(), drawn=agent_sessions(max_turns=6), pipeline=handle_pipelines())
def test_invariant_15_handles_never_change_an_unchanged_item(
    data: st.DataObject, drawn, pipeline: Pipeline
) -> None:
    """Invariant 15 with handles on: an item keeps its bytes until a rule changes it again, and shows only its own handle."""
    session, sources = drawn
    previous: ContextCommit | None = None
    for commit in _walk(session, sources, pipeline, data):
        for _position, item in enumerate(commit.items):
            if item.state in {State.AGED, State.CLEARED} and item.source_node_id in session.graph:
                assert set(handles_in(item.rendered)) <= {handle_for(item.source_node_id)}
        if previous is not None:
            # A summary inserts one item, so match items by identity, not position (an
            # attached block's open and close markers share an id: count occurrences).
            before = dict(zip(_keys(previous), previous.items, strict=True))
            for key, item in zip(_keys(commit), commit.items, strict=True):
                old = before.get(key)
                # A second rule may tighten an item again within one state (a capped
                # result aged to a stub: both AGED); that is a change, with its own reason.
                if old is not None and (old.state, old.reason) == (item.state, item.reason):
                    assert old.rendered == item.rendered
        previous = commit


def test_the_predicate_catches_a_rule_that_hides_without_a_handle() -> None:
    """A rule that clears a result to a bare placeholder breaks invariant 16 (the check can fail)."""
    session = Session("s").send("user", "go").unwrap().send("assistant", "ok").unwrap()
    session = session.record_call(
        session.head or "", "cat", {"path": "a"}, "a long original " * 20, metadata={}
    ).unwrap()

    def clear_bare(commit: ContextCommit, facts: Facts) -> ContextCommit:
        changes = {
            i: tighten(item, State.CLEARED, facts, rendered="[cleared]", reason="bare")
            for i, item in enumerate(commit.items)
            if item.is_tool
        }
        return commit.replace_items({i: c for i, c in changes.items() if c is not None})

    pipeline = Pipeline((NamedRule("bare", clear_bare),))
    commit, _ = ensure_latest_commit(
        pmap(), session.graph, session.head or "", pipeline, Facts(tokenizer=RULER)
    ).unwrap()
    found = recoverable(commit, session.graph)
    assert [(v.invariant, v.expected) for v in found] == [
        (16, "the handle named in the item's text")
    ]
    tampered = attrs.evolve(commit.items[-1], rendered=f"[cleared] [recall {handle_for('nobody')}]")
    assert {
        v.expected
        for v in recoverable(commit.with_items([*commit.items[:-1], tampered]), session.graph)
    } == {
        "the handle named in the item's text",
        "every shown handle resolves",
    }
