"""The provider prompt cache as values: profiles and the cache-weighted cost of requests."""

from ctxrules.cache.breakpoints import stable_prefix_end
from ctxrules.cache.pricing import CacheState, Entry, Priced
from ctxrules.cache.profiles import (
    NO_CACHE,
    PROFILES,
    CacheProfile,
    anthropic,
    openai,
    profile_for_model,
)

__all__ = [
    "NO_CACHE",
    "PROFILES",
    "CacheProfile",
    "CacheState",
    "Entry",
    "Priced",
    "anthropic",
    "openai",
    "profile_for_model",
    "stable_prefix_end",
]
