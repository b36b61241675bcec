"""References: the distinctive strings of a text (paths, identifiers, hashes, code, error lines).

A reference is a string a model could only have written by reading it somewhere: a file
path, a ``snake_case``/``CamelCase``/dotted name, a hex hash, a quoted code span, an error
line. English words, boilerplate and standard-library or builtin names are kept out by
structural rules (a minimum length; a non-letter or an internal capital) and a small stop
list. The rules are written out in docs/replay.md; this module is deliberately independent
of the rules' own reference tracker (`ctxrules.rules.references`), which the rules use to
decide what to keep: measuring with the code being measured would be circular.
"""

from __future__ import annotations

import builtins
import re
import string
import sys
from collections.abc import Iterable, Iterator, Sequence
from itertools import chain

import attrs

from ctxrules.rules.text import ascii_runs, byte_table, plain_words

#: Shortest reference, in characters (hashes need more: `HEX_MIN`).
MIN_CHARS = 4
#: Shortest hex hash or id (a git short hash has 7).
HEX_MIN = 7
#: Longest quoted code span or error line taken whole.
MAX_LINE_CHARS = 240
#: Digits a number with a unit needs to count (``12345ms`` does, ``200ms`` does not).
MEASURE_DIGITS = 5
#: Most segments of a path or parts of a dotted name expanded into their runs.
MAX_PARTS = 8

#: Candidate tokens: ASCII letters, digits and the characters paths and names are made of.
_TOKEN = re.compile(r"[A-Za-z0-9_./~@+\-]+")
#: `_TOKEN`'s characters, for `ascii_runs` (the same runs, found several times faster).
_TOKEN_BYTES = byte_table(string.ascii_letters + string.digits + "_./~@+-")
_URL = re.compile(r"https?://[^\s'\"<>()\[\]{}`]+")
_HEX = re.compile(r"(?:[0-9a-f]{7,}|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})")
_VERSION = re.compile(r"v?\d+(?:\.\d+){2,}")
_MEASURE = re.compile(r"\d+(?:\.\d+)?[A-Za-z%]{1,4}")
_LETTER = re.compile(r"[A-Za-z]")
_ESCAPE = re.compile(r"\\[nrt]")
_CODE_CHAR = re.compile(r"[_0-9]")
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_SNAKE = re.compile(r"[A-Za-z0-9]_+[A-Za-z0-9]")
_CAMEL = re.compile(r"[a-z0-9][A-Z]|[A-Z]{2}[a-z]")
_EXTENSION = re.compile(r"[a-z0-9]{1,6}")
_SPAN = re.compile(r"(?<!`)`([^`\n]+)`(?!`)")
_ERROR_LINE = re.compile(
    r"^\s*(?:E\s+|>\s*)?"
    r"((?:[A-Za-z_][\w.]*(?:Error|Exception|Warning|Failure)|error|Error|ERROR|fatal|FATAL"
    r"|panic|FAILED|FAIL|Traceback)\b.*\S)",
    re.MULTILINE,
)
#: What every match of `_ERROR_LINE` holds (the pattern ignores no case).
_ERROR_WORDS = (
    "Error", "Exception", "Warning", "Failure", "error", "ERROR", "fatal", "FATAL", "panic",
    "FAIL", "Traceback",
)  # fmt: skip
#: A multi-word span needs at least this many characters to count.
_SPAN_MIN = 8

