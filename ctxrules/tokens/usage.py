"""Usage tracking: what the provider reported, kept as immutable state, and the hybrid estimate."""

from __future__ import annotations

from typing import Literal

import attrs
from returns.result import Failure, Result, Success

from ctxrules.tokens.usage_from import (
    MAX_TOKENS,
    Counts,
    UsageUnreadable,
    anthropic_counts,
    openai_counts,
)

#: Where the current count comes from: a local estimate, the provider, or a persisted value.
Source = Literal["estimate", "provider", "cached"]


def _token_count(_: object, attribute: attrs.Attribute[int], value: object) -> None:
    """A provider's count is a whole number of tokens, never negative."""
    if isinstance(value, bool) or not isinstance(value, int):
        msg = f"{attribute.name}={value!r}: expected a token count (an int >= 0)"
        raise TypeError(msg)
    if not 0 <= value <= MAX_TOKENS:
        shown = value if value < 0 else f"an int of {len(str(value))} digits"
        msg = f"{attribute.name}={shown}: expected a token count (an int from 0 to 2**53)"
        raise ValueError(msg)


@attrs.frozen
class ProviderUsage:
    """One response's usage as the provider reported it, in one meaning for every provider.

    ``prompt_tokens`` is the input *not read from cache* (cache writes included) and
    ``cache_read_tokens`` the input read from cache, so ``prompt_total`` is the whole input.
    Build it from a response with `from_openai` or `from_anthropic`, which map each
    provider's fields to this meaning. Every count is an int >= 0.

    >>> ProviderUsage(-5000)
    Traceback (most recent call last):
    ...
    ValueError: prompt_tokens=-5000: expected a token count (an int from 0 to 2**53)
    """

    prompt_tokens: int = attrs.field(validator=_token_count)
    completion_tokens: int = attrs.field(default=0, validator=_token_count)
    cache_read_tokens: int = attrs.field(default=0, validator=_token_count)
    cache_write_tokens: int = attrs.field(default=0, validator=_token_count)

    @property
    def prompt_total(self) -> int:
        """Prompt tokens billed for the request, cache reads included (002: one ruler)."""
        return self.prompt_tokens + self.cache_read_tokens

    # -- from a provider's response (see usage_from.py for what each field means) -------------

    @classmethod
    def from_openai(cls, response: object) -> Result[ProviderUsage, UsageUnreadable]:
        """The usage of an OpenAI Chat Completions or Responses result (object or dict).

        OpenAI's prompt count includes the cached tokens; here they are read apart.

        >>> usage = ProviderUsage.from_openai({"usage": {"prompt_tokens": 1005,
        ...     "completion_tokens": 12, "prompt_tokens_details": {"cached_tokens": 900}}})
        >>> usage.unwrap().prompt_tokens, usage.unwrap().prompt_total
        (105, 1005)
        """
        return _from_counts(cls, openai_counts(response))

    @classmethod
    def from_anthropic(cls, response: object) -> Result[ProviderUsage, UsageUnreadable]:
        """The usage of an Anthropic Messages result (object or dict); cache writes are fresh input.

        >>> usage = ProviderUsage.from_anthropic({"usage": {"input_tokens": 5, "output_tokens": 9,
        ...     "cache_read_input_tokens": 900, "cache_creation_input_tokens": 100}})
        >>> usage.unwrap().prompt_total
        1005
        """
        return _from_counts(cls, anthropic_counts(response))


def _from_counts(
    cls: type[ProviderUsage], counts: Counts | UsageUnreadable
) -> Result[ProviderUsage, UsageUnreadable]:
    if isinstance(counts, UsageUnreadable):
        return Failure(counts)
    return Success(cls(*counts))


