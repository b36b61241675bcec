"""An agent loop around the engine, with a fake provider, replaying a recorded session.

Run it: ``python docs/examples/agent_loop.py PATH [--turns 200] [--window 32000]``.
Every assistant node of the recording is one LLM call: the loop prepares the context the
engine would send, lets a fake provider "answer" with the recorded reply and report the
prompt tokens it was sent, feeds the usage back, and appends the reply and its tool calls.
When the recording runs out before ``turns`` calls, the loop starts over on the same live
session (the user asks for the task again), so the history keeps growing.
"""

from __future__ import annotations

import argparse
import itertools
import sys
from collections.abc import Iterator
from pathlib import Path

import attrs
from returns.result import Failure

from ctxrules.check import protocol_valid
from ctxrules.dag import Call, Role, Session, branch
from ctxrules.engine import DefaultContextEngine
from ctxrules.importers import import_session
from ctxrules.render import Message, TextBlock
from ctxrules.spec import load_spec
from ctxrules.tokens import Tokenizer, default_tokenizer
from ctxrules.tokens.usage import ProviderUsage

DEFAULT_SPEC = Path(__file__).resolve().parents[2] / "specs" / "default.toml"


@attrs.frozen
class Turn:
    """What one LLM call sent and what the engine decided for it."""

    index: int
    request_tokens: int
    occupancy_total: int
    input_budget: int
    window: int
    messages_valid: bool
    decision_path: tuple[str, ...]


def fake_summarizer(prompt: tuple[Message, ...]) -> str:
    """A provider stand-in for summaries: the first line of each folded message, briefly."""
    text = "\n".join(b.text for m in prompt for b in m.blocks if isinstance(b, TextBlock))
    lines = [line.strip()[:80] for line in text.splitlines() if line.strip()][:12]
    return "## Goal\n" + "\n".join(f"- {line}" for line in lines)


def _steps(recorded: Session) -> Iterator[tuple[int, Call]]:
    for round_ in itertools.count():
        for call in branch(recorded.graph, recorded.head):
            yield round_, call


def _replay_node(live: Session, recorded: Session, call: Call, round_: int) -> Session:
    meta = call.metadata_value()
    session = live.send(
        call.role, call.output_value(), name=call.name, input=call.input_value(), metadata=meta
    ).unwrap()
    if call.role is Role.ASSISTANT:
        for callee in recorded.graph.callees_of(call.id):
            tool = recorded.graph.nodes[callee]
            tool_meta = tool.metadata_value()
            # A second round repeats the calls: give them fresh ids, as a provider would.
            tool_meta["tool_call_id"] = f"{tool_meta.get('tool_call_id', tool.id)}_{round_}"
            session = session.record_call(
                session.head, tool.name, tool.input_value(), tool.output_value(), metadata=tool_meta
            ).unwrap()
    return session


def run(
    recorded: Session, *, turns: int = 200, window: int = 32_000, tokenizer: Tokenizer | None = None
) -> list[Turn]:
    """Drive ``turns`` LLM calls through the default engine; one `Turn` per call."""
    engine = DefaultContextEngine(
        pipeline=load_spec(DEFAULT_SPEC).unwrap(),
        summarizer=fake_summarizer,
        tokenizer=tokenizer or default_tokenizer(),
    )
    live, done, now = Session(f"{recorded.session_id}-live"), [], 0.0
    for round_, call in _steps(recorded):
        now += 30.0
        if call.role is Role.ASSISTANT and live.head is not None:
            prep = engine.prepare(live, window=window, now=now).unwrap()
            engine.after_turn(live.session_id, ProviderUsage(prep.request_tokens, 200), prep)
            done.append(
                Turn(
                    len(done),
                    prep.request_tokens,
                    prep.occupancy.total_used,
                    prep.budget.input_budget,
                    window,
                    not protocol_valid(prep.messages),
                    prep.decision_path,
                )
            )
            if len(done) == turns:
                return done
        live = _replay_node(live, recorded, call, round_)
    return done  # pragma: no cover - _steps never ends


def main(argv: list[str] | None = None) -> int:
    """Print one line per turn and a summary."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("path")
    parser.add_argument("--turns", type=int, default=200)
    parser.add_argument("--window", type=int, default=32_000)
    args = parser.parse_args(argv)
    imported = import_session(args.path, skip_bad=True)
    if isinstance(imported, Failure):
        # A path that is not a session is the reader's slip, said in one line.
        sys.stderr.write(f"{imported.failure()}\n")
        return 2
    turns = run(imported.unwrap().session, turns=args.turns, window=args.window)
    for turn in turns:
        sys.stdout.write(
            f"{turn.index:>4} {turn.request_tokens:>7} tokens  {' '.join(turn.decision_path)}\n"
        )
    over = sum(1 for t in turns if t.request_tokens > t.window)
    compactions = sum(1 for t in turns if any(s == "compact:finished" for s in t.decision_path))
    sys.stdout.write(
        f"{len(turns)} turns, {compactions} compactions, {over} requests over the window\n"
    )
    return 1 if over else 0


if __name__ == "__main__":
    raise SystemExit(main())
