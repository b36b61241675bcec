"""Running a rule under a shifted clock and rigged randomness, so impure rules show."""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar
from unittest import mock

_T = TypeVar("_T")


@contextmanager
def shifted_world(offset: float, *, high: bool) -> Iterator[None]:
    """Inside the block the clock reads ``offset`` seconds later and randomness is rigged.

    In the low world every random draw is the lowest possible value, in the high world the
    highest, so any rule whose output depends on a draw answers differently in the two. A
    pure rule cannot tell; that is how invariant 8 is checked without trusting the rule.
    """
    real_time, real_monotonic, real_ns = time.time, time.monotonic, time.time_ns
    unit = 0.999999 if high else 0.0
    # The clock keeps moving inside the block, so the patches wrap the real functions.
    patches: list[Any] = [
        mock.patch.object(time, "time", lambda: real_time() + offset),  # noqa: PT008
        mock.patch.object(time, "monotonic", lambda: real_monotonic() + offset),  # noqa: PT008
        mock.patch.object(time, "time_ns", lambda: real_ns() + int(offset * 1e9)),  # noqa: PT008
        mock.patch.object(random, "random", lambda: unit),  # noqa: PT008
        mock.patch.object(random, "randint", lambda a, b: b if high else a),
        mock.patch.object(random, "choice", lambda seq: seq[-1] if high else seq[0]),
        mock.patch.object(random, "uniform", lambda a, b: b if high else a),
        mock.patch.object(random, "shuffle", lambda seq: seq.reverse() if high else None),
    ]
    for patch in patches:
        patch.start()
    try:
        yield
    finally:
        for patch in reversed(patches):
            patch.stop()


def in_two_worlds(call: Callable[[], _T]) -> tuple[_T, _T]:
    """The results of ``call`` in two worlds an hour apart, with opposite random draws."""
    with shifted_world(0.0, high=False):
        first = call()
    with shifted_world(3600.0, high=True):
        second = call()
    return first, second
