"""Every model call of an Agents SDK run through ctxrules: ``RunConfig(call_model_input_filter=...)``.

The SDK keeps a run's own items (the model's tool calls and their outputs) in memory and
sends all of them on each model call; a session sees them only when the run ends. The SDK
calls ``call_model_input_filter`` just before every model call: `CtxInputFilter` brings its
own ctxrules session up to date with that call's input, lets the engine prepare the
context for the window (rules, compaction, snip), and sends that instead.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable, Sequence
from typing import Any, cast

import attrs
from agents import Agent, FunctionTool, Handoff, handoff
from agents.items import TResponseInputItem
from agents.run_config import CallModelData, ModelInputData
from returns.result import Failure

from ctxrules.dag import Session
from ctxrules.engine import DefaultContextEngine, TurnPrep
from ctxrules.integrations.live import Entry, LiveSession
from ctxrules.integrations.openai_agents.items import entries_of, to_items
from ctxrules.integrations.turns import (
    checked_window,
    default_pipeline,
    kept_turn,
    offers_recall,
)
from ctxrules.render import Message
from ctxrules.rules import Pipeline
from ctxrules.tokens import Tokenizer, default_tokenizer


def tool_schemas(agent: Agent[Any]) -> list[dict[str, object]]:
    """The schemas the model is sent with the agent's function tools and handoffs (they take room too).

    Hosted tools (web search, file search) are named only: their schemas are the provider's.
    """
    out: list[dict[str, object]] = []
    for tool in agent.tools:
        if isinstance(tool, FunctionTool):
            out.append(
                {
                    "type": "function",
                    "name": tool.name,
                    "description": tool.description,
                    "parameters": tool.params_json_schema,
                }
            )
        else:
            out.append({"type": str(getattr(tool, "name", type(tool).__name__))})
    for target in agent.handoffs:
        made = target if isinstance(target, Handoff) else handoff(target)
        out.append(
            {
                "type": "function",
                "name": made.tool_name,
                "description": made.tool_description,
                "parameters": made.input_json_schema,
            }
        )
    return out


@attrs.frozen
class RunStart:
    """What a `CtxSession` gave the SDK at the start of a run: the items, and its session then.

    A run's first model input starts with exactly these items; the filter then continues
    the session itself (immutable, so shared) instead of reading the items again.
    """

    items: list[dict[str, object]]
    session: Session
    calls: dict[str, str]
    joinable: bool
    #: The session's own live history and how many entries it held then: a run's calls go
    #: on in it, so the session's next context starts from the run's last call.
    live: LiveSession | None = None
    keys: int = 0

    def in_place(self) -> LiveSession | None:
        """The session's live history, if nothing but this run changed it since the start."""
        live = self.live
        if live is None or len(live.keys) < self.keys:
            return None
        if self.keys and live.heads[self.keys - 1] != self.session.head:
            return None
        return live


