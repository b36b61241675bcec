"""The recall tools as the framework integrations offer them: one answer from a live session.

A stub or a cut names its original's handle (``[recall h:abcd2345]``); a framework agent
gets the original back by calling ``recall`` (or finds it with ``search_history``), which
each integration registers as one of the agent's tools and answers here, from the
session's history and, for search, the store's full-text index. The answer is paged to
fit under the pipeline's cap at the window, so it reaches the model whole.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from ctxrules.engine import DefaultContextEngine
from ctxrules.engine.recall import SessionRecall
from ctxrules.engine.shapes import ToolCall
from ctxrules.integrations.live import LiveSession
from ctxrules.recall.tools import (
    RECALL,
    RECALL_DESCRIPTION,
    SEARCH_DESCRIPTION,
    SEARCH_HISTORY,
    SEARCH_LIMIT,
)
from ctxrules.rules import Facts
from ctxrules.spec.recall import RecallOptions

__all__ = ["RECALL", "RECALL_DESCRIPTION", "SEARCH_DESCRIPTION", "SEARCH_HISTORY", "RecallAnswers"]


class RecallAnswers:
    """Answers ``recall`` and ``search_history`` for the sessions of one integration.

    Each session keeps its own handle index, grown by what is new at each call.
    """

    def __init__(self, engine: DefaultContextEngine, window: int) -> None:
        self.engine = engine
        self.window = window
        self._recalls: dict[str, SessionRecall] = {}

    def functions(
        self, live: Callable[[], LiveSession | None]
    ) -> tuple[Callable[..., str], Callable[..., str]]:
        """``recall`` and ``search_history`` as plain functions, for a framework to make tools of.

        ``live`` gives the session the call belongs to (None: it cannot be read).
        """

        def recall(handle: str, page: int = 1) -> str:
            return self.answer(live(), RECALL, {"handle": handle, "page": page})

        def search_history(query: str, limit: int = SEARCH_LIMIT) -> str:
            return self.answer(live(), SEARCH_HISTORY, {"query": query, "limit": limit})

        return recall, search_history

    def answer(self, live: LiveSession | None, name: str, arguments: Mapping[str, object]) -> str:
        """The tool result's text for a call of ``name`` with ``arguments`` (an error text if bad)."""
        if live is None:
            return "the conversation's history could not be read; nothing to recall"
        session = live.session
        recall = self._recalls.get(session.session_id)
        if recall is None:
            options = RecallOptions(tools=True)
            recall = self._recalls[session.session_id] = SessionRecall(
                options, self.engine.tokenizer
            )
        state = self.engine.states.get(session.session_id)
        # The handles the model was shown are those of the last request's commit.
        commit = state.head_commit if state is not None else None
        facts = Facts(context_window=self.window, tokenizer=self.engine.tokenizer)
        kept = self.engine.pipeline.result_chars_at(facts)
        store = live.store
        if name == SEARCH_HISTORY and live.keeper is not None:
            # The search reads the store's index: what the session holds goes in first.
            live.save()
        answer = recall.answer(
            ToolCall("", name, dict(arguments)), session, commit, store, max_chars=kept
        )
        if answer is None:
            return f"unknown tool {name!r}; the recall tools are {RECALL!r} and {SEARCH_HISTORY!r}"
        return answer.text
