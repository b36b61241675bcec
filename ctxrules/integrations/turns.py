"""What both framework adapters share: the default engine and one prepared turn."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import cast

from returns.result import Failure, Result, Success

from ctxrules.engine import DefaultContextEngine, EngineError, TurnPrep
from ctxrules.integrations.live import LiveSession
from ctxrules.recall.tools import RECALL
from ctxrules.render import Message, TextBlock, count_messages
from ctxrules.rules import Pipeline
from ctxrules.spec import load_spec
from ctxrules.spec.builtin import find_spec
from ctxrules.store import StoreError
from ctxrules.tokens import Tokenizer, real_context_window


def default_pipeline() -> Pipeline:
    """The pipeline integrations run by default: the built-in ``default`` spec, as `Context` runs it."""
    # One default for every way in: an integration that ran rules of its own (no batching,
    # none of the stubs' names) broke the cached prefix on nearly every model call.
    return load_spec(find_spec("default").unwrap()).unwrap()


def checked_window(window: object) -> int:
    """``window`` if it can be a model's real context window; else a ValueError that says why.

    The bound `ctxrules.Context` checks: a whole number of tokens, 1,024 to 10,000,000.

    >>> checked_window(32_000)
    32000
    >>> checked_window(8000.0)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: window=8000.0: expected the model's context window in tokens, ...
    """
    checked = real_context_window("", override=cast("int", window))
    if isinstance(checked, Failure):
        raise ValueError(str(checked.failure()))  # noqa: TRY004 - a bad value, as window=0 always was
    return checked.unwrap()


def system_tokens(text: str, tokenizer: Tokenizer) -> int:
    """Tokens of the framework's own system prompt, by the one ruler; 0 when there is none.

    >>> from ctxrules.tokens import HeuristicCounter
    >>> system_tokens("", HeuristicCounter()), system_tokens("Be brief.", HeuristicCounter()) > 0
    (0, True)
    """
    if not text:
        return 0
    return count_messages((Message("system", (TextBlock(text),)),), tokenizer)


def offers_recall(tools: Sequence[Mapping[str, object]]) -> bool:
    """Whether the model is offered ``recall`` (a schema flat or under ``function``).

    Only then does a request end with a receipt (what it shows shortened, and how to
    recall it), as `ctxrules.Context`'s do: without the tool a model could not act on it.

    >>> offers_recall([{"type": "function", "function": {"name": "recall"}}]), offers_recall([{"name": "ls"}])
    (True, False)
    """
    for schema in tools:
        inner = schema.get("function")
        named = inner if isinstance(inner, Mapping) else schema
        if named.get("name") == RECALL:
            return True
    return False


def prepare_turn(
    engine: DefaultContextEngine,
    live: LiveSession,
    *,
    window: int,
    now: float,
    system: str = "",
    tools: Sequence[Mapping[str, object]] = (),
) -> Result[TurnPrep, EngineError | StoreError]:
    """The engine's turn for the live session; the framework's system prompt is taken off the window.

    When ``tools`` offer ``recall`` (`offers_recall`), the turn's ``system`` is the receipt
    the framework's own system prompt must end with; otherwise it is empty. The turn's commits, usage and references are stored with the session (one
    transaction), so the store shows what was sent and a new process goes on from it.
    """
    reserved = system_tokens(system, engine.tokenizer)
    if window - reserved < 1:
        reason = f"window={window} leaves no room after a system prompt of {reserved} tokens"
        return Failure(EngineError(live.session.session_id, reason))
    prep = engine.prepare(
        live.session,
        window=window - reserved,
        now=now,
        tools=tools,
        receipts=offers_recall(tools),
    )
    if isinstance(prep, Failure):
        return prep
    return kept_turn(engine, live, prep.unwrap())


def kept_turn(
    engine: DefaultContextEngine, live: LiveSession, prep: TurnPrep
) -> Result[TurnPrep, StoreError]:
    """``prep`` once the live session's new nodes, commits, usage and references are stored.

    Every prepared request is stored (a no-op without a store): a session reopened later
    goes on from the last commit stored, so one left out is rebuilt from an older commit
    in one step, and rules that batch or count turns then decide otherwise.
    """
    if live.keeper is None:
        return Success(prep)
    session = live.session
    stored = live.keeper.flush(session, engine.states[session.session_id], prep.head)
    return stored.map(lambda _: prep)
