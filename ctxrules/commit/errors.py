"""Errors of commit generation."""

from __future__ import annotations

import attrs

from ctxrules.errors import ErrorValue


@attrs.frozen
class CommitError(ErrorValue):
    """Base of every commit failure; ``message`` is the human-readable text."""


@attrs.frozen
class UnknownHead(CommitError):
    """The head to build a commit for is not in the graph."""

    head: str

    @property
    def message(self) -> str:
        """A one-line description of what went wrong."""
        return f"unknown head {self.head!r}: it is not a node of the graph"


@attrs.frozen
class NotAnAncestor(CommitError):
    """The parent commit's head is not on the new head's branch."""

    parent_head: str
    head: str

    @property
    def message(self) -> str:
        """A one-line description of what went wrong."""
        return (
            f"the parent commit's head {self.parent_head!r} is not an ancestor of {self.head!r}; "
            "a commit extends only its own branch"
        )