#: Names every program text is full of: builtins (exceptions included), a few names of other
#: languages' standard libraries, brands written in CamelCase, and encodings.
STOP_NAMES = frozenset(
    [name for name in dir(builtins) if not name.startswith("_")]
    + [
        "console.log",
        "console.error",
        "JSON.parse",
        "JSON.stringify",
        "Object.keys",
        "Promise.all",
        "fmt.Println",
        "fmt.Printf",
        "fmt.Sprintf",
        "fmt.Errorf",
        "GitHub",
        "JavaScript",
        "TypeScript",
        "PostgreSQL",
        "MySQL",
        "SQLite",
        "OpenAI",
        "macOS",
        "YouTube",
        "LinkedIn",
        "PyPI",
        "iPhone",
        "utf-8",
        "UTF-8",
        "sha-256",
        "/dev/null",
        "/usr/bin/env",
        "/bin/bash",
        "/bin/sh",
        "/tmp",  # noqa: S108 - a name to leave out, not a file anything opens
        "/usr",
        "/etc",
    ]
)
#: First parts of a dotted name that make it a standard-library (or ``self``) name.
STDLIB_ROOTS = frozenset(sys.stdlib_module_names) | {"self", "cls", "this", "super"}


def _trim(token: str) -> str:
    # Sentence punctuation and a trailing slash are not part of the name.
    token = token.rstrip(".-/~+@")
    if token.startswith("//"):
        # A comment marker (``//nolint``) or a scheme-less URL's start, not a rooted path.
        token = token.lstrip("/")
    return token.lstrip("+@~") if not token.startswith("~/") else token


def _has_letter(text: str) -> bool:
    return _LETTER.search(text) is not None


def _is_hex(token: str) -> bool:
    return (
        len(token) >= HEX_MIN
        and _HEX.fullmatch(token) is not None
        and any(c.isdigit() for c in token)
        and any("a" <= c <= "f" for c in token)
    )


def _is_name(token: str) -> bool:
    """An identifier in snake_case (underscore between letters or digits) or CamelCase."""
    return _IDENT.fullmatch(token) is not None and (
        _SNAKE.search(token) is not None or _CAMEL.search(token) is not None
    )


def _is_path(token: str) -> bool:
    parts = [p for p in token.split("/") if p]
    if not parts or not any(_has_letter(p) for p in parts):
        return False
    if token.startswith("/") and len(parts) == 1:
        # ``/span`` of ``</span>``, ``[/bold]``: a closing tag, unless a file or a name.
        return "." in parts[0] or is_distinctive(parts[0])
    rooted = token.startswith(("/", "./", "../", "~/"))
    # ``and/or``, ``input/output`` are English; a file name or a code-like segment is not.
    named = "." in parts[-1].strip(".") or _CODE_CHAR.search(token) is not None
    return rooted or len(parts) >= 3 or named


def _is_dotted(token: str) -> bool:
    parts = token.split(".")
    if any(not p for p in parts[1:]) or not _has_letter(token):
        return False
    if parts[0] in STDLIB_ROOTS:
        # ``self.max_chars``: the rest may still be distinctive on its own.
        rest = ".".join(parts[1:])
        return parts[0] in {"self", "cls", "this"} and is_distinctive(rest)
    if not parts[0]:
        # ``.env.local``, ``.eslintrc.json``; a bare ``.values`` is a method, ``.gitignore`` a word.
        return len(parts) > 2 or is_distinctive(parts[1])
    # ``t.Logf``, ``b.query``: a one-letter receiver is a local variable, not a name to cite.
    names = len(parts[0]) > 1 and all(_IDENT.fullmatch(p) for p in parts)
    extension = _EXTENSION.fullmatch(parts[-1]) is not None and _has_letter(parts[-1])
    return names or (extension and all(re.fullmatch(r"[\w\-]+", p) for p in parts[:-1]))


def _is_flag(token: str) -> bool:
    rest = token.lstrip("-")
    return len(rest) >= MIN_CHARS and _has_letter(rest) and ("-" in rest or "_" in rest)


def _is_kebab(token: str) -> bool:
    """Words joined by hyphens with a digit among them (``gpt-4o``); plain compounds are English."""
    return (
        re.fullmatch(r"[A-Za-z0-9]+(?:-[A-Za-z0-9]+)+", token) is not None
        and any(c.isdigit() for c in token)
        and _has_letter(token)
    )


