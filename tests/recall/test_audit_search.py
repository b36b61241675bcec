"""The audit's simulated search: a model searches for each hidden item and recalls what comes back."""

from __future__ import annotations

from pyrsistent import pmap

from ctxrules.dag import Session
from ctxrules.engine.recall import memory_search
from ctxrules.generation import ensure_latest_commit
from ctxrules.recall.audit import audit_commits
from ctxrules.rules import Facts, NamedRule, Pipeline, builtins
from ctxrules.tokens import HeuristicCounter

RULER = HeuristicCounter()


def _session() -> Session:
    session = Session("s").send("user", "look around").unwrap()
    for n, topic in enumerate(["kangaroo marsupial outback", "glacier moraine crevasse"]):
        session = session.send("assistant", f"reading {n}").unwrap()
        body = "".join(f"{topic} line {i} of file {n}\n" for i in range(200))
        session = session.record_call(
            session.head or "", "cat", {"n": n}, body, metadata={}
        ).unwrap()
    return session.send("user", "thanks").unwrap()


def _commits(session: Session):
    cap = builtins()["cap_tool_result"].build({"max_chars": 300}).unwrap()
    commit, _ = ensure_latest_commit(
        pmap(),
        session.graph,
        session.head or "",
        Pipeline((NamedRule("cap", cap),)),
        Facts(tokenizer=RULER),
    ).unwrap()
    return [commit]


def test_every_capped_result_is_found_by_a_search_from_its_middle() -> None:
    """Both capped logs are found by words from their hidden middle, and recalling every hit gives no error."""
    session = _session()
    with memory_search(session) as search:
        audit = audit_commits(session.graph, _commits(session), tokenizer=RULER, search=search)
    assert (audit.hidden, audit.searches, audit.found_by_search, audit.search_errors) == (
        2,
        2,
        2,
        0,
    )
    assert audit.search_results > audit.searches
    assert audit.ok


def _broken(_query: str, _limit: int) -> str:
    return "disk on fire"


def test_a_failing_search_is_counted_as_an_error() -> None:
    """A search that fails gives error answers, and the audit is not ok."""
    session = _session()
    audit = audit_commits(session.graph, _commits(session), tokenizer=RULER, search=_broken)
    assert (audit.searches, audit.found_by_search, audit.search_errors) == (2, 0, 2)
    assert not audit.ok


def test_a_recall_answer_is_not_searched_for() -> None:
    """search_history leaves the recall tools' own results out: the audit does not count them as missed."""
    session = _session()
    session = session.send("assistant", "recalling").unwrap()
    page = "".join(f"[h:abcdefgh: page] walrus tusk blubber {i}\n" for i in range(200))
    session = session.record_call(
        session.head or "", "recall", {"handle": "h:abcdefgh"}, page, metadata={}
    ).unwrap()
    session = session.send("user", "thanks again").unwrap()
    with memory_search(session) as search:
        audit = audit_commits(session.graph, _commits(session), tokenizer=RULER, search=search)
    assert (audit.hidden, audit.recovered, audit.searches, audit.found_by_search) == (3, 3, 2, 2)
