"""A model paging through a huge tool output with `Context.answer_recall`, in CPU time.

    python bench/recall_pages.py [--mb 5] [--pages 40]

A `Context` at a 32k window gets one output of about ``--mb`` MB; its stub names a recall
handle, and the loop answers recall calls for its first ``--pages`` pages, as a model
reading the whole output would. Prints the first page's time and the median of the rest.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import time
from collections.abc import Sequence

from ctxrules import Context
from ctxrules.testing.responses import openai_response


def output(megabytes: float) -> str:
    """A tool output of distinct lines (paths, identifiers), about ``megabytes`` MB."""
    lines = int(megabytes * 1_000_000 / 68)
    return "".join(
        f"src/pkg/mod_{n}.py:{n}: def handler_{n}(request): return None\n" for n in range(lines)
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Page through the output; print the times."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=5.0)
    parser.add_argument("--pages", type=int, default=40)
    args = parser.parse_args(argv)
    ctx = Context("default", model="gpt-4o", window=32_000)
    ctx.add({"role": "user", "content": "read the big file"})
    ctx.openai()
    ctx.record(openai_response(1, "Reading.", [("c1", "read_file", {"path": "big.txt"})], (100, 0)))
    big = output(args.mb)
    ctx.add_tool_result("c1", big)
    found = re.search(r"h:[a-z0-9]{8}", json.dumps(ctx.openai()))
    if found is None:
        sys.stderr.write("the output was sent whole: no handle to recall\n")
        return 1
    handle, times, pages, page = found.group(0), [], 1, 1
    while page <= min(pages, args.pages):
        asked = {"handle": handle, "page": page}
        ctx.record(openai_response(page + 1, "", [(f"r{page}", "recall", asked)], (100, 0)))
        call = {
            "id": f"r{page}",
            "type": "function",
            "function": {"name": "recall", "arguments": json.dumps(asked)},
        }
        started = time.process_time()
        text = ctx.answer_recall(call) or ""
        times.append(time.process_time() - started)
        total = re.search(r"page \d+ of (\d+)", text)
        pages = int(total.group(1)) if total else 1
        page += 1
    rest = f", then {statistics.median(times[1:]) * 1e3:.2f} ms a page" if len(times) > 1 else ""
    sys.stdout.write(
        f"{len(big):,} characters, {pages:,} pages: the first {times[0]:.3f} s{rest}\n"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
