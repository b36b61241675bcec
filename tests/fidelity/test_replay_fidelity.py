"""Fidelity measured by a replay of the bundled session equals the same measure taken from scratch."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import attrs
import pytest

import ctxrules.fidelity.extract as extract_module
from ctxrules.dag import Role, branch
from ctxrules.engine import DefaultContextEngine
from ctxrules.engine.replay import Request, replay
from ctxrules.engine.turn import TurnPrep
from ctxrules.fidelity import Fidelity, HistoryIndex, Reach, measure, reply_references
from ctxrules.fidelity.index import payload_strings
from ctxrules.generation import node_text
from ctxrules.importers import import_session
from ctxrules.spec import load_spec
from ctxrules.tokens import load_encoding

ROOT = Path(__file__).resolve().parents[2]
BUNDLED = ROOT / "ctxrules" / "data" / "sessions" / "entire-cli-5d_755497c182_0.jsonl"
SMALL = load_spec(ROOT / "specs" / "small-window.toml").unwrap()


def test_replay_measures_each_request_as_a_fresh_index_would() -> None:
    """The running index gives every request the figures a rebuilt one does; aged results stay recallable.

    At a 4,000-token window the small-window spec ages and compacts the bundled session, so
    references move from visible to one recall away; every tightened item names its handle
    (invariant 16), so none is lost.
    """
    session = import_session(BUNDLED).unwrap().session
    engine = DefaultContextEngine(pipeline=SMALL, tokenizer=load_encoding().unwrap())
    preps: list[TurnPrep] = []
    prepare = engine.prepare

    def recording(*args: object, **kwargs: object) -> object:
        result = prepare(*args, **kwargs)  # type: ignore[arg-type]
        preps.append(result.unwrap())
        return result

    engine.prepare = recording  # type: ignore[method-assign]
    requests = replay(session, engine, window=4_000)
    calls = branch(session.graph, session.head)
    replies = [c for i, c in enumerate(calls) if c.role is Role.ASSISTANT and i > 0]
    for request, prep, reply in zip(requests, preps, replies, strict=True):
        fresh = HistoryIndex()
        for call in calls[: calls.index(reply)]:
            fresh.add_call(session.graph, call)
        fresh.add_summaries(prep.commit)
        found = reply_references(session.graph, reply)
        assert request.fidelity == measure(fresh, found, prep.messages)
    total = dict.fromkeys(Reach, 0)
    for request in requests:
        f = request.fidelity
        assert f.visible + f.one_recall + f.deeper + f.lost == f.references
        total[Reach.VISIBLE] += f.visible
        total[Reach.ONE_RECALL] += f.one_recall
        total[Reach.LOST] += f.lost
    assert total[Reach.VISIBLE] > 0
    assert total[Reach.ONE_RECALL] > 0
    assert total[Reach.LOST] == 0


def test_a_replay_reads_each_text_of_the_history_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Work counted, not timed: each node's text is read once over the replay, not once a request.

    A reply is read for its references at its request and indexed at the next one: the
    index takes the first read, so even the assistant's texts are read once.
    """
    session = import_session(BUNDLED).unwrap().session
    engine = DefaultContextEngine(pipeline=SMALL, tokenizer=load_encoding().unwrap())
    scanned: Counter[str] = Counter()
    real = extract_module._scan

    def counting(text: str) -> extract_module.Scan:
        scanned[text] += 1
        return real(text)

    monkeypatch.setattr(extract_module, "_scan", counting)
    requests = replay(session, engine, window=4_000)
    graph = session.graph
    texts: Counter[str] = Counter(node_text(c.output) for c in graph.nodes.values())
    for call in graph.nodes.values():
        if call.role is Role.TOOL:
            texts.update(payload_strings(call.input))
    del texts[""]
    read = {text: count for text, count in scanned.items() if text in texts}
    assert len(requests) == 18
    assert sum(read.values()) > len(requests)
    assert {text: count for text, count in read.items() if count > texts[text]} == {}


def test_fidelity_can_be_left_out_and_changes_nothing_else() -> None:
    """``fidelity=False`` gives empty measures and the very same requests otherwise."""
    session = import_session(BUNDLED).unwrap().session

    def run(*, fidelity: bool) -> list[Request]:
        engine = DefaultContextEngine(pipeline=SMALL, tokenizer=load_encoding().unwrap())
        return list(replay(session, engine, window=4_000, fidelity=fidelity))

    with_it, without = run(fidelity=True), run(fidelity=False)
    assert all(r.fidelity == Fidelity() for r in without)
    assert any(r.fidelity.references for r in with_it)
    assert [attrs.evolve(r, fidelity=Fidelity()) for r in with_it] == without


def test_a_replay_cuts_each_path_into_its_runs_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Work counted: a path or dotted name met in many texts is cut into its parts once a replay.

    The same paths recur in result after result; the index remembers each token's parts
    (`TokenMemo.expanded`) instead of cutting it again for every text that names it.
    """
    session = import_session(BUNDLED).unwrap().session
    engine = DefaultContextEngine(pipeline=SMALL, tokenizer=load_encoding().unwrap())
    cut: Counter[tuple[str, str]] = Counter()
    real = extract_module._runs

    def counting(token: str, sep: str) -> Iterator[str]:
        cut[token, sep] += 1
        return real(token, sep)

    monkeypatch.setattr(extract_module, "_runs", counting)
    replay(session, engine, window=4_000)
    assert len(cut) > 5
    assert {key: count for key, count in cut.items() if count > 1} == {}
