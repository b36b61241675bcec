"""Full-text queries in SQLite FTS5 syntax, translated to a PostgreSQL ``tsquery``.

One query language for both stores: words (implicit AND), ``AND``, ``OR``, ``NOT``,
parentheses, ``"quoted phrases"`` and ``prefix*``. Column filters and ``NEAR`` are
refused as `BadQuery` rather than half-supported.
"""

from __future__ import annotations

import re

import attrs

from ctxrules.store.postgres.words import split_words

_TOKEN = re.compile(r'\s*(?:(?P<string>"(?:[^"]|"")*")|(?P<bare>[\w\x80-\U0010ffff]+)|(?P<op>.))')


@attrs.frozen
class Translated:
    """A query as a ``tsquery`` text, with the words and prefixes a snippet brackets."""

    tsquery: str
    terms: frozenset[str]
    prefixes: frozenset[str]


#: What a phrase with no words translates to; a query of nothing else matches nothing.
EMPTY = "''"
#: The head of a long query word that is looked for (PostgreSQL's lexemes stop at 2,047 bytes).
WORD_CHARS = 500


class QuerySyntaxError(ValueError):
    """The query is not valid FTS5 syntax (the message says near what)."""


class _Parser:
    def __init__(self, query: str) -> None:
        self.tokens: list[tuple[str, str]] = []
        at = 0
        while at < len(query):
            match = _TOKEN.match(query, at)
            if match is None or match.end() == at:
                break
            at = match.end()
            kind = match.lastgroup or "op"
            self.tokens.append((kind, match.group(kind)))
        self.at = 0
        self.terms: set[str] = set()
        self.prefixes: set[str] = set()

    def peek(self) -> tuple[str, str] | None:
        return self.tokens[self.at] if self.at < len(self.tokens) else None

    def fail(self) -> QuerySyntaxError:
        token = self.peek()
        near = token[1] if token is not None else ""
        return QuerySyntaxError(f'syntax error near "{near}"')

    def parse(self) -> str:
        if not self.tokens:
            raise self.fail()
        expr = self.or_expr()
        if self.peek() is not None:
            raise self.fail()
        return expr

    def or_expr(self) -> str:
        parts = [self.and_expr()]
        while self.peek() == ("bare", "OR"):
            self.at += 1
            parts.append(self.and_expr())
        parts = [part for part in parts if part != EMPTY] or [EMPTY]
        return parts[0] if len(parts) == 1 else "(" + " | ".join(parts) + ")"

    def and_expr(self) -> str:
        parts = [self.not_expr()]
        while (token := self.peek()) is not None and token not in (("bare", "OR"), ("op", ")")):
            if token == ("bare", "AND"):
                self.at += 1
            parts.append(self.not_expr())
        # A phrase with no words constrains nothing beside others (and is no tsquery).
        parts = [part for part in parts if part != EMPTY] or [EMPTY]
        return parts[0] if len(parts) == 1 else "(" + " & ".join(parts) + ")"

    def not_expr(self) -> str:
        expr = self.primary()
        while self.peek() == ("bare", "NOT"):
            self.at += 1
            excluded = self.primary()
            if EMPTY not in (expr, excluded):
                expr = f"({expr} & !{excluded})"
        return expr

    def primary(self) -> str:
        token = self.peek()
        if token is None or (token[1] in ("AND", "OR", "NOT", "NEAR") and token[0] == "bare"):
            raise self.fail()
        kind, text = token
        self.at += 1
        if (kind, text) == ("op", "("):
            expr = self.or_expr()
            if self.peek() != ("op", ")"):
                raise self.fail()
            self.at += 1
            return expr
        if kind == "op":
            self.at -= 1
            raise self.fail()
        if self.peek() == ("op", ":"):
            raise QuerySyntaxError(f"no such column: {text}")
        found = split_words(text[1:-1].replace('""', '"') if kind == "string" else text)
        prefix = self.peek() == ("op", "*")
        if prefix:
            self.at += 1
        return self.phrase(found, prefix=prefix)

    def phrase(self, found: list[str], *, prefix: bool) -> str:
        if not found:
            # A phrase with no words (a quoted "-") constrains nothing.
            return EMPTY
        # PostgreSQL indexes no word past 2,047 bytes; a longer one is looked for by its head.
        found = [word[:WORD_CHARS] for word in found]
        self.terms.update(found[:-1] if prefix else found)
        if prefix:
            self.prefixes.add(found[-1])
        quoted = [f"'{word}'" for word in found]
        if prefix:
            quoted[-1] += ":*"
        return quoted[0] if len(quoted) == 1 else "(" + " <-> ".join(quoted) + ")"


def translate(query: str) -> Translated:
    """The ``tsquery`` for an FTS5-syntax query; raises `QuerySyntaxError` on bad syntax.

    >>> translate('pars* NOT json').tsquery
    "('pars':* & !'json')"
    >>> translate('"json.loads" OR toml').tsquery
    "(('json' <-> 'loads') | 'toml')"
    """
    parser = _Parser(query)
    expr = parser.parse()
    return Translated(expr, frozenset(parser.terms), frozenset(parser.prefixes))