class CtxInputFilter:
    """A ``call_model_input_filter``: each model call's input, tightened by the engine to fit ``window``.

    ``window`` is the model's real context window. The agent's instructions and tool
    schemas are counted against it; the input is what the engine prepares: old tool results
    aged, big ones capped, history compacted or cut when it still does not fit. One filter
    follows one conversation: an input that extends the last one costs only its new items,
    another input starts the filter's session over. When the agent offers ``recall``, the
    instructions end with a receipt of what the input shows shortened. When the engine
    fails, the input is sent as it is, with a warning.
    """

    def __init__(
        self,
        *,
        window: int,
        pipeline: Pipeline | None = None,
        tokenizer: Tokenizer | None = None,
        summarizer: Callable[[tuple[Message, ...]], str] | None = None,
        engine: DefaultContextEngine | None = None,
        clock: Callable[[], float] = time.time,
        session_id: str = "agents-run",
        start: Callable[[], RunStart | None] | None = None,
    ) -> None:
        # A float or an absurd window would pass here and fail every call, unmanaged.
        window = checked_window(window)
        self.window = window
        self.clock = clock
        self.session_id = session_id
        kwargs: dict[str, Any] = {"summarizer": summarizer} if summarizer is not None else {}
        self.engine = engine or DefaultContextEngine(
            pipeline=pipeline or default_pipeline(),
            tokenizer=tokenizer or default_tokenizer(),
            **kwargs,
        )
        self.live = LiveSession(Session(session_id))
        self.last_prep: TurnPrep | None = None
        self._start = start
        #: The run start the live session continues, and the run's items taken since.
        self._continues: RunStart | None = None
        self._taken: list[dict[str, object]] = []
        #: The entries of ``_taken`` when the run goes on in the session's own history.
        self._taken_entries: list[Entry] = []
        #: The filter's own session, the items it was synced with and the entries they made:
        #: an input that starts with those items costs only its new ones.
        self._known: tuple[LiveSession, list[dict[str, object]], int] | None = None

    def __repr__(self) -> str:
        return f"CtxInputFilter(window={self.window}, session_id={self.session_id!r})"

    def _restart(self) -> None:
        # The engine forgets the old session's commits, so a long-lived filter stays small.
        self.engine.on_session_end(self.session_id)
        self.live = LiveSession(Session(self.session_id))

    def _sync(self, entries: Sequence[Entry]) -> LiveSession | None:
        """The filter's session holding exactly ``entries``; None (with a warning) on a failure."""
        keys = self.live.keys
        extends = len(keys) <= len(entries) and all(
            entry.key == key for entry, key in zip(entries, keys, strict=False)
        )
        if not extends:
            self._restart()
        extended = self.live.extend(entries[len(self.live.keys) :], now=self.clock())
        if isinstance(extended, Failure):
            self._restart()
            warnings.warn(f"ctxrules: {extended.failure()}", stacklevel=3)
            return None
        return self.live

    def _sync_items(self, raw: list[dict[str, object]]) -> LiveSession | None:
        """`_sync` of the items' entries, reading only the items past those synced last.

        The SDK sends the whole run on each model call: keying every item again (a content
        hash of each) cost a call 120 ms at 10,000 items.
        """
        known = self._known
        if known is not None:
            live, items, count = known
            extends = (
                live is self.live
                and len(live.keys) == count
                and len(raw) >= len(items)
                # A list compare: in C, each item by identity first (the SDK hands back the
                # items it sent before), then by value.
                and raw[: len(items)] == items
            )
            if extends:
                entries = entries_of(raw[len(items) :])
                extended = live.extend(entries, now=self.clock())
                if isinstance(extended, Failure):
                    self._known = None
                    self._restart()
                    warnings.warn(f"ctxrules: {extended.failure()}", stacklevel=3)
                    return None
                self._known = (live, raw, count + len(entries))
                return live
        entries = entries_of(raw)
        synced = self._sync(entries)
        # Known only when the session holds exactly these entries, one key each.
        self._known = None
        if synced is not None and len(synced.keys) == len(entries):
            self._known = (synced, raw, len(entries))
        return synced

    def _continued(self, raw: list[dict[str, object]]) -> LiveSession | None:
        """The session's own history with this run's items, when ``raw`` starts a run of it.

        A run's inputs are the session's context, then the run's items: the filter goes on
        from the session (and the engine's state for it), so a model call costs its new
        items, not the context again. None when the input is not such a run.
        """
        start = self._start() if self._start is not None else None
        if start is None or raw[: len(start.items)] != start.items:
            return None
        run = raw[len(start.items) :]
        live = start.in_place()
        if live is not None:
            # The session's own history: what the run adds is the session's next context's
            # parent, so the first call of the next run extends this run's last.
            # Each item is read once: the run's items taken before keep their entries. The
            # SDK may have saved some of them in the session already (they are kept).
            taken = self._taken
            if start is not self._continues or run[: len(taken)] != taken:
                taken, self._taken_entries = [], []
            entries = self._taken_entries + entries_of(run[len(taken) :])
            synced = live.sync_after(start.keys, entries, now=self.clock())
            if isinstance(synced, Failure):
                self._continues = None
                return None
            self._continues, self._taken, self._taken_entries = start, run, entries
            return live
        if start is not self._continues or run[: len(self._taken)] != self._taken:
            self._restart()
            self._continues, self._taken = start, []
            own = self.engine.states.get(start.session.session_id)
            if own is not None:
                self.engine.states[self.session_id] = own
            session = attrs.evolve(start.session, session_id=self.session_id)
            self.live = LiveSession(session, calls=dict(start.calls), joinable=start.joinable)
        extended = self.live.extend(entries_of(run[len(self._taken) :]), now=self.clock())
        if isinstance(extended, Failure):
            self._continues = None
            return None
        self._taken = run
        return self.live

    def __call__(self, data: CallModelData[Any]) -> ModelInputData:
        """The model's input for this call: the engine's context in place of the run's items."""
        given = data.model_data
        # Read, not copied: the entries copy what they keep, and only new items are read.
        raw = cast("list[dict[str, object]]", list(given.input))
        live = self._continued(raw)
        if live is None:
            self._continues = None
            live = self._sync_items(raw)
        if live is None or live.session.head is None:
            return given
        tools = tool_schemas(data.agent)
        prep = self.engine.prepare(
            live.session,
            window=self.window,
            now=self.clock(),
            tools=tools,
            system_prompt=given.instructions or "",
            # A model offered recall reads, after the instructions, what its input shows
            # shortened and how to get it back (renewed at batch points only).
            receipts=offers_recall(tools),
        )
        if isinstance(prep, Failure):
            warnings.warn(f"ctxrules: {prep.failure()}", stacklevel=2)
            return given
        self.last_prep = prep.unwrap()
        # A run going on in a stored session stores each call, as the LangChain middleware
        # does: reopened, the session goes on from the run's last commit. Rebuilt from the
        # run's first in one step, the batched rules would age other results. A failed
        # store still sends the context: the next call's store takes this commit along.
        stored = kept_turn(self.engine, live, self.last_prep)
        if isinstance(stored, Failure):
            warnings.warn(f"ctxrules: {stored.failure()}", stacklevel=2)
        items = cast("list[TResponseInputItem]", to_items(self.last_prep.messages))
        noted = self.last_prep.system
        instructions = given.instructions if noted == (given.instructions or "") else noted
        return ModelInputData(input=items, instructions=instructions)


def ctxrules_input_filter(
    *,
    window: int,
    pipeline: Pipeline | None = None,
    tokenizer: Tokenizer | None = None,
    summarizer: Callable[[tuple[Message, ...]], str] | None = None,
) -> CtxInputFilter:
    """A filter for ``RunConfig(call_model_input_filter=...)`` that keeps each model call in ``window``.

    >>> ctxrules_input_filter(window=32_000)
    CtxInputFilter(window=32000, session_id='agents-run')
    """
    return CtxInputFilter(
        window=window, pipeline=pipeline, tokenizer=tokenizer, summarizer=summarizer
    )
