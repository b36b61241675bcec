"""Which commit a replay's recall audit checks: the same whatever order the commits come in.

A replay's commits come from the engine's map by id, whose order follows the string hash
(``PYTHONHASHSEED``): a 165 MB session audited 467 hidden items under one seed and 465
under another, two commits of its last turn tying on length and time.
"""

from __future__ import annotations

import itertools

import attrs

from ctxrules.commit import ContextCommit, ContextItem, State
from ctxrules.recall.audit import latest_commit
from ctxrules.rules.batching import BATCH_COUNT


def _turn() -> tuple[ContextCommit, ContextCommit, ContextCommit]:
    """A parent, the next request as held, and the same request with a batch point landed."""
    parent = ContextCommit("s", created_at=1.0).append_items(
        [ContextItem(f"n{i}", "tool", rendered="x" * 40, tokens=10) for i in range(4)]
    )
    grown = attrs.evolve(
        parent.append_items([ContextItem("n4", "user", rendered="go", tokens=1)]),
        parent_ids=(parent.id,),
        created_at=2.0,
    ).with_mark(BATCH_COUNT, 3)
    aged = ContextItem("n0", "tool", state=State.AGED, rendered="[stub]", tokens=2)
    landed = grown.replace_items({0: aged}).with_mark(BATCH_COUNT, 4)
    return parent, grown, landed


def test_the_landed_request_is_chosen_in_any_order() -> None:
    """Of two requests of one turn, the one a batch point landed; in every order given."""
    parent, grown, landed = _turn()
    assert len(grown.items) == len(landed.items)
    assert grown.created_at == landed.created_at
    for order in itertools.permutations([parent, grown, landed]):
        assert latest_commit(order) is landed


def test_ties_on_everything_but_the_id_are_broken_by_the_id() -> None:
    """Two commits alike in length, time and batch points: the same one in either order."""
    _, grown, _ = _turn()
    other = grown.replace_items({1: ContextItem("n1", "tool", state=State.AGED, tokens=2)})
    assert other.id != grown.id
    assert latest_commit([grown, other]) is latest_commit([other, grown])
    assert latest_commit([]) is None