def is_distinctive(token: str) -> bool:
    """Whether one token (no whitespace) is a reference by the structural rules and the stop list.

    >>> [t for t in ["parse_config", "ContextItem", "966e0df2", "src/app/main.py", "setup.py",
    ...   "ctxrules.engine", "os.path.join", "ValueError", "hello", "and/or", "--no-verify",
    ...   "v0.4.3", "__init__", "TODO"] if is_distinctive(t)]
    ['parse_config', 'ContextItem', '966e0df2', 'src/app/main.py', 'setup.py', 'ctxrules.engine', '--no-verify', 'v0.4.3']
    """
    if len(token) < MIN_CHARS or token in STOP_NAMES or token.lower() in STOP_NAMES:
        return False
    if token.isalpha():
        # Most tokens of any text are words: only an internal capital makes one a name.
        return _CAMEL.search(token) is not None
    if _VERSION.fullmatch(token) or _is_hex(token):
        return True
    if _MEASURE.fullmatch(token):
        # A number with a unit (``1.5rem``, ``200ms``) is everyday; a long one is specific.
        return sum(c.isdigit() for c in token) >= MEASURE_DIGITS
    return _has_letter(token) and _shaped(token)


def _shaped(token: str) -> bool:
    """Whether a token with a letter has the shape of a flag, a path, a dotted name or a name."""
    if token.startswith("-"):
        return _is_flag(token)
    if "/" in token:
        return _is_path(token)
    if "." in token:
        return _is_dotted(token)
    return _is_name(token) or _is_kebab(token)


#: What one scan of a text finds: its URLs and its candidate words, raw, each once, in order.
Scan = tuple[tuple[str, ...], tuple[str, ...]]


def _scan(text: str) -> Scan:
    urls, words = _words_apart(text)
    return urls, tuple(dict.fromkeys(ascii_runs(words, _TOKEN_BYTES)))


def _words_apart(text: str) -> tuple[tuple[str, ...], str]:
    """The text's URLs, each once, and the text with them and its escapes blanked (the words)."""
    # An escaped newline or tab in quoted code (``"\\nDone"``) ends the word before it.
    # Logs repeat their tokens: each distinct one is judged once. A pass that cannot match
    # (no ``http``, no backslash: a substring test in C) is skipped; most texts have neither.
    urls: tuple[str, ...] = ()
    words = text
    if "http" in words:
        urls = tuple(dict.fromkeys(_URL.findall(text)))
        words = _URL.sub(" ", words)
    if "\\" in words:
        words = _ESCAPE.sub(" ", words)
    return urls, words


#: The characters a token's runs and trims cut at (`_trim`, `_runs`): blanked, what is left
#: of a token are its pieces.
_CUTS = str.maketrans(dict.fromkeys("/.~+@-", " "))
#: `_TOKEN_BYTES` without the cut characters: the runs it keeps are the words' pieces.
_PIECE_BYTES = byte_table(string.ascii_letters + string.digits + "_")


def pieces(text: str) -> set[str]:
    """The pieces of every word and URL of ``text``: what they hold between cut characters.

    Every piece of an atom of the text (`atoms`, `pieces_of`) is one of them, so a text
    without one of an atom's pieces cannot hold it: a test in C, no word judged.

    >>> sorted(pieces("see src/app_main.py and https://x.org/a?b=1;"))
    ['a?b=1', 'and', 'app_main', 'https:', 'org', 'py', 'see', 'src', 'x']
    """
    urls, words = _words_apart(text)
    found = set(ascii_runs(words, _PIECE_BYTES))
    for url in urls:
        found.update(pieces_of(url.rstrip(".,;:")))
    return found


def pieces_of(atom: str) -> list[str]:
    """The pieces of one atom (`pieces`)."""
    return atom.translate(_CUTS).split()


