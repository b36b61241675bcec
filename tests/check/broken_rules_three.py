"""Broken rules of the third round: one or more per way the earlier checks could not see (issue 30).

Each hides its defect where the first two rounds' inputs and traps never looked: an
unrecoverable tightened item (invariant 16), a change batching cannot hold back (15), a
fact the inputs never varied (the ruler, the window, the budget, marks, the rule's own
output, identical parallel calls, chunk-sized histories), state kept outside module
globals and closures (files, the process, default arguments, an object's fields) and a
memo that answers reruns consistently (8). `correct_rules` holds the controls.
"""

from __future__ import annotations

import itertools
import os
import pathlib
import sys
import time
from typing import Any

import attrs

from ctxrules.commit import ContextCommit, ContextItem, State
from ctxrules.render import counted
from ctxrules.rules import Facts, Rule
from ctxrules.rules.handles import handle_source, with_note
from ctxrules.rules.tighten import tighten
from ctxrules.tokens import HeuristicCounter


def _old_tools(commit: ContextCommit, facts: Facts, turns: int = 2) -> list[int]:
    """Positions of full, unlocked tool results at least ``turns`` turns old."""
    return [
        k
        for k, item in enumerate(commit.items)
        if item.is_tool
        and item.state is State.FULL
        and not item.locked
        and facts.head_turn - item.turn >= turns
    ]


def _stubbed(
    item: ContextItem, facts: Facts, note_for: str, reason: str = "stub"
) -> ContextItem | None:
    text = with_note(f"[{item.tool_name} output]", note_for)
    return tighten(item, State.AGED, facts, rendered=text, reason=reason)


def _replace(commit: ContextCommit, changes: dict[int, ContextItem | None]) -> ContextCommit:
    kept = {k: v for k, v in changes.items() if v is not None and v != commit.items[k]}
    return commit.replace_items(kept)


# --- invariant 16: an item tightened without a handle that gives back its original -----------


def note_names_neighbour() -> Rule:
    """Stubs old tool results, naming the handle of the item before each (16)."""

    def rule(commit: ContextCommit, facts: Facts) -> ContextCommit:
        return _replace(
            commit,
            {
                k: _stubbed(commit.items[k], facts, commit.items[k - 1].source_node_id)
                for k in _old_tools(commit, facts)
                if k > 0
            },
        )

    return rule


def handle_of_the_node_id() -> Rule:
    """Stubs old tool results with the handle of the node id: wrong for attached copies only (16)."""

    def rule(commit: ContextCommit, facts: Facts) -> ContextCommit:
        return _replace(
            commit,
            {
                k: _stubbed(commit.items[k], facts, commit.items[k].source_node_id)
                for k in _old_tools(commit, facts)
            },
        )

    return rule


def cut_long_texts() -> Rule:
    """Cuts every long shown text to its head, summaries too: a summary's folds line is lost (16)."""

    def rule(commit: ContextCommit, facts: Facts) -> ContextCommit:
        changes: dict[int, ContextItem | None] = {}
        old = set(_old_tools(commit, facts))
        for k, item in enumerate(commit.items):
            if item.state is State.SUMMARY and len(item.rendered) > 40 and not item.locked:
                changes[k] = counted(
                    attrs.evolve(item, rendered=item.rendered[:20]), facts.tokenizer
                )
            elif k in old and len(item.rendered) > 200:
                changes[k] = _stubbed(item, facts, handle_source(item))
        return _replace(commit, changes)

    return rule


#: A declarative rule whose template has no ``{handle}`` (checked as a spec).
NO_HANDLE_SPEC = """
[[rules]]
name = "clear-old"
when = { role = "tool", turn_age = { ge = 2 } }
then = { state = "cleared", text = "[{name} output cleared]" }
"""


def restubs_own_stubs() -> Rule:
    """Stubs old results and, fed its own output, stubs its stubs again, cutting the handle off (16)."""

    def rule(commit: ContextCommit, facts: Facts) -> ContextCommit:
        changes: dict[int, ContextItem | None] = {}
        for k, item in enumerate(commit.items):
            if item.is_tool and item.reason == "restub" and item.state is State.AGED:
                changes[k] = tighten(
                    item, State.CLEARED, facts, rendered=item.rendered[:12], reason="restubbed"
                )
        for k in _old_tools(commit, facts):
            changes[k] = _stubbed(commit.items[k], facts, handle_source(commit.items[k]), "restub")
        return _replace(commit, changes)

    return rule


# --- invariant 15: a change batching cannot hold back ------------------------------------------


