"""Tool call ids a session can tell apart: a reused one is recorded under a fresh id.

A request pairs each tool call with its result by id, so two calls under one id in a
request cannot both be sent as calls (the renderers send them as text, and invariant 11
flags the request). Some OpenAI-compatible servers number every reply's calls from
``call_0``; `ctxrules.Context`, the framework integrations and the importers record such a
call under a fresh id and keep the one the provider sent in the node's metadata, so a
result given under either reaches it.
"""

from __future__ import annotations

import attrs

#: The node metadata key holding the id the provider sent, when the call was given another.
PROVIDER_CALL_ID = "provider_tool_call_id"


@attrs.define
class CallIds:
    """The tool call ids recorded so far, and the next suffix to try for each reused one.

    >>> ids = CallIds()
    >>> [ids.record(i) for i in ("call_0", "call_0", "call_0_2", "call_0", "")]
    ['call_0', 'call_0_2', 'call_0_2_2', 'call_0_3', 'call_2']
    """

    used: set[str] = attrs.Factory(set)
    #: Per reused id, the suffix after the last one given: a server that reuses one id on
    #: every reply costs O(1) a call, not a walk over every suffix given before.
    after: dict[str, int] = attrs.Factory(dict)

    def add(self, call_id: str) -> None:
        """Note an id already recorded (a session read back)."""
        self.used.add(call_id)

    def release(self, call_id: str) -> None:
        """Forget an id recorded before: its call was taken off the branch (a rewind)."""
        self.used.discard(call_id)

    def record(self, call_id: str) -> str:
        """The id to record a call under: ``call_id``, or ``<call_id>_<n>`` if it is taken.

        Letters, digits, ``_`` and ``-`` stay the only characters, as Anthropic's ids
        require; a call with no id gets ``call_<n>``.
        """
        if call_id and call_id not in self.used:
            self.used.add(call_id)
            return call_id
        base = call_id or "call"
        n = self.after.get(base, 1) + 1
        while f"{base}_{n}" in self.used:
            n += 1
        self.after[base] = n
        fresh = f"{base}_{n}"
        self.used.add(fresh)
        return fresh
