"""Text templates for declarative rules: a few named fields, parsed once, rendered many times.

This is our own small formatter, never ``str.format`` and never ``eval``: a template can
only read the item's name, tokens, recall handle, and cut pieces of its text and arguments.
"""

from __future__ import annotations

import attrs
from returns.result import Failure, Result, Success

from ctxrules.commit import ContextItem
from ctxrules.rules.handles import item_handle
from ctxrules.rules.text import head, tail
from ctxrules.spec.errors import suggest

#: Fields that take a character count (``{head:80}``) and fields that take none.
COUNTED_FIELDS = ("head", "tail", "args")
PLAIN_FIELDS = ("name", "tokens", "handle")
#: The widest ``{head:N}`` a template may ask for: far past any item, and a number ``int``
#: reads at once (5,000 digits was an internal fault).
MAX_WIDTH = 10_000_000
FIELD_FORMS = ("{name}", "{tokens}", "{handle}", "{head:N}", "{tail:N}", "{args:N}")


@attrs.frozen
class TextPart:
    """Literal text, braces already unescaped."""

    text: str


@attrs.frozen
class FieldPart:
    """A field: ``name``, ``tokens`` or ``handle``, or ``head``/``tail``/``args`` with a character count."""

    name: str
    chars: int | None = None


@attrs.frozen
class TemplateProblem:
    """Why a template was refused: what was expected where, and what was found."""

    expected: str
    found: str
    suggestion: str | None = None


@attrs.frozen
class Template:
    """A parsed template; `render` fills it from one item.

    >>> t = parse_template("[{name} output cleared: was {tokens} tokens]").unwrap()
    >>> t
    Template(source='[{name} output cleared: was {tokens} tokens]')
    >>> t.render(ContextItem("n", "tool", tool_name="grep", tokens=2400))
    '[grep output cleared: was 2400 tokens]'
    """

    source: str
    parts: tuple[TextPart | FieldPart, ...] = attrs.field(repr=False)

    def render(self, item: ContextItem) -> str:
        """The template filled from ``item``'s current text, arguments, name and tokens."""
        return "".join(
            part.text if isinstance(part, TextPart) else _field(part, item) for part in self.parts
        )


def _field(part: FieldPart, item: ContextItem) -> str:
    chars = part.chars or 0
    if part.name == "name":
        return item.tool_name or item.role.value
    if part.name == "tokens":
        return str(item.tokens)
    if part.name == "handle":
        return item_handle(item)
    if part.name == "head":
        return head(item.rendered, chars)
    if part.name == "tail":
        return tail(item.rendered, chars)
    return head(item.arguments, chars)


def parse_template(source: str) -> Result[Template, TemplateProblem]:
    """The template, or the first problem with it (positions are 0-based offsets).

    ``{{`` and ``}}`` are literal braces.

    >>> parse_template("{{{head:3}}}").unwrap().render(ContextItem("n", "user", rendered="hello"))
    '{hel…}'
    >>> parse_template("{item.rendered}").failure()
    TemplateProblem(expected='a plain field name at position 0 (no attribute access)', found="'{item.rendered}'", suggestion=None)
    """
    parts: list[TextPart | FieldPart] = []
    text: list[str] = []
    position = 0
    while position < len(source):
        char = source[position]
        if char in "{}" and source.startswith(char * 2, position):
            text.append(char)
            position += 2
        elif char == "}":
            return Failure(
                TemplateProblem(f"'}}}}' for a literal brace at position {position}", "a lone '}'")
            )
        elif char == "{":
            end = _field_end(source, position)
            if isinstance(end, TemplateProblem):
                return Failure(end)
            field = _parse_field(source[position + 1 : end], position)
            if isinstance(field, TemplateProblem):
                return Failure(field)
            if text:
                parts.append(TextPart("".join(text)))
                text = []
            parts.append(field)
            position = end + 1
        else:
            text.append(char)
            position += 1
    if text:
        parts.append(TextPart("".join(text)))
    return Success(Template(source, tuple(parts)))


def _field_end(source: str, start: int) -> int | TemplateProblem:
    for position in range(start + 1, len(source)):
        if source[position] == "}":
            return position
        if source[position] == "{":
            expected = f"'}}' closing the field opened at position {start}"
            return TemplateProblem(expected, f"'{{' at position {position}")
    return TemplateProblem(
        f"'}}' closing the field opened at position {start}", "the end of the template"
    )


_FORBIDDEN = {".": "no attribute access", "[": "no index access", "!": "no conversions"}


def _parse_field(body: str, start: int) -> FieldPart | TemplateProblem:
    found = repr("{" + body + "}")
    name_end = next((i for i, c in enumerate(body) if c in ".[!:"), len(body))
    name, rest = body[:name_end], body[name_end:]
    problem = _name_problem(name, rest, start, found)
    if problem is not None:
        return problem
    spec = rest[1:] if rest else None
    if name in PLAIN_FIELDS:
        if spec is None:
            return FieldPart(name)
        return TemplateProblem(f"{{{name}}} without a format spec at position {start}", found)
    if spec is None or not spec.isascii() or not spec.isdigit():
        expected = f"a character count at position {start} ({{{name}:N}} with N a whole number)"
        return TemplateProblem(expected, found)
    if len(spec.lstrip("0")) > len(str(MAX_WIDTH)) or int(spec) > MAX_WIDTH:
        expected = f"a character count of at most {MAX_WIDTH:,} at position {start}"
        return TemplateProblem(expected, f"{found[:40]}… ({len(spec)} digits)")
    return FieldPart(name, int(spec))


def _name_problem(name: str, rest: str, start: int, found: str) -> TemplateProblem | None:
    forms = ", ".join(FIELD_FORMS)
    if not name:
        return TemplateProblem(f"a field name at position {start} (one of {forms})", found)
    if rest[:1] in _FORBIDDEN:
        return TemplateProblem(
            f"a plain field name at position {start} ({_FORBIDDEN[rest[:1]]})", found
        )
    if name not in COUNTED_FIELDS + PLAIN_FIELDS:
        close = suggest(name, COUNTED_FIELDS + PLAIN_FIELDS)
        return TemplateProblem(f"a known field at position {start} (one of {forms})", found, close)
    return None
