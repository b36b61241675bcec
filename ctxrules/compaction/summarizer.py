"""Calling the injected summarizer, the one effect, with a deterministic structural fallback."""

from __future__ import annotations

import asyncio
import re
import threading
from collections.abc import Awaitable, Callable
from typing import Protocol, TypeAlias

import attrs

from ctxrules.compaction.in_use import without_names_line
from ctxrules.compaction.plan import HEAD_CHARS, CompactionPlan
from ctxrules.dag.json_values import clean_text
from ctxrules.render import Message
from ctxrules.rules.text import head, one_line
from ctxrules.tokens import Tokenizer
from ctxrules.tokens.budget import input_budget_for

Summarizer: TypeAlias = Callable[[tuple[Message, ...]], str]
"""The LLM, injected by the caller: prompt messages in, summary text out.

It may raise, hang or return nothing useful; every such failure falls back to the
structural summary instead of reaching the caller.
"""

AsyncSummarizer: TypeAlias = Callable[[tuple[Message, ...]], Awaitable[str]]
"""The same contract as `Summarizer`, as a coroutine function."""

#: The summary's token budget as a share of the input budget: a summary that grew with
#: every compaction would end up crowding out the history it stands for.
SUMMARY_SHARE = 0.1
#: The first line of a summary whose oldest lines were folded away: how many.
FOLDED_LINES = "[… {count} earlier lines folded]"


class CancelEvent(Protocol):
    """Anything with ``is_set()``: a `threading.Event` or an `asyncio.Event`."""

    def is_set(self) -> bool:
        """Whether cancellation was asked for."""
        ...


class SummaryCancelled(Exception):
    """The cancel event was set before or after the summarizer ran."""


class UnusableSummary(Exception):
    """The summarizer returned something that is not non-blank text."""


@attrs.frozen
class SummaryText:
    """The summary to apply; ``error`` says why the structural fallback was used, if it was."""

    text: str
    fell_back_to_structural: bool = False
    error: str | None = None


def structural_summary(plan: CompactionPlan) -> str:
    """Role plus a 60-character head per folded message, after any previous summary whole.

    A plan made for a window of 32k and more gives each folded tool result the line of
    `ctxrules.compaction.plan.structural_line`: its call, its names and its recall handle.

    >>> from ctxrules.compaction.prompts import prompt_messages
    >>> plan = CompactionPlan("c_x", None, (3, 4), 2, (("user", "explain the schema"), ("assistant", "x" * 80)), None, prompt_messages(""), 0)
    >>> print(structural_summary(plan))
    [user] explain the schema
    [assistant] xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx…
    """
    lines = list(plan.lines) or [
        f"[{who}] {head(one_line(text), HEAD_CHARS)}" for who, text in plan.folded
    ]
    body = "\n".join(lines)
    # The earlier names-in-use line is merged into the new one when the summary is applied
    # (`ctxrules.compaction.apply.with_folds`): carried here it would take the budget's room.
    previous = without_names_line(plan.previous_summary or "").strip("\n")
    return f"{previous}\n{body}" if previous else body


def summary_budget(context_window: int, share: float = SUMMARY_SHARE) -> int:
    """The most tokens a summary may have: ``share`` of the window's input budget.

    >>> summary_budget(200_000), summary_budget(32_000)
    (15000, 1600)
    """
    return int(share * input_budget_for(context_window))


def _folded_before(line: str) -> int:
    prefix, _, rest = line.partition("[… ")
    count, _, tail = rest.partition(" earlier lines folded]")
    return int(count) if not prefix and not tail and count.isdigit() else 0


