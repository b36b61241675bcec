"""Stored rows packed: texts DEFLATEd against a fixed preset dictionary, digests in binary.

An item row's canonical JSON is a few hundred bytes, most of them the same field names
and values in every row; DEFLATE alone saves little on a text that short, and a preset
dictionary of those names makes it about a third of its size (issue 27: the items of a
real session's store, 743 kB as JSON, are 268 kB packed). The dictionary is part of the
format: a packed row starts with the version byte that names it, and a new dictionary
is a new version, never an edit of this one. A row that does not start with a known
version byte is read as the UTF-8 text it was before packing (JSON starts with ``{``).
A tree node, a list of 64-digit hex digests, is stored as 32 bytes a digest
(`pack_digests`): DEFLATE cannot shrink random digits.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence

#: The first byte of a row packed with `DICTIONARY`.
VERSION = 1
#: The first byte of a tree node row in binary (`pack_digests`).
DIGESTS = 2
#: The first byte of a commit row packed with `HEADER_DICTIONARY`.
HEADER = 3
#: What item rows repeat (field names, states, reasons, renderings' markers). Fixed forever
#: for `VERSION`; DEFLATE finds matches nearer the end of the dictionary cheaper, so the
#: names every row has come last.
DICTIONARY = (
    b" | names:  output: \xe2\x80\xa6 [recall h:] [tool Read] [tool Bash] [tool Edit] [assistant] [user] "
    b'"command":"  "file_path":"/ "reason":"tail_window" "reason":"capped" "reason":"idle" '
    b'"reason":"stale" "reason":"gated" "reason":"error" "reason":"no_gain" "merged_into":"sm_'
    b'"reason":"compacted","rendered":"[tool "role":"assistant" "role":"user" "state":"cleared" '
    b'"state":"summary" "state":"summarized" "state":"aged" "tool_name":null,"turn":'
    b'{"arguments":"","attached_from":null,"changed_at":1,"created_at":1,"is_anchor":false,'
    b'"locked":false,"merged_into":null,"reason":"new","rendered":"","role":"tool",'
    b'"source_node_id":"tool:","state":"full","tokens":,"tool_call_id":"","tool_name":"","turn":0}'
)
#: What commit rows repeat: the header's field names and the built-in rules' mark names.
#: Fixed forever for `HEADER`, as `DICTIONARY` is for `VERSION`.
HEADER_DICTIONARY = (
    b'"marks":{"age_tool_results:","batch:count":,"batch:items":,"batch:turn":,"batch:why":,'
    b'"cap_tool_result:","clear_idle:","gate_tool_results:","summary":"","summary_at":-2,'
    b'{"added":["],"attached":[],"created_at":,"depth":,"extends":"c_","format":2,'
    b'"head_node_id":"","hidden":[[,"length":,"parent_ids":["c_"],"root":null,'
    b'"rules_version":"","session_id":"","total_tokens":'
)
_DICTIONARIES = {VERSION: DICTIONARY, HEADER: HEADER_DICTIONARY}
#: Bytes from which a text is DEFLATEd at level 1, not 6: a long tool output is packed
#: within its turn's request, and level 1 packs 5 MB of a real session's text in 42 ms
#: instead of 120 ms, 30 % larger. Shorter rows cost the dictionary's setup either way.
FAST_FROM = 65_536
_WBITS = -15  # raw DEFLATE: the version byte says what it is, no zlib header is needed


def pack(text: str, version: int = VERSION) -> bytes:
    """``text`` as a packed row: the version byte, then its UTF-8 DEFLATEd against its dictionary.

    ``version`` is `VERSION` (an item row, an output) or `HEADER` (a commit row).

    >>> unpack(pack('{"role":"tool"}')), unpack(pack('{"depth":0}', HEADER))
    ('{"role":"tool"}', '{"depth":0}')
    >>> len(pack('{"arguments":"","locked":false}')) < len('{"arguments":"","locked":false}')
    True
    """
    raw = text.encode("utf-8")
    level = 6 if len(raw) < FAST_FROM else 1
    packer = zlib.compressobj(level, zlib.DEFLATED, _WBITS, zdict=_DICTIONARIES[version])
    return bytes((version,)) + packer.compress(raw) + packer.flush()


def unpack(data: object) -> str:
    """The text of a stored row: a packed row unpacked, a text row (or its UTF-8 bytes) as it is.

    Raises `ValueError` for bytes that are neither, `TypeError` for a value not bytes or text.

    >>> unpack('{"a":1}'), unpack(b'{"a":1}'), unpack(memoryview(pack("x")))
    ('{"a":1}', '{"a":1}', 'x')
    """
    if isinstance(data, str):
        return data
    if not isinstance(data, bytes | bytearray | memoryview):
        msg = f"a stored row is {type(data).__name__}, not text or bytes"
        raise TypeError(msg)
    raw = bytes(data)
    dictionary = _DICTIONARIES.get(raw[0]) if raw else None
    if dictionary is None:
        return raw.decode("utf-8")
    unpacker = zlib.decompressobj(_WBITS, zdict=dictionary)
    try:
        text = unpacker.decompress(raw[1:]) + unpacker.flush()
    except zlib.error as err:
        msg = f"a packed row does not unpack: {err}"
        raise ValueError(msg) from None
    if not unpacker.eof or unpacker.unused_data:
        msg = "a packed row is cut short or has bytes after its end"
        raise ValueError(msg)
    return text.decode("utf-8")


def pack_digests(level: int, children: Sequence[str]) -> bytes | None:
    """A tree node as `DIGESTS`, its level byte and its children's 32-byte digests.

    None if they are not all lower-case hex SHA-256 digests (such a node is stored as text).

    >>> row = pack_digests(1, ["ab" * 32, "cd" * 32])
    >>> len(row), unpack_digests(row) == (1, ["ab" * 32, "cd" * 32])
    (66, True)
    >>> pack_digests(0, ["AB" * 32]) is None
    True
    """
    if not 0 <= level < 256:
        return None
    run = "".join(children)
    if len(run) != 64 * len(children):
        return None
    try:
        raw = bytes.fromhex(run)
    except ValueError:
        return None
    # fromhex also reads upper case and skips spaces: only a text it gives back is kept.
    return bytes((DIGESTS, level)) + raw if raw.hex() == run else None


def unpack_digests(data: bytes) -> tuple[int, list[str]]:
    """The level and child digests of a `pack_digests` row (`ValueError` if it is not one)."""
    if data[:1] != bytes((DIGESTS,)) or len(data) < 2 or (len(data) - 2) % 32:
        msg = "a tree node row is not a level and whole digests"
        raise ValueError(msg)
    run = data[2:].hex()
    return data[1], [run[at : at + 64] for at in range(0, len(run), 64)]
