"""What a compaction reports: its outcome, its events, and the commit to use next."""

from __future__ import annotations

import enum

import attrs

from ctxrules.commit import ContextCommit


class Outcome(enum.StrEnum):
    """The four outcomes of reference 002; ``started`` is only ever an event."""

    STARTED = "started"
    FINISHED = "finished"
    NO_OP = "no_op"
    FAILED = "failed"


@attrs.frozen
class CompactionEvent:
    """One event for the UI and the logs, with the numbers of the one ruler."""

    kind: Outcome
    base_commit_id: str
    summarised_count: int = 0
    tokens_before: int = 0
    tokens_after: int = 0
    reason: str = ""
    error: str | None = None


@attrs.frozen
class CompactResult:
    """The outcome, its events, and ``commit``: the compacted commit, or the current one unchanged.

    ``reason`` says why a compaction was a no-op (``nothing_to_fold``,
    ``active_summary_locked``) or failed (``stale``, ``no_gain``, ``error``); ``error`` carries
    the summarizer's failure when the structural fallback was used, or the failure itself.
    ``tokens_before`` and ``tokens_after`` are ``total_tokens`` plus ``fixed_tokens``.
    """

    outcome: Outcome
    commit: ContextCommit
    base_commit_id: str
    events: tuple[CompactionEvent, ...]
    tokens_before: int
    tokens_after: int
    summarised_count: int = 0
    summary_id: str | None = None
    fell_back_to_structural: bool = False
    reason: str = ""
    error: str | None = None
    fixed_tokens: int = 0

    @property
    def applied(self) -> bool:
        """Whether a summary landed (and the occupancy generation must move on)."""
        return self.outcome is Outcome.FINISHED


def started(base_commit_id: str, count: int, tokens_before: int) -> CompactionEvent:
    """The event sent once the summarizer is about to be called."""
    return CompactionEvent(Outcome.STARTED, base_commit_id, count, tokens_before, tokens_before)


def no_op(commit: ContextCommit, reason: str, tokens: int, fixed_tokens: int) -> CompactResult:
    """Nothing to fold: decided before any summarizer call, so there is no ``started`` event."""
    event = CompactionEvent(Outcome.NO_OP, commit.id, 0, tokens, tokens, reason)
    return CompactResult(
        Outcome.NO_OP,
        commit,
        commit.id,
        (event,),
        tokens,
        tokens,
        reason=reason,
        fixed_tokens=fixed_tokens,
    )


def failed(
    current: ContextCommit,
    base_commit_id: str,
    opening: CompactionEvent,
    *,
    reason: str,
    error: str | None,
    fixed_tokens: int,
) -> CompactResult:
    """The summary did not land; ``current`` stays the commit to use."""
    tokens = current.total_tokens + fixed_tokens
    event = CompactionEvent(
        Outcome.FAILED, base_commit_id, 0, opening.tokens_before, tokens, reason, error
    )
    return CompactResult(
        Outcome.FAILED,
        current,
        base_commit_id,
        (opening, event),
        opening.tokens_before,
        tokens,
        reason=reason,
        error=error,
        fixed_tokens=fixed_tokens,
    )