def bound_summary(text: str, max_tokens: int, tokenizer: Tokenizer) -> str:
    r"""``text`` if it fits ``max_tokens``, else its newest lines under a line counting the rest.

    Lines that end with a recall handle first shrink to their label and handle, oldest
    first (the item stays one recall away); then older lines fold, so a chained summary
    stays within its budget however many compactions it has absorbed; a single line too
    long for the budget keeps its head.

    >>> from ctxrules.tokens import HeuristicCounter
    >>> text = "\n".join(f"[user] message number {i}" for i in range(100))
    >>> print(bound_summary(text, 40, HeuristicCounter()))
    [… 97 earlier lines folded]
    [user] message number 97
    [user] message number 98
    [user] message number 99
    """
    if tokenizer.count(text) <= max_tokens:
        return text
    lines = _shortened(text.split("\n"), tokenizer.count(text) - max_tokens, tokenizer)
    if tokenizer.count("\n".join(lines)) <= max_tokens:
        return "\n".join(lines)
    earlier = _folded_before(lines[0])
    if earlier:
        lines = lines[1:]
    room = max_tokens - tokenizer.count(FOLDED_LINES.format(count=earlier + len(lines))) - 1
    kept: list[str] = []
    for line in reversed(lines):
        cost = tokenizer.count(line) + 1
        if cost > room:
            break
        kept.append(line)
        room -= cost
    if not kept and lines and room > 0:
        # Not one whole line fits: keep the newest line's head, cut to what fits.
        last = lines[-1]
        kept.append(head(last, max(len(last) * room // max(tokenizer.count(last), 1) - 1, 0)))
        earlier -= 1
    marker = FOLDED_LINES.format(count=earlier + len(lines) - len(kept))
    return "\n".join([marker, *reversed(kept)])


#: A structural line that names a recall handle at its end (`ctxrules.compaction.plan.structural_line`).
_NAMED_LINE = re.compile(r"^(\[[^\]\n]+\]) .+ (\[recall h:[a-z2-7]{8}\])$")


def _shortened(lines: list[str], over: int, tokenizer: Tokenizer) -> list[str]:
    """``lines`` with the oldest lines that name a handle cut to their label and handle.

    A folded item stays one recall away while its line names its handle: cutting what a
    line says of it costs less than the line, so lines shrink, oldest first, before any
    is folded away; only as many as it takes to save ``over`` tokens.
    """
    out = list(lines)
    for at, line in enumerate(lines):
        if over <= 0:
            break
        found = _NAMED_LINE.match(line)
        if found is None:
            continue
        short = f"{found.group(1)} {found.group(2)}"
        over -= tokenizer.count(line) - tokenizer.count(short)
        out[at] = short
    return out


def fallback(plan: CompactionPlan, error: BaseException | str) -> SummaryText:
    """The structural summary, recording why: ``"TypeName: message"`` for an exception."""
    reason = error if isinstance(error, str) else f"{type(error).__name__}: {error}"
    return SummaryText(structural_summary(plan), fell_back_to_structural=True, error=reason)


def _check(cancel: CancelEvent | None, when: str) -> None:
    if cancel is not None and cancel.is_set():
        msg = f"the cancel event was set {when} the summarizer call"
        raise SummaryCancelled(msg)


def _accept(result: object) -> SummaryText:
    if not isinstance(result, str):
        msg = f"the summarizer returned {type(result).__name__}, not text"
        raise UnusableSummary(msg)
    if not result.strip():
        msg = "the summarizer returned blank text"
        raise UnusableSummary(msg)
    # A model's text is untrusted like a log's: lone surrogates would fail every encoder.
    return SummaryText(clean_text(result.strip()))


def _call_in_thread(summarizer: Summarizer, prompt: tuple[Message, ...], timeout: float) -> object:
    """Run a blocking summarizer with a time limit; a late one is left to finish and ignored."""
    box: dict[str, object] = {}

    def run() -> None:
        try:
            box["value"] = summarizer(prompt)
        except BaseException as error:  # noqa: BLE001 - handed to the calling thread as is
            box["error"] = error

    # A daemon thread: a blocking call cannot be interrupted, and must not hold up exit.
    worker = threading.Thread(target=run, name="ctxrules-summarizer", daemon=True)
    worker.start()
    worker.join(timeout)
    if worker.is_alive():
        msg = f"the summarizer took longer than timeout={timeout}s"
        raise TimeoutError(msg)
    error = box.get("error")
    if isinstance(error, BaseException):
        raise error
    return box.get("value")


def received(plan: CompactionPlan, outcome: object) -> SummaryText:
    """What a summarizer call that ran elsewhere gave: its text, or the fallback for an error.

    ``outcome`` is the call's return value, or the exception it raised (a timeout or a
    cancellation included); anything but non-blank text falls back as in `summarize`.
    """
    if isinstance(outcome, BaseException):
        return fallback(plan, outcome)
    try:
        return _accept(outcome)
    except UnusableSummary as error:
        return fallback(plan, error)


def summarize(
    plan: CompactionPlan,
    summarizer: Summarizer,
    *,
    timeout: float | None = None,
    cancel: CancelEvent | None = None,
) -> SummaryText:
    """Call a blocking summarizer; any failure, timeout or cancellation gives the fallback.

    ``timeout`` runs the call in a daemon thread; a summarizer that overruns keeps running
    until it returns, and its answer is dropped.
    """
    try:
        _check(cancel, "before")
        result = (
            summarizer(plan.prompt)
            if timeout is None
            else _call_in_thread(summarizer, plan.prompt, timeout)
        )
        _check(cancel, "after")
        return _accept(result)
    except (Exception, asyncio.CancelledError) as error:  # noqa: BLE001 - any failure of the injected LLM falls back
        # A blocking call has no task to cancel: a CancelledError it raises is its own failure.
        return fallback(plan, error)


async def summarize_async(
    plan: CompactionPlan,
    summarizer: AsyncSummarizer,
    *,
    timeout: float | None = None,  # noqa: ASYNC109 - it bounds the summarizer call alone
    cancel: CancelEvent | None = None,
) -> SummaryText:
    """Await a summarizer under `asyncio.wait_for`; failures fall back as in `summarize`.

    Cancelling the task that awaits this still cancels it; a summarizer that raises
    `asyncio.CancelledError` on its own counts as a failure.
    """
    try:
        _check(cancel, "before")
        result = await asyncio.wait_for(summarizer(plan.prompt), timeout)
        _check(cancel, "after")
        return _accept(result)
    except asyncio.CancelledError as error:
        task = asyncio.current_task()
        if task is not None and task.cancelling():
            raise
        return fallback(plan, error)
    except Exception as error:  # noqa: BLE001 - any failure of the injected LLM falls back
        return fallback(plan, error)
