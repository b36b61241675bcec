"""What a `Context` sends beside the history, and its spec, kept with its stored session for a replay.

The DAG holds the messages; a request also carries the system prompt and the tool schemas,
which count against the window, and a receipt when the recall tools are offered. A
replay that left them out would decide its batch points and compactions on a different
budget than the live loop did. `Context` writes this frame into the session's metadata when
it creates the session in a store, and ``ctxrules replay STORE --session S`` reads it back.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

import attrs

from ctxrules.dag.payload import thaw

#: The metadata key the frame is kept under.
KEY = "context"
#: The metadata key of a replay's stored run: its spec's name and rules, window and profile.
RUN_KEY = "replay_run"


@attrs.frozen
class RequestFrame:
    """The model, window, system text, tool schemas, receipts and spec of a session's requests."""

    model: str
    window: int
    system: str = ""
    tools: tuple[Mapping[str, object], ...] = ()
    receipts: bool = False
    #: The spec's TOML text ('' when the loop was given a `Pipeline` object).
    spec: str = ""

    def to_metadata(self) -> dict[str, object]:
        """The session metadata that keeps the frame; without the tools if they are not JSON.

        The tools are kept as their JSON text: metadata is stored with its keys sorted, and a
        schema's tokens are counted in the order its keys were given.

        >>> RequestFrame("gpt-4o", 32_000, tools=({"bad": object()},)).to_metadata()["context"]["tools"]
        '[]'
        """
        try:
            tools = json.dumps([dict(tool) for tool in self.tools], ensure_ascii=False)
        except (TypeError, ValueError):
            # A schema a host built with a non-JSON value still works live; it is not kept.
            tools = "[]"
        frame = {
            "model": self.model,
            "window": self.window,
            "system": self.system,
            "tools": tools,
            "receipts": self.receipts,
            "spec": self.spec,
        }
        return {KEY: frame}

    @classmethod
    def from_metadata(cls, metadata: Mapping[str, object]) -> RequestFrame | None:
        """The frame a session's metadata keeps; None when it has none or it is malformed.

        >>> frame = RequestFrame("claude-sonnet-4-5", 200_000, "Be brief.", ({"name": "read"},), True)
        >>> RequestFrame.from_metadata(frame.to_metadata()) == frame
        True
        >>> print(RequestFrame.from_metadata({"format": "claude-code"}))
        None
        """
        kept = metadata.get(KEY)
        found = thaw(kept) if kept is not None else None  # type: ignore[arg-type]
        if not isinstance(found, dict):
            return None
        model, window, system = found.get("model"), found.get("window"), found.get("system")
        text, receipts, spec = found.get("tools"), found.get("receipts"), found.get("spec", "")
        try:
            tools = json.loads(text) if isinstance(text, str) else None
        except ValueError:
            tools = None
        well_formed = (
            isinstance(model, str)
            and isinstance(window, int)
            and isinstance(system, str)
            and isinstance(tools, list)
            and all(isinstance(tool, dict) for tool in tools)
            and isinstance(receipts, bool)
            and isinstance(spec, str)
        )
        if not well_formed:
            return None
        return cls(model, window, system, tuple(tools), receipts, spec)  # type: ignore[arg-type]


def session_source(metadata: Mapping[str, object]) -> str:
    """Where a stored session came from, for listings: a log's format, ``context`` for a live loop's, else ``-``.

    A replay's run says which spec and window made its commits.

    >>> session_source({"format": "claude-code"}), session_source({KEY: {}}), session_source({})
    ('claude-code', 'context', '-')
    >>> session_source({"format": "openai-chat", RUN_KEY: {"spec": "default", "window": 32000}})
    'openai-chat:default@32k'
    """
    found = metadata.get("format")
    run = metadata.get(RUN_KEY)
    if (
        found is not None
        and isinstance(run, Mapping)
        and isinstance(window := run.get("window"), int)
    ):
        # One word, as the listing's other columns are.
        size = f"{window // 1000}k" if window % 1000 == 0 else str(window)
        return f"{found}:{run.get('spec')}@{size}"
    if found is not None:
        return str(found)
    return "context" if KEY in metadata else "-"
