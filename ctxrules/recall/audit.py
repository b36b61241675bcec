"""The recall audit of a replayed session: hidden items recoverable, handles shown, pages needed.

A simulated model recalls every handle any request showed it, page by page; the audit
counts the tool results that takes and every answer that is an error (there must be none).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import attrs

from ctxrules.check.recoverable import recoverable
from ctxrules.check.violations import Violation
from ctxrules.commit import ContextCommit, State
from ctxrules.dag import Graph
from ctxrules.recall.lookup import RecallIndex, node_original, recall_index
from ctxrules.recall.tools import PAGE_TOKENS, answer_recall
from ctxrules.rules.handles import handle_for, handles_in
from ctxrules.tokens import Tokenizer


@attrs.frozen
class RecallAudit:
    """Per session: hidden items and how many came back byte for byte; handles shown and resolved.

    ``recall_results`` is the number of tool results (pages) a model that recalls every
    shown handle needs; ``errors`` the answers among them that were errors.
    """

    hidden: int
    recovered: int
    shown: int
    unresolved: int
    recall_results: int
    errors: int
    violations: tuple[Violation, ...] = ()

    @property
    def ok(self) -> bool:
        """Everything hidden came back and nothing shown failed."""
        return (
            self.recovered == self.hidden
            and self.unresolved == 0
            and self.errors == 0
            and not self.violations
        )


def _pages(
    index: RecallIndex, handle: str, tokenizer: Tokenizer, page_tokens: int
) -> tuple[str, int, int]:
    """The joined bodies of every page of ``handle``, the pages read and the error answers."""
    bodies: list[str] = []
    page, pages, errors = 1, 1, 0
    while page <= pages:
        answer = answer_recall(
            index, {"handle": handle, "page": page}, tokenizer=tokenizer, page_tokens=page_tokens
        )
        if answer.is_error:
            return "".join(bodies), page, errors + 1
        bodies.append(answer.body)
        pages = answer.pages
        page += 1
    return "".join(bodies), pages, errors


def shown_handles(commits: Iterable[ContextCommit]) -> set[str]:
    """Every handle that a tightened item or a summary showed in any of the commits."""
    shown: set[str] = set()
    seen: set[str] = set()
    for commit in commits:
        for item in commit.items:
            if item.state is State.FULL or not item.visible or item.digest in seen:
                continue
            seen.add(item.digest)
            shown.update(handles_in(item.rendered))
    return shown


def audit_session(
    graph: Graph,
    final: ContextCommit,
    commits: Iterable[ContextCommit],
    *,
    tokenizer: Tokenizer,
    page_tokens: int = PAGE_TOKENS,
    offloaded: Mapping[str, str] | None = None,
) -> RecallAudit:
    """Check invariant 16 on ``final`` and recall, page by page, every handle ``commits`` showed."""
    index = recall_index(graph, final, offloaded)
    hidden = recovered = 0
    for item in final.items:
        if item.state.tightness <= State.FULL.tightness:
            continue
        hidden += 1
        node = node_original(graph, item.source_node_id)
        truth = item.rendered if node is None else node.text
        text, _, errors = _pages(index, handle_for(item.source_node_id), tokenizer, page_tokens)
        recovered += int(errors == 0 and text == truth)
    shown = shown_handles(commits)
    results = errors = unresolved = 0
    for handle in sorted(shown):
        _, pages, failed = _pages(index, handle, tokenizer, page_tokens)
        results += pages
        errors += failed
        unresolved += int(index.get(handle) is None)
    return RecallAudit(
        hidden,
        recovered,
        len(shown),
        unresolved,
        results,
        errors,
        tuple(recoverable(final, graph, offloaded)),
    )


def latest_commit(commits: Iterable[ContextCommit]) -> ContextCommit | None:
    """The newest of a session's commits: items are only ever added, so the one with most items."""
    return max(commits, key=lambda c: (len(c.items), c.created_at), default=None)


def audit_commits(
    graph: Graph,
    commits: Iterable[ContextCommit],
    *,
    tokenizer: Tokenizer,
    offloaded: Mapping[str, str] | None = None,
) -> RecallAudit:
    """`audit_session` over every commit a replay made, its newest as the final one."""
    every = list(commits)
    final = latest_commit(every) or ContextCommit("")
    return audit_session(graph, final, every, tokenizer=tokenizer, offloaded=offloaded)


def audit_line(audit: RecallAudit) -> str:
    """One line for a replay's output.

    >>> audit_line(RecallAudit(10, 10, 12, 0, 15, 0))
    'recall: 10/10 hidden items recoverable, 12 handles shown, 0 unresolved, 15 recall results needed, 0 errors, 0 invariant-16 violations'
    """
    return (
        f"recall: {audit.recovered}/{audit.hidden} hidden items recoverable, "
        f"{audit.shown} handles shown, {audit.unresolved} unresolved, "
        f"{audit.recall_results} recall results needed, {audit.errors} errors, "
        f"{len(audit.violations)} invariant-16 violations"
    )
