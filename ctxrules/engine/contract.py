"""The engine's contract: the lifecycle hooks a framework calls, and what they may fail with."""

from __future__ import annotations

import abc
from typing import Protocol

import attrs
from returns.result import Result

from ctxrules.compaction import CompactResult
from ctxrules.dag import Call, Session
from ctxrules.engine.notices import OnEvent
from ctxrules.engine.turn import TurnPrep
from ctxrules.errors import ErrorValue
from ctxrules.tokens.usage import ProviderUsage, UsageState


@attrs.frozen
class EngineError(ErrorValue):
    """A request the engine cannot serve, with the reason."""

    session_id: str
    reason: str

    @property
    def message(self) -> str:
        """A one-line description of what went wrong."""
        return f"session {self.session_id!r}: {self.reason}"


class UsageStore(Protocol):
    """Where the engine persists usage between processes (the SQLite store is one)."""

    def load_usage(self, session_id: str) -> UsageState | None:
        """The saved usage of a session, if any."""
        ...

    def save_usage(self, session_id: str, usage: UsageState) -> None:
        """Save a session's usage."""
        ...


class ContextEngine(abc.ABC):
    """The lifecycle hooks an agent framework calls around each LLM call."""

    name: str = "abstract"

    def on_session_start(self, session_id: str) -> None:  # noqa: B027 - optional hook
        """Called once when a session is created or loaded."""

    def ingest(self, session_id: str, call: Call) -> None:  # noqa: B027 - optional hook
        """Called when a node is appended; the default engine needs nothing here."""

    @abc.abstractmethod
    def prepare(self, session: Session, **options: object) -> Result[TurnPrep, EngineError]:
        """Build what the next LLM call sends."""

    @abc.abstractmethod
    def should_recommend(self, prep: TurnPrep) -> bool:
        """Whether to suggest compaction to the user."""

    @abc.abstractmethod
    def should_auto_compact(self, prep: TurnPrep) -> bool:
        """Whether to compact before sending."""

    @abc.abstractmethod
    def compact(self, session_id: str, **options: object) -> Result[CompactResult, EngineError]:
        """Fold the oldest history of the session's head into a summary."""

    @abc.abstractmethod
    def after_turn(
        self, session_id: str, usage: ProviderUsage, prep: TurnPrep, on_event: OnEvent | None = None
    ) -> None:
        """Called with the provider's usage once the response is back."""

    def on_session_end(self, session_id: str) -> None:  # noqa: B027 - optional hook
        """Called when a session closes: flush what is kept in memory."""
