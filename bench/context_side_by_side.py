r"""Two checkouts' `Context` turns side by side in one process, beside `trim_messages`.

    python bench/context_side_by_side.py BASE_DIR            # 10k messages
    python bench/context_side_by_side.py BASE_DIR --size 1000

``BASE_DIR`` holds a copy of another checkout's package renamed ``ctxrules_base`` (every
``ctxrules.`` import rewritten), e.g. made by::

    git archive BASE ctxrules | tar -x -C /tmp/old && mv /tmp/old/ctxrules DIR/ctxrules_base
    grep -rl ctxrules DIR/ctxrules_base | xargs sed -i -E 's/\bctxrules\./ctxrules_base./g;
        s/from ctxrules import/from ctxrules_base import/g'

Both sessions are grown through the same calls as bench/context_turns.py, then their turns
alternate (the order swapped every round), with a `trim_messages` call on the same messages
between rounds; CPU time, medians. Under a shared machine's load the two checkouts meet the
same conditions, which runs one after the other do not.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import context_turns  # the sibling benchmark, found through the path above


def grow(bench: object, context: type, size: int, *, peer: bool) -> context_turns.Loop:
    """`context_turns.grow` with the `Context` class given."""
    clock = [0.0]
    ctx = context(
        "default",
        model="gpt-4o",
        window=context_turns.WINDOW,
        tokenizer=bench.RULER,  # type: ignore[attr-defined]
        summarizer=lambda _: context_turns.SUMMARY,
        clock=lambda: clock[0],
    )
    loop = context_turns.Loop(bench, ctx)  # type: ignore[arg-type]
    gc.disable()
    try:
        while loop.messages() < size:
            loop.add_turn(peer=peer)
            clock[0] = loop.now
            ctx.openai()
    finally:
        gc.enable()
        gc.collect()
    ctx.clock = lambda: loop.now
    return loop


def main(argv: Sequence[str] | None = None) -> int:
    """Print the median CPU time of each checkout's turn, the peer's, and their ratios."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("base", type=Path, help="folder holding the package ctxrules_base")
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=60)
    parser.add_argument("--trims", type=int, default=6)
    args = parser.parse_args(argv)
    sys.path.insert(0, str(args.base))
    import ctxrules_base  # type: ignore[import-not-found]  # noqa: PLC0415 - given at run time

    from ctxrules import Context  # noqa: PLC0415

    bench = context_turns.fixtures()
    loops = {
        "base": grow(bench, ctxrules_base.Context, args.size, peer=False),
        "branch": grow(bench, Context, args.size, peer=True),
    }
    from langchain_core.messages import trim_messages  # noqa: PLC0415 - optional peer

    peer, messages = bench.Peer(trim_messages), list(loops["branch"].peer)
    times: dict[str, list[float]] = {"base": [], "branch": [], "trim": []}
    for loop in loops.values():
        for _ in range(3):
            loop.add_turn(peer=False)
            loop.ctx.openai()
    every = max(args.rounds // args.trims, 1)
    for index in range(args.rounds):
        order = ("base", "branch") if index % 2 == 0 else ("branch", "base")
        for name in order:
            loop = loops[name]
            started = time.process_time()
            loop.add_turn(peer=False)
            loop.ctx.openai()
            times[name].append(time.process_time() - started)
        if index % every == 0 and len(times["trim"]) < args.trims:
            started = time.process_time()
            peer.trim(messages)
            times["trim"].append(time.process_time() - started)
    trim = statistics.median(times["trim"])
    sys.stdout.write(f"{args.size:,} messages; trim_messages {trim * 1e3:.0f} ms (median)\n")
    for name in ("base", "branch"):
        turn, mean = statistics.median(times[name]), statistics.fmean(times[name])
        sys.stdout.write(
            f"{name:6s} turn {turn * 1e3:.2f} ms (median), {trim / turn:,.0f}x trim_messages;"
            f" mean {mean * 1e3:.2f} ms ({trim / mean:,.0f}x), slowest {max(times[name]) * 1e3:.0f} ms\n"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
