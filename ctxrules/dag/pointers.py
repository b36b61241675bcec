"""Attach pointers and merge instructions: the DAG nodes that bring other branches in."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol

from ctxrules.dag.call import Call, Role

ATTACH = "attach"
MERGE = "merge"
#: Prefix of the synthetic ids of attach marker items: ``attach:<session>:<commit>``.
MARKER_PREFIX = "attach:"


class Identified(Protocol):
    """Anything with a ``source_node_id`` (a context item)."""

    @property
    def source_node_id(self) -> str:
        """The node (or synthetic id) the item stands for."""
        ...


class AttachSource(Protocol):
    """What an attach needs of a source commit; `ctxrules.commit.ContextCommit` is one."""

    @property
    def id(self) -> str:
        """The source commit's content address."""
        ...

    @property
    def session_id(self) -> str:
        """The session the source commit belongs to."""
        ...

    @property
    def head_node_id(self) -> str | None:
        """The head the source commit was built for."""
        ...

    @property
    def rules_version(self) -> str:
        """The pipeline version that built the source commit."""
        ...

    @property
    def items(self) -> Iterable[Identified]:
        """The source commit's items."""
        ...


def marker_id(session_id: str, commit_id: str) -> str:
    """The synthetic id of the open and close markers of one attached block.

    >>> marker_id("s1", "c_ab")
    'attach:s1:c_ab'
    """
    return f"{MARKER_PREFIX}{session_id}:{commit_id}"


def is_attach_pointer(call: Call) -> bool:
    """Whether the node is an attach pointer (role system, name ``attach``)."""
    return call.role is Role.SYSTEM and call.name == ATTACH


def is_merge_instruction(call: Call) -> bool:
    """Whether the node is the instruction that ends a merge."""
    return call.role is Role.USER and call.name == MERGE


def pointer_commit(call: Call) -> str:
    """The source commit id an attach pointer names."""
    value = call.metadata.get("commit")
    return value if isinstance(value, str) else ""
