"""Benchmarks: `python bench/run.py` times them and prints the table; see docs/performance.md.

`pytest bench` alone (the project's addopts pass ``--benchmark-disable``) is a smoke run:
each benchmark runs once, and the cases marked ``bench_large`` (100k-item histories, the
longest real sessions) are skipped to keep it fast.

Everything here is shared by the benchmark modules: the one ruler (cl100k_base), the token
budget, synthetic histories of 1k, 10k and 100k items built once per run, the LangChain
peer's view of the same messages, and the real sessions.
"""

# No `from __future__ import annotations` here: trim_messages reads the parameter
# annotation of `peer_tokens` at run time and must see the BaseMessage class itself.

import gc
import os
import random
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import attrs
import pytest

from ctxrules.canonical import canonical_json
from ctxrules.commit import ContextCommit, ContextItem
from ctxrules.dag import Call, Graph
from ctxrules.render import Message, TextBlock, ToolResultBlock, ToolUseBlock, counted
from ctxrules.render import render_commit as render
from ctxrules.rules import Facts, Pipeline
from ctxrules.spec import load_spec
from ctxrules.tokens import TiktokenCounter, allocate, load_encoding

try:
    from langchain_core.messages import (
        AIMessage,
        BaseMessage,
        HumanMessage,
        SystemMessage,
        ToolMessage,
    )
except ImportError:  # the `bench` extra is not installed; the peer benchmarks skip
    BaseMessage = object  # type: ignore[assignment,misc]

ROOT = Path(__file__).resolve().parents[1]
SHARED_SESSIONS = ROOT.parent / "shared" / "data" / "sessions"
BUNDLED_SESSIONS = ROOT / "ctxrules" / "data" / "sessions"
DEFAULT_SPEC = ROOT / "specs" / "default.toml"

#: The one ruler for ctxrules and every peer: exact cl100k_base counts, loaded offline.
RULER: TiktokenCounter = load_encoding("cl100k_base").unwrap()
#: The input budget of a 200k-token window (the engine's default split); the peer's max_tokens.
BUDGET = allocate(200_000, 0, 0, 0).input_budget
#: History sizes, in items (one turn is three items: user, assistant, tool call).
SIZES = (1_000, 10_000, 100_000)
#: Real sessions with more than this many bytes are `bench_large` (skipped in a smoke run).
LARGE_SESSION_BYTES = 500_000
SECONDS_PER_TURN = 30.0

TOOLS = ("grep", "read_file", "bash", "edit_file")
#: Lines per tool result, cycled: from a short listing to a long grep (about 12 tokens a line).
RESULT_LINES = (2, 4, 8, 16, 40)
# One string split once reads better than a 48-line list literal.
_WORDS = (  # noqa: SIM905
    "the of and to in is for on with that this file line error def return import class "
    "self value test from path src data config None True if else raise assert json yield "
    "async await lambda dict list str int parse load save cache token model request"
).split()


def _line_pool(count: int = 4096, seed: int = 7) -> tuple[str, ...]:
    """Deterministic text lines of mixed words, identifiers, paths and numbers."""
    rng = random.Random(seed)  # noqa: S311 - benchmark text, not cryptography
    lines = []
    for i in range(count):
        words = [rng.choice(_WORDS) for _ in range(rng.randint(5, 9))]
        words.insert(
            rng.randint(0, len(words)), f"src/pkg{i % 37}/mod_{i}.py:{rng.randint(1, 999)}"
        )
        lines.append(" ".join(words))
    return tuple(lines)


POOL = _line_pool()


def text(key: int, lines: int) -> str:
    """``lines`` pool lines picked by ``key``; each text starts with its key so none repeat."""
    picked = (POOL[(key * 7919 + k * 104_729) % len(POOL)] for k in range(lines))
    return f"#{key} " + "\n".join(picked)


def turn_items(turn: int) -> list[ContextItem]:
    """The three items of turn ``turn``, counted once by the ruler (as generation would)."""
    now = turn * SECONDS_PER_TURN
    tool = TOOLS[turn % len(TOOLS)]
    raw = [
        ContextItem(f"u{turn}", "user", rendered=text(3 * turn, 2), turn=turn, created_at=now),
        ContextItem(
            f"a{turn}", "assistant", rendered=text(3 * turn + 1, 3), turn=turn, created_at=now
        ),
        ContextItem(
            f"t{turn}",
            "tool",
            rendered=text(3 * turn + 2, RESULT_LINES[turn % len(RESULT_LINES)]),
            tool_name=tool,
            tool_call_id=f"call_{turn}",
            arguments=canonical_json({"path": f"src/pkg{turn % 37}/mod_{turn}.py"}),
            turn=turn,
            created_at=now,
            changed_at=now,
        ),
    ]
    return [counted(item, RULER) for item in raw]


