"""A LangChain v1 agent middleware: ctxrules decides what the model reads on each call.

The agent's state keeps the whole conversation, untouched; on every model call the
middleware brings the ctxrules session up to date with it, lets the engine prepare the
context (rules, compaction, snip) and sends that instead. This is the per-call hook
LangChain's own ``ContextEditingMiddleware`` uses (``wrap_model_call``): unlike a
``before_model`` hook that rewrites the state, nothing the agent did is lost.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, cast

from langchain.agents.middleware import AgentMiddleware, AgentState, ModelRequest, ModelResponse
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AnyMessage, BaseMessage, SystemMessage
from langchain_core.tools import BaseTool, StructuredTool
from langchain_core.utils.function_calling import convert_to_openai_tool
from langgraph.config import get_config
from langgraph.runtime import Runtime
from returns.result import Failure

from ctxrules.engine import DefaultContextEngine, TurnPrep
from ctxrules.engine.background import Threads
from ctxrules.integrations.langchain.messages import (
    KeptForms,
    entries_of,
    key_of,
    to_langchain,
)
from ctxrules.integrations.live import LiveSession
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
from ctxrules.rules.receipts import ending_with
from ctxrules.store.protocol import Store
from ctxrules.tokens import Tokenizer, default_tokenizer
from ctxrules.tokens.usage import ProviderUsage


def with_receipt(system: SystemMessage | None, receipt: str) -> SystemMessage | None:
    """The agent's system message ending with ``receipt`` (one made of it when there is none).

    >>> print(with_receipt(SystemMessage("Be brief."), "[Context note: …]").text)
    Be brief.
    <BLANKLINE>
    [Context note: …]
    >>> with_receipt(None, "") is None
    True
    """
    if not receipt:
        return system
    if system is None:
        return SystemMessage(receipt)
    content = system.content
    if isinstance(content, str):
        noted: str | list[str | dict[Any, Any]] = ending_with(content, receipt)
    else:  # content blocks (a cache marker, say) stay as they are, the receipt after them
        noted = [*content, {"type": "text", "text": receipt}]
    return system.model_copy(update={"content": noted})


def usage_of(message: BaseMessage) -> ProviderUsage | None:
    """The provider's usage from an AI message's ``usage_metadata``, cache reads apart; or None.

    >>> usage_of(AIMessage("hi", usage_metadata={"input_tokens": 120, "output_tokens": 5,
    ...     "total_tokens": 125, "input_token_details": {"cache_read": 100}}))
    ProviderUsage(prompt_tokens=20, completion_tokens=5, cache_read_tokens=100, cache_write_tokens=0)
    """
    usage = getattr(message, "usage_metadata", None)
    if not usage:
        return None
    details: Mapping[str, int] = usage.get("input_token_details") or {}
    read = int(details.get("cache_read") or 0)
    return ProviderUsage(
        prompt_tokens=max(int(usage.get("input_tokens") or 0) - read, 0),
        completion_tokens=int(usage.get("output_tokens") or 0),
        cache_read_tokens=read,
        cache_write_tokens=int(details.get("cache_creation") or 0),
    )


class CtxrulesMiddleware(AgentMiddleware[AgentState[Any], Any, Any]):
    """Put ctxrules between a ``create_agent`` agent and its model.

    ``window`` is the model's real context window. Sessions are kept per LangGraph
    ``thread_id`` (``session_id`` when the run has none) and saved in ``store`` if given.
    Without a ``summarizer`` the agent's own model writes the summaries; with ``background``
    (the default) it writes them in a thread from the recommend threshold, while the agent
    goes on, and a model call waits for one only at the emergency threshold. ``close()``
    cancels a summary under way. With ``recall`` the middleware gives the agent two more
    tools, ``recall`` and ``search_history``, which bring back what the stubs and cuts name;
    a model offered ``recall`` also reads, at the end of its system message, a receipt of
    what its request shows shortened (renewed at batch points only).
    """

    def __init__(
        self,
        *,
        window: int,
        store: Store | None = None,
        session_id: str = "langchain",
        pipeline: Pipeline | None = None,
        tokenizer: Tokenizer | None = None,
        summarizer: Callable[[tuple[Message, ...]], str] | None = None,
        engine: DefaultContextEngine | None = None,
        clock: Callable[[], float] = time.time,
        background: bool = True,
        recall: bool = False,
    ) -> None:
        # A float or an absurd window would pass here and fail every call, unmanaged.
        window = checked_window(window)
        super().__init__()
        self.window = window
        self.store = store
        self.session_id = session_id
        self.clock = clock
        self.engine = engine or DefaultContextEngine(
            pipeline=pipeline or default_pipeline(),
            summarizer=summarizer or self._summarize,
            tokenizer=tokenizer or default_tokenizer(),
            store=store,
            background=Threads() if background else None,
        )
        self.sessions: dict[str, LiveSession] = {}
        #: Per session: the message objects synced last (the state hands the same ones back)
        #: and the LangChain forms of the last context sent, so a call reads what is new.
        self._synced: dict[str, list[BaseMessage]] = {}
        self._forms: dict[str, KeptForms] = {}
        self.last_prep: TurnPrep | None = None
        self._model: BaseChatModel | None = None
        self._answers = RecallAnswers(self.engine, window)
        #: The tools the middleware adds to the agent: the recall tools when asked for.
        self.tools: list[BaseTool] = self._recall_tools() if recall else []

    def _recall_tools(self) -> list[BaseTool]:
        recall, search_history = self._answers.functions(self._live)
        return [
            StructuredTool.from_function(recall, name=RECALL, description=RECALL_DESCRIPTION),
            StructuredTool.from_function(
                search_history, name=SEARCH_HISTORY, description=SEARCH_DESCRIPTION
            ),
        ]

    def close(self) -> None:
        """Cancel the background summaries under way; none of them lands afterwards."""
        self.engine.close()

    def _summarize(self, prompt: tuple[Message, ...]) -> str:
        # The agent's own model, as the last call used it; a failure falls back to the
        # engine's structural summary.
        if self._model is None:
            msg = "no model call seen yet"
            raise RuntimeError(msg)
        return self._model.invoke(to_langchain(prompt)).text

    def _live(self) -> LiveSession | None:
        try:
            thread = get_config().get("configurable", {}).get("thread_id")
        except RuntimeError:  # called outside a LangGraph run
            thread = None
        session_id = str(thread) if thread is not None else self.session_id
        live = self.sessions.get(session_id)
        if live is None:
            opened = LiveSession.open(session_id, self.store, self.engine, created_at=self.clock())
            if isinstance(opened, Failure):
                warnings.warn(f"ctxrules: {opened.failure()}", stacklevel=3)
                return None
            live = self.sessions[session_id] = opened.unwrap()
        return live

    def _sync(self, messages: list[BaseMessage]) -> LiveSession | None:
        live = self._live()
        if live is None:
            return None
        # The state only grows between calls: messages whose keys were synced are passed
        # over without being read again, so a call costs what is new. The state hands back
        # the very objects synced last: those are matched by identity, the rest by key.
        sid = live.session.session_id
        synced = self._synced.get(sid, [])
        same, limit = 0, min(len(messages), len(live.keys))
        known = min(limit, len(synced))
        # A list compare runs in C, each pair by identity first; a difference is found by key.
        if messages[:known] == synced[:known]:
            same = known
        while same < limit and key_of(messages[same]) == live.keys[same]:
            same += 1
        rewritten = same < len(live.keys)
        entries = entries_of(messages if rewritten else messages[same:], 0 if rewritten else same)
        if not isinstance(entries, list):
            warnings.warn(f"ctxrules: {entries.reason}", stacklevel=3)
            return None
        now = self.clock()
        done = live.sync(entries, now=now) if rewritten else live.extend(entries, now=now)
        saved = live.save() if not isinstance(done, Failure) else done
        if isinstance(saved, Failure):
            self._synced.pop(sid, None)
            warnings.warn(f"ctxrules: {saved.failure()}", stacklevel=3)
            return None
        self._synced[sid] = messages
        return live

    def _tightened(self, request: ModelRequest[Any]) -> tuple[ModelRequest[Any], TurnPrep | None]:
        """The request with the engine's context in place of the history; as is on a failure."""
        self._model = request.model
        live = self._sync(list(request.messages))
        if live is None or live.session.head is None:
            return request, None
        tools = [
            tool if isinstance(tool, dict) else convert_to_openai_tool(tool)
            for tool in request.tools
        ]
        system = request.system_message.text if request.system_message is not None else ""
        prep = prepare_turn(
            self.engine, live, window=self.window, now=self.clock(), system=system, tools=tools
        )
        if isinstance(prep, Failure):
            warnings.warn(f"ctxrules: {prep.failure()}", stacklevel=3)
            return request, None
        self.last_prep = prep.unwrap()
        forms = self._forms.get(live.session.session_id)
        if forms is None:
            forms = self._forms[live.session.session_id] = KeptForms()
        messages = cast("list[AnyMessage]", forms.convert(self.last_prep.messages))
        system_message = with_receipt(request.system_message, self.last_prep.system)
        return request.override(messages=messages, system_message=system_message), self.last_prep

    def _measured(self, response: ModelResponse[Any] | AIMessage, prep: TurnPrep | None) -> None:
        result = response.result if isinstance(response, ModelResponse) else [response]
        usage = next((u for m in result if (u := usage_of(m)) is not None), None)
        if prep is not None and usage is not None:
            self.engine.after_turn(prep.session_id, usage, prep)

    def wrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], ModelResponse[Any]],
    ) -> ModelResponse[Any] | AIMessage:
        """Send the engine's context instead of the whole history; feed the usage back."""
        tightened, prep = self._tightened(request)
        response = handler(tightened)
        self._measured(response, prep)
        return response

    async def awrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]],
    ) -> ModelResponse[Any] | AIMessage:
        """The async form of `wrap_model_call`."""
        tightened, prep = self._tightened(request)
        response = await handler(tightened)
        self._measured(response, prep)
        return response

    def after_agent(self, state: AgentState[Any], runtime: Runtime[Any]) -> dict[str, Any] | None:  # noqa: ARG002 - the hook's signature
        """Record the agent's last answer, which no later model call would bring in."""
        self._sync(list(state["messages"]))
        return None
