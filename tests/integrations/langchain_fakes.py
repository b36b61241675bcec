"""A fake LangChain chat model for the middleware's tests: it logs each request and replies as told."""

from __future__ import annotations

from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import Field


class ScriptedModel(BaseChatModel):
    """Logs every request's messages (``log``) and tool names (``tools_seen``); ``reply`` answers.

    A call without tools is the middleware's summarizer, answered with a short summary.
    (Imported only where the langchain extra is installed.)
    """

    log: list[list[BaseMessage]] = Field(default_factory=list)
    tools_seen: list[str] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "scripted-fake"

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        return self.bind(tools=[convert_to_openai_tool(t) for t in tools], **kwargs)

    def reply(self, messages: list[BaseMessage]) -> AIMessage:
        """The answer to the ``len(self.log)``-th request, ``messages``."""
        raise NotImplementedError

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,  # noqa: ARG002 - the interface's signature
        run_manager: CallbackManagerForLLMRun | None = None,  # noqa: ARG002 - see above
        **kwargs: Any,
    ) -> ChatResult:
        tools = kwargs.get("tools")
        if tools is None:
            return ChatResult(generations=[ChatGeneration(message=AIMessage("## Goal\nwork"))])
        self.tools_seen = [t["function"]["name"] for t in tools]
        self.log.append(list(messages))
        return ChatResult(generations=[ChatGeneration(message=self.reply(messages))])
