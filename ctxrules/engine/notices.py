"""What the engine tells its caller besides the request: checks of its arguments, warnings, events."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from ctxrules.compaction import SNIP_MARKER, CompactResult, Snipped

#: Receives engine events: a name (``compaction_recommended``, ``compaction_finished``, …) and data.
OnEvent = Callable[[str, Mapping[str, object]], None]


def window_problem(window: object) -> str | None:
    """Why ``window`` cannot be a model's context window, or None when it can.

    No upper bound here, unlike `Context`'s: a caller of the engine may ask for a window no
    history fills (the benchmarks' "no compaction" runs pass 10**9).

    >>> print(window_problem(0), window_problem(8_000))
    window=0: expected the model's context window, a positive int None
    """
    if isinstance(window, bool) or not isinstance(window, int) or window < 1:
        return f"window={window!r}: expected the model's context window, a positive int"
    return None


def request_note(total: int, room: int, fixed: int) -> str | None:
    """A warning when the request (``total`` tokens, ``fixed`` of them system and tools) is over ``room``.

    >>> print(request_note(900, 1_000, 100))
    None
    >>> print(request_note(3_000, 1_000, 2_500))
    the request is 3,000 tokens, over the 1,000 the input may use; the system prompt and tool schemas alone take 2,500
    """
    if total <= room:
        return None
    return (
        f"the request is {total:,} tokens, over the {room:,} the input may use; "
        f"the system prompt and tool schemas alone take {fixed:,}"
    )


def snip_note(snipped: Snipped) -> str | None:
    """A warning when snip cut the request to fit: what it dropped and shortened, and the fix.

    >>> print(snip_note(Snipped((), 40, 50, dropped=2, shortened=1)))
    the request was cut to fit the 50 tokens the input may use (2 messages dropped, 1 text shortened at …[snipped]…); pass a larger window or send less
    >>> print(snip_note(Snipped((), 40, 50)))
    None
    """
    if not (snipped.dropped or snipped.shortened):
        return None
    cuts = (
        f"{snipped.dropped} message{'s' * (snipped.dropped != 1)} dropped",
        f"{snipped.shortened} text{'s' * (snipped.shortened != 1)} shortened at {SNIP_MARKER.strip()}",
    )
    done = ", ".join(cut for cut in cuts if not cut.startswith("0 "))
    return (
        f"the request was cut to fit the {snipped.limit:,} tokens the input may use ({done}); "
        "pass a larger window or send less"
    )


def outcome_step(result: CompactResult) -> str:
    """The decision-path step of a compaction: ``compact:<outcome>``, plus ``:fallback`` for one."""
    step = f"compact:{result.outcome.value}"
    return f"{step}:fallback" if result.fell_back_to_structural else step


def compaction_notes(result: CompactResult) -> tuple[str, ...]:
    """Warnings for a compaction the caller should know about: a fallback or a failure."""
    if result.fell_back_to_structural:
        return (f"compaction used the structural fallback summary: {result.error}",)
    if result.outcome.value == "failed":
        return (f"compaction failed ({result.reason}): {result.error}",)
    return ()


def emit_compaction(on_event: OnEvent | None, session_id: str, result: CompactResult) -> None:
    """Send one ``compaction_<kind>`` event per event of the result; ``fallback`` says which were."""
    if on_event is None:
        return
    for event in result.events:
        on_event(
            f"compaction_{event.kind.value}",
            {
                "session_id": session_id,
                "base_commit_id": event.base_commit_id,
                "summarised_count": event.summarised_count,
                "tokens_before": event.tokens_before,
                "tokens_after": event.tokens_after,
                "reason": event.reason,
                "error": event.error,
                "fallback": result.fell_back_to_structural and event.kind.value == "finished",
            },
        )
