"""Rule marks: the key under which a configured rule records its progress in a commit."""

from __future__ import annotations

from ctxrules.canonical import content_hash


def mark_key(rule_name: str, params: dict[str, object]) -> str:
    """A key unique to the rule and its parameters, so a reconfigured rule rescans once.

    >>> mark_key("clear_idle", {"idle_seconds": 3600.0})
    'clear_idle:2323c396132b'
    """
    plain = {k: list(v) if isinstance(v, tuple) else v for k, v in params.items()}
    return f"{rule_name}:{content_hash(plain)[:12]}"
