"""Usage tracking and the hybrid estimate, against a recorded usage sequence."""

from __future__ import annotations

from ctxrules.tokens.usage import ProviderUsage, UsageState

# A recorded sequence: (our estimate of the request, what the provider then billed).
# The provider counts about 8 % more than our estimate plus a fixed 60-token template.
RECORDED = [(1000, 1140), (1400, 1572), (1900, 2112), (2600, 2868), (3100, 3408), (3900, 4272)]


def test_counters_accumulate_over_turns() -> None:
    """Cumulative prompt (cache reads included) and completion tokens, and the turn count."""
    state = UsageState()
    for estimate, billed in RECORDED:
        state = state.record(
            ProviderUsage(billed - 100, 25, cache_read_tokens=100), estimated_request=estimate
        )
    assert state.turn_count == len(RECORDED)
    assert state.cumulative_prompt_tokens == sum(billed for _, billed in RECORDED)
    assert state.cumulative_completion_tokens == 25 * len(RECORDED)
    assert (state.last_prompt_tokens, state.last_cache_read_tokens, state.source) == (
        4172,
        100,
        "provider",
    )


def test_hybrid_tracks_the_provider_closer_than_the_plain_estimate() -> None:
    """Trusting the measured prefix and estimating only the new part halves the error or better."""
    state = UsageState()
    hybrid_errors, plain_errors = [], []
    for estimate, billed in RECORDED:
        guess, _ = state.hybrid(estimate, prefix_unchanged=True)
        if state.source == "provider":
            hybrid_errors.append(abs(guess - billed))
            plain_errors.append(abs(estimate - billed))
        state = state.record(ProviderUsage(billed), estimated_request=estimate)
    assert sum(hybrid_errors) * 2 <= sum(plain_errors)


def test_compaction_and_branch_changes_fall_back_to_the_estimate() -> None:
    """After a compaction, or when the prefix changed, the hybrid is the plain estimate."""
    state = UsageState().record(ProviderUsage(1140), estimated_request=1000)
    assert state.hybrid(1500, prefix_unchanged=False) == (1500, "estimate")
    compacted = state.record_compaction()
    assert compacted.compaction_count == 1
    assert compacted.hybrid(1500, prefix_unchanged=True) == (1500, "estimate")


def test_persisted_state_round_trips_as_cached() -> None:
    """A state read back from the store is marked cached until the provider measures again."""
    state = UsageState().record(ProviderUsage(1140, 10), estimated_request=1000)
    back = UsageState.from_json(state.to_json())
    assert back.source == "cached"
    assert back.hybrid(1100, prefix_unchanged=True) == (1240, "cached")
