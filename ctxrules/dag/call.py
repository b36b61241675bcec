"""The single node type of the history DAG."""

from __future__ import annotations

import enum
from collections.abc import Mapping

import attrs
from pyrsistent import PMap, pmap

from ctxrules.dag.json_values import clean_text
from ctxrules.dag.payload import Frozen, freeze_or_raise, thaw


class Role(enum.StrEnum):
    """Who produced a node."""

    USER = "user"
    ASSISTANT = "assistant"
    TOOL = "tool"
    SYSTEM = "system"


class Status(enum.StrEnum):
    """Lifecycle of a node; only a ``running`` node is ever changed, once, by ``complete``."""

    DONE = "done"
    RUNNING = "running"
    ERROR = "error"


def _freeze_metadata(value: object) -> PMap[str, Frozen]:
    frozen = freeze_or_raise({} if value is None else value)
    if not isinstance(frozen, PMap):
        raise TypeError("metadata must be a mapping")
    return frozen


def _reads(value: object) -> tuple[str, ...]:
    if isinstance(value, str) or not isinstance(value, tuple | list):
        raise TypeError("reads must be a sequence of node ids")
    return tuple(str(item) for item in value)


@attrs.frozen
class Call:
    """One node of the history: a user message, an assistant reply, a tool call or a system note.

    ``predecessor`` is the conversation edge and ``caller`` the call edge; at most one is set.
    ``seq`` is assigned by `Graph.append` and is the only order in time.
    """

    id: str = attrs.field(converter=clean_text)
    role: Role = attrs.field(converter=Role)
    name: str = attrs.field(default="", converter=clean_text)
    input: Frozen = attrs.field(default=None, converter=freeze_or_raise)
    output: Frozen = attrs.field(default=None, converter=freeze_or_raise)
    predecessor: str | None = None
    caller: str | None = None
    reads: tuple[str, ...] = attrs.field(default=(), converter=_reads)
    status: Status = attrs.field(default=Status.DONE, converter=Status)
    metadata: PMap[str, Frozen] = attrs.field(factory=pmap, converter=_freeze_metadata)
    seq: int = -1
    created_at: float = 0.0

    @classmethod
    def of_frozen(
        cls,
        *,
        id: str,  # noqa: A002 - the field is called id
        role: Role,
        name: str,
        input: Frozen,  # noqa: A002 - the field is called input
        output: Frozen,
        predecessor: str | None,
        caller: str | None,
        reads: tuple[str, ...],
        status: Status,
        metadata: PMap[str, Frozen],
        created_at: float,
        seq: int = -1,
    ) -> Call:
        """A node from fields already checked and frozen (`freeze`), the converters not run again.

        The session checks each payload once as it arrives; the converters would walk and
        rebuild every frozen map and list of it a second time. A ``seq`` given is the one
        the graph will give it, so `Graph.append` keeps this node rather than a copy.
        """
        call = object.__new__(cls)
        fields = (
            ("id", id),
            ("role", role),
            ("name", name),
            ("input", input),
            ("output", output),
            ("predecessor", predecessor),
            ("caller", caller),
            ("reads", reads),
            ("status", status),
            ("metadata", metadata),
            ("seq", seq),
            ("created_at", created_at),
        )
        for field, value in fields:
            object.__setattr__(call, field, value)
        return call

    def with_frozen(self, **changes: object) -> Call:
        """A shallow copy with ``changes`` (already checked and frozen) set, the rest shared."""
        call = object.__new__(type(self))
        for field in _FIELDS:
            object.__setattr__(call, field, changes.get(field, getattr(self, field)))
        return call

    def input_value(self) -> object:
        """The input as plain dicts and lists."""
        return thaw(self.input)

    def output_value(self) -> object:
        """The output as plain dicts and lists."""
        return thaw(self.output)

    def metadata_value(self) -> dict[str, object]:
        """The metadata as a plain dict."""
        return {key: thaw(value) for key, value in self.metadata.items()}

    def content(self) -> Mapping[str, object]:
        """What a retry copies: role, name, input, output and metadata, thawed."""
        return {
            "role": self.role.value,
            "name": self.name,
            "input": self.input_value(),
            "output": self.output_value(),
        }


#: Every field of a node, in order (what `Call.with_frozen` copies).
_FIELDS = tuple(field.name for field in attrs.fields(Call))
