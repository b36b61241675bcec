"""Text no database can keep, given to a store or a `Context` (issue 33 items 6 and 12).

A lone surrogate in a session id raised `UnicodeEncodeError` from seven PostgreSQL
methods, and SQLite refused it saying "row … cannot be read" (a damaged row, which it is
not). Both now say which argument and what to pass. In content, a lone surrogate is
stored as U+FFFD (every encoder after would fail on it); `Context` now says so.
"""

from __future__ import annotations

import warnings

import pytest

from ctxrules.dag import Call
from ctxrules.engine.context import Context, ContextWarning
from ctxrules.store import InvalidArgument, Store
from ctxrules.tokens import HeuristicCounter

BAD = "s\udc80"


def test_a_surrogate_session_id_is_an_invalid_argument(store: Store) -> None:
    """Every method given the id returns `InvalidArgument` naming the operation, never raises."""
    calls = {
        "create_session": lambda: store.create_session(BAD),
        "load_session": lambda: store.load_session(BAD),
        "load_graph": lambda: store.load_graph(BAD),
        "append_node": lambda: store.append_node(BAD, Call("n1", "user", output="x")),
        "get_head": lambda: store.get_head(BAD),
        "search": lambda: store.search("a", session_id=BAD),
        "put_blob": lambda: store.put_blob(BAD, "h", "t"),
        "last_commit": lambda: store.last_commit(BAD),
        "heads": lambda: store.heads(BAD),
        "commits_for": lambda: store.commits_for(BAD),
    }
    for name, call in calls.items():
        failure = call().failure()
        assert isinstance(failure, InvalidArgument), (name, failure)
        assert name in str(failure)
        assert "cannot be read" not in str(failure)
        assert "lone surrogate" in str(failure)


def test_a_context_says_when_a_surrogate_was_replaced(store_url: str) -> None:
    """The message is stored with U+FFFD, and a `ContextWarning` says so; plain text warns nothing."""
    ctx = Context(model="gpt-4o", window=16_000, store=store_url, tokenizer=HeuristicCounter())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ctx.add({"role": "user", "content": "plain café"})
    with pytest.warns(ContextWarning, match="U\\+FFFD"):
        ctx.add({"role": "user", "content": "bad \udc80 text"})
    head = ctx.session.head
    assert head is not None
    assert ctx.session.graph.nodes[head].output == "bad \ufffd text"
    ctx.close()
