"""`ctxrules demo`: watch the default spec tighten an agent's session; ``--branches`` shows the DAG."""

from __future__ import annotations

import argparse
from collections import Counter
from typing import Any, TextIO

from returns.result import Failure, Result

from ctxrules.cli.demo_tighten import run_demo
from ctxrules.dag import DagError, Session, siblings


def build_demo_session() -> Result[tuple[Session, str], DagError]:
    """A small session with a retried and an edited turn; also returns the replaced reply's id."""

    def first_turn(s: Session) -> Result[Session, DagError]:
        return s.send("user", "List the files in src/").bind(
            lambda s: s.send("assistant", "", name="demo-model")
        )

    def with_tool(s: Session) -> Result[Session, DagError]:
        assert s.head is not None  # noqa: S101 - send just moved the head
        return s.record_call(s.head, "ls", {"path": "src/"}, ["main.py", "util.py"]).bind(
            lambda s: s.send("assistant", "src/ holds main.py and util.py.", name="demo-model")
        )

    return (
        first_turn(Session("demo"))
        .bind(with_tool)
        .bind(lambda s: s.send("user", "Which one is the entry point?"))
        .bind(lambda s: s.send("assistant", "util.py", name="demo-model"))
        .bind(_retry_and_edit)
    )


def _retry_and_edit(session: Session) -> Result[tuple[Session, str], DagError]:
    original = session.head
    assert original is not None  # noqa: S101 - the turn above just moved the head
    return (
        session.retry(original)
        .bind(lambda s: s.edit(original, "main.py: it defines main()."))
        .map(lambda s: (s, original))
    )


def render_branch(session: Session) -> str:
    """The head's branch, one line per node, with tool calls indented under their caller."""
    lines = []
    for call in session.branch():
        ids = [sibling.id for sibling in siblings(session.graph, call.id)]
        mark = f"  [sibling {ids.index(call.id) + 1} of {len(ids)}]" if len(ids) > 1 else ""
        lines.append(f"{call.seq:>3} {call.role.value:<9} {call.output_value()!r}{mark}")
        for callee in session.graph.callees_of(call.id):
            tool = session.graph.nodes[callee]
            call_text = f"{tool.name}({tool.input_value()}) -> {tool.output_value()!r}"
            lines.append(f"{tool.seq:>3}   tool {call_text}")
    return "\n".join(lines)


def run_branches(out: TextIO) -> int:
    """Build the demo session, check out the replaced reply and print both branches."""
    built = build_demo_session()
    if isinstance(built, Failure):  # pragma: no cover - the demo's input is fixed
        out.write(f"error: {built.failure()}\n")
        return 1
    session, original = built.unwrap()
    out.write(f"session {session.session_id}: {len(session.graph)} nodes\n")
    out.write("\nbranch at the edited reply (head):\n" + render_branch(session) + "\n")
    back = session.checkout(original).unwrap()
    out.write("\nafter checkout of the original reply (nothing appended):\n")
    out.write(render_branch(back) + "\n")
    out.write(f"\nnodes before and after checkout: {len(session.graph)} == {len(back.graph)}\n")
    return 0


def run_tightening(out: TextIO) -> int:
    """Print each request of the demo agent under the default spec beside the naive resend."""
    out.write(
        "An agent reads twelve files, one per turn, five minutes apart. Each request under\n"
        "the built-in 'default' spec, beside resending the whole history:\n\n"
        f"{'turn':>4}  {'sent':>7}  {'naive':>7}  what the rules changed this turn\n"
    )
    sent = naive = 0
    last = None
    for turn, ctx in run_demo():
        sent, naive, last = sent + turn.sent, naive + turn.naive, ctx
        changes = ", ".join(f"{n} {reason}" for reason, n in sorted(turn.changed.items()))
        out.write(f"{turn.index:>4}  {turn.sent:>7,}  {turn.naive:>7,}  {changes or '-'}\n")
    saved = naive - sent
    out.write(
        f"\nsent {sent:,} tokens in all instead of {naive:,}: "
        f"{saved:,} saved ({saved / max(naive, 1):.0%}).\n"
    )
    if last is not None and last.last is not None:
        states = Counter(item.state.value for item in last.last.commit.items)
        out.write(
            "the last request's items: "
            + ", ".join(f"{n} {state}" for state, n in sorted(states.items()))
            + f"; the history keeps all {len(last.session.graph)} nodes in full.\n"
        )
    out.write("\n`ctxrules demo --branches` shows the history's retry, edit and checkout.\n")
    return 0


def run(args: argparse.Namespace, out: TextIO) -> int:
    """The tightening demo, or the DAG demo with ``--branches``."""
    return run_branches(out) if args.branches else run_tightening(out)


def register(commands: Any) -> None:  # noqa: ANN401 - argparse's subparsers type is private
    """Add the ``demo`` subcommand."""
    parser = commands.add_parser(
        "demo", help="watch the default spec tighten a small agent session, and what it saves"
    )
    parser.add_argument(
        "--branches",
        action="store_true",
        help="show the history's retry, edit and checkout instead",
    )
    parser.set_defaults(run=run)
