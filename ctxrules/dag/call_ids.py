"""Tool call ids a session can tell apart: a reused one is recorded under a fresh id.

A request pairs each tool call with its result by id, so two calls under one id in a
request cannot both be sent as calls (the renderers send them as text, and invariant 11
flags the request). Some OpenAI-compatible servers number every reply's calls from
``call_0``; `ctxrules.Context`, the framework integrations and the importers record such a
call under a fresh id and keep the one the provider sent in the node's metadata, so a
result given under either reaches it.
"""

from __future__ import annotations

from collections.abc import Collection

#: The node metadata key holding the id the provider sent, when the call was given another.
PROVIDER_CALL_ID = "provider_tool_call_id"


def fresh_id(call_id: str, used: Collection[str]) -> str:
    """``call_id`` with the first ``_<n>`` suffix (from 2) that ``used`` lacks; ``call`` for no id.

    Letters, digits, ``_`` and ``-`` stay the only characters, as Anthropic's ids require.

    >>> fresh_id("call_0", {"call_0", "call_0_2"}), fresh_id("", set())
    ('call_0_3', 'call_2')
    """
    base = call_id or "call"
    n = 2
    while f"{base}_{n}" in used:
        n += 1
    return f"{base}_{n}"
