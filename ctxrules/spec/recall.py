"""The spec's optional ``[recall]`` table: whether the model gets the recall tools, and their limits."""

from __future__ import annotations

from typing import Any

import attrs
from returns.result import Failure, Result, Success

from ctxrules.spec.errors import Location, SpecError, SpecErrors, describe, quoted, suggest
from ctxrules.spec.source import SpecSource, label, read_document

#: The keys of ``[recall]`` and what each holds.
RECALL_KEYS = ("tools", "page_tokens", "offload_chars")


@attrs.frozen
class RecallOptions:
    """``tools``: offer ``recall`` and ``search_history`` to the model (off unless the spec says).

    ``page_tokens`` bounds one recalled page; ``offload_chars`` is the size from which
    `ctxrules.recall.offload` keeps a tightened result's original (a stored session needs none).
    """

    tools: bool = False
    page_tokens: int = 2000
    offload_chars: int = 4000


def check_recall(doc: dict[str, Any], root: Location) -> list[SpecError]:
    """Every fault in the document's ``[recall]`` table (none when it has none)."""
    table = doc.get("recall", {})
    where = root.key("recall")
    if not isinstance(table, dict):
        return [where.error("a table of recall options", describe(table), "wrong_type")]
    errors = [
        where.key(key).error(
            f"a recall option (one of {quoted(RECALL_KEYS)})",
            repr(key),
            "unknown_name",
            suggest(key, RECALL_KEYS),
        )
        for key in table
        if key not in RECALL_KEYS
    ]
    if "tools" in table and not isinstance(table["tools"], bool):
        errors.append(
            where.key("tools").error("true or false", describe(table["tools"]), "wrong_type")
        )
    for key in ("page_tokens", "offload_chars"):
        value = table.get(key, 1)
        if type(value) is not int:
            errors.append(where.key(key).error("an integer >= 1", describe(value), "wrong_type"))
        elif value < 1:
            errors.append(where.key(key).error("an integer >= 1", repr(value), "out_of_bounds"))
    return errors


def recall_options(source: SpecSource) -> Result[RecallOptions, SpecErrors]:
    r"""The ``[recall]`` options of a spec (defaults when it has none), or every fault in them.

    >>> recall_options('[recall]\ntools = true').unwrap()
    RecallOptions(tools=True, page_tokens=2000, offload_chars=4000)
    >>> print(recall_options('[recall]\ntool = true').failure())
    <string>: recall.tool: expected a recall option (one of 'tools', 'page_tokens', 'offload_chars'), found 'tool' (did you mean 'tools'?)
    """
    document = read_document(source)
    if isinstance(document, Failure):
        return Failure(SpecErrors((document.failure(),)))
    doc = document.unwrap()
    errors = check_recall(doc, Location(label(source)))
    if errors:
        return Failure(SpecErrors(tuple(errors)))
    table = doc.get("recall", {})
    return Success(RecallOptions(**{k: table[k] for k in RECALL_KEYS if k in table}))
