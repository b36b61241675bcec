"""`handle_for` encodes only the hash bytes its characters show: the handles are unchanged."""

from __future__ import annotations

import base64
import hashlib

from hypothesis import given
from hypothesis import strategies as st

from ctxrules.rules.handles import HANDLE_CHARS, HANDLE_PREFIX, handle_for


@given(st.text(st.characters(exclude_categories=("Cs",)), min_size=1, max_size=60))
def test_the_handle_is_the_first_characters_of_the_whole_hash(source_id: str) -> None:
    """Invariant 16 (every hidden item names a handle that resolves): old handles still resolve."""
    whole = base64.b32encode(hashlib.sha256(source_id.encode()).digest())
    expected = HANDLE_PREFIX + whole.decode()[:HANDLE_CHARS].lower()
    assert handle_for(source_id) == expected
    assert len(handle_for(source_id)) == len(HANDLE_PREFIX) + HANDLE_CHARS
