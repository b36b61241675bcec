"""Running a rule under a shifted clock and reseeded randomness, so impure rules show."""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar
from unittest import mock

_T = TypeVar("_T")


@contextmanager
def shifted_world(offset: float, seed: int) -> Iterator[None]:
    """Inside the block the clock reads ``offset`` seconds later and randomness is reseeded.

    A pure rule cannot tell; a rule that reads ``time`` or ``random`` gives a different
    answer in two worlds, which is how invariant 8 is checked without trusting the rule.
    """
    real_time, real_monotonic, real_ns = time.time, time.monotonic, time.time_ns
    generator = random.Random(seed)  # noqa: S311 - a second world, not cryptography
    # The clock keeps moving inside the block, so the patches wrap the real functions.
    patches: list[Any] = [
        mock.patch.object(time, "time", lambda: real_time() + offset),  # noqa: PT008
        mock.patch.object(time, "monotonic", lambda: real_monotonic() + offset),  # noqa: PT008
        mock.patch.object(time, "time_ns", lambda: real_ns() + int(offset * 1e9)),  # noqa: PT008
        mock.patch.object(random, "random", generator.random),
        mock.patch.object(random, "randint", generator.randint),
        mock.patch.object(random, "choice", generator.choice),
        mock.patch.object(random, "uniform", generator.uniform),
    ]
    for patch in patches:
        patch.start()
    try:
        yield
    finally:
        for patch in reversed(patches):
            patch.stop()


def in_two_worlds(call: Callable[[], _T]) -> tuple[_T, _T]:
    """The results of ``call`` in two worlds an hour and a random seed apart."""
    with shifted_world(0.0, 1):
        first = call()
    with shifted_world(3600.0, 2):
        second = call()
    return first, second
