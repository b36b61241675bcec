"""After the provider refuses a request as too long: how far the next one must shrink.

The engine's own ruler said the refused request fit, so its budget is no guide: each
refusal caps the next request below the refused one (at the provider's stated limit when
the error gives one), and the cap stays for the session so that later turns do not grow
back past what the provider accepted.
"""

from __future__ import annotations

import math
import re

import attrs

#: Each refusal without a stated limit keeps at most this share of the refused request.
SHRINK = 0.75

# Anthropic says "prompt is too long: <count> tokens > <limit> maximum"; OpenAI says
# "maximum context length is <limit> tokens ... resulted in <count> tokens". Both name the
# limit and the provider's own count of the refused request.
_ANTHROPIC = re.compile(r"(\d[\d,]*)\s*tokens\s*>\s*(\d[\d,]*)")
_OPENAI = re.compile(r"maximum context length is (\d[\d,]*).*?resulted in (\d[\d,]*)", re.DOTALL)


@attrs.frozen
class Refusal:
    """What a provider's "prompt too long" error says: its limit and its count, when given."""

    limit: int | None = None
    counted: int | None = None


def refusal_from_error(message: str) -> Refusal:
    """The limit and count a provider's error text states, or an empty `Refusal`.

    >>> refusal_from_error("prompt is too long: 210,000 tokens > 200000 maximum")
    Refusal(limit=200000, counted=210000)
    >>> refusal_from_error("context_length_exceeded")
    Refusal(limit=None, counted=None)
    """

    def number(text: str) -> int:
        return int(text.replace(",", ""))

    if (found := _ANTHROPIC.search(message)) is not None:
        return Refusal(number(found.group(2)), number(found.group(1)))
    if (found := _OPENAI.search(message)) is not None:
        return Refusal(number(found.group(1)), number(found.group(2)))
    return Refusal()


@attrs.frozen
class RescueState:
    """How many requests were refused as too long, and the cap on the whole next request."""

    refusals: int = 0
    cap: int | None = None

    def refused(self, request: int, refusal: Refusal = Refusal()) -> RescueState:
        """The state after ``request`` tokens (our ruler, fixed part included) were refused.

        The new cap is strictly below ``request``: scaled by the provider's limit over its
        count when it stated both, else cut to `SHRINK` of it, and never above a stated limit.

        >>> RescueState().refused(8_000).cap
        6000
        >>> RescueState().refused(8_000, Refusal(limit=5_000)).cap
        5000
        >>> RescueState().refused(10_000, Refusal(200_000, 150_000)).cap
        7500
        """
        share = SHRINK
        if refusal.limit is not None and refusal.counted:
            share = min(share, refusal.limit / refusal.counted)
        cap = math.floor(request * share)
        if refusal.limit is not None:
            cap = min(cap, refusal.limit)
        if self.cap is not None:
            cap = min(cap, self.cap)
        cap = max(min(cap, request - 1), 0)
        return RescueState(self.refusals + 1, cap)

    @property
    def note(self) -> str | None:
        """A warning for the turn while a cap is in force."""
        if self.cap is None:
            return None
        return (
            f"the provider refused {self.refusals} request(s) as too long: "
            f"requests are capped at {self.cap:,} tokens"
        )
