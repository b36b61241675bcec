"""`Context`: one agent session behind a few calls — add messages, get the request, record the reply.

The shell over the engine for people who call an SDK directly. It reads the clock (an
injectable ``clock``), keeps the session in a store when given one, and raises a
`ContextError` for bad input, as SDK users expect; the core below it keeps `Result`.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import functools
import inspect
import os
import threading
import time
import warnings
import weakref
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Literal, ParamSpec, Self, TypeVar

import attrs
from returns.result import Failure, Result

from ctxrules.cache.profiles import profile_for_model
from ctxrules.dag import Session, Status
from ctxrules.dag.call_ids import PROVIDER_CALL_ID, CallIds
from ctxrules.dag.json_values import clean_text
from ctxrules.engine.background import LoopTasks
from ctxrules.engine.call_ids import visible_call_ids
from ctxrules.engine.default import DefaultContextEngine
from ctxrules.engine.frame import RequestFrame
from ctxrules.engine.persist import Keeper, open_session
from ctxrules.engine.recall import SessionRecall, read_tool_call
from ctxrules.engine.sdk import AnySummarizer, LoopBridge, anthropic_request, openai_request
from ctxrules.engine.settings import argument_problem, room_problem, store_folder_problem
from ctxrules.engine.shapes import (
    Said,
    ToolCall,
    ToolOutput,
    placeholder_kinds,
    read_message,
    read_response,
    stop_reason,
)
from ctxrules.engine.turn import TurnPrep
from ctxrules.importers.records import Unreadable
from ctxrules.recall.tools import SEARCH_HISTORY
from ctxrules.render import Message, TextBlock, count_messages
from ctxrules.render.anthropic import with_cache_control
from ctxrules.render.item import THINKING_KEY
from ctxrules.render.system_prompt import AgentProfile, SystemPrompt, build_system_prompt
from ctxrules.rules import Facts, Pipeline, RuleRaised
from ctxrules.spec import load_spec
from ctxrules.spec.builtin import find_spec
from ctxrules.spec.recall import RecallOptions, recall_options
from ctxrules.spec.source import SpecSource, is_text
from ctxrules.store.errors import HeadMoved, LazyReadFailed
from ctxrules.store.protocol import Store
from ctxrules.store.url import open_store, parse_store_url
from ctxrules.tokens import Tokenizer, default_tokenizer, real_context_window, tools_schema_tokens
from ctxrules.tokens.usage import ProviderUsage

T = TypeVar("T")

#: When a store write waits for the disk: at each request built, or at every call; or
#: (``"turn"``) the calls between requests are stored with the next request, in its transaction.
Durability = Literal["request", "every_call", "turn"]


class ContextError(Exception):
    """What `Context` raises: bad input, a spec or model it cannot use, a store that failed.

    ``error`` is the value the core returned (or the text), for code that wants the data;
    ``text``, when given, is the message instead of ``str(error)``.
    """

    def __init__(self, error: object, text: str | None = None) -> None:
        super().__init__(str(error) if text is None else text)
        self.error = error


class InputError(ContextError):
    """A message or response in a shape `Context` cannot read, or a result for an unknown call."""


class ConfigError(ContextError):
    """A spec that does not load, a model with no known window, a store that does not open."""


class StoreFailed(ContextError):
    """The store refused a write or a read (the disk failed, the server is down)."""


class SessionMoved(StoreFailed):
    """Another writer moved the stored session on: `Context.reload` reads it again."""


class ContextBusy(ContextError):
    """A call from the event loop while another thread runs one on the same `Context`."""


class ContextClosed(ContextError):
    """A call on a `Context` after `Context.close`: open a new one to go on with the session."""


class ContextWarning(UserWarning):
    """What `Context` warns of: a request cut to fit the window (``ctx.last.warnings`` has it too)."""


@attrs.frozen
class Reply:
    """What `Context.record` read from a response: the text, the tool calls to run, the usage.

    ``stop_reason`` is why the model stopped, as the provider says it (``end_turn``,
    ``tool_use``, ``max_tokens``, ``pause_turn``; ``stop``, ``tool_calls``, ``length``): a
    reply cut by the output limit has no tool call and is no final answer either.
    """

    text: str
    tool_calls: tuple[ToolCall, ...]
    usage: ProviderUsage | None
    stop_reason: str | None = None


#: Contexts stored per turn that hold calls not stored yet: stored at a normal exit.
_WAITING: weakref.WeakSet[Context] = weakref.WeakSet()


@atexit.register
def _store_waiting_at_exit() -> None:
    """Store what each open per-turn `Context` still holds, when the interpreter exits.

    A script that ends without `Context.close` keeps what it added after its last request
    (a reply's tool calls, their results); a kill or a crash still loses it, as promised.
    """
    for ctx in list(_WAITING):
        try:
            ctx._store(now=True, durable=True)  # noqa: SLF001 - this module's own object
        except ContextError as err:
            warnings.warn(f"ctxrules: at exit, {err}", RuntimeWarning, stacklevel=1)


#: Request keys `Context` builds and counts against the window: never taken from ``extra``.
_MANAGED = ("messages", "system", "tools")


def _refuse_managed(method: str, extra: Mapping[str, object]) -> None:
    """Raise `InputError` when ``extra`` would replace what the request was counted with."""
    managed = [key for key in _MANAGED if key in extra]
    if managed:
        raise InputError(
            f"{method}({managed[0]}=...): the messages, system prompt and tools are what "
            "Context counts against the window; give system= and tools= to Context(...) "
            "and add messages with add()"
        )


def _ends_turn(entry: Said | ToolOutput) -> bool:
    """Whether ``entry`` is a reply with no tool call: the turn is over until the user speaks."""
    return isinstance(entry, Said) and entry.role == "assistant" and not entry.tool_calls


def _unwrap(result: Result[T, object], error: type[ContextError]) -> T:
    if isinstance(result, Failure):
        raise error(result.failure())
    return result.unwrap()


def _stored(result: Result[T, object]) -> T:
    # A write another writer beat: the object's session is stale until it is read again,
    # so the error says how, rather than the store's bare "reload and retry".
    if isinstance(result, Failure) and isinstance(moved := result.failure(), HeadMoved):
        raise SessionMoved(
            moved,
            f"session {moved.session_id!r} was moved on by another writer (head {moved.name!r} "
            f"is {moved.actual!r}, this object had {moved.expected!r}); nothing since the last "
            "stored call was saved: call reload() to read the session again, then add again",
        )
    return _unwrap(result, StoreFailed)


P = ParamSpec("P")


def _public_call(method: Callable[P, T]) -> Callable[P, T]:
    """``method`` serialized (`Context.serving`), refused after `Context.close`, a failed read of a resumed session raised as `StoreFailed`."""

    @functools.wraps(method)
    def call(*args: P.args, **kwargs: P.kwargs) -> T:
        context = args[0]
        assert isinstance(context, Context)  # noqa: S101 - only Context's methods are wrapped
        # Not `with context.serving()`: a generator's context manager costs more than the lock.
        context._take()  # noqa: SLF001 - this module's own object
        try:
            if context.closed:
                # One answer for every call after close, whatever the store would have said.
                name = context.session.session_id
                raise ContextClosed(
                    name,
                    f"this Context is closed: make a new Context(..., session={name!r}) to go on",
                )
            return method(*args, **kwargs)
        except LazyReadFailed as err:
            raise StoreFailed(err.error) from None
        finally:
            context._lock.release()  # noqa: SLF001 - see above

    return call


def _on_event_loop() -> bool:
    """Whether this thread is running an asyncio event loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


def _source(spec: SpecSource) -> SpecSource:
    # A misspelt built-in name gets the CLI's suggestion, not "expected a readable file".
    found = find_spec(spec)
    if isinstance(found, Failure):
        raise ConfigError(found.failure(), f"spec={spec!r}: {found.failure()}")
    return found.unwrap()


def _pipeline(spec: str | os.PathLike[str] | Pipeline, allow_imports: bool) -> Pipeline:
    if isinstance(spec, Pipeline):
        return spec
    return _unwrap(load_spec(_source(spec), allow_imports=allow_imports), ConfigError)


def _spec_text(spec: str | os.PathLike[str] | Pipeline) -> str:
    """The spec's TOML text, kept with a stored session for its replay ('' for a `Pipeline`)."""
    if isinstance(spec, Pipeline):
        return ""
    source = _source(spec)
    if is_text(source):
        return os.fspath(source)
    try:
        return Path(source).read_text(encoding="utf-8")
    except (OSError, UnicodeError):
        # It loaded a moment ago; a file gone since only costs the replay its default.
        return ""


def _recall(spec: str | os.PathLike[str] | Pipeline, given: RecallOptions | None) -> RecallOptions:
    if given is not None or isinstance(spec, Pipeline):
        return given or RecallOptions()
    return _unwrap(recall_options(_source(spec)), ConfigError)


#: The installed package's folder: a warning points at the first frame outside it.
_PACKAGE = str(Path(__file__).resolve().parents[1])


def _warn_replaced(text: object, what: str) -> None:
    # The DAG keeps text that encodes: a lone surrogate is stored as U+FFFD, and said so.
    if isinstance(text, str) and not text.isascii() and clean_text(text) != text:
        message = f"ctxrules: lone surrogates in {what} were stored as U+FFFD"
        _warn_caller(message)


def _warn_unseen(kinds: Sequence[str], message: Callable[[int, str], str]) -> None:
    """Say which blocks the model will not see: ``message(count, their types)``."""
    if kinds:
        _warn_caller(message(len(kinds), ", ".join(sorted(set(kinds)))))


def _warn(event: str, data: Mapping[str, object]) -> None:
    # The engine's cut of a request is shown, not only kept in ``ctx.last.warnings``.
    if event != "request_snipped":
        return
    _warn_caller(f"ctxrules: {data['warning']}")


#: In the worker thread of an async call (`Context._in_thread`), the warnings it holds back.
_HELD_WARNINGS = threading.local()


def _warn_caller(message: str) -> None:
    """Warn with `ContextWarning`, pointing at the first line outside the package."""
    held: list[str] | None = getattr(_HELD_WARNINGS, "messages", None)
    if held is not None:
        # The caller's line is on the event loop's thread, not this one: said from there.
        held.append(message)
        return
    level, frame = 1, inspect.currentframe()
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE):
        level, frame = level + 1, frame.f_back
    warnings.warn(message, ContextWarning, stacklevel=level)


