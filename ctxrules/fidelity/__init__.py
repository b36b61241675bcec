"""Fidelity: what a request lets the model see of the references it goes on to use.

Pure measurement beside cost (`ctxrules.engine.replay` calls it per request): the
extractor of references (`extract`), the artifact trail (`trail`), the history index a
replay grows node by node (`index`) and the classification of one request (`measure`).
docs/replay.md gives the rules.
"""

from ctxrules.fidelity.extract import atoms, is_distinctive, references
from ctxrules.fidelity.index import HistoryIndex, Source, reply_texts
from ctxrules.fidelity.measure import (
    Fidelity,
    Hidden,
    Reach,
    SentText,
    measure,
    reply_references,
    request_text,
)
from ctxrules.fidelity.trail import written_files

__all__ = [
    "Fidelity",
    "Hidden",
    "HistoryIndex",
    "Reach",
    "SentText",
    "Source",
    "atoms",
    "is_distinctive",
    "measure",
    "references",
    "reply_references",
    "reply_texts",
    "request_text",
    "written_files",
]
