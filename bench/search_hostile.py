"""CPU time of SQLite's search on a large hostile session, per hostile query.

    python bench/search_hostile.py [--nodes 40] [--chars 100000]

The texts and queries are those of ``tests/store/test_hostile_search.py``. "one pattern a
node": node i holds hostile text i mod 5, repeated to the size; "every pattern a node":
each node holds a fifth of each text, so every query matches every node. Each figure is
the best of three ``search(literal(query), limit=40)`` calls, in CPU seconds.
"""

import argparse
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests" / "store"))


def main() -> int:
    """Build both sessions in memory and print a line per query."""
    from test_hostile_search import HOSTILE_QUERIES, HOSTILE_TEXTS  # noqa: PLC0415

    from ctxrules.dag import Session  # noqa: PLC0415 - after the path is set
    from ctxrules.store import SqliteStore, literal  # noqa: PLC0415

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=40)
    parser.add_argument("--chars", type=int, default=100_000)
    args = parser.parse_args()
    fifth = args.chars // len(HOSTILE_TEXTS)
    layouts = {
        "one pattern a node": lambda i: _sized(HOSTILE_TEXTS[i % len(HOSTILE_TEXTS)], args.chars),
        "every pattern a node": lambda i: "".join(
            _sized(HOSTILE_TEXTS[(i + k) % len(HOSTILE_TEXTS)], fifth)
            for k in range(len(HOSTILE_TEXTS))
        ),
    }
    for layout, text_of in layouts.items():
        with SqliteStore.open(":memory:").unwrap() as store:
            session = Session("s")
            for i in range(args.nodes):
                session = session.send("user", text_of(i), created_at=1.0).unwrap()
            store.create_session("s").unwrap()
            store.append_graph("s", session.graph).unwrap()
            sys.stdout.write(f"{layout} ({args.nodes} nodes x {args.chars:,} characters)\n")
            for query in HOSTILE_QUERIES:
                best, hits = 1e9, 0
                for _ in range(3):
                    started = time.process_time()
                    hits = len(store.search(literal(query), session_id="s", limit=40).unwrap())
                    best = min(best, time.process_time() - started)
                sys.stdout.write(f"  {literal(query)[:30]:<32} {hits:>3} hits  {best:.3f} s CPU\n")
    return 0


def _sized(text: str, size: int) -> str:
    return (text * (size // len(text) + 1))[:size]


if __name__ == "__main__":
    sys.exit(main())
