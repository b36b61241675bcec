"""What the recall-tool tests read and look for: a file's text, and a handle in a stub."""

from __future__ import annotations

import re

#: A handle as a stub or a cut names it.
HANDLE = re.compile(r"\[recall (h:[a-z2-7]{8})\]")


def original(n: int) -> str:
    """What the tests' ``read_file(n)`` returns: a few thousand characters naming ``module_n``."""
    return "".join(f"module_{n} line {i}: value_{n}_{i} = {i * n}\n" for i in range(90))
