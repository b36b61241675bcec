"""Declarative rules on small hand-built commits: operators, features, targets, templates."""

from __future__ import annotations

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st
from pyrsistent import pset

from ctxrules.commit import ContextCommit, ContextItem, State
from ctxrules.render import counted
from ctxrules.rules import Facts
from ctxrules.rules.facts import WorkMeter
from ctxrules.rules.pipeline import Rule
from ctxrules.spec import load_spec
from ctxrules.testing import commits
from ctxrules.tokens import HeuristicCounter

TOKENIZER = HeuristicCounter()
BIG = "line of grep output\n" * 400
FACTS = Facts(now=1000.0, tokenizer=TOKENIZER, head_turn=6, cited=pset(["n1", "n3"]))


def item(node: str, role: str, text: str, **fields: object) -> ContextItem:
    """An item with its tokens counted and changed_at defaulting to created_at."""
    fields.setdefault("changed_at", fields.get("created_at", 0.0))
    return counted(ContextItem(node, role, rendered=text, **fields), TOKENIZER)


def tool(node: str, name: str, text: str, **fields: object) -> ContextItem:
    """A tool item with a call id and JSON arguments."""
    return item(
        node,
        "tool",
        text,
        tool_name=name,
        tool_call_id="call_" + node,
        arguments='{"pattern": "TODO"}',
        **fields,
    )


ITEMS = (
    item("n0", "user", "Fix the failing test in src/app.py", turn=0, created_at=0.0),
    tool("n1", "grep", BIG, turn=1, created_at=10.0),
    item("n2", "assistant", "Looking at the grep output now.", turn=1, created_at=20.0),
    tool("n3", "read_file", "short output", turn=2, created_at=100.0),
    tool("n4", "grep", BIG, turn=2, created_at=110.0, locked=True),
    tool(
        "n5", "cat", BIG, turn=3, created_at=150.0, changed_at=900.0, state="aged", reason="capped"
    ),
    tool("n6", "grep", "[Old tool result cleared]", turn=3, created_at=160.0, state="cleared"),
    item("sm_1", "assistant", "We fixed the parser.", turn=4, created_at=500.0, state="summary"),
    tool("n8", "web_search", BIG, turn=5, created_at=600.0, attached_from="c_other"),
    item("n9", "user", "thanks", turn=6, created_at=990.0),
)
COMMIT = ContextCommit("s").append_items(ITEMS)
#: Items a rule targeting `cleared` may change: not locked, not cleared, not a summary.
CANDIDATES = [0, 1, 2, 3, 5, 8, 9]


def rule(when: str, then: str = '{ state = "cleared", text = "[x]" }') -> Rule:
    """The single declarative rule of a spec with this ``when`` and ``then``."""
    spec = f'[[rules]]\nname = "r"\nwhen = {when}\nthen = {then}\n'
    return load_spec(spec).unwrap().rules[0].rule


def changed(before: ContextCommit, after: ContextCommit) -> list[int]:
    """Positions whose item differs."""
    return [i for i, (a, b) in enumerate(zip(before.items, after.items, strict=True)) if a != b]


