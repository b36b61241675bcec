"""Known models' real context windows (input plus output), never their max output."""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from types import MappingProxyType

import attrs
from returns.result import Failure, Result, Success

__all__ = [
    "CONTEXT_WINDOWS",
    "MAX_CONTEXT_WINDOW",
    "MIN_CONTEXT_WINDOW",
    "BadWindow",
    "UnknownModel",
    "real_context_window",
]

#: Total context window in tokens by model-name prefix, from the vendors' model pages.
#: A dated or suffixed name (``claude-sonnet-4-20250514``) matches its longest prefix.
#: GPT-5 is listed at 272k, its input limit, as reference 001 §4.2 does: its 400k total
#: includes 128k of output that the output reserve covers anyway.
CONTEXT_WINDOWS: Mapping[str, int] = MappingProxyType(
    {
        "claude-3-5-haiku": 200_000,
        "claude-3-5-sonnet": 200_000,
        "claude-3-7-sonnet": 200_000,
        "claude-haiku-4-5": 200_000,
        "claude-opus-4": 200_000,
        "claude-sonnet-4": 200_000,
        "gemini-2.5-flash": 1_048_576,
        "gemini-2.5-pro": 1_048_576,
        "gpt-4.1": 1_047_576,
        "gpt-4o": 128_000,
        "gpt-5": 272_000,
        "o3": 200_000,
        "o4-mini": 200_000,
    }
)

#: No chat model has a smaller window; a value under it is most likely thousands written as
#: units (``window=128`` for 128k), and would leave the input less than a short message.
MIN_CONTEXT_WINDOW = 1_024
#: No model reads more: ten times the largest known window. A larger value is a slip of the
#: keyboard, and every budget made from it a meaningless number.
MAX_CONTEXT_WINDOW = 10_000_000


@attrs.frozen
class UnknownModel:
    """A model with no known window and no override: its name and the closest known names."""

    model: str
    suggestions: tuple[str, ...] = ()

    @property
    def message(self) -> str:
        """One line: what is unknown and how to fix it.

        >>> UnknownModel("gpt4o", ("gpt-4o",)).message
        "model='gpt4o' has no known context window; pass window=..., or did you mean 'gpt-4o'?"
        """
        hint = f", or did you mean {self.suggestions[0]!r}?" if self.suggestions else ""
        return f"model={self.model!r} has no known context window; pass window=...{hint}"

    def __str__(self) -> str:
        return self.message


@attrs.frozen
class BadWindow:
    """A window override that cannot be a model's window: the value, the model, its known window.

    >>> print(BadWindow(128, "gpt-4o", 128_000))
    window=128: expected the model's context window in tokens, at least 1,024 (did you mean 128_000?); pass window=None for gpt-4o's 128,000
    """

    window: object
    model: str
    known: int | None = None

    @property
    def guess(self) -> int | None:
        """The window meant when a value under the minimum reads as thousands, or None."""
        value = self.window
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            return None
        meant = value * 1_000
        return (
            meant if value < MIN_CONTEXT_WINDOW and meant <= max(CONTEXT_WINDOWS.values()) else None
        )

    @property
    def message(self) -> str:
        """One line: the value, what a window must be, and what to pass instead."""
        hint = f" (did you mean {self.guess:_}?)" if self.guess is not None else ""
        fix = (
            f"pass window=None for {self.model}'s {self.known:,}"
            if self.known is not None
            else "pass the model's window, e.g. window=32_000"
        )
        value = self.window
        if not isinstance(value, int) or isinstance(value, bool):
            # 128000.0 is not too small: it is not a whole number.
            bound = f"a whole number from {MIN_CONTEXT_WINDOW:,} to {MAX_CONTEXT_WINDOW:,}"
        elif value > MAX_CONTEXT_WINDOW:
            bound = f"at most {MAX_CONTEXT_WINDOW:,}"
        else:
            bound = f"at least {MIN_CONTEXT_WINDOW:,}"
        return (
            f"window={value!r}: expected the model's context window in tokens, {bound}{hint}; {fix}"
        )

    def __str__(self) -> str:
        return self.message


def _lookup(model: str, windows: Mapping[str, int]) -> int | None:
    matches = [prefix for prefix in windows if model == prefix or model.startswith(prefix + "-")]
    return windows[max(matches, key=len)] if matches else None


def real_context_window(
    model: str,
    *,
    override: int | None = None,
    windows: Mapping[str, int] = CONTEXT_WINDOWS,
) -> Result[int, UnknownModel | BadWindow]:
    """The model's total context window: ``override`` if given, else the longest matching prefix.

    An ``override`` that is not a whole number from `MIN_CONTEXT_WINDOW` to
    `MAX_CONTEXT_WINDOW` tokens fails.

    >>> real_context_window("claude-sonnet-4-20250514")
    <Success: 200000>
    >>> real_context_window("my-local-model", override=32_000)
    <Success: 32000>
    >>> print(real_context_window("gpt4o").failure())
    model='gpt4o' has no known context window; pass window=..., or did you mean 'gpt-4o'?
    >>> print(real_context_window("gpt-4o", override=0).failure())
    window=0: expected the model's context window in tokens, at least 1,024; pass window=None for gpt-4o's 128,000
    >>> print(real_context_window("gpt-4o", override=10**20).failure())
    window=100000000000000000000: expected the model's context window in tokens, at most 10,000,000; pass window=None for gpt-4o's 128,000
    """
    known = _lookup(model, windows)
    if override is not None:
        whole = isinstance(override, int) and not isinstance(override, bool)
        if whole and MIN_CONTEXT_WINDOW <= override <= MAX_CONTEXT_WINDOW:
            return Success(override)
        return Failure(BadWindow(override, model, known))
    if known is not None:
        return Success(known)
    return Failure(UnknownModel(model, tuple(difflib.get_close_matches(model, windows, n=3))))
