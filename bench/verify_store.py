"""`ctxrules verify` on stored sessions of growing size: its time grows with the session.

    python bench/verify_store.py                          # 1k, 10k and 100k messages
    python bench/verify_store.py --sizes 1000 10000 --spec specs/default.toml
    python bench/verify_store.py --keep DIR               # keep the stores it made

Each store holds one session made as `bench/store_turns.py` makes its own
(`store_loop.Loop`): the history added through `Context` at once, then ``--turns`` agent
turns (a user message, a response with a tool call, its result, ``openai()``). Then
``ctxrules verify STORE`` runs in this process (`ctxrules.cli.main.main`) and is timed in
CPU time (``time.process_time``), so a shared machine's load does not move it much. The
table gives each size's messages, the turns verify rebuilt, the stored commits, the time
and the time per 1,000 messages: flat when the check grows with the session.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from store_loop import Loop  # noqa: E402 - the bench folder is not a package

from ctxrules.cli.main import main  # noqa: E402
from ctxrules.tokens import load_encoding  # noqa: E402


def make_store(path: Path, size: int, turns: int) -> None:
    """A SQLite store at ``path`` holding a session of ``size`` messages and ``turns`` more turns."""
    loop = Loop(str(path), size, load_encoding("cl100k_base").unwrap())
    for _ in range(turns):
        loop.one_turn()
    loop.ctx.close()


def verify(path: Path, spec: str | None) -> tuple[float, int, str]:
    """CPU seconds of ``ctxrules verify`` on the store, its exit status and its last line."""
    argv = ["verify", str(path), *(["--spec", spec] if spec else [])]
    out = io.StringIO()
    start = time.process_time()
    with contextlib.redirect_stdout(out):
        status = main(argv)
    seconds = time.process_time() - start
    lines = out.getvalue().strip().splitlines()
    return seconds, status, lines[-1] if lines else ""


def measure(sizes: list[int], turns: int, spec: str | None, folder: Path) -> str:
    """The table of ``ctxrules verify`` at each size."""
    rows = [
        "| messages | turns checked | stored commits | verify, CPU s | per 1,000 messages | result |",
        "|---:|---:|---:|---:|---:|---|",
    ]
    for size in sizes:
        path = folder / f"verify_{size}.sqlite"
        path.unlink(missing_ok=True)
        make_store(path, size, turns)
        with contextlib.closing(sqlite3.connect(path)) as conn:
            messages = conn.execute("SELECT count(*) FROM nodes").fetchone()[0]
            commits = conn.execute("SELECT count(*) FROM commits").fetchone()[0]
            users = conn.execute("SELECT count(*) FROM nodes WHERE role = 'user'").fetchone()[0]
        seconds, status, last = verify(path, spec)
        rows.append(
            f"| {messages:,} | {users:,} | {commits:,} | {seconds:.2f} | "
            f"{seconds * 1000 / messages:.3f} | {last if status == 0 else f'exit {status}: {last}'} |"
        )
        sys.stderr.write(rows[-1] + "\n")
    return "\n".join(rows)


def run() -> None:
    """The command line."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000, 100_000])
    parser.add_argument("--turns", type=int, default=40, help="agent turns after the history")
    parser.add_argument("--spec", default=None, help="verify with this spec (default: no rules)")
    parser.add_argument("--keep", type=Path, default=None, help="make the stores in this folder")
    args = parser.parse_args()
    if args.keep is not None:
        args.keep.mkdir(parents=True, exist_ok=True)
        sys.stdout.write(measure(args.sizes, args.turns, args.spec, args.keep) + "\n")
        return
    with tempfile.TemporaryDirectory() as folder:
        sys.stdout.write(measure(args.sizes, args.turns, args.spec, Path(folder)) + "\n")


if __name__ == "__main__":
    run()