OPERATOR_CASES = [
    ('{ role = "tool" }', [1, 3, 5, 8]),
    ('{ role = { eq = "tool" } }', [1, 3, 5, 8]),
    ('{ role = { ne = "tool" } }', [0, 2, 9]),
    ('{ role = { in = ["user", "assistant"] } }', [0, 2, 9]),
    ('{ role = { not_in = ["user", "assistant", "system"] } }', [1, 3, 5, 8]),
    ('{ tool_name = "grep" }', [1]),
    ('{ tool_name = { ne = "grep" } }', [0, 2, 3, 5, 8, 9]),
    ('{ tool_name = { not_in = ["grep", "cat"] } }', [0, 2, 3, 8, 9]),
    ('{ tool_name = { matches = "^(grep|cat)$" } }', [1, 5]),
    ('{ tool_name = { matches = "read" } }', [3]),
    ("{ tokens = { gt = 1000 } }", [1, 5, 8]),
    ("{ tokens = { le = 1000 } }", [0, 2, 3, 9]),
    ("{ tokens = { gt = 6, lt = 1000 } }", [0, 2, 3]),
    ("{ turn_age = { ge = 4 } }", [0, 1, 2]),
    ("{ turn_age = { lt = 2 } }", [8, 9]),
    ("{ turn_age = 3 }", [3]),
    ("{ turn_age = { in = [2, 4] } }", [1, 2, 5]),
    ("{ position = { lt = 2 } }", [0, 1]),
    ("{ position = { ge = 8 } }", [8, 9]),
    ("{ position_from_end = 0 }", [9]),
    ("{ position_from_end = { le = 1 } }", [8, 9]),
    ("{ cited = true }", [1, 3]),
    ("{ cited = false }", [0, 2, 5, 8, 9]),
    ("{ attached = true }", [8]),
    ("{ attached = { ne = true } }", [0, 1, 2, 3, 5, 9]),
    ("{ locked = true }", []),
    ("{ locked = false }", CANDIDATES),
    ('{ state = "aged" }', [5]),
    ('{ state = { in = ["full"] } }', [0, 1, 2, 3, 8, 9]),
    ("{ seconds_since_change = { ge = 500 } }", [0, 1, 2, 3]),
    ("{ seconds_since_change = { lt = 150.5 } }", [5, 9]),
    ("{ age_seconds = { lt = 500.5 } }", [8, 9]),
    ("{ age_seconds = { gt = 985 } }", [0, 1]),
    ('{ role = "tool", tokens = { gt = 1000 }, turn_age = { ge = 2 } }', [1, 5]),
    ("{}", CANDIDATES),
]


@pytest.mark.parametrize(("when", "expected"), OPERATOR_CASES, ids=[c[0] for c in OPERATOR_CASES])
def test_when_selects_exactly_the_matching_items(when: str, expected: list[int]) -> None:
    """Each operator and feature selects exactly the items it should, among those a rule may change."""
    assert changed(COMMIT, rule(when)(COMMIT, FACTS)) == expected


def test_matched_items_move_to_the_target_with_the_rule_name_as_reason() -> None:
    """A matched item takes the target state, the rendered template, the rule's name and the time."""
    after = rule('{ tool_name = "grep" }')(COMMIT, FACTS).items[1]
    assert (after.state, after.rendered, after.reason, after.changed_at) == (
        State.CLEARED,
        "[x]",
        "r",
        1000.0,
    )
    assert after.arguments == ITEMS[1].arguments


def test_items_at_or_past_the_target_are_left_alone() -> None:
    """Targeting `aged` leaves an aged and the cleared item as they are, whatever `when` says."""
    aged = attrs.evolve(ITEMS[5], reason="tail_window")
    commit = ContextCommit("s").append_items([*ITEMS[:5], aged, *ITEMS[6:]])
    after = rule("{}", '{ state = "aged", text = "[x]" }')(commit, FACTS)
    assert changed(commit, after) == [0, 1, 2, 3, 8, 9]
    assert after.items[5] is aged
    assert after.items[6] is ITEMS[6]


def test_a_capped_item_is_aged_but_still_gets_the_text() -> None:
    """A result the cap cut is `aged` only by its cap: a rule targeting `aged` with a text replaces it."""
    after = rule("{}", '{ state = "aged", text = "[x]" }')(COMMIT, FACTS)
    assert changed(COMMIT, after) == [0, 1, 2, 3, 5, 8, 9]
    assert (after.items[5].rendered, after.items[5].reason) == ("[x]", "r")
    assert after.items[5].changed_at == ITEMS[5].changed_at
    assert rule("{}", '{ state = "aged" }')(COMMIT, FACTS).items[5] is ITEMS[5]


def test_locked_and_summary_items_are_never_touched() -> None:
    """Even a rule matching everything leaves locked items and summaries alone."""
    after = rule("{}")(COMMIT, FACTS)
    assert after.items[4] is ITEMS[4]
    assert after.items[7] is ITEMS[7]


def test_summarized_items_are_never_matched() -> None:
    """A summarized item is outside every declarative rule's reach."""
    gone = item("n0", "user", "old", state="summarized")
    commit = ContextCommit("s").append_items([gone])
    assert rule("{}")(commit, FACTS) is commit


def test_only_changed_items_are_replaced() -> None:
    """Unchanged items keep their identity and the total stays the sum of the items' tokens."""
    after = rule('{ role = "tool" }')(COMMIT, FACTS)
    for position in set(range(len(ITEMS))) - {1, 3, 5, 8}:
        assert after.items[position] is ITEMS[position]
    assert after.total_tokens == sum(i.tokens for i in after.items)
    assert after.id == ContextCommit("s").append_items(after.items).id


