"""The cache model: profiles, prices, and the batching table of a spec."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctxrules.cache import NO_CACHE, CacheState, anthropic, openai
from ctxrules.compaction.summarizer import bound_summary, summary_budget
from ctxrules.rules.protected import PROTECTED_TOOLS, is_protected, protected_keys
from ctxrules.spec import load_spec
from ctxrules.tokens import HeuristicCounter


def test_an_extension_reads_the_previous_request_and_writes_the_rest() -> None:
    """Anthropic: 0.1 per cached token, 1.25 per token written after it."""
    first, cache = CacheState().price(
        anthropic(), now=0, tokens=4_000, messages=3, shared_messages=0, shared_tokens=0
    )
    second, _ = cache.price(
        anthropic(), now=60, tokens=5_000, messages=5, shared_messages=3, shared_tokens=4_000
    )
    assert (first.read, first.written) == (0, 4_000)
    assert (second.read, second.written) == (4_000, 1_000)
    assert second.cost == pytest.approx(0.1 * 4_000 + 1.25 * 1_000)


def test_a_gap_longer_than_the_ttl_reads_nothing() -> None:
    """The 5-minute entry is gone after 301 s; the 1-hour one is not."""
    for profile, read in ((anthropic(), 0), (anthropic(ttl="1h"), 4_000)):
        _, cache = CacheState().price(
            profile, now=0, tokens=4_000, messages=3, shared_messages=0, shared_tokens=0
        )
        later, _ = cache.price(
            profile, now=301, tokens=5_000, messages=5, shared_messages=3, shared_tokens=4_000
        )
        assert later.read == read


def test_a_break_reads_only_a_prefix_an_earlier_request_wrote() -> None:
    """A change inside the third message leaves the first request's two messages readable."""
    cache = CacheState()
    for tokens, messages in ((2_000, 2), (3_000, 4), (4_000, 6)):
        _, cache = cache.price(
            anthropic(),
            now=1,
            tokens=tokens,
            messages=messages,
            shared_messages=messages - 2,
            shared_tokens=tokens - 1_000,
        )
    broken, _ = cache.price(
        anthropic(), now=2, tokens=3_500, messages=6, shared_messages=3, shared_tokens=2_500
    )
    assert broken.read == 2_000


def test_openai_reads_in_128_token_steps_from_1024_with_no_write_premium() -> None:
    """1,000 shared tokens are too few; 1,300 read as 1,280."""
    _, cache = CacheState().price(
        openai(), now=0, tokens=1_300, messages=2, shared_messages=0, shared_tokens=0
    )
    few, _ = cache.price(
        openai(), now=1, tokens=1_400, messages=3, shared_messages=1, shared_tokens=1_000
    )
    many, _ = cache.price(
        openai(), now=1, tokens=1_400, messages=3, shared_messages=2, shared_tokens=1_300
    )
    assert few.read == 0
    assert (many.read, many.written, many.uncached) == (1_280, 0, 120)
    assert many.cost == pytest.approx(0.25 * 1_280 + 120)


@given(st.integers(0, 50_000), st.integers(0, 50_000), st.integers(0, 2_000))
def test_no_cache_costs_every_token_and_output_is_priced_apart(
    tokens: int, shared: int, output: int
) -> None:
    """Without a cache a request costs its tokens; the reply adds its own price."""
    priced, _ = CacheState().price(
        NO_CACHE,
        now=0,
        tokens=tokens,
        messages=1,
        shared_messages=1,
        shared_tokens=min(shared, tokens),
        output=output,
    )
    assert priced.prompt_cost == tokens
    assert priced.output_cost == NO_CACHE.output * output


def test_profiles_refuse_unknown_options() -> None:
    """A typo in a TTL or a model family is an error, not a silent default."""
    with pytest.raises(ValueError, match="ttl"):
        anthropic(ttl="10m")
    with pytest.raises(ValueError, match="family"):
        openai(family="gpt-3")


def test_a_structural_summary_never_exceeds_its_budget() -> None:
    """10,000 folded lines stay within a tenth of the input budget, newest lines kept."""
    ruler = HeuristicCounter()
    text = "\n".join(f"[tool] result {i}: " + "word " * 20 for i in range(10_000))
    budget = summary_budget(200_000)
    bounded = bound_summary(text, budget, ruler)
    assert ruler.count(bounded) <= budget
    assert bounded.endswith(text.rsplit("\n", 1)[1])
    again = bound_summary(bounded + "\n[user] one more", budget, ruler)
    assert ruler.count(again) <= budget
    first = again.split("\n", 1)[0]
    assert first.startswith("[… ")
    assert int(first.split()[1]) > 9_000


def test_protected_tools_match_every_agent_spelling() -> None:
    """Claude Code, LangChain and OpenCode names of the plan and search tools are protected."""
    keys = protected_keys(PROTECTED_TOOLS)
    for name in ("TodoWrite", "TaskCreate", "TaskUpdate", "Task", "WebSearch", "write_todos"):
        assert is_protected(name, keys)
    for name in ("Bash", "Read", "web_fetch", None):
        assert not is_protected(name, keys)


def test_the_batching_table_is_checked_like_rule_parameters() -> None:
    """Unknown keys and out-of-range values are reported at their key path."""
    problem = str(load_spec("[batching]\nevery_turn = 4\nbudget_share = 2\n").failure())
    assert "batching.every_turn" in problem
    assert "every_turns" in problem
    assert "batching.budget_share" in problem
    loaded = load_spec("[batching]\nevery_turns = 4\n").unwrap()
    assert loaded.batching is not None
    assert loaded.batching.every_turns == 4
    assert loaded.version != load_spec("[batching]\nevery_turns = 5\n").unwrap().version


def test_to_anthropic_marks_the_stable_part_and_the_newest_message() -> None:
    """Two breakpoints: at the end of what the previous request sent, and at the newest block."""
    from ctxrules.cache import stable_prefix_end  # noqa: PLC0415
    from ctxrules.render import Message, TextBlock, to_anthropic  # noqa: PLC0415

    said = [Message(r, (TextBlock(f"{r} {i}"),)) for i, r in enumerate(["user", "assistant"] * 3)]
    end = stable_prefix_end(said[:4], said)
    request = to_anthropic(said, cache_prefix_end=end, cache_newest=True)
    marked = [
        (m["role"], b["text"])
        for m in request.messages
        for b in m["content"]  # type: ignore[attr-defined]
        if "cache_control" in b
    ]
    assert marked == [("assistant", "assistant 3"), ("assistant", "assistant 5")]
