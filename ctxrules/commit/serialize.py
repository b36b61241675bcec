"""Commits to and from plain JSON, so a commit can be stored and rebuilt equal."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import attrs
from pyrsistent import pmap, pset
from returns.result import Failure, Result, Success

from ctxrules.commit.commit import ContextCommit
from ctxrules.commit.errors import CommitError
from ctxrules.commit.item import ContextItem
from ctxrules.commit.vector import ItemVector


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


def commit_of_header(
    header: Mapping[str, Any],
    items: Sequence[ContextItem] | ItemVector,
    **derived: Any,  # noqa: ANN401 - ContextCommit's own keywords, passed through
) -> ContextCommit:
    """The commit of a header's JSON fields (`commit_header`) with these items.

    ``derived`` passes what the items already give (``digest``, ``hidden``, ``summary_at``)
    instead of working it out again. Raises `KeyError` for a missing field, `TypeError` or
    `ValueError` for a wrong one.
    """
    return ContextCommit(
        session_id=header["session_id"],
        parent_ids=tuple(header["parent_ids"]),
        created_at=header["created_at"],
        head_node_id=header["head_node_id"],
        rules_version=header["rules_version"],
        items=items,
        total_tokens=header["total_tokens"],
        summary=header["summary"],
        marks=pmap(header.get("marks", {})),
        attached=pset(header.get("attached", ())),
        **derived,
    )


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
        commit = commit_of_header(data, [ContextItem(**item) for item in data["items"]])
    except KeyError as err:
        return Failure(MalformedCommit(f"missing field {err.args[0]!r}"))
    except (TypeError, ValueError) as err:
        return Failure(MalformedCommit(str(err)))
    if "id" in data and data["id"] != commit.id:
        return Failure(
            MalformedCommit(f"id {data['id']!r} does not match the content ({commit.id!r})")
        )
    return Success(commit)