def test_a_rule_that_changes_nothing_returns_the_same_commit() -> None:
    """No match means no new commit at all."""
    assert rule('{ tool_name = "nothing-calls-this" }')(COMMIT, FACTS) is COMMIT


def test_each_item_is_visited_once() -> None:
    """One pass: the work meter counts exactly one visit per item."""
    meter = WorkMeter()
    facts = Facts(now=FACTS.now, tokenizer=TOKENIZER, head_turn=6, meter=meter)
    rule('{ role = "tool" }')(COMMIT, facts)
    assert meter.items_visited == len(ITEMS)


def test_tokens_never_grow_when_the_template_is_longer() -> None:
    """A template longer than the text tightens the state but keeps the old, shorter text."""
    padded = '{ state = "aged", text = "{head:100} and then a great deal of padding that costs more tokens" }'
    after = rule('{ role = "user" }', padded)(COMMIT, FACTS)
    assert after.items[9].state is State.AGED
    assert after.items[9].rendered == "thanks"
    assert after.items[9].tokens == ITEMS[9].tokens


TEMPLATE_CASES = [
    (
        "[{name} output cleared: was {tokens} tokens]",
        1,
        f"[grep output cleared: was {ITEMS[1].tokens} tokens]",
    ),
    ("{name}: {head:9}", 0, "user: Fix the f…"),
    ("…{tail:6}", 0, "……app.py"),
    ("{head:100}", 9, "thanks"),
    ("[{name}({args:5})]", 1, '[grep({"pat…)]'),
    ("{{{name}}} {{literal}}", 2, "{assistant} {literal}"),
    ("", 3, ""),
]


@pytest.mark.parametrize(("template", "position", "expected"), TEMPLATE_CASES)
def test_templates_render_from_the_item(template: str, position: int, expected: str) -> None:
    """Every field renders from the item's own name, tokens, text and arguments."""
    then = f'{{ state = "cleared", text = "{template}" }}'
    after = rule(f"{{ position = {position} }}", then)(COMMIT, FACTS)
    assert after.items[position].rendered == expected


def test_without_a_text_the_item_keeps_its_text() -> None:
    """A `then` with only a state tightens the item and leaves its text as it was."""
    after = rule('{ tool_name = "grep" }', '{ state = "aged" }')(COMMIT, FACTS)
    assert (after.items[1].state, after.items[1].rendered) == (State.AGED, BIG)


def test_running_twice_is_pure_and_idempotent() -> None:
    """Same input, equal output; the output run again changes nothing; the input is untouched."""
    r = rule('{ role = "tool", tokens = { gt = 1000 } }')
    first, second = r(COMMIT, FACTS), r(COMMIT, FACTS)
    assert first == second
    assert r(first, FACTS) == first
    assert COMMIT.items == ContextCommit("s").append_items(ITEMS).items


WHENS = st.sampled_from(
    [
        '{ role = "tool" }',
        "{}",
        "{ tokens = { gt = 20 } }",
        '{ state = "aged" }',
        "{ turn_age = { ge = 2 } }",
        "{ cited = false }",
    ]
)
THENS = st.sampled_from(
    [
        '{ state = "aged", text = "[{name}: {head:10}]" }',
        '{ state = "cleared", text = "[cleared]" }',
        '{ state = "cleared" }',
        '{ state = "aged", text = "{tail:2000}" }',
    ]
)


@given(commits(tokenizer=TOKENIZER), WHENS, THENS, st.integers(0, 60), st.floats(0, 2e6))
def test_declarative_rules_only_tighten_unlocked_items(
    commit: ContextCommit, when: str, then: str, head: int, now: float
) -> None:
    """On random commits: states never loosen, tokens never grow, locked items and summaries stay, one visit each."""
    meter = WorkMeter()
    facts = Facts(now=now, tokenizer=TOKENIZER, head_turn=head, meter=meter)
    after = rule(when, then)(commit, facts)
    assert meter.items_visited == len(commit.items)
    assert after.total_tokens == sum(i.tokens for i in after.items)
    for old, new in zip(commit.items, after.items, strict=True):
        assert new.source_node_id == old.source_node_id
        if old.locked or old.state in (State.SUMMARY, State.SUMMARIZED):
            assert new is old
        assert old.state.may_become(new.state)
        assert new.tokens <= old.tokens
