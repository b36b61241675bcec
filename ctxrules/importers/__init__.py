"""Importers: real agent logs (Claude Code, OpenAI chat, LangChain, ctxrules JSON Lines) into the DAG."""

from ctxrules.importers.api import import_session, import_text
from ctxrules.importers.detect import detect_format
from ctxrules.importers.formats import FORMATS, Format
from ctxrules.importers.result import BadRecord, ImportFailure, ImportResult, ImportStats

__all__ = [
    "FORMATS",
    "BadRecord",
    "Format",
    "ImportFailure",
    "ImportResult",
    "ImportStats",
    "detect_format",
    "import_session",
    "import_text",
]
