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
