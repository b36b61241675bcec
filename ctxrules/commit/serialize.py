"""Commits to and from plain JSON, so a commit can be stored and rebuilt equal."""

from __future__ import annotations

from typing import Any

import attrs
from pyrsistent import pmap, pset
from returns.result import Failure, Result, Success

from ctxrules.commit.commit import ContextCommit
from ctxrules.commit.errors import CommitError
from ctxrules.commit.item import ContextItem


@attrs.frozen
class MalformedCommit(CommitError):
    """A JSON document could not be read as a commit."""

    reason: str

    @property
    def message(self) -> str:
        """A one-line description of what went wrong."""
        return f"malformed commit: {self.reason}"


def commit_header(commit: ContextCommit) -> dict[str, object]:
    """Every field of the commit as plain JSON but its id and its items."""
    return {
        "session_id": commit.session_id,
        "parent_ids": list(commit.parent_ids),
        "created_at": commit.created_at,
        "head_node_id": commit.head_node_id,
        "rules_version": commit.rules_version,
        "total_tokens": commit.total_tokens,
        "summary": commit.summary,
        "marks": dict(commit.marks),
        "attached": sorted(commit.attached),
    }


def commit_to_json(commit: ContextCommit) -> dict[str, object]:
    """The commit as plain JSON, with its id for checking on the way back."""
    return {
        "id": commit.id,
        **commit_header(commit),
        "items": [item.to_json() for item in commit.items],
    }


def commit_from_json(data: Any) -> Result[ContextCommit, CommitError]:  # noqa: ANN401 - parsed JSON
    """Rebuild a commit; fails if a field is missing or the id does not match the content.

    >>> c = ContextCommit("s").append_items([ContextItem("n", "user", rendered="hi", tokens=3)])
    >>> commit_from_json(commit_to_json(c)).unwrap() == c
    True
    >>> print(commit_from_json({"id": "c_x"}).failure())
    malformed commit: missing field 'items'
    """
    if not isinstance(data, dict):
        return Failure(MalformedCommit(f"expected an object, found {type(data).__name__}"))
    try:
        items = [ContextItem(**item) for item in data["items"]]
        commit = ContextCommit(
            session_id=data["session_id"],
            parent_ids=tuple(data["parent_ids"]),
            created_at=data["created_at"],
            head_node_id=data["head_node_id"],
            rules_version=data["rules_version"],
            items=items,
            total_tokens=data["total_tokens"],
            summary=data["summary"],
            marks=pmap(data.get("marks", {})),
            attached=pset(data.get("attached", ())),
        )
    except KeyError as err:
        return Failure(MalformedCommit(f"missing field {err.args[0]!r}"))
    except (TypeError, ValueError) as err:
        return Failure(MalformedCommit(str(err)))
    if "id" in data and data["id"] != commit.id:
        return Failure(
            MalformedCommit(f"id {data['id']!r} does not match the content ({commit.id!r})")
        )
    return Success(commit)
