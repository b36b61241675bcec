"""Where a background summary runs: a thread, a task on the caller's loop, or a simulated clock.

A runner starts one summarizer call and hands back a `Pending`, which the engine polls once
per turn. Nothing here touches a session: the call's outcome is read by the engine's own
thread at the next turn, so events and state changes happen where the turn runs.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import inspect
import threading
import time
from collections.abc import Awaitable, Callable
from typing import Protocol

import attrs

from ctxrules.commit import ContextCommit
from ctxrules.compaction import CompactionPlan, SummaryText
from ctxrules.render import Message

#: The summarizer a runner calls: the engine's, plain or returning an awaitable.
Call = Callable[[tuple[Message, ...]], object]


class Pending(Protocol):
    """One summarizer call under way; ``now`` is the turn's time (only a simulated clock reads it)."""

    def poll(self, now: float) -> bool:
        """Whether the call has returned or raised; called once per turn."""
        ...

    def wait(self, now: float, seconds: float) -> bool:
        """Wait at most ``seconds`` for the call; whether it is done."""
        ...

    def elapsed(self, now: float) -> float:
        """Seconds since the call started."""
        ...

    def outcome(self) -> object:
        """The call's return value, or the exception it raised (only once done)."""
        ...

    def cancel(self) -> None:
        """Give up on the call: a task is cancelled, a thread's answer ignored."""
        ...


class Runner(Protocol):
    """Starts a summarizer call in the background (the engine's ``background`` argument)."""

    def start(self, summarizer: Call, prompt: tuple[Message, ...], now: float) -> Pending:
        """Start ``summarizer(prompt)`` and return at once."""
        ...


class FuturePending:
    """A call whose outcome arrives in a `concurrent.futures.Future` (a thread or a loop task)."""

    def __init__(self, future: concurrent.futures.Future[object]) -> None:
        self.future = future
        self.started = time.monotonic()

    def poll(self, now: float) -> bool:  # noqa: ARG002 - real time
        """Whether the future is done."""
        return self.future.done()

    def wait(self, now: float, seconds: float) -> bool:  # noqa: ARG002 - real time
        """Block this thread until the future is done or ``seconds`` pass."""
        done, _ = concurrent.futures.wait([self.future], timeout=max(seconds, 0.0))
        return bool(done)

    def elapsed(self, now: float) -> float:  # noqa: ARG002 - real time
        """Seconds of the monotonic clock since the start."""
        return time.monotonic() - self.started

    def outcome(self) -> object:
        """The value, or the exception (a cancelled task gives `CancelledError`)."""
        try:
            return self.future.result(timeout=0)
        except BaseException as error:  # noqa: BLE001 - the summarizer's failure is a value here
            return error

    def cancel(self) -> None:
        """Cancel the future; a thread already running keeps running, its answer dropped."""
        self.future.cancel()


def _in_thread(summarizer: Call, prompt: tuple[Message, ...]) -> FuturePending:
    future: concurrent.futures.Future[object] = concurrent.futures.Future()

    def run() -> None:
        try:
            value = summarizer(prompt)
            if inspect.isawaitable(value):
                # An async summarizer with no loop to run on: a loop of this thread's own.
                value = asyncio.run(_awaited(value))
            outcome: tuple[bool, object] = (True, value)
        except BaseException as error:  # noqa: BLE001 - handed to the engine as the outcome
            outcome = (False, error)
        if future.cancelled():
            return
        try:
            if outcome[0]:
                future.set_result(outcome[1])
            else:
                future.set_exception(outcome[1])  # type: ignore[arg-type]
        except concurrent.futures.InvalidStateError:
            # Cancelled between the check and the set: the answer is dropped.
            return

    # A daemon thread: a blocking call cannot be interrupted and must not hold up exit.
    threading.Thread(target=run, name="ctxrules-background-summary", daemon=True).start()
    return FuturePending(future)


async def _awaited(value: Awaitable[object]) -> object:
    return await value


class Threads:
    """Each summary in a daemon thread of its own: for blocking summarizers."""

    def start(self, summarizer: Call, prompt: tuple[Message, ...], now: float) -> Pending:  # noqa: ARG002
        """Start the call in a new daemon thread."""
        return _in_thread(summarizer, prompt)


class LoopTasks:
    """An ``async`` summarizer as a task on the caller's event loop; anything else in a thread.

    ``loop`` returns the loop the caller is running at the time of the start, or None
    (then the call runs in a thread, an async one on a loop of that thread's own).
    """

    def __init__(
        self, summarizer: Call, loop: Callable[[], asyncio.AbstractEventLoop | None]
    ) -> None:
        self.summarizer = summarizer
        self.loop = loop

    def start(self, summarizer: Call, prompt: tuple[Message, ...], now: float) -> Pending:  # noqa: ARG002
        """A task on the running loop for a coroutine function, else a thread running ``summarizer``."""
        loop = self.loop()
        if loop is not None and loop.is_running() and _is_async(self.summarizer):
            coroutine = self.summarizer(prompt)
            assert inspect.isawaitable(coroutine)  # noqa: S101 - a coroutine function's result
            future = asyncio.run_coroutine_threadsafe(_awaited(coroutine), loop)
            return FuturePending(future)
        return _in_thread(summarizer, prompt)


def _is_async(function: object) -> bool:
    return inspect.iscoroutinefunction(function) or inspect.iscoroutinefunction(
        getattr(function, "__call__", None)  # noqa: B004 - a callable object's method
    )


@attrs.define
class SimulatedPending:
    """A call that ran at once but counts as done only ``latency`` seconds after its start.

    Time is the turn's ``now``, with each poll (one per turn) counting at least
    ``min_turn_seconds``, so a log without timestamps still moves on.
    """

    value: object
    latency: float
    started_at: float
    min_turn_seconds: float
    polls: int = 0

    def poll(self, now: float) -> bool:
        """One more turn has come; whether the simulated call is over."""
        self.polls += 1
        return self.elapsed(now) >= self.latency

    def wait(self, now: float, seconds: float) -> bool:
        """Done if what remains of the latency is within ``seconds``."""
        return self.latency - self.elapsed(now) <= seconds

    def elapsed(self, now: float) -> float:
        """Simulated seconds since the start."""
        return max(now - self.started_at, self.polls * self.min_turn_seconds)

    def outcome(self) -> object:
        """What the call returned or raised."""
        return self.value

    def cancel(self) -> None:
        """Nothing runs: nothing to stop."""


@attrs.frozen
class Simulated:
    """A replay's background: the summarizer runs at once, its answer arrives ``latency`` seconds later.

    Deterministic: a summary started at one call is read at the first later call at least
    ``latency`` seconds on by the recorded clock, each call counting ``min_turn_seconds``.
    """

    latency: float
    min_turn_seconds: float = 1.0

    def start(self, summarizer: Call, prompt: tuple[Message, ...], now: float) -> Pending:
        """Run the call now; report it done later."""
        try:
            value: object = summarizer(prompt)
        except Exception as error:  # noqa: BLE001 - the summarizer's failure is a value here
            value = error
        return SimulatedPending(value, self.latency, now, self.min_turn_seconds)


@attrs.define
class Job:
    """The background summary of one session: its plan, the commit it was planned on, the call."""

    plan: CompactionPlan
    base: ContextCommit
    pending: Pending
    started_head: str | None
    ready: SummaryText | None = None
