"""Receipts: the request says what it shows shortened and how to recall it, and breaks no cache."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import pytest

import ctxrules
from ctxrules.commit import ContextItem
from ctxrules.engine.default import DefaultContextEngine
from ctxrules.engine.replay import replay
from ctxrules.importers import import_session
from ctxrules.rules.receipts import receipt
from ctxrules.spec import load_spec
from ctxrules.spec.builtin import find_spec
from ctxrules.spec.recall import RecallOptions


def _reply(i: int) -> dict[str, Any]:
    arguments = f'{{"path": "src/mod_{i}.py"}}'
    call = {
        "id": f"c{i}",
        "type": "function",
        "function": {"name": "read_file", "arguments": arguments},
    }
    message = {"role": "assistant", "content": None, "tool_calls": [call]}
    return {
        "choices": [{"message": message}],
        "usage": {"prompt_tokens": 100, "completion_tokens": 5},
    }


def _turn(ctx: ctxrules.Context, i: int) -> list[Any]:
    request = ctx.openai()
    ctx.record(_reply(i))
    ctx.add_tool_result(f"c{i}", f"value_{i} = compute_thing({i})\n" * 300)
    return list(request["messages"])  # type: ignore[arg-type]


def _run(
    turns: int, store: Path | None = None, ctx: ctxrules.Context | None = None
) -> tuple[list[list[Any]], ctxrules.Context]:
    ctx = ctx or ctxrules.Context(
        model="gpt-4o", window=32_000, recall=RecallOptions(tools=True), store=store, session="s"
    )
    if ctx.session.head is None:
        ctx.add({"role": "user", "content": "Fix the parser."})
    return [_turn(ctx, i) for i in range(turns)], ctx


def test_a_receipt_counts_by_how_and_has_no_clock_or_id() -> None:
    """Equal items give the same line; it names counts and the recall tool, never a time or id."""
    items = [
        ContextItem(f"n{i}", "tool", state="aged", reason="tail_window", changed_at=float(i))
        for i in range(3)
    ]
    items.append(ContextItem("c", "tool", state="aged", reason="capped"))
    line = receipt(items)
    assert line == receipt(list(reversed(items)))
    assert "4 earlier items are shortened: 3 aged to a stub, 1 cut on arrival" in line
    assert "recall" in line
    assert "n0" not in line
    assert receipt([ContextItem("a", "user")]) == ""


def test_with_the_recall_tools_the_request_carries_a_receipt_renewed_only_at_batch_points(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Invariant 15 holds with receipts: the requests extend exactly as often as without."""
    requests, _ = _run(40)
    notes = {
        m["content"].split("[Context note:")[1]
        for m in (r[0] for r in requests)
        if "[Context note:" in m["content"]
    }
    assert len(notes) >= 3
    extends = sum(b[: len(a)] == a for a, b in itertools.pairwise(requests))
    monkeypatch.setattr(DefaultContextEngine, "_receipt", lambda _self, _s, _c: "")
    plain, _ = _run(40)
    assert not any("[Context note:" in str(r) for r in plain)
    assert extends == sum(b[: len(a)] == a for a, b in itertools.pairwise(plain))


def test_without_the_recall_tools_there_is_no_receipt() -> None:
    """A model without the recall tool could not act on one."""
    ctx = ctxrules.Context(model="gpt-4o", window=32_000)
    ctx.add({"role": "user", "content": "Fix the parser."})
    requests = [_turn(ctx, i) for i in range(30)]
    assert not any("[Context note:" in str(r) for r in requests)


def test_a_reopened_session_sends_the_same_receipt(tmp_path: Path) -> None:
    """The receipt is a function of the stored commit: a restart sends what the old process would."""
    store = tmp_path / "r.sqlite"
    _, first = _run(30, store)
    expected = first.openai()
    first.close()
    again = ctxrules.Context(
        model="gpt-4o", window=32_000, recall=RecallOptions(tools=True), store=store, session="s"
    )
    assert again.openai() == expected
    again.close()


BUNDLED = Path(ctxrules.__file__).parent / "data" / "sessions"


def test_a_replay_offering_recall_sends_receipts_and_prices_each_renewal_as_a_rewrite() -> None:
    """A replay offering recall sends `Context`'s receipts and prices their renewal.

    A request whose receipt changed is no extension and its cause says so; the replay
    costs more than the same one without receipts.
    """
    path = next(iter(sorted(BUNDLED.glob("*.jsonl"))))
    session = import_session(str(path)).unwrap().session

    def run(search: bool) -> list[Any]:
        engine = DefaultContextEngine(pipeline=load_spec(find_spec("default").unwrap()).unwrap())
        return replay(session, engine, window=8_000, search=search, fidelity=False)

    plain, noted = run(search=False), run(search=True)
    renewed = [r for r in noted if r.cause is not None and "receipt" in r.cause]
    assert renewed, "no receipt was ever renewed"
    assert all(not r.extends for r in renewed)
    assert not any(r.cause and "receipt" in r.cause for r in plain)
    cost = sum(r.priced.prompt_cost for r in noted)
    assert cost > sum(r.priced.prompt_cost for r in plain)