@attrs.define
class TokenMemo:
    """What the extractor already read, for one reader (a replay's index) across many texts.

    ``judged`` is `is_distinctive` by token; ``raw`` the token a raw word trims to (empty
    when it is not distinctive), so a word met again costs one lookup. ``scans`` counts the
    texts scanned (work counted, for the tests that guard it).
    """

    judged: dict[str, bool] = attrs.field(factory=dict)
    raw: dict[str, str] = attrs.field(factory=dict)
    scans: int = 0
    #: Each token's parts (`atoms_of`), cut once.
    expanded: dict[str, tuple[str, ...]] = attrs.field(factory=dict)

    def scan(self, text: str) -> Scan:
        """`_scan` of ``text``, counted."""
        self.scans += 1
        return _scan(text)

    def tokens(self, texts: Iterable[str]) -> Iterator[str]:
        """`_tokens` of the texts joined by newlines (no token spans a newline), each scanned once.

        Every word is judged (`_learn`) before the words are read, so the words that are no
        reference are skipped by a lookup in C, not a step of Python per word.
        """
        urls, words = self._joined(texts)
        self._learn(words)
        return chain(
            (url.rstrip(".,;:") for url in urls), filter(None, map(self.raw.__getitem__, words))
        )

    def atoms(self, texts: Sequence[str]) -> set[str]:
        """`atoms_of` the `tokens` of the texts: the keys `HistoryIndex` files them under."""
        return atoms_of(self.tokens(texts), self.judged, self.expanded)

    def distinctive(self, token: str) -> bool:
        """`is_distinctive`, remembered."""
        return _judge(token, self.judged)

    def _learn(self, words: Iterable[str]) -> None:
        """Judge the raw words not met before: the plain ones (`plain_words`) in one pass over them all."""
        raw = self.raw
        new = set(words).difference(raw)
        if not new:
            return
        plain = plain_words(new)
        raw.update(dict.fromkeys(plain, ""))
        for word in new.difference(plain):
            token = _trim(word)
            raw[word] = token if _judge(token, self.judged) else ""

    def _joined(self, texts: Iterable[str]) -> Scan:
        """The scans of the texts as one: their URLs and their words, each once, in order."""
        scans = [self.scan(text) for text in texts]
        if len(scans) == 1:
            return scans[0]
        urls = dict.fromkeys(chain.from_iterable(found[0] for found in scans))
        words = dict.fromkeys(chain.from_iterable(found[1] for found in scans))
        return tuple(urls), tuple(words)


def _tokens(
    text: str, judged: dict[str, bool] | None = None, raw: dict[str, str] | None = None
) -> Iterator[str]:
    """Every distinctive token of ``text``, URLs whole, in order of first appearance, once each.

    ``judged`` remembers `is_distinctive` by token across calls (an index passes its own),
    ``raw`` what each raw word trims to when distinctive (``""`` when not).
    """
    return _distinctive(_scan(text), judged, raw)


def _distinctive(
    found: Scan, judged: dict[str, bool] | None, raw: dict[str, str] | None
) -> Iterator[str]:
    urls, words = found
    for url in urls:
        yield url.rstrip(".,;:")
    for word in words:
        if raw is None:
            token = _trim(word)
            if _judge(token, judged):
                yield token
            continue
        known = raw.get(word)
        if known is None:
            token = _trim(word)
            known = raw[word] = token if _judge(token, judged) else ""
        if known:
            yield known


def _judge(token: str, judged: dict[str, bool] | None) -> bool:
    if judged is None:
        return is_distinctive(token)
    known = judged.get(token)
    if known is None:
        known = judged[token] = is_distinctive(token)
    return known


def _multiword(text: str, judged: dict[str, bool] | None = None) -> Iterator[str]:
    """Quoted code spans with whitespace in them, and error lines, each holding a distinctive token."""
    # A pattern is run only on a text holding what every match of it holds: a backtick, or
    # one of the words an error line starts with (most texts hold neither).
    found_spans = _SPAN.findall(text) if "`" in text else ()
    found_lines = _ERROR_LINE.findall(text) if any(w in text for w in _ERROR_WORDS) else ()
    spans = (found.strip() for found in found_spans)
    lines = (found.strip().strip("`").strip() for found in found_lines)
    for whole in (*spans, *lines):
        if " " in whole and _SPAN_MIN <= len(whole) <= MAX_LINE_CHARS and key_tokens(whole, judged):
            yield whole


