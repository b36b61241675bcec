"""A reply's references come in the same order in every process (the hash seed aside)."""

from __future__ import annotations

from immutables import Map

from ctxrules.fidelity.index import payload_strings


def test_a_frozen_payloads_strings_come_in_key_order() -> None:
    """An imported call's arguments are an ``immutables.Map``, iterated in its keys' hash order.

    With eight keys, the hash order equals the key order for one seed in 40,320: the
    strings in key order say the order does not depend on the seed.
    """
    keys = ["path", "old_string", "new_string", "replace_all", "mode", "edits", "content", "a"]
    payload = Map({key: f"v_{key}" for key in keys})
    assert list(payload_strings(payload)) == [f"v_{key}" for key in sorted(keys)]
    nested = Map({"z": Map({"b": "zb", "a": "za"}), "y": ("y0", Map({"k": "yk"}))})
    assert list(payload_strings(nested)) == ["y0", "yk", "za", "zb"]
