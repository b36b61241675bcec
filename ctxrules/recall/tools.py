"""The two tools a model may call to get back what tightening hid: ``recall`` and ``search_history``.

`recall_tools` gives their schemas for a provider's request; `answer_tool_call` answers one
call from the recall index (and, for search, the host's injected full-text search). Every
answer is text for the tool result; bad arguments give an error answer, never an exception.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Literal, Protocol

import attrs

from ctxrules.recall.lookup import Handles, Original
from ctxrules.recall.paging import page_bounds
from ctxrules.rules.handles import handle_for, handles_in
from ctxrules.rules.text import head, one_line
from ctxrules.spec.recall import RecallOptions
from ctxrules.tokens import Tokenizer

RECALL = "recall"
SEARCH_HISTORY = "search_history"
#: Tokens of one recalled page unless the engine sets another limit.
PAGE_TOKENS = 2000
#: Search results returned unless the call asks for fewer.
SEARCH_LIMIT = 8

RECALL_DESCRIPTION = (
    "Fetch the original of an item shown shortened or cleared in this conversation, by the "
    "handle it names (like h:abcd2345). Long originals come in pages: ask for page 2, 3, …"
)
SEARCH_DESCRIPTION = (
    "Search this session's whole history (including what is no longer shown) for words; "
    "returns snippets, each with the handle to recall it whole."
)
_RECALL_PARAMS: dict[str, object] = {
    "type": "object",
    "properties": {
        "handle": {"type": "string", "description": "the handle, e.g. h:abcd2345"},
        "page": {"type": "integer", "minimum": 1, "description": "page number, from 1"},
    },
    "required": ["handle"],
}
_SEARCH_PARAMS: dict[str, object] = {
    "type": "object",
    "properties": {
        "query": {"type": "string", "description": "words to look for"},
        "limit": {"type": "integer", "minimum": 1, "maximum": 20},
    },
    "required": ["query"],
}


def recall_tools(provider: Literal["openai", "anthropic"]) -> tuple[dict[str, object], ...]:
    """The schemas of ``recall`` and ``search_history`` in the provider's request format.

    >>> [t["function"]["name"] for t in recall_tools("openai")]
    ['recall', 'search_history']
    >>> [t["name"] for t in recall_tools("anthropic")]
    ['recall', 'search_history']
    """
    tools = (
        (RECALL, RECALL_DESCRIPTION, _RECALL_PARAMS),
        (SEARCH_HISTORY, SEARCH_DESCRIPTION, _SEARCH_PARAMS),
    )
    if provider == "anthropic":
        return tuple({"name": n, "description": d, "input_schema": p} for n, d, p in tools)
    return tuple(
        {"type": "function", "function": {"name": n, "description": d, "parameters": p}}
        for n, d, p in tools
    )


def offered_tools(
    options: RecallOptions, provider: Literal["openai", "anthropic"]
) -> tuple[dict[str, object], ...]:
    """The recall tools to add to a request: both when the spec's ``[recall] tools`` is on, else none.

    >>> offered_tools(RecallOptions(), "openai"), len(offered_tools(RecallOptions(tools=True), "anthropic"))
    ((), 2)
    """
    return recall_tools(provider) if options.tools else ()


class HistoryHit(Protocol):
    """One search hit: the node it found and a snippet (`ctxrules.store.SearchHit` is one)."""

    @property
    def node_id(self) -> str:
        """The node that matched."""
        ...

    @property
    def snippet(self) -> str:
        """The matching text, marks around the match."""
        ...


#: The host's full-text search over the session: query and limit in, hits out (or an error text).
HistorySearch = Callable[[str, int], "Sequence[HistoryHit] | str"]


@attrs.frozen
class ToolAnswer:
    """The text of a tool result; ``is_error`` when the call could not be answered.

    ``body`` is the page of the original alone (empty for an error or a search), so that
    the pages of one handle joined give back the original exactly.
    """

    text: str
    is_error: bool = False
    body: str = ""
    page: int = 0
    pages: int = 0
    #: What ``body`` is a page of: the original ``output``, or a tool call's ``arguments``
    #: when they were too long for the first page's header (they then come first).
    part: Literal["output", "arguments"] = "output"


#: How an answer describes a handle: an example would be one that resolves to nothing.
HANDLE_SHAPE = "h: and 8 characters, as a [recall h:…] note shows it"
#: Characters of a model's own argument an answer repeats back: it chose them, so an
#: answer that echoed them whole could be made as large as it liked.
ECHO_CHARS = 80


def _echo(text: str) -> str:
    """``repr(text)``, cut to about `ECHO_CHARS` characters.

    >>> _echo("h:" + "x" * 500)
    "'h:xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx'… (502 characters)"
    """
    if len(text) <= ECHO_CHARS:
        return repr(text)
    return f"{text[:ECHO_CHARS]!r}… ({len(text):,} characters)"


def _named(text: str, otherwise: str) -> str:
    """``_echo(text)``, or ``otherwise`` when the text holds a handle: an answer names none that fails.

    Aged or folded later, the answer would show that handle, which resolves to nothing.

    >>> _named("foo", "it"), _named("h:zzzzzzzz", "the handle asked for")
    ("'foo'", 'the handle asked for')
    """
    return otherwise if handles_in(text) else _echo(text)


def _error(text: str) -> ToolAnswer:
    return ToolAnswer(f"[{text}]", is_error=True)


def _page_arg(arguments: Mapping[str, object]) -> int | None:
    page = arguments.get("page", 1)
    if isinstance(page, float) and page.is_integer():
        # JSON has one number type: a model's 2.0 is page 2.
        page = int(page)
    if isinstance(page, bool) or not isinstance(page, int) or page < 1:
        return None
    return page


def _value(value: object) -> str:
    """A value the model sent, as Python writes it, cut like `_echo`, and naming no handle."""
    shown = repr(value)
    if len(shown) > ECHO_CHARS:
        shown = f"{shown[:ECHO_CHARS]}… ({len(shown):,} characters)"
    return "that" if handles_in(shown) else shown


def not_an_object(name: str, arguments: object) -> ToolAnswer:
    """The answer to a call whose arguments are no JSON object (they did not parse, or are a list).

    >>> print(not_an_object("recall", None).text)
    [recall's arguments must be a JSON object, like {"handle": "h:…", "page": 1}; got None]
    """
    example = '{"query": "words"}' if name == SEARCH_HISTORY else '{"handle": "h:…", "page": 1}'
    return _error(
        f"{name}'s arguments must be a JSON object, like {example}; got {_value(arguments)}"
    )


def _header(
    original: Original,
    page: int,
    pages: int,
    args_chars: int | None = None,
    part: str | None = None,
) -> str:
    kinds = {"node": "original", "attached": "attached original", "fold": "folded items"}
    what = kinds.get(original.kind, original.kind)
    tool = f" of tool {original.tool_name}" if original.tool_name else ""
    if part is not None:
        # The arguments have pages of their own: the header says which part a page is.
        args = f"; its {part}"
    else:
        shown = original.arguments if args_chars is None else head(original.arguments, args_chars)
        args = f"; arguments {shown}" if original.arguments and page == 1 else ""
    more = f"; recall page {page + 1} for more" if page < pages else ""
    return f"[{original.handle}: {what}{tool}, page {page} of {pages}{args}{more}]"


def _page_room(original: Original, max_chars: int) -> tuple[int, int | None]:
    """Characters of the original one page may hold so that header and page fit in ``max_chars``.

    Also the characters of the arguments the first page's header shows: all of them, unless
    they would take more than half the answer.
    """
    # The page numbers have at most as many digits as the text's length plus one.
    digits = len(str(len(original.text) + 1))

    def widest(args_chars: int | None) -> int:
        return len(_header(original, 1, 2, args_chars)) + 3 * (digits - 1) + len("\n")

    args_chars: int | None = None
    if widest(None) > max_chars // 2:
        args_chars = max(len(original.arguments) - (widest(None) - max_chars // 2), 0)
    return max(max_chars - widest(args_chars), 1), args_chars


def _parted_room(original: Original, max_chars: int) -> int:
    """Characters of a page when the arguments have pages of their own before the output's."""
    digits = len(str(len(original.text) + len(original.arguments) + 2))
    widest = len(_header(original, 1, 2, part="arguments")) + 3 * (digits - 1) + len("\n")
    return max(max_chars - widest, 1)


def _pages(
    original: Original,
    page_tokens: int,
    tokenizer: Tokenizer,
    max_chars: int | None,
) -> tuple[list[tuple[str, int, int]], int | None, bool]:
    """Each page as (part, start, end), the header's argument characters, whether paged.

    The arguments are paged, before the output, when they do not fit in the first page's header.
    """
    if max_chars is None:
        bounds = page_bounds(original.text, page_tokens, tokenizer, None)
        return [("output", a, b) for a, b in bounds], None, False
    room, args_chars = _page_room(original, max_chars)
    if args_chars is None or args_chars >= len(original.arguments):
        bounds = page_bounds(original.text, page_tokens, tokenizer, room)
        return [("output", a, b) for a, b in bounds], args_chars, False
    # Cut in a header, the end of the arguments (a written file's content) would be out of
    # reach: they are paged whole instead, then the output.
    room = _parted_room(original, max_chars)
    parts = [
        (part, a, b)
        for part, text in (("arguments", original.arguments), ("output", original.text))
        for a, b in page_bounds(text, page_tokens, tokenizer, room)
    ]
    return parts, None, True


def answer_recall(
    index: Handles,
    arguments: Mapping[str, object],
    *,
    tokenizer: Tokenizer,
    page_tokens: int = PAGE_TOKENS,
    max_chars: int | None = None,
) -> ToolAnswer:
    """One page (at most ``page_tokens`` tokens of the original) of what a handle names.

    With ``max_chars`` (the longest tool result the pipeline keeps whole) pages are cut so
    that the whole answer, header included, fits: the model then reads every page whole.
    """
    handle = arguments.get("handle")
    page = _page_arg(arguments)
    if not isinstance(handle, str):
        return _error(f"recall needs a handle ({HANDLE_SHAPE}) and a page number >= 1")
    if page is None:
        return _error(f"page must be an integer >= 1, not {_value(arguments.get('page'))}")
    handle = handle.strip()
    if index.ambiguous(handle):
        return _error(
            f"{_named(handle, 'that handle')} names two items in this session; use search_history"
        )
    original = index.get(handle)
    if original is None:
        asked = _named(handle, "the handle asked for")
        return _error(f"no item in this session has {asked}; handles are {HANDLE_SHAPE}")
    bounds, args_chars, parted = _pages(original, page_tokens, tokenizer, max_chars)
    if page > len(bounds):
        return _error(f"{_echo(handle)} has {len(bounds)} page(s); page {page} does not exist")
    part, start, end = bounds[page - 1]
    body = (original.arguments if part == "arguments" else original.text)[start:end]
    header = _header(original, page, len(bounds), args_chars, part if parted else None)
    return ToolAnswer(
        f"{header}\n{body}",
        body=body,
        page=page,
        pages=len(bounds),
        part="arguments" if part == "arguments" else "output",
    )


def answer_search(
    search: HistorySearch | None,
    arguments: Mapping[str, object],
    *,
    snippet_chars: int = 300,
    max_chars: int | None = None,
) -> ToolAnswer:
    """The snippets the host's search finds, each with its node's handle.

    With ``max_chars`` only the hits that fit are listed, then how many were left out.
    """
    query = arguments.get("query")
    limit = arguments.get("limit", SEARCH_LIMIT)
    if not isinstance(query, str) or not query.strip():
        return _error("search_history needs a query (non-empty text)")
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        return _error("search_history's limit must be an integer >= 1")
    if search is None:
        return _error("search_history is not available in this session")
    hits = search(query, min(limit, 20))
    if isinstance(hits, str):
        return _error(f"search failed: {hits}")
    if not hits:
        return ToolAnswer(f"[no match for {_named(query, 'that query')}]")
    lines = [
        f"{handle_for(hit.node_id)} {head(one_line(hit.snippet), snippet_chars)}" for hit in hits
    ]
    return ToolAnswer("\n".join(_fitting(lines, max_chars)))


def _fitting(lines: list[str], max_chars: int | None) -> list[str]:
    """The first lines that fit in ``max_chars`` with a last line saying how many did not.

    >>> _fitting(["a" * 40, "b" * 40, "c" * 40], 100)
    ['aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa', '[2 more matches not shown; narrow the query]']
    """
    if max_chars is None or len("\n".join(lines)) <= max_chars:
        return lines
    kept: list[str] = []
    for line in lines:
        note = f"[{len(lines) - len(kept)} more matches not shown; narrow the query]"
        if len("\n".join([*kept, line, note])) > max_chars:
            break
        kept.append(line)
    return [*kept, f"[{len(lines) - len(kept)} more matches not shown; narrow the query]"]


def answer_tool_call(
    name: str,
    arguments: Mapping[str, object],
    *,
    index: Handles,
    tokenizer: Tokenizer,
    search: HistorySearch | None = None,
    page_tokens: int = PAGE_TOKENS,
    max_chars: int | None = None,
) -> ToolAnswer:
    """Answer a ``recall`` or ``search_history`` call; any other name is an error answer.

    ``max_chars``, when given, bounds the answer's length so that no cap cuts it.

    >>> from ctxrules.dag import Call, Graph
    >>> from ctxrules.recall.lookup import recall_index
    >>> from ctxrules.tokens import HeuristicCounter
    >>> graph = Graph().append(Call("t1", "tool", name="cat", output="all the lines")).unwrap()
    >>> answer = answer_tool_call("recall", {"handle": handle_for("t1")}, index=recall_index(graph), tokenizer=HeuristicCounter())
    >>> print(answer.text)
    [h:mkfutwln: original of tool cat, page 1 of 1; arguments {}]
    all the lines
    >>> answer_tool_call("recall", '{"handle": "h:mkfutwln"}', index=recall_index(graph), tokenizer=HeuristicCounter()).is_error
    True
    """
    if name in (RECALL, SEARCH_HISTORY) and not isinstance(arguments, Mapping):
        # Arguments a caller passed as they came (JSON text, a list): an answer, not a raise.
        return not_an_object(name, arguments)
    if name == RECALL:
        return answer_recall(
            index, arguments, tokenizer=tokenizer, page_tokens=page_tokens, max_chars=max_chars
        )
    if name == SEARCH_HISTORY:
        return answer_search(search, arguments, max_chars=max_chars)
    return _error(
        f"unknown tool {_echo(name)}; the recall tools are {RECALL!r} and {SEARCH_HISTORY!r}"
    )