@attrs.frozen
class History:
    """One synthetic session of ``size`` items, as ctxrules holds it and as a peer does.

    ``ruled`` is the commit the default pipeline left after the last turn (head node ``p``);
    ``raw`` holds the same items untouched, and ``messages`` is its rendering: the full
    history a LangChain user keeps and trims. ``graph`` holds ``p`` and one new turn after
    it (user ``u``, assistant ``a`` calling tool ``t``), the turn each benchmark adds.
    """

    size: int
    ruled: ContextCommit
    raw: ContextCommit
    messages: tuple[Message, ...]
    graph: Graph
    facts: Facts
    peer_cache: dict[str, Any] = attrs.field(factory=dict, eq=False)

    @property
    def peer_messages(self) -> list[Any]:
        """``messages`` as LangChain messages, converted once."""
        if "messages" not in self.peer_cache:
            self.peer_cache["messages"] = [to_langchain(m) for m in self.messages]
        return self.peer_cache["messages"]


def new_turn_graph(turn: int) -> Graph:
    """The parent head ``p`` and one new turn after it, at the time of turn ``turn``."""
    now = turn * SECONDS_PER_TURN
    calls = (
        Call("p", "assistant", output="done", created_at=now - SECONDS_PER_TURN),
        Call("u", "user", output=text(10**9, 2), predecessor="p", created_at=now),
        Call("a", "assistant", output=text(10**9 + 1, 4), predecessor="u", created_at=now),
        Call(
            "t",
            "tool",
            name="grep",
            input={"path": "src/app.py"},
            output=text(10**9 + 2, 25),
            caller="a",
            metadata={"tool_call_id": "call_new"},
            created_at=now,
        ),
    )
    graph = Graph()
    for call in calls:
        graph = graph.append(call).unwrap()
    return graph


def build_history(size: int, pipeline: Pipeline) -> History:
    """Grow a session turn by turn through ``pipeline`` until it holds ``size`` items."""
    ruled, raw, turn = ContextCommit("bench"), ContextCommit("bench"), 0
    while len(raw.items) < size:
        items = turn_items(turn)
        raw = raw.append_items(items)
        turn += 1
        facts = Facts(now=turn * SECONDS_PER_TURN, head_turn=turn, tokenizer=RULER)
        ruled = pipeline.run(ruled.append_items(items), facts)
    ruled = attrs.evolve(ruled, head_node_id="p")
    raw = attrs.evolve(raw, head_node_id="p")
    facts = Facts(now=turn * SECONDS_PER_TURN, tokenizer=RULER)
    return History(size, ruled, raw, render(raw), new_turn_graph(turn), facts)


def to_langchain(message: Message) -> Any:
    """One neutral message as the LangChain message a user of that library would hold."""
    texts = "\n\n".join(b.text for b in message.blocks if isinstance(b, TextBlock))
    if message.role == "tool":
        (result,) = (b for b in message.blocks if isinstance(b, ToolResultBlock))
        return ToolMessage(content=result.text, tool_call_id=result.tool_use_id)
    if message.role == "assistant":
        calls = [
            {"id": b.id, "name": b.name, "args": _json(b.arguments)}
            for b in message.blocks
            if isinstance(b, ToolUseBlock)
        ]
        return AIMessage(content=texts, tool_calls=calls)
    if message.role == "system":
        return SystemMessage(content=texts)
    return HumanMessage(content=texts)


def _json(arguments: str) -> dict[str, Any]:
    import json  # noqa: PLC0415 - only the peer conversion needs it

    value = json.loads(arguments)
    assert isinstance(value, dict)
    return value


def peer_tokens(message: BaseMessage) -> int:
    """Count one LangChain message with our convention: overhead, text, each call's name and args."""
    total = RULER.message_overhead
    if isinstance(message.content, str):
        total += RULER.count(message.content)
    for call in getattr(message, "tool_calls", ()):
        total += RULER.count(call["name"]) + RULER.count(canonical_json(call["args"]))
    return total


def benchmarks_disabled(config: pytest.Config) -> bool:
    """Whether this is a smoke run (``--benchmark-disable`` without ``--benchmark-enable``)."""
    return bool(config.getoption("benchmark_disable") and not config.getoption("benchmark_enable"))


