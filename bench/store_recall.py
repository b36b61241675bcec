"""`Context.answer_recall` on a session resumed from a store, beside reading the answer's text.

    python bench/store_recall.py STORE [--session bench] [--rounds 5]

STORE is copied first (the copy is written to, never the original). A new `Context`
resumes the session, and the model calls ``recall`` on a tool result from the middle of
the history: the first call of the resumed `Context`, then ``--rounds`` more (each a new
assistant message with the call, answered and recorded as its tool result). Beside each,
the floor: the node's original cut into its page from a one-handle index. CPU time
(``time.process_time``), with the load average; one JSON line.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from pyrsistent import pmap

from ctxrules import Context
from ctxrules.canonical import canonical_json
from ctxrules.dag import Role
from ctxrules.recall import RecallIndex, answer_recall, handle_for, node_original
from ctxrules.tokens import load_encoding


def main() -> None:
    """Copy the store, resume the session, answer recall calls, print the figures."""
    parser = argparse.ArgumentParser()
    parser.add_argument("store", type=Path)
    parser.add_argument("--session", default="bench")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    ruler = load_encoding("cl100k_base").unwrap()
    with tempfile.TemporaryDirectory() as folder:
        copy = Path(folder) / "store.sqlite"
        shutil.copyfile(args.store, copy)
        ctx = Context(model="gpt-4o", store=str(copy), session=args.session, tokenizer=ruler)
        graph = ctx.session.graph
        tools = [n for n in graph.nodes.values() if n.role is Role.TOOL and n.output]
        node = tools[len(tools) // 2]
        handle = handle_for(node.id)

        def floor() -> float:
            start = time.process_time()
            original = node_original(ctx.session.graph, node.id)
            assert original is not None
            index = RecallIndex(pmap({original.handle: original}))
            answer_recall(
                index,
                {"handle": handle},
                tokenizer=ctx.engine.tokenizer,
                page_tokens=ctx.recall.options.page_tokens,
            )
            return time.process_time() - start

        def one(turn: int) -> tuple[float, int]:
            call = {
                "id": f"recall_{turn}",
                "type": "function",
                "function": {"name": "recall", "arguments": canonical_json({"handle": handle})},
            }
            ctx.add({"role": "assistant", "content": None, "tool_calls": [call]})
            start = time.process_time()
            text = ctx.answer_recall(call)
            assert text is not None
            return time.process_time() - start, len(text)

        first, chars = one(0)
        rounds = [one(turn)[0] for turn in range(1, args.rounds + 1)]
        floors = [floor() for _ in range(args.rounds)]
        ctx.close()
    ms = statistics.median(rounds) * 1000
    read = statistics.median(floors) * 1000
    out = {
        "messages": len(graph),
        "first_ms": round(first * 1000, 2),
        "answer_ms": round(ms, 2),
        "read_ms": round(read, 2),
        "beyond_ms": round(ms - read, 2),
        "chars": chars,
        "load": round(os.getloadavg()[0], 1),
    }
    sys.stdout.write(json.dumps(out) + "\n")


if __name__ == "__main__":
    main()
