"""Commit ids: equal content gives equal ids, any change a different id, stable across processes."""

from __future__ import annotations

import json
import subprocess
import sys

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st
from pyrsistent import pmap, pset

from ctxrules.commit import ContextCommit, ContextItem, commit_from_json, commit_to_json

ITEMS = [
    ContextItem("n1", "user", rendered="Fix the failing test in src/app.py", tokens=12, turn=0),
    ContextItem(
        "n2", "assistant", rendered="Running it.", tokens=7, turn=0, created_at=5.0, changed_at=5.0
    ),
    ContextItem(
        "n3",
        "tool",
        rendered="1 failed",
        tokens=17,
        tool_name="bash",
        tool_call_id="call_1",
        arguments='{"cmd":"pytest"}',
    ),
    ContextItem("sm_9", "assistant", state="summary", rendered="上下文", tokens=9),
]
FIXED = ContextCommit(
    "s_fixed",
    parent_ids=("c_parent",),
    created_at=1700000000.0,
    head_node_id="n3",
    rules_version="v1",
).with_items(ITEMS)
PINNED_ID = "c_87d70c30cdbf8b4835a79ea4466474d19218e3240f7c3b20e9938f6a00e2999e"

HEADER_CHANGES = {
    "session_id": "s_other",
    "parent_ids": ("c_parent", "c_peer"),
    "created_at": 1700000001.0,
    "head_node_id": "n2",
    "rules_version": "v2",
    "total_tokens": 46,
    "summary": "text",
    "marks": pmap({"age_tool_results": 3}),
    "attached": pset(["c_src"]),
}
ITEM_CHANGES = {
    "role": "system",
    "state": "aged",
    "rendered": "Fix the failing test in src/app.py!",
    "tokens": 13,
    "locked": True,
    "reason": "tail_window",
    "merged_into": "sm_1",
    "is_anchor": True,
    "attached_from": "c_src",
    "tool_name": "grep",
    "tool_call_id": "call_9",
    "arguments": "{}",
    "turn": 1,
    "created_at": 1.0,
    "changed_at": 2.0,
    "source_node_id": "n9",
}


def test_pinned_id_of_a_fixed_commit() -> None:
    """The id of a fixed commit is pinned, so a change to the canonical form is noticed."""
    assert FIXED.id == PINNED_ID


def test_id_is_stable_across_processes() -> None:
    """A fresh interpreter (another hash seed) computes the same id for the same commit."""
    code = (
        "import json,sys; from ctxrules.commit import commit_from_json; "
        "print(commit_from_json(json.loads(sys.stdin.read())).unwrap().id)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        input=json.dumps(commit_to_json(FIXED)),
        capture_output=True,
        text=True,
        check=True,
        env={"PYTHONHASHSEED": "12345"},
    )
    assert out.stdout.strip() == FIXED.id


def test_equal_content_gives_equal_ids_whatever_the_route() -> None:
    """Built by appends, by a replacement, or all at once: equal content, equal id."""
    header = attrs.evolve(FIXED, items=[], total_tokens=0, digest=-1)
    appended = header.append_items(ITEMS[:2]).append_items(ITEMS[2:])
    replaced = header.append_items([ITEMS[0], ITEMS[0], *ITEMS[2:]]).replace_items({1: ITEMS[1]})
    assert appended == replaced == FIXED
    assert appended.id == replaced.id == FIXED.id


@pytest.mark.parametrize(("field", "value"), HEADER_CHANGES.items())
def test_any_header_change_changes_the_id(field: str, value: object) -> None:
    """Changing any header field gives a different id."""
    assert attrs.evolve(FIXED, **{field: value}).id != FIXED.id


@pytest.mark.parametrize(("field", "value"), ITEM_CHANGES.items())
def test_any_item_change_changes_the_id(field: str, value: object) -> None:
    """Changing any field of any one item gives a different id."""
    changed = attrs.evolve(ITEMS[0], **{field: value})
    assert FIXED.replace_items({0: changed}).id != FIXED.id


def test_item_order_is_part_of_the_id() -> None:
    """Swapping two items changes the id even though the multiset of items is the same."""
    swapped = FIXED.with_items([ITEMS[1], ITEMS[0], *ITEMS[2:]])
    assert swapped.id != FIXED.id


@given(st.lists(st.sampled_from(ITEMS), max_size=8))
def test_json_round_trip_keeps_the_id(items: list[ContextItem]) -> None:
    """A commit rebuilt from its JSON is equal and has the same id."""
    commit = ContextCommit("s").with_items(items)
    assert commit_from_json(commit_to_json(commit)).unwrap().id == commit.id


def test_tampered_json_is_refused() -> None:
    """A JSON commit whose content no longer matches its id is a Failure, not a wrong commit."""
    data = commit_to_json(FIXED)
    data["items"][0]["rendered"] = "tampered"
    message = str(commit_from_json(data).failure())
    assert message.startswith(f"malformed commit: id {FIXED.id!r} does not match the content")


_REPLACEMENTS = st.lists(
    st.dictionaries(
        st.integers(0, len(ITEMS) - 1),
        st.sampled_from(sorted(ITEM_CHANGES)).map(lambda name: (name, ITEM_CHANGES[name])),
        max_size=3,
    ),
    max_size=4,
)


@given(rounds=_REPLACEMENTS, then=st.sampled_from(["none", "append", "insert", "mark"]))
def test_invariant_2_a_deferred_digest_gives_the_id_the_eager_one_gives(
    rounds: list[dict[int, tuple[str, object]]], then: str
) -> None:
    """Invariant 2: a deferred digest, once worked out, is the digest hashing as it went gives.

    Items replaced with the digest deferred (a weighed batch point's trial run), then
    appended to, inserted into or marked, give the same id as the eager path.
    """
    base = FIXED.begin_generation()
    eager, deferred = base, base.deferring_digest()
    for changes in rounds:
        replace = {
            index: attrs.evolve(eager.items[index], **{name: value})  # type: ignore[arg-type]
            for index, (name, value) in changes.items()
        }
        eager, deferred = eager.replace_items(replace), deferred.replace_items(replace)
    more = [ContextItem("n9", "user", rendered="next", tokens=2)]
    if then == "append":
        eager, deferred = eager.append_items(more), deferred.append_items(more)
    elif then == "insert":
        eager, deferred = eager.with_items_from(2, more), deferred.with_items_from(2, more)
    elif then == "mark":
        eager, deferred = eager.with_mark("m", 1), deferred.with_mark("m", 1)
    assert deferred.id == eager.id
    worked = deferred.with_digest()
    assert worked.digest == eager.digest
    assert worked.digest_base is None  # a landed commit keeps no chain of trial bases alive
    assert ContextCommit("x").with_items(eager.items).digest == eager.digest
