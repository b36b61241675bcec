"""A long node output stored beside its row, as its canonical JSON text in packed pieces.

SQLite copies a value several times to write it (the bound text, the record, the JSON
check's parse): a 50 MB output in a node row made one write grow the process by ~200 MB.
An output whose text is longer than `OUTPUT_CHUNK` goes to ``node_chunks`` (schema step 5)
in pieces of at most that size, and its row keeps every other field; each piece is one
small write. A string output is escaped piece by piece, so its whole JSON text never
exists at once. Since schema version 10 every output longer than `PACK_FROM` is stored so,
each piece packed (`ctxrules.store.packing`); pieces stored before are their text.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator

from ctxrules.canonical import canonical_json
from ctxrules.store.packing import unpack

#: The most characters of an output's JSON text in one piece.
OUTPUT_CHUNK = 1_000_000
#: Characters from which an output is stored beside its row, packed (schema version 10): a
#: tool's output is most of a node's bytes, and DEFLATE makes it about a third as long.
#: A shorter one stays in the row, where packing would save less than a piece row costs.
PACK_FROM = 512


def pieces_apart(output: object) -> Iterator[str] | None:
    """The pieces ``output`` is stored in beside its row; None when it stays in the row.

    An output stays in its row when its text (a string's characters, other JSON's
    canonical text) is shorter than `PACK_FROM`; other JSON's text is made once.

    >>> pieces_apart("x" * (PACK_FROM - 1)), len(list(pieces_apart("x" * (OUTPUT_CHUNK + 1))))
    (None, 2)
    >>> list(pieces_apart({"k": "x" * 600})) == [canonical_json({"k": "x" * 600})]
    True
    """
    if isinstance(output, str):
        return output_pieces(output) if len(output) >= PACK_FROM else None
    if isinstance(output, dict | list):
        text = canonical_json(output)
        return _cut(text, OUTPUT_CHUNK) if len(text) >= PACK_FROM else None
    return None


def output_pieces(output: object, size: int = OUTPUT_CHUNK) -> Iterator[str]:
    r"""``canonical_json(output)`` in consecutive pieces; a string's cut between characters.

    >>> list(output_pieces('a"b\ncd', 2))
    ['"a\\"', 'b\\n', 'cd"']
    >>> "".join(output_pieces({"k": "vvvv"}, 3)) == canonical_json({"k": "vvvv"})
    True
    """
    if not isinstance(output, str):
        yield from _cut(canonical_json(output), size)
        return
    last = max(len(output) - 1, 0) // size
    for number, at in enumerate(range(0, max(len(output), 1), size)):
        escaped = canonical_json(output[at : at + size])[1:-1]
        yield ('"' if number == 0 else "") + escaped + ('"' if number == last else "")


def _cut(text: str, size: int) -> Iterator[str]:
    """``text`` in consecutive pieces of at most ``size`` characters."""
    for at in range(0, len(text), size):
        yield text[at : at + size]


def joined_output(pieces: Iterable[object]) -> object:
    """The output stored as ``pieces``, each its text or packed (`ctxrules.store.packing`).

    Raises `ValueError` if a piece does not unpack or they are not JSON together.
    """
    return json.loads("".join(unpack(piece) for piece in pieces))
