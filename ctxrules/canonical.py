"""Canonical JSON and content hashes: equal content gives equal ids on every machine."""

from __future__ import annotations

import hashlib
import json

# One encoder made once: `json.dumps` with options builds a new one on every call, a few
# microseconds each, and stores and digests encode on every write. It holds no state.
_ENCODER = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def canonical_json(value: object) -> str:
    """Serialise plain JSON data with sorted keys and no insignificant whitespace.

    >>> canonical_json({"b": 1, "a": [True, None, "é"]})
    '{"a":[true,null,"é"],"b":1}'
    """
    return _ENCODER.encode(value)


def content_hash(value: object) -> str:
    """Hex SHA-256 of the canonical JSON of ``value``.

    >>> content_hash({"a": 1})[:12]
    '015abd7f5cc5'
    """
    return hashlib.sha256(canonical_json(value).encode("utf-8")).hexdigest()
