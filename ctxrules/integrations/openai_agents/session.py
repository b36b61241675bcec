"""An OpenAI Agents SDK session backed by ctxrules: ``Runner.run(agent, input, session=...)``.

The SDK reads a session's history once at the start of each run and appends the run's
items at the end. `CtxSession` keeps those items as a ctxrules session (in the SQLite
store when given one) and answers ``get_items()`` with the context the engine prepares:
tool results aged, history compacted, and never more than the window.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any, cast

from agents import FunctionTool, function_tool
from agents.items import TResponseInputItem
from agents.memory.session_settings import SessionSettings
from returns.result import Failure, Result

from ctxrules.engine import DefaultContextEngine, TurnPrep
from ctxrules.engine.background import Threads
from ctxrules.errors import ErrorValue
from ctxrules.integrations.live import Entry, LiveSession
from ctxrules.integrations.openai_agents.input_filter import CtxInputFilter, RunStart
from ctxrules.integrations.openai_agents.items import (
    entries_of,
    plain_items,
    stored_items,
    to_items,
)
from ctxrules.integrations.recall_answers import (
    RECALL,
    RECALL_DESCRIPTION,
    SEARCH_DESCRIPTION,
    SEARCH_HISTORY,
    RecallAnswers,
)
from ctxrules.integrations.turns import checked_window, default_pipeline, prepare_turn
from ctxrules.render import Message
from ctxrules.rules import Pipeline
from ctxrules.store.protocol import Store
from ctxrules.tokens import Tokenizer, default_tokenizer


class CtxSessionError(RuntimeError):
    """The store or the history refused a change; the SDK reports it as the run's failure."""


def _check(result: Result[object, ErrorValue]) -> None:
    if isinstance(result, Failure):
        raise CtxSessionError(result.failure().message)


class CtxSession:
    """A `Session` for the Agents SDK whose ``get_items()`` is the tightened context.

    ``window`` is the model's real context window; ``system`` the agent's instructions,
    whose tokens are kept free. ``get_items(limit=N)`` returns the last N items exactly as
    they were added (the SDK checks its own writes that way); without a limit it returns
    what the model should read. The summarizer is the structural one unless one is given;
    a given one writes its summaries in a thread from the recommend threshold while the
    runs go on (``background=False`` writes them in the call that needs them), and
    ``close()`` cancels one under way.
    """

    def __init__(
        self,
        session_id: str,
        *,
        window: int,
        store: Store | None = None,
        system: str = "",
        pipeline: Pipeline | None = None,
        tokenizer: Tokenizer | None = None,
        summarizer: Callable[[tuple[Message, ...]], str] | None = None,
        engine: DefaultContextEngine | None = None,
        clock: Callable[[], float] = time.time,
        session_settings: SessionSettings | None = None,
        background: bool = True,
    ) -> None:
        # A float or an absurd window would pass here and fail every call, unmanaged.
        window = checked_window(window)
        self.session_id = session_id
        self.session_settings = session_settings
        self.window = window
        self.system = system
        self.clock = clock
        kwargs: dict[str, Any] = {"summarizer": summarizer} if summarizer is not None else {}
        if summarizer is not None and background:
            # The structural summary needs no background: it is written in no time.
            kwargs["background"] = Threads()
        self.engine = engine or DefaultContextEngine(
            pipeline=pipeline or default_pipeline(),
            tokenizer=tokenizer or default_tokenizer(),
            store=store,
            **kwargs,
        )
        opened = LiveSession.open(session_id, store, self.engine, created_at=clock())
        _check(opened)
        self.live = opened.unwrap()
        self.last_prep: TurnPrep | None = None
        self._lock = asyncio.Lock()
        #: What the last ``get_items()`` gave the SDK: a run's filter goes on from it.
        self._run_start: RunStart | None = None
        #: What ``add_items`` was given since then (the SDK may save a run's input first).
        self._run_added: list[Entry] = []
        self._answers = RecallAnswers(self.engine, window)

    def close(self) -> None:
        """Cancel the background summary under way, if any; it never lands afterwards."""
        self.engine.close()

    def input_filter(self) -> CtxInputFilter:
        """A ``call_model_input_filter`` with this session's window and engine, for the calls within a run.

        The session tightens the history between runs; the filter tightens each model call
        of a run, whose tool results the session sees only when the run ends.
        """
        return CtxInputFilter(
            window=self.window,
            engine=self.engine,
            clock=self.clock,
            session_id=f"{self.session_id}:run",
            start=lambda: self._run_start,
        )

    def recall_tools(self) -> list[FunctionTool]:
        """``recall`` and ``search_history`` as the agent's tools: they bring back what stubs and cuts name.

        Add them to the agent (``Agent(tools=[*tools, *session.recall_tools()])``); they
        answer from this session's history, the run's items included.
        """
        recall, search_history = self._answers.functions(lambda: self.live)
        return [
            function_tool(recall, name_override=RECALL, description_override=RECALL_DESCRIPTION),
            function_tool(
                search_history,
                name_override=SEARCH_HISTORY,
                description_override=SEARCH_DESCRIPTION,
            ),
        ]

    def items(self) -> list[dict[str, object]]:
        """Every item of the conversation as it was added (the true history)."""
        return stored_items(self.live.session)

    def context(self) -> list[dict[str, object]]:
        """What the model should read now: the engine's context as Responses input items."""
        if self.live.session.head is None:
            return []
        prep = prepare_turn(
            self.engine, self.live, window=self.window, now=self.clock(), system=self.system
        )
        _check(prep)
        self.last_prep = prep.unwrap()
        items = to_items(self.last_prep.messages)
        live = self.live
        given = [dict(item) for item in items]
        self._run_start = RunStart(
            given, live.session, dict(live.calls), live.joinable, live=live, keys=len(live.keys)
        )
        self._run_added = []
        return items

    async def get_items(self, limit: int | None = None) -> list[TResponseInputItem]:
        """The tightened context; with ``limit``, the last ``limit`` items as added."""
        async with self._lock:
            items = self.items()[-limit:] if limit is not None and limit > 0 else self.context()
            if limit == 0:
                items = []
            return cast("list[TResponseInputItem]", items)

    async def add_items(self, items: list[TResponseInputItem]) -> None:
        """Append the items to the history and save them."""
        # Checked whole before anything is added: a bad item adds none of them.
        raw = plain_items(items)
        if isinstance(raw, str):
            raise CtxSessionError(raw)
        async with self._lock:
            entries = entries_of(raw)
            start = self._run_start
            if start is not None and start.in_place() is not None:
                # The run's calls went on in this history: what they added and match stays.
                self._run_added += entries
                _check(self.live.sync_after(start.keys, self._run_added, now=self.clock()))
            else:
                _check(self.live.extend(entries, now=self.clock()))
            _check(self.live.save())

    async def pop_item(self) -> TResponseInputItem | None:
        """Take the last item off: the head moves back; the DAG keeps the old branch."""
        async with self._lock:
            items = self.items()
            if not items:
                return None
            self._run_start = None
            _check(self.live.sync(entries_of(items[:-1]), now=self.clock()))
            _check(self.live.save())
            return cast("TResponseInputItem", items[-1])

    async def clear_session(self) -> None:
        """Start the conversation over; the DAG keeps what came before."""
        async with self._lock:
            self._run_start = None
            _check(self.live.sync([], now=self.clock()))
            _check(self.live.save())
