"""Reading a provider's usage block, from an SDK object or its dict, into ctxrules' meaning.

``ProviderUsage.prompt_tokens`` counts input *not read from cache*; cache reads are apart.
OpenAI's ``prompt_tokens`` / ``input_tokens`` include the cached ones, so they are taken
out; Anthropic's ``input_tokens`` excludes both cache reads and cache writes, so writes
(processed fresh) are added in. Either way ``prompt_total`` is every input token sent.
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs

from ctxrules.errors import ErrorValue

#: (uncached prompt, completion, cache read, cache write)
Counts = tuple[int, int, int, int]

#: The largest token count read as one: a float holds every int up to it exactly, and no
#: window comes near it. A larger "count" is a broken or hostile response, not usage.
MAX_TOKENS = 2**53


@attrs.frozen
class UsageUnreadable(ErrorValue):
    """A response whose usage block is missing or has no token counts where they belong."""

    provider: str
    found: str

    @property
    def message(self) -> str:
        """A one-line description of what went wrong."""
        return f"expected the usage of an {self.provider} response, found {self.found}"


def field(value: object, name: str) -> object:
    """``value[name]`` for a mapping, ``value.name`` for an SDK object, None when absent."""
    if isinstance(value, Mapping):
        return value.get(name)
    return getattr(value, name, None)


def _count(value: object, *path: str) -> int | None:
    for name in path:
        value = field(value, name)
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_TOKENS:
        return None
    return value


def _usage_block(response: object) -> object:
    # A whole response carries ``usage``; a usage block is accepted as it is.
    inner = field(response, "usage")
    return inner if inner is not None else response


def openai_counts(response: object) -> Counts | UsageUnreadable:
    """Counts from a Chat Completions or Responses result (or its ``usage``), cached reads apart."""
    usage = _usage_block(response)
    chat = _count(usage, "prompt_tokens") is not None
    prompt_field, details, completion_field = (
        ("prompt_tokens", "prompt_tokens_details", "completion_tokens")
        if chat
        else ("input_tokens", "input_tokens_details", "output_tokens")
    )
    prompt = _count(usage, prompt_field)
    if prompt is None:
        return UsageUnreadable("OpenAI", f"no prompt_tokens or input_tokens in {_shape(usage)}")
    cached = min(_count(usage, details, "cached_tokens") or 0, prompt)
    # Tokens written to the cache are part of the uncached input OpenAI already counts.
    written = min(_count(usage, details, "cache_write_tokens") or 0, prompt - cached)
    return prompt - cached, _count(usage, completion_field) or 0, cached, written


def anthropic_counts(response: object) -> Counts | UsageUnreadable:
    """Counts from an Anthropic Messages result (or its ``usage``); cache writes count as fresh input."""
    usage = _usage_block(response)
    fresh = _count(usage, "input_tokens")
    if fresh is None:
        return UsageUnreadable("Anthropic", f"no input_tokens in {_shape(usage)}")
    read = _count(usage, "cache_read_input_tokens") or 0
    write = _count(usage, "cache_creation_input_tokens") or 0
    return fresh + write, _count(usage, "output_tokens") or 0, read, write


def _shape(value: object) -> str:
    if value is None:
        return "a response with no usage"
    if isinstance(value, Mapping):
        return f"a dict with keys {sorted(map(str, value))[:8]}"
    return f"a {type(value).__name__}"
