"""Provider cache profiles: prices relative to one uncached input token, and how the cache behaves."""

from __future__ import annotations

import attrs

#: Read factors of OpenAI's automatic prompt cache by model family (cached input / input price).
OPENAI_READ_FACTORS = {
    "gpt-4o": 0.5,
    "o1": 0.5,
    "gpt-4.1": 0.25,
    "o3": 0.25,
    "o4-mini": 0.25,
    "gpt-5": 0.1,
}


@attrs.frozen
class CacheProfile:
    """How a provider prices and keeps a prompt prefix.

    Prices are per token, relative to an uncached input token: ``read`` for a token served
    from the cache, ``write`` for a token written to it (uncached tokens the provider does
    not cache cost 1), ``output`` for a generated token. ``ttl_seconds`` is how long an
    unused entry lives; ``min_tokens`` the shortest prefix cached; ``step`` the granularity
    of an automatic cache; ``breakpoints`` how many explicit breakpoints a request may set
    (0: the cache is automatic, no breakpoints).
    """

    name: str
    read: float
    write: float
    output: float
    ttl_seconds: float
    min_tokens: int = 1024
    step: int = 1
    breakpoints: int = 0

    @property
    def caches(self) -> bool:
        """Whether this provider caches anything at all."""
        return self.ttl_seconds > 0


def anthropic(*, ttl: str = "5m") -> CacheProfile:
    """Anthropic's prompt cache: explicit breakpoints (at most 4), read 0.1x, write 1.25x (5 min) or 2x (1 h).

    Output is priced at 5x an input token (Claude Sonnet's list prices).

    >>> anthropic().write, anthropic(ttl="1h").ttl_seconds
    (1.25, 3600.0)
    """
    if ttl not in ("5m", "1h"):
        msg = f"ttl={ttl!r}: expected '5m' or '1h'"
        raise ValueError(msg)
    long = ttl == "1h"
    return CacheProfile(
        "anthropic",
        read=0.1,
        write=2.0 if long else 1.25,
        output=5.0,
        ttl_seconds=3600.0 if long else 300.0,
        breakpoints=4,
    )


def openai(*, family: str = "gpt-4.1") -> CacheProfile:
    """OpenAI's automatic prefix cache: from 1,024 tokens in 128-token steps, no write premium.

    Entries are evicted after 5-10 minutes idle; 300 s is the cautious end. Output is 4x.

    >>> openai(family="gpt-4o").read, openai().step
    (0.5, 128)
    """
    if family not in OPENAI_READ_FACTORS:
        msg = f"family={family!r}: expected one of {sorted(OPENAI_READ_FACTORS)}"
        raise ValueError(msg)
    return CacheProfile(
        "openai",
        read=OPENAI_READ_FACTORS[family],
        write=1.0,
        output=4.0,
        ttl_seconds=300.0,
        step=128,
    )


#: No prompt cache: every input token is paid in full.
NO_CACHE = CacheProfile("none", read=1.0, write=1.0, output=4.0, ttl_seconds=0.0)

#: The profiles by the name ``ctxrules replay --provider`` takes.
PROFILES = {"anthropic": anthropic(), "openai": openai(), "none": NO_CACHE}


def profile_for_model(model: str) -> CacheProfile | None:
    """The cache profile of a model's provider, known from its name, or None.

    >>> profile_for_model("claude-sonnet-4").name, profile_for_model("gpt-4o").read
    ('anthropic', 0.5)
    >>> print(profile_for_model("llama-3-70b"))
    None
    """
    name = model.lower().rsplit("/", 1)[-1]
    if name.startswith("claude"):
        return anthropic()
    # The longest family the name starts with: "gpt-4o-mini" is gpt-4o, "gpt-4.1-nano" gpt-4.1.
    families = sorted((f for f in OPENAI_READ_FACTORS if name.startswith(f)), key=len)
    return openai(family=families[-1]) if families else None
