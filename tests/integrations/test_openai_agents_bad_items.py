"""`CtxSession.add_items` given items no session can keep (issue 33 item 9).

Six of 23 malformed item kinds raised raw exceptions (`TypeError`, `UnicodeEncodeError`,
`ValueError`) instead of `CtxSessionError`. Each is now refused whole, with where it is,
and the session is left as it was.
"""

from __future__ import annotations

import asyncio

import pytest

pytest.importorskip(
    "ctxrules.integrations.openai_agents",
    reason="the agents extra is not installed",
    exc_type=ImportError,
)

from ctxrules.integrations.openai_agents import CtxSession
from ctxrules.integrations.openai_agents.session import CtxSessionError
from ctxrules.tokens import HeuristicCounter


class _Raises:
    def model_dump(self, **_: object) -> dict[str, object]:
        raise RuntimeError("broken SDK object")


BAD_ITEMS: list[object] = [
    None,
    "a string",
    42,
    ["a", "list"],
    {"type": "function_call_output", "call_id": "c1", "output": {1, 2}},
    {"type": "function_call_output", "call_id": "c1", "output": object()},
    {"role": "user", "content": float("nan")},
    {"role": "user", "content": {1: "non-str key"}},
    _Raises(),
]


@pytest.mark.parametrize("item", BAD_ITEMS, ids=lambda item: type(item).__name__)
def test_a_bad_item_is_a_session_error_and_adds_nothing(item: object) -> None:
    """`CtxSessionError` naming ``items[1]``; the good item before it is not added either."""
    session = CtxSession("s", window=32_000, tokenizer=HeuristicCounter())
    good = {"role": "user", "content": "hi"}
    with pytest.raises(CtxSessionError, match=r"items\[1\]"):
        asyncio.run(session.add_items([good, item]))  # type: ignore[list-item]
    assert session.items() == []


def test_a_lone_surrogate_is_kept_as_the_replacement_character() -> None:
    """A lone surrogate in a message is stored as U+FFFD, as everywhere else, not raised."""
    session = CtxSession("s", window=32_000, tokenizer=HeuristicCounter())
    asyncio.run(session.add_items([{"role": "user", "content": "bad \udc80 text"}]))  # type: ignore[list-item]
    assert session.items()[0]["content"] == "bad \ufffd text"