@attrs.frozen
class UsageState:
    """Per-session usage: the last measurement, running totals, and the estimate it matched.

    ``measured_estimate`` is the local estimate of the request the provider measured, so a
    later estimate can trust the measured prefix and estimate only what is new.
    """

    last_prompt_tokens: int = 0
    last_cache_read_tokens: int = 0
    cumulative_prompt_tokens: int = 0
    cumulative_completion_tokens: int = 0
    turn_count: int = 0
    compaction_count: int = 0
    source: Source = "estimate"
    measured_estimate: int = 0
    #: The engine's compaction hold (history tokens to wait for), kept here so that a
    #: process that reopens the session waits as the one before it would have.
    hold_until: int | None = None
    #: The summarizer's own calls that returned text, and their tokens: paid like turns.
    summary_calls: int = 0
    summary_prompt_tokens: int = 0
    summary_completion_tokens: int = 0
    #: What the last request carried besides its history: the window it was prepared for and
    #: the system prompt's and tool schemas' tokens, so a reader of the store (`ctxrules
    #: inspect`) draws the same occupancy as the engine did. 0 when never prepared.
    window: int = 0
    system_tokens: int = 0
    tools_tokens: int = 0

    def sent(self, window: int, system_tokens: int, tools_tokens: int) -> UsageState:
        """The state noting what the last request carried besides its history (self if the same).

        >>> UsageState().sent(8_000, 120, 300).tools_tokens
        300
        """
        if (self.window, self.system_tokens, self.tools_tokens) == (
            window,
            system_tokens,
            tools_tokens,
        ):
            return self
        return attrs.evolve(
            self, window=window, system_tokens=system_tokens, tools_tokens=tools_tokens
        )

    #: The head of the request the provider measured: a reopened process attributes the
    #: measurement to that request, not to whatever it prepared last.
    measured_head: str | None = None

    def record(
        self, usage: ProviderUsage, *, estimated_request: int, head: str | None = None
    ) -> UsageState:
        """The state after a response: the provider's numbers become the last measurement.

        >>> UsageState().record(ProviderUsage(900, 40, 100), estimated_request=950).last_prompt_tokens
        900
        """
        return attrs.evolve(
            self,
            measured_head=head,
            last_prompt_tokens=usage.prompt_tokens,
            last_cache_read_tokens=usage.cache_read_tokens,
            cumulative_prompt_tokens=self.cumulative_prompt_tokens + usage.prompt_total,
            cumulative_completion_tokens=self.cumulative_completion_tokens
            + usage.completion_tokens,
            turn_count=self.turn_count + 1,
            source="provider",
            measured_estimate=estimated_request,
        )

    def record_summary(self, prompt_tokens: int, completion_tokens: int) -> UsageState:
        """The state after a summarizer call that returned text: its tokens are a cost too.

        >>> UsageState().record_summary(1200, 300).summary_prompt_tokens
        1200
        """
        return attrs.evolve(
            self,
            summary_calls=self.summary_calls + 1,
            summary_prompt_tokens=self.summary_prompt_tokens + prompt_tokens,
            summary_completion_tokens=self.summary_completion_tokens + completion_tokens,
        )

    def record_compaction(self) -> UsageState:
        """The state after a compaction: the measured prefix no longer exists."""
        return attrs.evolve(self, compaction_count=self.compaction_count + 1, source="estimate")

    def hybrid(self, estimated_request: int, *, prefix_unchanged: bool) -> tuple[int, Source]:
        """Tokens of the next request: the measured prefix plus the estimate of what is new.

        Falls back to the plain estimate when nothing was measured or the prefix changed
        (a compaction, a checkout to another branch).

        >>> state = UsageState().record(ProviderUsage(1100, 0), estimated_request=1000)
        >>> state.hybrid(1200, prefix_unchanged=True), state.hybrid(1200, prefix_unchanged=False)
        ((1300, 'provider'), (1200, 'estimate'))
        """
        if self.source == "estimate" or not prefix_unchanged:
            return estimated_request, "estimate"
        measured = self.last_prompt_tokens + self.last_cache_read_tokens
        return measured + max(estimated_request - self.measured_estimate, 0), self.source

    def to_json(self) -> dict[str, object]:
        """The state as plain JSON, for the store."""
        return attrs.asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, object]) -> UsageState:
        """A persisted state, marked ``cached`` until the provider measures again."""
        defaults = cls()
        kept: dict[str, object] = {}
        for field in attrs.fields(cls):
            value = data.get(field.name, getattr(defaults, field.name))
            # A value no process wrote (a hostile count, a field of another type) is
            # dropped, so a stored session always reopens.
            if _fits(getattr(defaults, field.name), value, field.name):
                kept[field.name] = value
        return cls(**kept).as_cached()  # type: ignore[arg-type]

    def as_cached(self) -> UsageState:
        """This state restored from elsewhere: a provider measurement becomes ``cached``."""
        return attrs.evolve(self, source="cached") if self.source == "provider" else self


def _fits(default: object, value: object, name: str) -> bool:
    """Whether a stored usage value has its field's type and, for a count, a sane size."""
    if name in ("hold_until", "measured_head"):
        wanted: type = int if name == "hold_until" else str
        return value is None or (isinstance(value, wanted) and not isinstance(value, bool))
    if name == "source":
        return value in ("estimate", "provider", "cached")
    if isinstance(default, int):
        return (
            isinstance(value, int)
            and not isinstance(value, bool)
            and 0 <= value <= MAX_TOKENS * 2**16
        )
    return True