def forgets_replaced() -> Rule:
    """Stubs old results, then starts a fresh report of replaced positions: batching misses them (15)."""

    def rule(commit: ContextCommit, facts: Facts) -> ContextCommit:
        out = _replace(
            commit,
            {
                k: _stubbed(commit.items[k], facts, handle_source(commit.items[k]))
                for k in _old_tools(commit, facts)
            },
        )
        return out.begin_generation()

    return rule


# --- facts the inputs never varied ----------------------------------------------------------------


def private_ruler() -> Rule:
    """Stubs old results and counts them with its own heuristic ruler, not Facts.tokenizer (10)."""
    own = HeuristicCounter()

    def rule(commit: ContextCommit, facts: Facts) -> ContextCommit:
        changes: dict[int, ContextItem] = {}
        for k in _old_tools(commit, facts):
            item = commit.items[k]
            stub = counted(
                attrs.evolve(
                    item, state=State.AGED, rendered=with_note("[stub]", handle_source(item))
                ),
                own,
            )
            if stub.tokens < item.tokens:
                changes[k] = stub
        return commit.replace_items(changes)

    return rule


def small_window_restores() -> Rule:
    """At a window of 16k or less, restores an aged result to full to show more (3)."""

    def rule(commit: ContextCommit, facts: Facts) -> ContextCommit:
        if facts.context_window > 16_000:
            return commit
        for k, item in enumerate(commit.items):
            if item.state is State.AGED and not item.locked:
                full = counted(attrs.evolve(item, state=State.FULL), facts.tokenizer)
                return commit.replace_items({k: full})
        return commit

    return rule


def budget_drops_oldest() -> Rule:
    """With a budget set, drops the oldest unlocked item to fit (13)."""

    def rule(commit: ContextCommit, facts: Facts) -> ContextCommit:
        if facts.budget is None or commit.total_tokens <= facts.budget:
            return commit
        at = next((k for k, i in enumerate(commit.items) if not i.locked), None)
        return (
            commit
            if at is None
            else commit.with_items([*commit.items[:at], *commit.items[at + 1 :]])
        )

    return rule


def mark_off_by_one() -> Rule:
    """Skips the item at a rule mark's position when it rebuilds the list (13)."""

    def rule(commit: ContextCommit, _facts: Facts) -> ContextCommit:
        marks = [p for p in commit.marks.values() if 0 < p < len(commit.items)]
        if not marks:
            return commit
        at = min(marks)
        return commit.with_items([*commit.items[:at], *commit.items[at + 1 :]])

    return rule


def twins_share_a_call() -> Rule:
    """Ages identical parallel calls as one: the later twin takes the first one's call id (11)."""

    def rule(commit: ContextCommit, _facts: Facts) -> ContextCommit:
        first: dict[tuple[int, str | None, str, str], ContextItem] = {}
        changes: dict[int, ContextItem] = {}
        for k, item in enumerate(commit.items):
            if not item.is_tool or item.locked:
                continue
            key = (item.turn, item.tool_name, item.arguments, item.rendered)
            seen = first.setdefault(key, item)
            if seen is not item and seen.tool_call_id != item.tool_call_id:
                changes[k] = attrs.evolve(item, tool_call_id=seen.tool_call_id)
        return commit.replace_items(changes)

    return rule


def chunk_loop() -> Rule:
    """Rebuilds the items chunk by chunk of 64 and loses the last one when it starts a chunk (13)."""

    def rule(commit: ContextCommit, _facts: Facts) -> ContextCommit:
        items = list(commit.items)
        if len(items) < 2:
            return commit
        rebuilt = [i for start in range(0, len(items) - 1, 64) for i in items[start : start + 64]]
        return commit if len(rebuilt) == len(items) else commit.with_items(rebuilt)

    return rule


# --- state outside module globals and closures ---------------------------------------------------


def _clear_newest(commit: ContextCommit, facts: Facts) -> ContextCommit:
    """The visible effect below: the newest full item cleared, with its handle."""
    last = commit.items[-1] if commit.items else None
    if last is None or last.locked or last.state is not State.FULL or last.attached_from:
        return commit
    cleared = tighten(
        last, State.CLEARED, facts, rendered=with_note("[cleared]", last.source_node_id), reason="x"
    )
    return commit if cleared is None else commit.replace_items({len(commit.items) - 1: cleared})


def reads_a_file() -> Rule:
    """Clears the newest item if a settings file says so: the output follows a file (8)."""

    def rule(commit: ContextCommit, facts: Facts) -> ContextCommit:
        try:
            with open("/etc/hostname", encoding="utf-8") as settings:  # noqa: PTH123
                eager = bool(settings.read(1))
        except OSError:
            eager = False
        return _clear_newest(commit, facts) if eager else commit

    return rule