def pytest_configure(config: pytest.Config) -> None:
    """Register the marker of the cases a smoke run skips."""
    config.addinivalue_line(
        "markers", "bench_large: a 100k-item or long-session case, skipped in a smoke run"
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """In a smoke run, skip the large cases: `python bench/run.py` times them."""
    if not benchmarks_disabled(config):
        return
    skip = pytest.mark.skip(reason="bench_large: timed only with --benchmark-enable (bench/run.py)")
    for item in items:
        if "bench_large" in item.keywords:
            item.add_marker(skip)


def _sizes() -> list[Any]:
    large = [pytest.mark.bench_large]
    return [
        pytest.param(size, id=f"{size // 1000}k", marks=large if size >= 100_000 else [])
        for size in SIZES
    ]


def _session_files() -> list[Any]:
    """$CTXRULES_BENCH_SESSIONS, else the real sessions beside the checkout, else the bundled one."""
    chosen = os.environ.get("CTXRULES_BENCH_SESSIONS")
    folders = [Path(chosen)] if chosen else [SHARED_SESSIONS, BUNDLED_SESSIONS]
    folder = next((f for f in folders if f.is_dir()), None)
    paths = sorted(
        p for p in (folder.rglob("*") if folder else ()) if p.suffix in {".json", ".jsonl"}
    )
    if not paths:
        looked = " nor ".join(str(f) for f in folders)
        reason = f"no recorded sessions (.json, .jsonl) in {looked}; set CTXRULES_BENCH_SESSIONS"
        return [pytest.param(None, id="no-sessions", marks=pytest.mark.skip(reason=reason))]
    return [
        pytest.param(
            path,
            id=f"{path.parent.name}/{path.name}",  # folder/file: unique and short
            marks=[pytest.mark.bench_large] if path.stat().st_size > LARGE_SESSION_BYTES else [],
        )
        for path in paths
    ]


@pytest.fixture(params=_sizes())
def size(request: pytest.FixtureRequest) -> int:
    """A history size in items: 1k, 10k, 100k (100k is `bench_large`)."""
    return int(request.param)


@pytest.fixture(scope="session")
def default_pipeline() -> Pipeline:
    """The pipeline of specs/default.toml."""
    return load_spec(DEFAULT_SPEC).unwrap()


@pytest.fixture(scope="session")
def histories(default_pipeline: Pipeline) -> Callable[[int], History]:
    """A getter of the history of each size, each built once per run (100k takes a while)."""
    built: dict[int, History] = {}

    def get(size: int) -> History:
        if size not in built:
            with gc_paused():
                built[size] = build_history(size, default_pipeline)
        return built[size]

    return get


@pytest.fixture
def history(histories: Callable[[int], History], size: int) -> History:
    """The history of this test's size."""
    return histories(size)


@pytest.fixture(scope="session")
def bench_module() -> Any:
    """This module: the text generator, ruler and constants the histories are made of."""
    return sys.modules[__name__]


@pytest.fixture(scope="session")
def ruler() -> TiktokenCounter:
    """The cl100k_base counter that ctxrules and every peer count with."""
    return RULER


@attrs.frozen
class Peer:
    """LangChain's `trim_messages`, given our messages, our ruler and our budget."""

    trim_messages: Callable[..., list[Any]]

    @staticmethod
    def messages(history: History) -> list[Any]:
        """The history's messages as LangChain messages (converted once per history)."""
        return history.peer_messages

    @staticmethod
    def count(messages: list[Any]) -> int:
        """Tokens of LangChain messages by the same ruler and overhead as ``count_messages``."""
        return sum(peer_tokens(m) for m in messages)

    def trim(self, messages: list[Any]) -> list[Any]:
        """One `trim_messages` call as a LangChain user makes it each turn."""
        return self.trim_messages(
            messages, max_tokens=BUDGET, token_counter=peer_tokens, strategy="last"
        )


@pytest.fixture(scope="session")
def peer() -> Peer:
    """The peer, or a skip naming the extra to install."""
    module = pytest.importorskip(
        "langchain_core.messages",
        reason="the peer needs the bench extra: pip install -e '.[bench]'",
    )
    return Peer(module.trim_messages)


@pytest.fixture(params=_session_files())
def session_path(request: pytest.FixtureRequest) -> Path:
    """One real recorded session (the shared data set, else the bundled session)."""
    path: Path = request.param
    return path


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic GC while building fixtures: setup is not timed and GC slows it a lot."""
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
        gc.collect()
