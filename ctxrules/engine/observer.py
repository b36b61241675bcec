"""`Observer`: what the engine tells a tracer about each decision, one call site per decision.

The engine calls an observer, when it has one, after a request is prepared, after a
compaction, around a summarizer call and when a response's usage is recorded. Observers
never change a decision; `ctxrules.telemetry.SpanObserver` turns the calls into
OpenTelemetry spans.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from ctxrules.commit import ContextCommit
from ctxrules.compaction import CompactResult, Summarizer
from ctxrules.recall.tools import ToolAnswer
from ctxrules.tokens.usage import ProviderUsage

if TYPE_CHECKING:  # turn.py imports nothing of this module; the name is for annotations only
    from ctxrules.engine.turn import TurnPrep


class Observer(Protocol):
    """Receives the engine's decisions as they are made; it must not raise or change them."""

    def prepared(self, prep: TurnPrep, before: ContextCommit | None, rules_version: str) -> None:
        """A request is ready: ``prep`` was built from ``before`` (None at the start)."""
        ...

    def compacted(self, session_id: str, result: CompactResult) -> None:
        """A compaction ended with ``result`` (finished, no-op or failed)."""
        ...

    def summarizing(self, session_id: str, summarizer: Summarizer) -> Summarizer:
        """``summarizer`` as the compaction about to run should call it (traced or as is)."""
        ...

    def recorded(self, session_id: str, usage: ProviderUsage, prep: TurnPrep) -> None:
        """The provider's usage for the request ``prep`` was read."""
        ...

    def recalled(self, session_id: str, tool: str, answer: ToolAnswer) -> None:
        """A ``recall`` or ``search_history`` call was answered with ``answer``."""
        ...

    def ended(self, session_id: str) -> None:
        """The session's `Context` was closed: no response will come for its last request."""
        ...
