"""The entry points: import a log's text or file, format detected or given; never raises."""

from __future__ import annotations

import os
from pathlib import Path

from returns.result import Failure, Result

from ctxrules.importers.claude_code import import_claude_code
from ctxrules.importers.ctxrules_jsonl import import_ctxrules_jsonl
from ctxrules.importers.detect import sniff
from ctxrules.importers.formats import FORMATS, Format, is_format, unknown_format
from ctxrules.importers.langchain import import_langchain
from ctxrules.importers.openai_chat import import_openai_chat
from ctxrules.importers.records import Unreadable, parse_json
from ctxrules.importers.result import ImportFailure, ImportResult


def _argument_problem(
    text: object, format_: object, source: object, skip_bad: object
) -> str | None:
    if not isinstance(text, str):
        return f"text: expected a str, found {type(text).__name__} (decode bytes as UTF-8 first)"
    if format_ is not None and not is_format(format_):
        return unknown_format(format_)
    if not isinstance(source, str):
        return f"source_name={source!r}: expected a str"
    if not isinstance(skip_bad, bool):
        return f"skip_bad={skip_bad!r}: expected True or False"
    return None


def _import(
    text: str, format_: Format | None, source: str, skip_bad: bool
) -> Result[ImportResult, ImportFailure]:
    if not text.strip():
        return Failure(ImportFailure(source, "empty input: nothing to import"))
    document: object = None
    if format_ is None:
        sniffed = sniff(text)
        if sniffed.format is None:
            reason = (
                f"cannot detect the format: {sniffed.hint}; pass format= one of {list(FORMATS)}"
            )
            return Failure(ImportFailure(source, reason))
        format_, document = sniffed.format, sniffed.document
    if format_ == "claude-code":
        return import_claude_code(text, source=source, skip_bad=skip_bad)
    if format_ == "ctxrules-jsonl":
        return import_ctxrules_jsonl(text, source=source, skip_bad=skip_bad)
    if document is None:
        document = parse_json(text)
        if isinstance(document, Unreadable):
            # A JSON document that does not parse has no records to keep.
            return Failure(ImportFailure(source, document.reason, document.line))
    reader = import_openai_chat if format_ == "openai-chat" else import_langchain
    return reader(document, source=source, skip_bad=skip_bad)


def import_text(
    text: str,
    *,
    format: str | None = None,  # noqa: A002 - the name users know from the CLI's --format
    source_name: str = "<text>",
    skip_bad: bool = False,
) -> Result[ImportResult, ImportFailure]:
    r"""Import a log from its text; ``format`` None detects it, ``skip_bad`` goes past bad records.

    >>> line = '{"type": "user", "uuid": "u1", "parentUuid": null, "message": {"content": "hi"}}'
    >>> result = import_text(line + "\n[1]\n", skip_bad=True).unwrap()
    >>> result.format, result.session.head, [str(bad) for bad in result.stats.bad_records]
    ('claude-code', 'u1', ['line 2: expected a JSON object, found a list'])
    >>> print(import_text(line + "\n[1]\n").failure())
    <text>: line 2: expected a JSON object, found a list
    """
    try:
        problem = _argument_problem(text, format, source_name, skip_bad)
        if problem is not None:
            return Failure(ImportFailure(str(source_name), problem))
        chosen = format if is_format(format) else None
        return _import(text, chosen, source_name, skip_bad)
    except Exception as err:  # noqa: BLE001 - the public API never raises; a bug becomes a value
        return Failure(
            ImportFailure(str(source_name), f"internal error: {type(err).__name__}: {err}")
        )


def import_session(
    path: str | os.PathLike[str],
    *,
    format: str | None = None,  # noqa: A002 - see import_text
    skip_bad: bool = False,
) -> Result[ImportResult, ImportFailure]:
    """Import a log file (UTF-8); the failure names the file, the line and what was wrong."""
    try:
        source = os.fspath(path)
        text = Path(source).read_text(encoding="utf-8-sig")
    except OSError as err:
        return Failure(ImportFailure(str(path), f"cannot read the file: {err.strerror or err}"))
    except UnicodeDecodeError as err:
        return Failure(
            ImportFailure(str(path), f"not UTF-8 text: {err.reason} at byte {err.start}")
        )
    except Exception as err:  # noqa: BLE001 - e.g. a path of the wrong type; never raise
        return Failure(ImportFailure(repr(path), f"cannot read the file: {err}"))
    return import_text(text, format=format, source_name=source, skip_bad=skip_bad)
