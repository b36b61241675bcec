"""Context commits: immutable, content-addressed snapshots of what the model reads."""

from ctxrules.commit.commit import ContextCommit
from ctxrules.commit.errors import CommitError, NotAnAncestor, UnknownHead
from ctxrules.commit.item import ContextItem
from ctxrules.commit.serialize import MalformedCommit, commit_from_json, commit_to_json
from ctxrules.commit.state import State

__all__ = [
    "CommitError",
    "ContextCommit",
    "ContextItem",
    "MalformedCommit",
    "NotAnAncestor",
    "State",
    "UnknownHead",
    "commit_from_json",
    "commit_to_json",
]