def reads_a_path() -> Rule:
    """Clears the newest item when a marker file exists, by pathlib (8)."""

    def rule(commit: ContextCommit, facts: Facts) -> ContextCommit:
        marker = pathlib.Path("/nonexistent/ctxrules-eager")
        return commit if marker.exists() else _clear_newest(commit, facts)

    return rule


def reads_the_cwd() -> Rule:
    """Clears the newest item unless run from the root folder: the output follows os.getcwd (8)."""

    def rule(commit: ContextCommit, facts: Facts) -> ContextCommit:
        return commit if os.getcwd() == "/" else _clear_newest(commit, facts)  # noqa: PTH109

    return rule


def reads_argv() -> Rule:
    """Clears the newest item unless the program was started with --keep (8)."""

    def rule(commit: ContextCommit, facts: Facts) -> ContextCommit:
        return commit if "--keep" in sys.argv else _clear_newest(commit, facts)

    return rule


def memo_in_default() -> Rule:
    """Every fiftieth call clears the newest item: a counter in a mutable default argument (8)."""

    def rule(
        commit: ContextCommit,
        facts: Facts,
        _seen: list[int] = [],  # noqa: B006 - the defect
    ) -> ContextCommit:
        _seen.append(1)
        return _clear_newest(commit, facts) if len(_seen) % 50 == 0 else commit

    return rule


@attrs.frozen
class _Stamped:
    """A callable rule that holds the clock in a field under another name."""

    stamp: Any = time.time

    def __call__(self, commit: ContextCommit, facts: Facts) -> ContextCommit:
        return _clear_newest(commit, facts) if self.stamp() > 0 else commit


def clock_in_a_field() -> Rule:
    """Clears the newest item by a clock held as a field of the rule object (8)."""
    return _Stamped()


class _Counting:
    """A callable rule that counts its calls in a field."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, commit: ContextCommit, facts: Facts) -> ContextCommit:
        self.calls += 1
        return _clear_newest(commit, facts) if self.calls % 40 == 0 else commit


def counter_in_a_field() -> Rule:
    """Every fortieth call clears the newest item: a counter in a field of the rule object (8)."""
    return _Counting()


class _Memo:
    """Where `memo_by_commit_id` keeps its answers: one level below the rule's fields."""

    def __init__(self) -> None:
        self.answers: dict[str, bool] = {}
        self.calls = 0


class _Remembering:
    """A rule that decides on a commit once, by its call count, and remembers by the commit's id."""

    def __init__(self) -> None:
        self.memo = _Memo()

    def __call__(self, commit: ContextCommit, facts: Facts) -> ContextCommit:
        if commit.id not in self.memo.answers:
            self.memo.calls += 1
            self.memo.answers[commit.id] = self.memo.calls % 2 == 1
        return _clear_newest(commit, facts) if self.memo.answers[commit.id] else commit


def memo_by_commit_id() -> Rule:
    """Clears the newest item on odd first sightings, remembered by commit id: reruns agree (8)."""
    return _Remembering()


_WARM = itertools.count()


def warm_up_calls() -> Rule:
    """Clears the newest item during a process's first thirty calls (a count the globals do not show) (8)."""

    def rule(commit: ContextCommit, facts: Facts) -> ContextCommit:
        return _clear_newest(commit, facts) if next(_WARM) < 30 else commit

    return rule


#: Each broken rule with the invariant `ctxrules check` must report for it.
BROKEN_THREE = {
    "note_names_neighbour": 16,
    "handle_of_the_node_id": 16,
    "cut_long_texts": 16,
    "restubs_own_stubs": 16,
    "forgets_replaced": 15,
    "private_ruler": 10,
    "small_window_restores": 3,
    "budget_drops_oldest": 13,
    "mark_off_by_one": 13,
    "twins_share_a_call": 11,
    "chunk_loop": 13,
    "reads_a_file": 8,
    "reads_a_path": 8,
    "reads_the_cwd": 8,
    "reads_argv": 8,
    "memo_in_default": 8,
    "clock_in_a_field": 8,
    "counter_in_a_field": 8,
    "memo_by_commit_id": 8,
}
#: Found only by rerunning on a fresh instance from the factory (`check_rule(fresh=...)`).
NEEDS_FRESH = {"memo_by_commit_id"}
#: Broken rules only a whole spec's check shows: a child process disagreeing with this one,
#: and a declarative rule (the spec's text).
BROKEN_IN_SPECS = {"warm_up_calls": 8, "no_handle_template": 16}
