"""The recall audit of a replayed session: hidden items recoverable, handles shown, pages needed.

A simulated model recalls every handle any request showed it, page by page; the audit
counts the tool results that takes and every answer that is an error (there must be none).
Given the host's search, the model also searches for each hidden item with words drawn
from its original and recalls every handle the search returns.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

import attrs

from ctxrules.check.recoverable import recoverable
from ctxrules.check.violations import Violation
from ctxrules.commit import ContextCommit, State
from ctxrules.dag import Graph
from ctxrules.recall.lookup import RecallIndex, node_original, recall_index
from ctxrules.recall.tools import (
    PAGE_TOKENS,
    RECALL,
    SEARCH_HISTORY,
    HistorySearch,
    answer_recall,
    answer_search,
)
from ctxrules.rules.batching import BATCH_COUNT
from ctxrules.rules.handles import handles_in, item_handle
from ctxrules.tokens import Tokenizer


@attrs.frozen
class RecallAudit:
    """Per session: hidden items and how many came back byte for byte; handles shown and resolved.

    ``recall_results`` is the number of tool results (pages) a model that recalls every
    shown handle needs; ``errors`` the answers among them that were errors. ``searches``
    counts the hidden items searched for (not the recall tools' own results, which the
    search leaves out), ``found_by_search`` those whose handle (or the
    handle of a byte-identical original, such as the same file read twice) the search returned, ``search_results`` the tool results the searches and their recalls took, and
    ``search_errors`` the error answers among them.
    """

    hidden: int
    recovered: int
    shown: int
    unresolved: int
    recall_results: int
    errors: int
    violations: tuple[Violation, ...] = ()
    searches: int = 0
    found_by_search: int = 0
    search_results: int = 0
    search_errors: int = 0

    @property
    def ok(self) -> bool:
        """Everything hidden came back and nothing shown or searched failed."""
        return (
            self.recovered == self.hidden
            and self.unresolved == 0
            and self.errors == 0
            and self.search_errors == 0
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


#: A word a search for an item may use: letters first, four characters or more.
_WORD = re.compile(r"[^\W\d_][\w]{3,}")
#: Words in one simulated query.
QUERY_WORDS = 3


def search_query(text: str) -> str | None:
    """The words a model would search with for a hidden original: the longest of its middle third.

    The middle is what a cap hides, and a long word (an identifier, a file name) says more
    than a short one, as a model picking words to find a result would know; the chosen
    words keep their order. Short or wordless texts give no query.

    >>> search_query("one two three alpha remarkable_identifier beta configuration gamma four five")
    'remarkable_identifier configuration gamma'
    >>> search_query("1 2 3") is None
    True
    """
    words = _WORD.findall(text)
    if not words:
        return None
    third = len(words) // 3
    middle = list(dict.fromkeys(words[third : len(words) - third] or words))
    longest = set(sorted(middle, key=len, reverse=True)[:QUERY_WORDS])
    return " ".join(w for w in middle if w in longest)


@attrs.frozen
class _Searched:
    searches: int = 0
    found: int = 0
    results: int = 0
    errors: int = 0


def _search_every_hidden(
    index: RecallIndex,
    hidden: list[tuple[str, str]],
    search: HistorySearch,
    tokenizer: Tokenizer,
    page_tokens: int,
) -> _Searched:
    """Search for each hidden item (handle, original) and recall every handle returned."""
    recalled: dict[str, tuple[int, int]] = {}
    searches = found = results = errors = 0
    for handle, original in hidden:
        query = search_query(original)
        if query is None:
            continue
        searches += 1
        answer = answer_search(search, {"query": query})
        results += 1
        errors += int(answer.is_error)
        returned = handles_in(answer.text) if not answer.is_error else ()
        # A result read again is found by its copy as well: the model gets the same bytes.
        found += int(
            handle in returned
            or any((known := index.get(h)) is not None and known.text == original for h in returned)
        )
        for hit in returned:
            if hit not in recalled:
                _, pages, failed = _pages(index, hit, tokenizer, page_tokens)
                recalled[hit] = (pages, failed)
            results += recalled[hit][0]
            errors += recalled[hit][1]
    return _Searched(searches, found, results, errors)


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
    search: HistorySearch | None = None,
) -> RecallAudit:
    """Check invariant 16 on ``final`` and recall, page by page, every handle ``commits`` showed.

    With ``search`` (the host's full-text search), also search for every hidden item.
    """
    index = recall_index(graph, final, offloaded)
    # Each handle's pages are read once (most handles shown are those of hidden items);
    # what is kept of them is their count and errors, not their text.
    read: dict[str, tuple[int, int]] = {}
    to_search: list[tuple[str, str]] = []
    recovered = tightened = 0
    for item in final.items:
        if item.state.tightness <= State.FULL.tightness:
            continue
        node = node_original(graph, item.source_node_id)
        truth = item.rendered if node is None else node.text
        if node is None or node.tool_name not in {RECALL, SEARCH_HISTORY}:
            # The search leaves the recall tools' own results out (they only repeat the
            # history): searched for, every recall the model made counted as a miss.
            to_search.append((item_handle(item), truth))
        text, pages, errors = _pages(index, item_handle(item), tokenizer, page_tokens)
        read[item_handle(item)] = (pages, errors)
        recovered += int(errors == 0 and text == truth)
        tightened += 1
    shown = shown_handles(commits)
    results = errors = unresolved = 0
    for handle in sorted(shown):
        if handle not in read:
            read[handle] = _pages(index, handle, tokenizer, page_tokens)[1:]
        pages, failed = read[handle]
        results += pages
        errors += failed
        unresolved += int(index.get(handle) is None)
    searched = (
        _search_every_hidden(index, to_search, search, tokenizer, page_tokens)
        if search is not None
        else _Searched()
    )
    return RecallAudit(
        tightened,
        recovered,
        len(shown),
        unresolved,
        results,
        errors,
        tuple(recoverable(final, graph, offloaded)),
        searched.searches,
        searched.found,
        searched.results,
        searched.errors,
    )


def latest_commit(commits: Iterable[ContextCommit]) -> ContextCommit | None:
    """The newest of a session's commits: items are only ever added, so the one with most items.

    Of two made at the same turn from one parent (the request as held, and as a batch
    point landed it), the one with more batch points; then the id, so the answer never
    depends on the order ``commits`` come in (an engine's commits by id are a hash map,
    whose order changes with ``PYTHONHASHSEED``).
    """
    return max(
        commits,
        key=lambda c: (len(c.items), c.created_at, c.marks.get(BATCH_COUNT, 0), c.id),
        default=None,
    )


def audit_commits(
    graph: Graph,
    commits: Iterable[ContextCommit],
    *,
    tokenizer: Tokenizer,
    offloaded: Mapping[str, str] | None = None,
    search: HistorySearch | None = None,
    final: ContextCommit | None = None,
) -> RecallAudit:
    """`audit_session` over every commit a replay made; ``final`` (by default its newest) is audited."""
    every = list(commits)
    if final is None:
        final = latest_commit(every) or ContextCommit("")
    return audit_session(
        graph, final, every, tokenizer=tokenizer, offloaded=offloaded, search=search
    )


def audit_line(audit: RecallAudit) -> str:
    """One line for a replay's output.

    >>> audit_line(RecallAudit(10, 10, 12, 0, 15, 0))
    'recall: 10/10 hidden items recoverable, 12 handles shown, 0 unresolved, 15 recall results needed, 0 errors, 0 invariant-16 violations'
    >>> audit_line(RecallAudit(10, 10, 12, 0, 15, 0, (), 9, 8, 40, 0)).split("; ")[1]
    'search: 8/9 hidden items found, 40 search and recall results, 0 errors'
    """
    line = (
        f"recall: {audit.recovered}/{audit.hidden} hidden items recoverable, "
        f"{audit.shown} handles shown, {audit.unresolved} unresolved, "
        f"{audit.recall_results} recall results needed, {audit.errors} errors, "
        f"{len(audit.violations)} invariant-16 violations"
    )
    if not audit.searches:
        return line
    return (
        f"{line}; search: {audit.found_by_search}/{audit.searches} hidden items found, "
        f"{audit.search_results} search and recall results, {audit.search_errors} errors"
    )
