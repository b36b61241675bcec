"""`Rule` and `Pipeline`: pure transformations of a commit, applied as a left fold."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeAlias

import attrs

from ctxrules.canonical import content_hash
from ctxrules.commit.commit import ContextCommit
from ctxrules.rules.facts import Facts

Rule: TypeAlias = Callable[[ContextCommit, Facts], ContextCommit]
"""A pure function from commit to commit.

It keeps every item's identity and order, may only tighten unlocked items, never reads
the clock or any global, and never writes to the DAG. Everything it may know besides
the commit arrives in `Facts`.
"""


@attrs.frozen
class NamedRule:
    """A rule with the name a spec gives it."""

    name: str
    rule: Rule


@attrs.frozen
class Pipeline:
    """An ordered tuple of named rules plus ``version``, the hash of the normalised spec."""

    rules: tuple[NamedRule, ...] = ()
    version: str = attrs.field(default=content_hash({"rules": []}))

    def run(self, commit: ContextCommit, facts: Facts) -> ContextCommit:
        """Apply every rule in order (a left fold).

        >>> Pipeline().run(ContextCommit("s"), Facts()) == ContextCommit("s")
        True
        """
        for named in self.rules:
            commit = named.rule(commit, facts)
        return commit