def references(text: str) -> tuple[str, ...]:
    r"""The references a text holds, in order of first appearance, without repeats.

    >>> references("Fixed `parse_config` in src/app/config.py (see 966e0df2); the Error was hello.")
    ('parse_config', 'src/app/config.py', '966e0df2')
    >>> references("it failed:\nTypeError: load() got an unexpected keyword argument 'strict_mode'")
    ('strict_mode', "TypeError: load() got an unexpected keyword argument 'strict_mode'")
    """
    return tuple(dict.fromkeys([*_tokens(text), *_multiword(text)]))


def references_read(text: str, memo: TokenMemo) -> tuple[str, ...]:
    """`references` of ``text``, its words judged through ``memo`` (a replay's, across replies)."""
    return tuple(dict.fromkeys([*memo.tokens((text,)), *_multiword(text, memo.judged)]))


def key_tokens(text: str, judged: dict[str, bool] | None = None) -> tuple[str, ...]:
    """The distinctive tokens inside a multi-word reference: what it is looked up by.

    ``judged`` remembers `is_distinctive` by token across calls (a replay's memo).
    """
    return tuple(dict.fromkeys(_tokens(text, judged)))


def _runs(token: str, sep: str) -> Iterator[str]:
    # Each suffix and prefix of the parts: a later mention names a file by its end
    # (``src/x.py``, ``x.py``) or a folder by its start.
    parts = [p for p in token.split(sep) if p][-MAX_PARTS:]
    for cut in range(len(parts)):
        yield sep.join(parts[cut:])
        yield sep.join(parts[: cut + 1])


def atoms(text: str, judged: dict[str, bool] | None = None) -> set[str]:
    """The keys a history text is indexed under: its distinctive tokens and their parts.

    A path also yields each suffix and prefix of its segments (``/a/src/x.py`` →
    ``src/x.py``, ``x.py``…), a dotted name each of its parts', when distinctive itself.
    ``judged`` remembers what `is_distinctive` said of each token, across calls.

    >>> sorted(atoms("cat /repo/src/app_main.py"))
    ['/repo/src/app_main.py', 'app_main', 'app_main.py', 'repo/src/app_main.py', 'src/app_main.py']
    """
    return atoms_of(_tokens(text, judged), judged)


def atoms_of(
    tokens: Iterable[str],
    judged: dict[str, bool] | None = None,
    expanded: dict[str, tuple[str, ...]] | None = None,
) -> set[str]:
    """`atoms` of a text whose distinctive tokens (`_tokens`) are ``tokens``.

    ``expanded`` remembers each token's parts across calls (an index passes its own): a
    path named in many texts is cut into its runs once.
    """
    found: set[str] = set()
    for token in tokens:
        if token in found:
            continue
        found.add(token)
        found.update(_parts(token, judged, expanded))
    return found


def _parts(
    token: str, judged: dict[str, bool] | None, expanded: dict[str, tuple[str, ...]] | None
) -> tuple[str, ...]:
    """The distinctive runs of a path's segments, and of each dotted name's parts among them."""
    known = expanded.get(token) if expanded is not None else None
    if known is not None:
        return known
    if "/" in token:
        names = tuple(run for run in _runs(token, "/") if _judge(run, judged))
        dotted = (
            _parts(name, judged, expanded) for name in names if "." in name and "/" not in name
        )
        parts = names + tuple(part for found in dotted for part in found)
    elif "." in token:
        parts = tuple(run for run in _runs(token, ".") if _judge(run, judged))
    else:
        parts = ()
    if expanded is not None:
        expanded[token] = parts
    return parts