class Context:
    """One session of an agent loop: ``add`` messages, ``openai()``/``anthropic()``, ``record``.

    ``spec`` is a built-in spec name, a TOML path or text, or a `Pipeline`; ``store`` a
    path or URL for `open_store` (SQLite or ``postgresql://``) or an open store (the session
    is saved turn by turn and reopened by ``session`` id); ``clock`` gives the time in
    seconds. ``recall`` overrides the spec's ``[recall]`` table (the only way to set it
    with a `Pipeline`). ``agent`` builds the system prompt in layers instead of ``system``:
    identity, workspace files, inline prompt, skill index, then ``memory()``, read again
    for every request. A session created in a store keeps its request frame (model, window,
    system prompt, tool schemas, spec: `ctxrules.engine.frame`) for ``ctxrules replay --session``.
    With a ``summarizer``, ``background`` (the default) writes summaries
    off the hot path: a thread, or a task on your loop for an ``async`` one, started at the
    recommend threshold; a request waits for one only at the emergency threshold.

    With a store, ``durability="turn"`` (the default) stores the calls that only add to the
    history (``add``, ``record``, ``add_tool_result``) with the next request built
    (``openai()``, ``anthropic()``, ``prepare()``, their async forms), in its one synced
    transaction: every request survives kill -9 and power loss with everything added
    before it; a reply with no tool call (it ends the turn) is stored at once, synced;
    what was added since is stored by `close` (or a normal exit) and lost with a killed
    process. ``durability="request"`` stores each call as it returns, without
    waiting for the disk, and syncs each request: every acknowledged call survives kill -9
    (for tool calls whose effects must be on disk before they run).
    ``durability="every_call"`` syncs every call, so each survives power loss too.
    """

    def __init__(
        self,
        spec: str | os.PathLike[str] | Pipeline = "default",
        *,
        model: str,
        window: int | None = None,
        system: str = "",
        tools: Sequence[Mapping[str, object]] = (),
        agent: AgentProfile | None = None,
        memory: Callable[[], str] = str,
        store: str | os.PathLike[str] | Store | None = None,
        session: str = "main",
        summarizer: AnySummarizer | None = None,
        tokenizer: Tokenizer | None = None,
        clock: Callable[[], float] = time.time,
        allow_imports: bool = False,
        recall: RecallOptions | None = None,
        background: bool = True,
        durability: Durability = "turn",
    ) -> None:
        if not isinstance(background, bool):
            raise ConfigError(background, f"background={background!r}: expected True or False")
        if durability not in ("request", "every_call", "turn"):
            expected = "expected 'request', 'every_call' or 'turn'"
            raise ConfigError(durability, f"durability={durability!r}: {expected}")
        #: Whether a call that only adds to the history waits for the disk.
        self._sync_each_call = durability == "every_call"
        #: Whether such a call is stored only with the next request (one transaction a turn).
        self._store_per_turn = durability == "turn"
        problem = argument_problem(
            spec=spec,
            model=model,
            system=system,
            tools=tools,
            session=session,
            clock=clock,
            tokenizer=tokenizer,
            summarizer=summarizer,
            allow_imports=allow_imports,
            recall=recall,
            agent=agent,
            memory=memory,
        )
        if problem is not None:
            raise ConfigError(problem)
        self.model, self.system, self.tools, self.clock = model, system, tuple(tools), clock
        self.agent, self.memory = agent, memory
        self.window = _unwrap(real_context_window(model, override=window), ConfigError)
        self._bridge = LoopBridge(summarizer) if summarizer is not None else None
        self.engine = DefaultContextEngine(
            pipeline=_pipeline(spec, allow_imports),
            tokenizer=tokenizer or default_tokenizer(),
            on_event=_warn,
            # A gap longer than the provider's cache lifetime is a batch point: the cache is cold.
            cache_profile=profile_for_model(model),
        )
        if self._bridge is not None:
            self.engine.summarizer = self._bridge
            if background:
                bridge = self._bridge
                self.engine.background = LoopTasks(bridge.summarizer, lambda: bridge.loop)
        self.recall = SessionRecall(_recall(spec, recall), self.engine.tokenizer)
        # The recall tools are part of every request, so they are counted with the host's.
        self._tools = (*self.tools, *self.recall.tools())
        self._check_room()
        self.session = Session(session)
        self._keeper: Keeper | None = None
        self._prep: TurnPrep | None = None
        self._waiting_calls: dict[str, str] = {}
        self._closed = False
        #: One call at a time (`serving`); reentrant, as a call makes others (openai: prepare).
        self._lock = threading.RLock()
        #: The call ids a request may show (`_call_ids`), read on the first reply with calls.
        self._used_ids: CallIds | None = None
        self._warned_renamed = False
        #: The node of the message added last (a tool result's is its call's), for `pin`.
        self._last_added: str | None = None
        self._owns_store = isinstance(store, str | os.PathLike)
        #: The spec as given, read again as text only for the frame of a new stored session.
        self._spec = spec
        if store is not None:
            self._resume(self._open(store), ConfigError)

    def _resume(self, store: Store, error: type[ContextError]) -> None:
        session = self.session.session_id
        opened = open_session(
            store, session, self.engine, created_at=self.clock(), metadata=self._frame_metadata
        )
        self._keeper, self.session = _unwrap(opened, error)

    def _frame_metadata(self) -> dict[str, object]:
        # A new session keeps what its requests send beside the history, for a replay.
        frame = RequestFrame(
            self.model,
            self.window,
            self._system_prompt().text,
            self._tools,
            receipts=bool(self.recall.tools()),
            spec=_spec_text(self._spec),
        )
        return frame.to_metadata()

    def _check_room(self) -> None:
        # A window the system prompt and tool schemas fill alone could only send cut requests.
        ruler = self.engine.tokenizer
        text = self._system_prompt().text
        system = count_messages((Message("system", (TextBlock(text),)),), ruler) if text else 0
        budget = self.engine.allocate(
            self.window, system, 0, tools_schema_tokens(self._tools, ruler)
        )
        if problem := room_problem(budget):
            raise ConfigError(budget, problem)

    def _system_prompt(self) -> SystemPrompt:
        # Built anew for every request: workspace files and memory may have changed, and
        # equal inputs give byte-identical text, so the provider's cached prefix holds.
        if self.agent is None:
            return SystemPrompt(self.system)
        return build_system_prompt(self.agent, memory=self.memory)

    @staticmethod
    def _open(store: str | os.PathLike[str] | Store) -> Store:
        if not isinstance(store, str | os.PathLike):
            return store
        where = _unwrap(parse_store_url(store), ConfigError)
        if problem := store_folder_problem(store, where):
            raise ConfigError(problem)
        opened = open_store(store)
        if isinstance(opened, Failure) and where.backend == "sqlite":
            fix = "pass a new file or an existing ctxrules store, or ':memory:'"
            raise ConfigError(opened.failure(), f"{opened.failure()}; {fix}")
        return _unwrap(opened, ConfigError)

    # -- adding to the session ---------------------------------------------------------------

    @_public_call
    def add(self, *messages: object) -> None:
        """Add messages (OpenAI, Anthropic or ``{"role", "content"}`` dicts, or SDK objects).

        With a store, the messages added are stored with the next request (at once, in one
        transaction, with ``durability="request"``), those before a bad one included.
        """
        ends = False
        try:
            for message in messages:
                entries = read_message(message)
                if isinstance(entries, Unreadable):
                    raise InputError(f"cannot read message {message!r:.80}: {entries.reason}")
                # The model reads text: an image or a file reaches it as "[image]", so say so.
                _warn_unseen(
                    placeholder_kinds(message),
                    lambda count, named: (
                        f"ctxrules: {count} content block(s) of type {named} were kept as a"
                        " placeholder such as '[image]': ctxrules sends text, so the model will"
                        " not see them"
                    ),
                )
                for entry in entries:
                    if isinstance(entry, ToolOutput):
                        self._result(entry.call_id, entry.text, is_error=entry.is_error)
                    else:
                        self._say(entry)
                    ends = _ends_turn(entry)
        finally:
            self._store(ends_turn=ends)

    @_public_call
    def add_tool_result(self, call_id: str, output: object, *, is_error: bool = False) -> None:
        """Record what the tool call ``call_id`` returned."""
        self._result(call_id, output, is_error=is_error)
        # A list of blocks is sent as their JSON text: an image in it reaches the model as
        # its base64 text (cut by the result cap), never as an image.
        _warn_unseen(
            placeholder_kinds({"content": output}),
            lambda count, named: (
                f"ctxrules: the result of tool call {call_id!r:.80} holds {count} block(s) of"
                f" type {named}, sent as the blocks' JSON text: the model will not see them"
            ),
        )
        self._store()

    def _waiting(self) -> dict[str, str]:
        # Tool call id to node, for the calls still running: kept as calls are recorded and
        # answered, built again from the session only when it does not match (a reopen).
        index = self._waiting_calls
        if len(index) != len(self.session.running):
            index.clear()
            for node_id in self.session.running:
                node = self.session.graph.nodes.get(node_id)
                call_id = node.metadata.get("tool_call_id") if node is not None else None
                if isinstance(call_id, str):
                    index[call_id] = node_id
        return index

    def _result(self, call_id: str, output: object, *, is_error: bool) -> None:
        waiting = self._waiting()
        node_id = waiting.get(call_id) or self._renamed_from(call_id)
        node = self.session.graph.nodes.get(node_id) if node_id is not None else None
        if node is None or node_id not in self.session.running:
            raise InputError(f"no tool call {call_id!r:.80} is waiting for its result")
        status = Status.ERROR if is_error else Status.DONE
        _warn_replaced(output, f"the result of tool call {call_id!r:.80}")
        self.session = _unwrap(self.session.complete(node.id, output, status), InputError)
        # Waiting under the id it was recorded with, which a renamed call's result lacks.
        waiting.pop(str(node.metadata.get("tool_call_id", call_id)), None)
        self._last_added = node.id
        if self._keeper is not None:
            self._keeper.complete(node.id)

    def _renamed_from(self, provider_id: str) -> str | None:
        # A result given under the id the provider sent, for a call recorded under a new one:
        # the oldest such call still waiting (the running calls are few).
        nodes = self.session.graph.nodes
        found = [
            node
            for node_id in self.session.running
            if (node := nodes.get(node_id)) is not None
            and node.metadata.get(PROVIDER_CALL_ID) == provider_id
        ]
        return min(found, key=lambda node: node.seq).id if found else None

    def _call_ids(self) -> CallIds:
        # The tool call ids a request may still show: those of the commit last built (read
        # once per object, what a request visits anyway) and every one recorded since.
        if self._used_ids is None:
            state = self.engine.states.get(self.session.session_id)
            commit = self._prep.commit if self._prep is not None else None
            if commit is None and state is not None:
                commit = state.head_commit
            shown = visible_call_ids(commit) if commit is not None else ()
            self._used_ids = CallIds(set(shown))
        return self._used_ids

    def _unique_calls(self, calls: tuple[ToolCall, ...]) -> tuple[ToolCall, ...]:
        """``calls``, each id an earlier call of the session already used given a new one.

        Some OpenAI-compatible servers number each reply's calls from ``call_0``: two calls
        under one id would make every request that shows both send them as text. A call
        still waiting under the id could not be told apart from the new one by its result:
        it is refused before any change (`read_response` refuses an id twice in one reply).
        """
        waiting = self._waiting()
        taken = next((call.id for call in calls if call.id in waiting), None)
        if taken is not None:
            raise InputError(f"tool call id {taken!r:.80} is already waiting for its result")
        ids = self._call_ids()
        renamed = tuple(
            call if (fresh := ids.record(call.id)) == call.id else attrs.evolve(call, id=fresh)
            for call in calls
        )
        if renamed != calls and not self._warned_renamed:
            self._warned_renamed = True
            old, new = next((a.id, b.id) for a, b in zip(calls, renamed, strict=True) if a != b)
            _warn_caller(
                f"ctxrules: the response reused tool call id {old!r:.80}, which an earlier call "
                f"of this session has: recorded as {new!r} (the reply's tool_calls carry it; "
                f"a result given under {old!r:.80} goes to it); said once per Context"
            )
        return renamed

    def _say(self, said: Said) -> tuple[ToolCall, ...]:
        """Add ``said``; its tool calls as recorded (a reused id given a fresh one)."""
        calls = self._unique_calls(said.tool_calls) if said.tool_calls else ()
        waiting = self._waiting()
        now = self.clock()
        name = self.model if said.role == "assistant" else ""
        _warn_replaced(said.text, f"a {said.role} message")
        # The reasoning blocks stay with the reply, so every later request sends them back.
        kept = {THINKING_KEY: list(said.thinking)} if said.thinking else None
        sent = self.session.send(said.role, said.text, name=name, metadata=kept, created_at=now)
        self._commit(_unwrap(sent, InputError), moved=True)
        head = self.session.head
        assert head is not None  # noqa: S101 - send just moved it
        self._last_added = head
        for given, call in zip(said.tool_calls, calls, strict=True):
            metadata = {"tool_call_id": call.id}
            if call.id != given.id:
                metadata[PROVIDER_CALL_ID] = given.id
            recorded = self.session.record_call(
                head,
                call.name,
                call.arguments,
                metadata=metadata,
                status=Status.RUNNING,
                created_at=now,
            )
            self._commit(_unwrap(recorded, InputError), moved=False)
            waiting[call.id] = self.session.graph.callees_of(head)[-1]
        return calls

    def _commit(self, session: Session, *, moved: bool) -> None:
        # The node just appended is the new head, or the newest callee of the head.
        added = session.head if moved else session.graph.callees_of(session.head or "")[-1]
        self.session = session
        if self._keeper is not None and added is not None:
            self._keeper.append(added)

    # -- one LLM call ------------------------------------------------------------------------

    @_public_call
    def prepare(self) -> TurnPrep:
        """Run the pipeline for the head and keep the result; `openai` and `anthropic` call it."""
        if self.session.head is None:
            raise InputError("the session is empty: add a user message first")
        system = self._system_prompt()
        try:
            prep = self.engine.prepare(
                self.session,
                window=self.window,
                now=self.clock(),
                tools=self._tools,
                system_prompt=system.text,
                # With the recall tools, the request says what it shows shortened and how to
                # recall it; without them a model could not act on it.
                receipts=bool(self.recall.tools()),
            )
        except RuleRaised as error:
            # The spec's own code: a ContextError as every other, its exception the cause.
            raise ConfigError(error, f"{error} (the spec's code)") from error.error
        self._prep = _unwrap(prep, InputError)
        if system.warnings:
            # A layer that failed was skipped; the turn says so, as the engine's own do.
            warned = (*system.warnings, *self._prep.warnings)
            self._prep = attrs.evolve(self._prep, warnings=warned)
        # The request, with everything that waits, in one synced transaction.
        self._store(now=True, durable=True)
        return self._prep

    def openai(self, **extra: object) -> dict[str, object]:
        """The keyword arguments of ``client.chat.completions.create`` for the next call.

        ``extra`` is added to them (``temperature=``, ``tool_choice=``); the messages and
        tools are what `Context` decides and counts, so they cannot be among them.
        """
        _refuse_managed("openai", extra)
        prep = self.prepare()
        return {**openai_request(self.model, prep.system, prep.messages, self._tools), **extra}

    def anthropic(self, *, max_tokens: int = 4096, **extra: object) -> dict[str, object]:
        """The keyword arguments of ``client.messages.create``, cache breakpoints placed.

        ``extra`` is added to them, except the messages, system prompt and tools (`openai`);
        a ``cache_control`` (a 1-hour TTL) is set on those breakpoints instead of sent.
        """
        _refuse_managed("anthropic", extra)
        prep = self.prepare()
        request = anthropic_request(self.model, prep.system, prep.messages, self._tools, max_tokens)
        if (control := extra.pop("cache_control", None)) is not None:
            # Sent as is, the API adds a breakpoint after ours: with a 1-hour TTL after our
            # 5-minute ones it answers 400 (longer TTLs must come first). Ours end the request.
            request = with_cache_control(request, control)
        return {**request, **extra}

    @_public_call
    def record(self, response: object) -> Reply:
        """Add the response's reply and tool calls, and record its usage against the request."""
        read = read_response(response)
        if isinstance(read, Unreadable):
            raise InputError(f"cannot read the response: {read.reason}")
        said, provider = read
        reading = (
            ProviderUsage.from_openai if provider == "openai" else ProviderUsage.from_anthropic
        )
        usage = reading(response).value_or(None)
        calls = self._say(said)
        _warn_unseen(
            said.dropped,
            lambda _count, named: (
                f"ctxrules: the reply's {named} block(s) were left out: ctxrules keeps its text,"
                " tool calls and thinking, so later requests will not show them to the model"
            ),
        )
        if usage is not None and self._prep is not None:
            self.engine.after_turn(self.session.session_id, usage, self._prep)
        # The reply, its tool calls and the usage land together: never a reply without them.
        # No offload: the store holds every node whole, and `Store.get_blob` answers a
        # handle from its node, so a capped output is not written a second time. A reply
        # with no tool call ends the turn (a final answer the user reads, then maybe a long
        # wait): stored per turn, it is stored now, synced, not with a request that may never come.
        self._store(ends_turn=_ends_turn(said))
        return Reply(said.text, calls, usage, stop_reason(response))

    # -- the recall tools --------------------------------------------------------------------

    @_public_call
    def answer_recall(self, call: object) -> str | None:
        """Answer a ``recall`` or ``search_history`` call and add the answer as its tool result.

        ``call`` is a `Reply` tool call, or an OpenAI or Anthropic one (dict or SDK object).
        Returns the tool result's text, or None when the call is for another tool (run it
        yourself). A bad call gets an error result for the model, not an exception.
        """
        read = read_tool_call(call)
        if isinstance(read, Unreadable):
            raise InputError(f"cannot read tool call {call!r:.80}: {read.reason}")
        if read.name == SEARCH_HISTORY:
            # A search reads the store's index: what waits (stored per turn) goes in first.
            # Another tool's call writes nothing: a loop hands every call here first.
            self._store(now=True)
        store = self._keeper.store if self._keeper is not None else None
        commit = self._prep.commit if self._prep is not None else None
        # Paged to fit under the pipeline's cap, so the answer reaches the model whole.
        window = Facts(context_window=self.window, tokenizer=self.engine.tokenizer)
        kept = self.engine.pipeline.result_chars_at(window)
        answer = self.recall.answer(read, self.session, commit, store, max_chars=kept)
        if answer is None:
            return None
        if self.engine.observer is not None:
            self.engine.observer.recalled(self.session.session_id, read.name, answer)
        self.add_tool_result(read.id, answer.text, is_error=answer.is_error)
        return answer.text

    # -- async twins -------------------------------------------------------------------------

    async def _in_thread(self, work: Callable[[], T]) -> T:
        # The pipeline (and any summarizer call) runs off the event loop; an async
        # summarizer is awaited back on this loop.
        if self._bridge is not None:
            self._bridge.loop = asyncio.get_running_loop()
        held: list[str] = []

        def run() -> T:
            _HELD_WARNINGS.messages = held
            try:
                return work()
            finally:
                _HELD_WARNINGS.messages = None

        try:
            return await asyncio.to_thread(run)
        finally:
            if self._bridge is not None:
                self._bridge.loop = None
            for message in held:
                _warn_caller(message)

    async def aopenai(self, **extra: object) -> dict[str, object]:
        """`openai`, without blocking the event loop."""
        return await self._in_thread(lambda: self.openai(**extra))

    async def aanthropic(self, *, max_tokens: int = 4096, **extra: object) -> dict[str, object]:
        """`anthropic`, without blocking the event loop."""
        return await self._in_thread(lambda: self.anthropic(max_tokens=max_tokens, **extra))

    async def arecord(self, response: object) -> Reply:
        """`record`, without blocking the event loop (it may write to the store)."""
        return await self._in_thread(lambda: self.record(response))

    async def aanswer_recall(self, call: object) -> str | None:
        """`answer_recall`, without blocking the event loop (a long original is cut into pages)."""
        return await self._in_thread(lambda: self.answer_recall(call))

    # -- pins ------------------------------------------------------------------------------

    @_public_call
    def pin(self, node_id: str | None = None) -> str:
        """Keep a message whole in every request from the next on: the task, a standing rule.

        ``node_id`` defaults to the message added last (a tool result included). No rule,
        compaction or snip tightens, folds or drops a pinned item (invariant 17); a message
        already tightened cannot be pinned (the next request's warnings say so). Returns the
        pinned node id.
        """
        node = self._node(node_id, "pin")
        self.engine.pin(self.session.session_id, node)
        return node

    @_public_call
    def unpin(self, node_id: str) -> None:
        """Let the rules treat this message like any other again, from the next request on."""
        self.engine.pin(self.session.session_id, self._node(node_id, "unpin"), pinned=False)

    @property
    def pinned(self) -> tuple[str, ...]:
        """The node ids pinned in the last request (after a reopen, the last one stored), in order."""
        if self._prep is not None:
            commit = self._prep.commit
        else:
            # Reopened: the stored session's last commit, restored with the engine's state.
            state = self.engine.states.get(self.session.session_id)
            head = state.head if state is not None else None
            if state is None or head is None or head not in state.commits:
                return ()
            commit = state.commits[head]
        return tuple(i.source_node_id for i in commit.items if i.pinned)

    def _node(self, node_id: str | None, verb: str) -> str:
        # A tool result hangs off its assistant message, which the head names: the result
        # added last is its call's node. Reopened, the head is the message added last.
        node = node_id if node_id is not None else self._last_added or self.session.head
        if node is None:
            raise InputError(f"the session is empty: add a message before asking to {verb} one")
        if node not in self.session.graph.nodes:
            raise InputError(f"no message {node_id!r:.80} in this session to {verb}")
        return node

    # -- the rest ----------------------------------------------------------------------------

    @property
    def last(self) -> TurnPrep | None:
        """What the engine decided for the last request (tokens, commit, decision path)."""
        return self._prep

    def _store(self, *, now: bool = False, durable: bool = False, ends_turn: bool = False) -> None:
        # One transaction per call that changed the session: what it added, the head, and
        # (after a response) the usage; a request adds its commits. Stored per turn, the
        # keeper holds the call's nodes until the next request (or ``now``), except a call
        # that ends the turn (`_ends_turn`): stored then, synced as a request is.
        if self._keeper is None:
            return
        if ends_turn and self._store_per_turn:
            now = durable = True
        if not now and self._store_per_turn:
            _WAITING.add(self)
            return
        state = self.engine.states.get(self.session.session_id)
        head = self._prep.head if self._prep is not None else None
        durable = durable or self._sync_each_call
        _stored(self._keeper.flush(self.session, state, head, durable=durable))
        _WAITING.discard(self)

    @_public_call
    def reload(self) -> None:
        """Read the session again from the store, after `SessionMoved`.

        Another writer's turns are in; what this object added since its last stored call is
        dropped (add it again). Pins asked for and not yet applied carry over.
        """
        if self._keeper is None:
            return
        session = self.session.session_id
        self.engine.cancel_background(session)
        asked = self.engine.states.pop(session, None)
        self._prep = None
        self._waiting_calls.clear()
        self._used_ids = None
        self._last_added = None
        self._resume(self._keeper.store, StoreFailed)
        if asked is not None and asked.pins:
            # Pins asked for and not applied yet still hold for the messages the store has.
            for node, pinned in asked.pins.items():
                if node in self.session.graph.nodes:
                    self.engine.pin(session, node, pinned=pinned)

    def close(self) -> None:
        """Cancel the background summary, store what waits (``durability="turn"``), close the store if this object opened it.

        Closing twice does nothing; any other call after it raises `ContextClosed`.
        """
        with self.serving():
            self._close()

    def _close(self) -> None:
        if self._closed:
            return
        self.engine.cancel_background(self.session.session_id)
        if self.engine.observer is not None:
            # The last request's span waits for its response's usage, which will not come now.
            self.engine.observer.ended(self.session.session_id)
        try:
            if self._store_per_turn:
                # What was added since the last request is written now, synced.
                self._store(now=True, durable=True)
        finally:
            # Closed even when that write failed: it said what was lost, and the store
            # this object opened is closed below either way.
            self._closed = True
            _WAITING.discard(self)
            if self._keeper is not None and self._owns_store:
                self._keeper.store.close()

    @contextlib.contextmanager
    def serving(self) -> Iterator[None]:
        """Hold this object for one call: calls from other threads wait, one after another.

        Two ``await ctx.aopenai()`` at once (each runs in a thread) then build one request
        after the other, instead of racing on the session and the store. A call made on the
        event loop's own thread does not wait: the call it would wait for may be waiting for
        the loop (an async summarizer), so it raises `ContextBusy` instead.
        """
        self._take()
        try:
            yield
        finally:
            self._lock.release()

    def _take(self) -> None:
        """Take the lock `serving` holds, or raise `ContextBusy` on the event loop's thread."""
        # Uncontended (the usual case) it is taken at once; only a wait asks where it would wait.
        if self._lock.acquire(blocking=False) or (not _on_event_loop() and self._lock.acquire()):
            return
        raise ContextBusy(
            self,
            "another call on this Context is running in a thread (an aopenai(), "
            "aanthropic(), arecord() or aanswer_recall() not awaited yet): await it before calling again",
        )

    @property
    def closed(self) -> bool:
        """Whether `close` was called (or the ``with`` block left)."""
        return self._closed

    def __enter__(self) -> Self:
        return self

    def __exit__(self, kind: type[BaseException] | None, *_: object) -> None:
        if kind is None:
            self.close()
            return
        try:
            self.close()
        except ContextError as err:
            # The block's own exception is the one to see; this one only says what was lost.
            warnings.warn(f"ctxrules: leaving the block, {err}", RuntimeWarning, stacklevel=2)
