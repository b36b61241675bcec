"""Known models' real context windows (input plus output), never their max output."""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from types import MappingProxyType

import attrs
from returns.result import Failure, Result, Success

__all__ = ["CONTEXT_WINDOWS", "UnknownModel", "real_context_window"]

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


@attrs.frozen
class UnknownModel:
    """A model with no known window and no override: its name and the closest known names."""

    model: str
    suggestions: tuple[str, ...] = ()

    @property
    def message(self) -> str:
        """One line: what is unknown and how to fix it.

        >>> UnknownModel("gpt4o", ("gpt-4o",)).message
        "model='gpt4o' has no known context window; pass context_window=..., or did you mean 'gpt-4o'?"
        """
        hint = f", or did you mean {self.suggestions[0]!r}?" if self.suggestions else ""
        return f"model={self.model!r} has no known context window; pass context_window=...{hint}"

    def __str__(self) -> str:
        return self.message


def real_context_window(
    model: str,
    *,
    override: int | None = None,
    windows: Mapping[str, int] = CONTEXT_WINDOWS,
) -> Result[int, UnknownModel]:
    """The model's total context window: ``override`` if given, else the longest matching prefix.

    >>> real_context_window("claude-sonnet-4-20250514")
    <Success: 200000>
    >>> real_context_window("my-local-model", override=32_000)
    <Success: 32000>
    >>> print(real_context_window("gpt4o").failure())
    model='gpt4o' has no known context window; pass context_window=..., or did you mean 'gpt-4o'?
    """
    if override is not None:
        if override < 1:
            msg = f"override={override} must be a positive number of tokens"
            raise ValueError(msg)
        return Success(override)
    matches = [prefix for prefix in windows if model == prefix or model.startswith(prefix + "-")]
    if matches:
        return Success(windows[max(matches, key=len)])
    return Failure(UnknownModel(model, tuple(difflib.get_close_matches(model, windows, n=3))))
