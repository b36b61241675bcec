"""`ContextItem`: one entry of a context commit, derived from a DAG node or a summary."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

import attrs

from ctxrules.canonical import canonical_json
from ctxrules.commit.state import State
from ctxrules.dag import Role


def _as_role(value: Role | str) -> Role:
    # An enum's own call costs a microsecond even for a member: most items get one.
    return value if value.__class__ is Role else Role(value)


def _as_state(value: State | str) -> State:
    return value if value.__class__ is State else State(value)


@attrs.frozen
class ContextItem:
    """What the model sees of one node: its state, rendered text and token count.

    ``rendered`` is the text (for a tool item, the result); ``arguments`` the tool call's
    JSON text. ``turn`` is the assistant-turn index the item belongs to, ``created_at``
    the node's time and ``changed_at`` when ``state`` last changed; ``pinned`` keeps it whole
    in every request. ``digest`` is the
    SHA-256 of every other field, computed once, when first asked for: an item that is
    built and at once replaced (counted, tightened) is never hashed.
    """

    source_node_id: str
    role: Role = attrs.field(converter=_as_role)
    state: State = attrs.field(default=State.FULL, converter=_as_state)
    rendered: str = ""
    tokens: int = 0
    locked: bool = False
    reason: str = "new"
    merged_into: str | None = None
    is_anchor: bool = False
    attached_from: str | None = None
    tool_name: str | None = None
    tool_call_id: str | None = None
    arguments: str = ""
    turn: int = 0
    created_at: float = 0.0
    changed_at: float = 0.0
    #: Pinned by the user or the spec: whole in every request (invariant 17). A pin also
    #: locks the item, so every rule that leaves locked items alone leaves it alone.
    pinned: bool = False
    #: The provider's reasoning blocks an assistant reply began with, as canonical JSON (a
    #: list of Anthropic ``thinking``/``redacted_thinking`` blocks), sent back verbatim:
    #: the API checks their signatures and wants them before a tool loop's calls.
    thinking: str = ""
    #: The tool call failed (its node's status is ``error``): Anthropic is told so.
    is_error: bool = False
    _digest: str | None = attrs.field(init=False, default=None, eq=False, repr=False)
    #: What rendering derived from this item (its messages, their provider form), by key:
    #: pure functions of the item's fields, computed once per item, never part of its value.
    memo: dict[str, object] | None = attrs.field(init=False, default=None, eq=False, repr=False)

    def __attrs_post_init__(self) -> None:
        # A pin locks its item however it was built: every rule, fold and snip leaves a
        # locked item alone, so a hand-built ``pinned=True`` item is kept whole too.
        if self.pinned and not self.locked:
            object.__setattr__(self, "locked", True)

    @property
    def digest(self) -> str:
        """SHA-256 of the canonical JSON of every field; computed once per item."""
        # Cached so a commit's id costs O(changed items), not O(items).
        if self._digest is None:
            digest = item_digest(self)
            object.__setattr__(self, "_digest", digest)
            return digest
        return self._digest

    def remember(self, key: str, value: object) -> None:
        """Keep ``value``, a pure function of this item, in ``memo`` under ``key``.

        Rendering and the adapters use it so an item is converted once, when new or
        changed; it never changes the item's value, equality or id.
        """
        if self.memo is None:
            object.__setattr__(self, "memo", {key: value})
        else:
            self.memo[key] = value

    def pin(self) -> ContextItem:
        """This item pinned (and so locked); already pinned, the item itself."""
        return self if self.pinned else attrs.evolve(self, pinned=True, locked=True)

    def unpin(self) -> ContextItem:
        """This item no longer pinned nor locked; not pinned, the item itself."""
        return attrs.evolve(self, pinned=False, locked=False) if self.pinned else self

    @property
    def is_tool(self) -> bool:
        """Whether this item is a tool call with its result."""
        return self.role is Role.TOOL

    @property
    def visible(self) -> bool:
        """Whether the item renders at all (summarized items do not)."""
        return self.state is not State.SUMMARIZED

    def to_json(self) -> dict[str, object]:
        """Every field but the digest, as plain JSON (``pinned`` only when set)."""
        fields: dict[str, object] = {
            "source_node_id": self.source_node_id,
            "role": self.role.value,
            "state": self.state.value,
            "rendered": self.rendered,
            "tokens": self.tokens,
            "locked": self.locked,
            "reason": self.reason,
            "merged_into": self.merged_into,
            "is_anchor": self.is_anchor,
            "attached_from": self.attached_from,
            "tool_name": self.tool_name,
            "tool_call_id": self.tool_call_id,
            "arguments": self.arguments,
            "turn": self.turn,
            "created_at": self.created_at,
            "changed_at": self.changed_at,
        }
        # Written only when set, so every item stored before pins (reasoning blocks, error
        # flags) existed keeps its digest.
        if self.pinned:
            fields["pinned"] = True
        if self.thinking:
            fields["thinking"] = self.thinking
        if self.is_error:
            fields["is_error"] = True
        return fields


def item_digest(item: ContextItem) -> str:
    """SHA-256 of the canonical JSON of every field of ``item``, computed now (never cached)."""
    return hashlib.sha256(canonical_json(item.to_json()).encode()).hexdigest()


_ROLES = {role.value: role for role in Role}
_STATES = {state.value: state for state in State}
_PLAIN_FIELDS = tuple(
    a.name
    for a in attrs.fields(ContextItem)
    if a.init and a.name not in ("role", "state", "pinned", "thinking", "is_error")
)


def stored_item(fields: Mapping[str, Any], digest: str) -> ContextItem:
    """The item a store read back, its text already hashed to ``digest``, built without converters.

    A resumed session reads every item of its commit, so the converters would be its cost.

    ``fields`` is `ContextItem.to_json` of the item that was stored; a missing field or an
    unknown role or state is a `KeyError`.

    >>> item = ContextItem("n1", "tool", rendered="ok", tokens=1)
    >>> stored_item(item.to_json(), item.digest) == item
    True
    """
    item = _NEW(ContextItem)
    for name in _PLAIN_FIELDS:
        _SET(item, name, fields[name])
    _SET(item, "role", _ROLES[fields["role"]])
    _SET(item, "state", _STATES[fields["state"]])
    _SET(item, "pinned", fields.get("pinned") is True)
    _SET(item, "thinking", fields.get("thinking", ""))
    _SET(item, "is_error", fields.get("is_error") is True)
    _SET(item, "_digest", digest)
    _SET(item, "memo", None)
    return item


def copied_item(item: ContextItem) -> ContextItem:
    """An equal item made of a new object, its digest kept and no rendering memo.

    >>> item = ContextItem("n1", "tool", rendered="ok", tokens=1)
    >>> copy = copied_item(item)
    >>> (copy == item, copy is item, copy.digest == item.digest)
    (True, False, True)
    """
    copy = _NEW(ContextItem)
    for name in _ALL_FIELDS:
        _SET(copy, name, getattr(item, name))
    _SET(copy, "memo", None)
    return copy


_NEW = object.__new__
_SET = object.__setattr__
_ALL_FIELDS = tuple(a.name for a in attrs.fields(ContextItem) if a.name != "memo")
