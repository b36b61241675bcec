"""Commits stored as shared objects: each item once, chunks and tree nodes by content hash.

A commit row holds its header and the digest of the root of a tree over its items. The
tree's leaves (level 0) are the in-memory vector's 64-item chunks, each stored as the list
of its items' digests; each level above lists up to 64 nodes of the level below. Nodes
are aligned by position, so a commit shares every unchanged subtree with its parent and
storing it writes only its new items and the path down to them (a few nodes of at most
64 digests), whatever the session's length. Items are stored once, under the digest the
commit id is built from. Objects are never changed or deleted, only added.

Between batch points a commit only adds items at the end of its parent's. Such a commit
is stored as an extension (``extends``: the parent's id, ``added``: the new items'
digests), not a tree: no node is rewritten for it. A chain of extensions ends at a commit
with a tree at most `MAX_CHAIN` steps back, so reading a commit reads at most that many
rows more.

The SQL is the same on both backends (`Rows`); each backend runs it in its transaction.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import NamedTuple, TypeVar

import attrs
from pyrsistent import pmap, pset
from returns.result import Failure, Result, Success

from ctxrules.canonical import canonical_json
from ctxrules.commit import ContextCommit, ContextItem, commit_from_json
from ctxrules.commit.commit import chunks_digest, digests_digest
from ctxrules.commit.item import item_digest, stored_item
from ctxrules.commit.layout import Spans
from ctxrules.commit.serialize import commit_header
from ctxrules.commit.state import State
from ctxrules.commit.vector import CHUNK, AnyChunk, Chunk, ItemVector, LazyChunk
from ctxrules.store.errors import CorruptRecord, StoreError, UnknownCommit
from ctxrules.store.packing import (
    DIGESTS,
    HEADER,
    pack,
    pack_digests,
    unpack,
    unpack_digests,
)
from ctxrules.store.rows import Rows, in_batches, placeholders

#: What `CommitReader._select` makes of each row's ``data``.
_Read = TypeVar("_Read")
#: The form of a commit row's ``data`` written now (rows without it hold their items inline).
FORMAT = 2
#: Children per tree node: the vector's chunk size, so a leaf is exactly one chunk.
FANOUT = CHUNK
#: The key under which a chunk remembers its tree digest (a pure function of its items).
_MEMO = "store.node"
#: The most extensions in a row: the next commit is stored with a tree again.
MAX_CHAIN = 16

#: Reads stored items by digest in a transaction of its own (how a lazy chunk is read later).
ItemSource = Callable[[Sequence[str]], Mapping[str, ContextItem]]


def item_row(item: ContextItem) -> str:
    """The stored form of an item: the canonical JSON its digest is the SHA-256 of."""
    return canonical_json(item.to_json())


def item_from_row(digest: str, data: str, *, check: bool = False) -> ContextItem:
    """The item a row holds; its text must hash to ``digest`` (its parse too, when ``check``).

    Hashing the text is what its digest is made of, so a changed row is always refused;
    ``check`` also rebuilds the digest from the parsed fields (a writer's own mistake).

    >>> it = ContextItem("n1", "user", rendered="hi", tokens=2)
    >>> item_from_row(it.digest, item_row(it), check=True) == it
    True
    """
    if text_digest(data) != digest:
        msg = f"item {digest[:12]} does not match its digest"
        raise ValueError(msg)
    fields = json.loads(data)
    if not isinstance(fields, dict):
        msg = f"item {digest[:12]} is not a JSON object"
        raise TypeError(msg)
    if not check:
        # The text hashes to the digest the store wrote it under: an item's own fields.
        return stored_item(fields, digest)
    item = ContextItem(**fields)
    if item_digest(item) != digest:
        msg = f"item {digest[:12]} does not read back to its digest"
        raise ValueError(msg)
    object.__setattr__(item, "_digest", digest)
    return item


def node_text(level: int, children: Sequence[str]) -> str:
    """The stored form of a tree node: ``[level, [child digests]]`` as canonical JSON.

    >>> node_text(1, ["ab", "cd"]) == canonical_json([1, ["ab", "cd"]])
    True
    >>> node_text(0, ['a"b']) == canonical_json([0, ['a"b']])
    True
    """
    # Digests are hex: joined as they are, they are their canonical JSON, built in one
    # pass (the JSON encoder took 17 us for a leaf of 64; ASCII bytes are checked in C,
    # where str.isalnum reads each character's Unicode class). Children that are not all
    # ASCII letters and digits (nothing JSON would escape) are encoded.
    run = "".join(children)
    if run.isascii() and run.encode("ascii").isalnum():
        listed = '","'.join(children)
        return f'[{int(level)},["{listed}"]]'
    return canonical_json([level, list(children)])


def tree_row(level: int, children: Sequence[str], *, packed: bool = True) -> bytes | str:
    """The stored form of a tree node: its binary digests (`pack_digests`), or its text.

    Its text (`node_text`) is what its digest hashes either way; it is stored as it is
    when a child is not a hex digest, or not ``packed`` (a schema step older than packing).

    >>> len(tree_row(0, ["ab" * 32])), tree_row(0, ["x"]), tree_row(0, ["ab"], packed=False)
    (34, '[0,["x"]]', '[0,["ab"]]')
    """
    binary = pack_digests(level, children) if packed else None
    return node_text(level, children) if binary is None else binary


#: A tree node as read: its level and child digests.
TreeFields = tuple[int, list[str]]


def tree_text(data: object) -> tuple[str, TreeFields | None]:
    """A tree node row's text, what its digest is the SHA-256 of, and its fields if binary.

    A binary row's level and children are those it was read from; a text row is parsed
    only once its digest is checked (None). Raises `ValueError` if the row is unreadable.

    >>> row = tree_row(0, ["ab" * 32])
    >>> tree_text(row) == (node_text(0, ["ab" * 32]), (0, ["ab" * 32]))
    True
    >>> tree_text('[0,["x"]]')
    ('[0,["x"]]', None)
    """
    if isinstance(data, bytes | bytearray | memoryview) and bytes(data[:1]) == bytes((DIGESTS,)):
        fields = unpack_digests(bytes(data))
        return node_text(*fields), fields
    return unpack(data), None


def commit_fields(data: object) -> object:
    """The JSON a commit row holds, from its text or packed form (`ValueError` if unreadable).

    >>> commit_fields(pack('{"depth":1}', HEADER)), commit_fields('{"depth":1}')
    ({'depth': 1}, {'depth': 1})
    """
    return json.loads(unpack(data))


def text_digest(text: str) -> str:
    """Hex SHA-256 of a stored text: a tree node's key."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class Node(NamedTuple):
    """One tree node of a commit: its digest, level, children and (for a leaf) its chunk.

    A leaf whose digest its chunk remembered has no ``children`` filled in: they are its
    chunk's item digests, read only if the leaf must be written. (A named tuple: a request
    makes one per chunk of the session, 1,563 at 100k messages.)
    """

    digest: str
    level: int
    children: tuple[str, ...]
    chunk: AnyChunk | None = None


#: A group of leaves under one node of level 1: its chunks and their leaf digests.
Group = tuple[tuple[AnyChunk, ...], tuple[str, ...]]


class KnownObjects(set[str]):
    """The digests of objects known stored (a hint), and what the last trees hashed.

    ``groups`` keeps, by position, each group of 64 leaves of the last tree built (the
    chunks and their digests) and ``uppers`` the digests of the nodes above the leaves by
    level and children: a request whose vector shares a group's chunks (the same objects)
    neither visits its leaves nor hashes again the nodes above them. Both are caches of
    pure functions; what was stored is only ever read from the digests in the set, which
    only grows: ``settled`` names the unchanged groups whose leaves were all in it.
    """

    #: Above this many remembered nodes, only the last tree's are kept.
    UPPERS = 4_096

    def __init__(self, digests: Iterable[str] = ()) -> None:
        super().__init__(digests)
        self.uppers: dict[tuple[int, tuple[str, ...]], str] = {}
        self.groups: dict[int, Group] = {}
        #: The groups (by position) whose every leaf was found known stored.
        self.settled: set[int] = set()
        #: Commits known stored, by id: their items and how many extensions they end
        #: (a commit that only adds to one of them is stored as its extension).
        self.chains: dict[str, tuple[ItemVector, int]] = {}
        #: Commits written by the transaction under way on each thread (known stored once
        #: it commits): a store with a pool may run two writes at once.
        self._pending: dict[int, dict[str, tuple[ItemVector, int]]] = {}
        self._chains_lock = threading.Lock()

    #: The most commits remembered in `chains` (an agent extends its last one or two).
    CHAINS = 8

    def remember(self, commit_id: str, items: ItemVector, depth: int) -> None:
        """Note a commit known stored (read, or written by a transaction that committed)."""
        with self._chains_lock:
            self.chains[commit_id] = (items, depth)
            while len(self.chains) > self.CHAINS:
                del self.chains[next(iter(self.chains))]

    @property
    def pending(self) -> dict[str, tuple[ItemVector, int]]:
        """The commits written by this thread's transaction under way."""
        return self._pending.setdefault(threading.get_ident(), {})

    def settle(self, *, committed: bool) -> None:
        """This thread's transaction ended: its commits are known stored, or forgotten."""
        pending = self._pending.pop(threading.get_ident(), {})
        if committed:
            for commit_id, (items, depth) in pending.items():
                self.remember(commit_id, items, depth)


class StoredChunk(LazyChunk):
    """A stored chunk not read yet: its leaf's digest (``key``) and its items' digests."""

    __slots__ = ("digests",)

    def __init__(self, key: str, digests: tuple[str, ...], load: Callable[[], Chunk]) -> None:
        super().__init__(key, len(digests), load)
        self.digests = digests


def _leaf(chunk: AnyChunk) -> Node:
    # Checked against the concrete classes first: `LazyChunk` is an abstract Sequence, whose
    # isinstance check costs a microsecond, made for every chunk of every request.
    if not isinstance(chunk, Chunk):
        # A chunk a reader left unread: its leaf digest and item digests are its tree node's.
        digests = chunk.digests if type(chunk) is StoredChunk else ()
        return Node(chunk.key, 0, digests, chunk)
    # A chunk shared with an earlier vector remembers its digest: its items are not read.
    known = chunk.memo.get(_MEMO)
    if isinstance(known, str):
        return Node(known, 0, (), chunk)
    children = tuple(item.digest for item in chunk)
    digest = text_digest(node_text(0, children))
    chunk.memo[_MEMO] = digest
    return Node(digest, 0, children, chunk)


def _leaves(chunks: list[AnyChunk], known: KnownObjects | None) -> tuple[list[str], list[Node]]:
    """Every leaf's digest, and the leaf nodes: all, or (with ``known``) those not known stored.

    A group of 64 chunks that are the same objects as in the last tree is not visited: its
    digests are remembered, and only a leaf of it not known stored is made a node again.
    """
    if known is None:
        nodes = [_leaf(chunk) for chunk in chunks]
        return [node.digest for node in nodes], nodes
    digests: list[str] = []
    nodes = []
    for start in range(0, len(chunks), FANOUT):
        group = tuple(chunks[start : start + FANOUT])
        last = known.groups.get(start)
        # Compared by identity first (a tuple compares its elements so): a shared group
        # costs one pass in C, not a node per chunk.
        if last is not None and last[0] == group:
            leaf = last[1]
            if start not in known.settled:
                fresh = [
                    Node(d, 0, (), c) for d, c in zip(leaf, group, strict=True) if d not in known
                ]
                if not fresh:
                    # Every leaf of it known stored: stored for good (objects are never
                    # deleted), so while it is unchanged its leaves are not asked for again.
                    known.settled.add(start)
                nodes += fresh
        else:
            leaf = tuple(_changed_group(group, last, known, nodes))
            known.groups[start] = (group, leaf)
            known.settled.discard(start)
        digests += leaf
    return digests, nodes


def _changed_group(
    group: tuple[AnyChunk, ...], last: Group | None, known: KnownObjects, nodes: list[Node]
) -> Iterator[str]:
    """The leaf digests of a group that changed since the last tree; its leaves not known go to ``nodes``.

    A chunk still at its place in the last tree's group (the same object: a turn changes
    the last chunks) takes its digest from there, and is a node only if not known stored.
    """
    before, digests = last if last is not None else ((), ())
    for at, chunk in enumerate(group):
        if at < len(before) and before[at] is chunk:
            digest = digests[at]
            if digest not in known:
                nodes.append(Node(digest, 0, (), chunk))
            yield digest
            continue
        node = _leaf(chunk)
        nodes.append(node)
        yield node.digest


def tree_of(items: ItemVector, known: KnownObjects | None = None) -> tuple[str | None, list[Node]]:
    """The root digest of a vector's tree, and its nodes, leaves first.

    A leaf's digest is remembered by its chunk, so a chunk shared with an earlier vector
    is not hashed again. With ``known`` (the store's hint), the groups of leaves and the
    nodes above that the last tree had are not visited or hashed again, and leaves known
    stored are left out of the nodes.
    """
    level, nodes = _leaves(items.chunks(), known)
    uppers = known.uppers if known is not None else None
    height = 0
    made: dict[tuple[int, tuple[str, ...]], str] = {}
    while len(level) > 1:
        height += 1
        upper = []
        for start in range(0, len(level), FANOUT):
            children = tuple(level[start : start + FANOUT])
            key = (height, children)
            digest = uppers.get(key) if uppers is not None else None
            if digest is None:
                digest = text_digest(node_text(height, children))
            made[key] = digest
            nodes.append(Node(digest, height, children))
            upper.append(digest)
        level = upper
    if uppers is not None:
        if len(uppers) + len(made) > KnownObjects.UPPERS:
            uppers.clear()
        uppers.update(made)
    return (level[0] if level else None), nodes


def object_digests(items: ItemVector) -> Iterator[str]:
    """Every object digest of a vector's tree: its items, its leaves and the nodes above."""
    for node in tree_of(items)[1]:
        yield node.digest
        yield from (item.digest for item in node.chunk or ())


def header(
    commit: ContextCommit, root: str | None, extends: tuple[str, Sequence[str], int] | None = None
) -> str:
    """A commit row's ``data``: every field of the id but the items, which the tree holds.

    With ``extends`` (the parent's id, the added items' digests, the chain's length) the
    row names its parent and the items added to it instead of a tree.
    """
    fields: dict[str, object] = {
        "format": FORMAT,
        **commit_header(commit),
        "root": root,
        "length": len(commit.items),
        # Derived from the items, kept so a reader need not read them to build the commit
        # (each lazily read chunk is checked against them).
        "hidden": [list(span) for span in commit.hidden or ()],
        "summary_at": commit.summary_at,
    }
    if extends is not None:
        base, added, depth = extends
        fields.update(extends=base, added=list(added), depth=depth)
    return canonical_json(fields)


@attrs.frozen
class Written:
    """What storing a commit wrote: the new objects' digests, the rows and their bytes."""

    digests: tuple[str, ...] = ()
    rows: int = 0
    bytes: int = 0


def put_objects(
    rows: Rows,
    items: ItemVector,
    known: set[str] | frozenset[str] = frozenset(),
    *,
    packed: bool = True,
) -> tuple[str | None, Written]:
    """Store the items and tree nodes of ``items`` not stored yet; the tree's root digest.

    ``known`` holds digests already stored (a hint: every object not in it is inserted
    with ``ON CONFLICT DO NOTHING``, so a stale hint costs work, never correctness).
    Items and tree nodes are written packed under their binary keys unless ``packed`` is
    False: the form of schema step 3 (JSON text under hex keys), which later steps convert.
    """
    root, nodes = tree_of(items, known if isinstance(known, KnownObjects) else None)
    key = _key_form(packed=packed)
    item_rows: dict[str, str] = {}
    node_rows: dict[str, bytes | str] = {}
    for node in nodes:
        if node.digest in known or node.digest in node_rows:
            continue
        children = node.children or tuple(item.digest for item in node.chunk or ())
        node_rows[node.digest] = tree_row(node.level, children, packed=packed)
        for item in node.chunk or ():
            if item.digest not in known and item.digest not in item_rows:
                item_rows[item.digest] = item_row(item)
    item_bytes = _insert_items(rows, item_rows, packed=packed)
    if node_rows:
        rows.many(
            "INSERT INTO trees (digest, data) VALUES (?, ?) ON CONFLICT DO NOTHING",
            [(key(d), data) for d, data in node_rows.items()],
        )
    written = (*item_rows, *node_rows)
    size = item_bytes + sum(map(len, node_rows.values()))
    return root, Written(written, len(written), size)


def _insert_items(rows: Rows, item_rows: Mapping[str, str], *, packed: bool = True) -> int:
    """Insert each item's row, packed (`ctxrules.store.packing`) or as its JSON; the bytes written."""
    key = _key_form(packed=packed)
    values = [(key(d), pack(text) if packed else text) for d, text in item_rows.items()]
    if values:
        rows.many("INSERT INTO items (digest, data) VALUES (?, ?) ON CONFLICT DO NOTHING", values)
    return sum(len(data) for _, data in values)


def object_key(digest: str) -> bytes:
    """The key an item or tree node is stored under: its digest's 32 bytes, not 64 hex digits.

    >>> object_key("00ff" * 16).hex() == "00ff" * 16
    True
    """
    # Half the bytes in the row and again in the key's index (SQLite schema step 11,
    # PostgreSQL migration 11): 6 % of a store of small outputs.
    return bytes.fromhex(digest)


def _key_form(*, packed: bool) -> Callable[[str], object]:
    """How a row written now is keyed: `object_key`, or the hex text of schema step 3's form."""
    return object_key if packed else str


def key_digest(key: object) -> str:
    """The hex digest of a stored key (bytes, or the text of a row stored before keys were bytes)."""
    if isinstance(key, bytes | bytearray | memoryview):
        return bytes(key).hex()
    return str(key)


#: The next seq of a session's commits, read under the writer's hold.
NEXT_COMMIT_SEQ = "SELECT coalesce(max(seq), -1) + 1 FROM commits WHERE session_id = ?"


def put_commit(
    rows: Rows, commit: ContextCommit, known: set[str] | frozenset[str] = frozenset()
) -> Result[Written, StoreError]:
    """Store ``commit`` with the objects it names that are not stored yet; a stored id is a no-op.

    The caller checks the session, and adds `Written.digests` to ``known`` once the
    transaction has committed (see `put_objects`).
    """
    if rows.one("SELECT 1 FROM commits WHERE id = ?", (commit.id,)) is not None:
        return Success(Written())
    seq = rows.one(NEXT_COMMIT_SEQ, (commit.session_id,))
    return Success(write_commit(rows, commit, int(seq[0]) if seq else 0, known))


def write_commit(
    rows: Rows, commit: ContextCommit, seq: int, known: set[str] | frozenset[str] = frozenset()
) -> Written:
    """Store ``commit``, not stored yet, as the session's ``seq``-th, with its objects not in ``known``.

    A commit that only adds items to its parent's, known stored, is stored as its extension.
    """
    extension = _extension(commit, known)
    if extension is None:
        root, objects = put_objects(rows, commit.items, known)
        data, depth = header(commit, root), 0
    else:
        base, added, depth = extension
        objects = _put_items(rows, added, known)
        data = header(commit, None, (base, [item.digest for item in added], depth))
    if isinstance(known, KnownObjects):
        known.pending[commit.id] = (commit.items, depth)
    row = pack(data, HEADER)
    rows.run(
        "INSERT INTO commits (id, session_id, seq, head_node_id, data) VALUES (?, ?, ?, ?, ?)",
        (commit.id, commit.session_id, seq, commit.head_node_id, row),
    )
    return attrs.evolve(objects, rows=objects.rows + 1, bytes=objects.bytes + len(row))


def _extension(
    commit: ContextCommit, known: set[str] | frozenset[str]
) -> tuple[str, tuple[ContextItem, ...], int] | None:
    """The parent ``commit`` extends (its id, the items added, the chain's length), or None."""
    if not isinstance(known, KnownObjects) or not commit.parent_ids:
        return None
    parent = commit.parent_ids[0]
    found = known.pending.get(parent) or known.chains.get(parent)
    if found is None or found[1] >= MAX_CHAIN:
        return None
    items, depth = found
    # A shorter commit differs at its own end, before the parent's: no extension either.
    first = items.first_difference(commit.items)
    if first is not None and first < len(items):
        return None
    return parent, commit.items[len(items) :], depth + 1


def _put_items(
    rows: Rows, items: Sequence[ContextItem], known: set[str] | frozenset[str]
) -> Written:
    """Store the items not stored yet (an extension's added items)."""
    item_rows = {i.digest: item_row(i) for i in items if i.digest not in known}
    return Written(tuple(item_rows), len(item_rows), _insert_items(rows, item_rows))


def rewrite_inline(rows: Rows) -> str | None:
    """Rewrite every commit row of the first form (items inline) into a header and a tree.

    Each commit is read back from its new form and its id compared; the reason the
    migration must stop, or None. The caller lifts the commits' no-update guard around it.
    """
    reader = CommitReader(rows, keys=str)
    listed = rows.all("SELECT id, data FROM commits ORDER BY session_id, seq")
    for commit_id, data in listed:
        fields = json.loads(data)
        if isinstance(fields, dict) and fields.get("format") == FORMAT:
            continue
        old = reader.decode(commit_id, data)
        if isinstance(old, Failure):
            return f"commit {commit_id}: {old.failure().message}"
        commit = old.unwrap()
        # This is schema step 3: items are JSON text until packing's step (PostgreSQL's
        # column is text until then).
        root, _ = put_objects(rows, commit.items, packed=False)
        new = header(commit, root)
        rows.run("UPDATE commits SET data = ? WHERE id = ?", (new, commit_id))
        again = CommitReader(rows, keys=str).decode(commit_id, new)
        if isinstance(again, Failure) or again.unwrap() != commit:
            return f"commit {commit_id}: its new form does not read back equal"
    return None


class CommitReader:
    """Reads stored commits, sharing the items and chunks of every commit it has read.

    Commits of one session share most of their chunks; read through one reader they
    share them in memory too, as they did when they were made. ``check`` recomputes every
    item's digest from its content (what `ctxrules verify` asks); without it an item
    carries its row's key, and each commit's id is still recomputed from its header, its
    tree and those digests and compared.
    """

    def __init__(
        self,
        rows: Rows,
        *,
        check: bool = False,
        source: ItemSource | None = None,
        keys: Callable[[str], object] = object_key,
    ) -> None:
        self.rows = rows
        self.check = check
        #: How a digest is looked up: its binary key (``str`` in schema step 3's rewrite).
        self.keys = keys
        #: With a source, a commit whose header keeps its layout is built from its tree
        #: alone: each chunk is read through the source when first touched.
        self.source = source
        self.items: dict[str, ContextItem] = {}
        self.nodes: dict[str, tuple[int, tuple[str, ...]]] = {}
        self.chunks: dict[str, Chunk] = {}
        #: Each chunk's share of the items digest: a session's commits share their chunks.
        self.shares: dict[tuple[int, int], tuple[object, int]] = {}
        #: Commits read, by id (an extension is built on its parent), and how many
        #: extensions each ends (0: it has a tree).
        self.commits: dict[str, ContextCommit] = {}
        self.depths: dict[str, int] = {}
        #: The commits being decoded (a parent named again is a cycle, not a deeper read).
        self._open: set[str] = set()

    def get(self, commit_id: str) -> Result[ContextCommit, StoreError]:
        """The commit with this id, or `UnknownCommit`."""
        known = self.commits.get(commit_id)
        if known is not None:
            return Success(known)
        row = self.rows.one("SELECT data FROM commits WHERE id = ?", (commit_id,))
        if row is None:
            return Failure(UnknownCommit(commit_id))
        return self.decode(commit_id, row[0])

    def session(self, session_id: str) -> Result[list[ContextCommit], StoreError]:
        """The session's commits in stored order."""
        found = []
        listed = self.rows.all(
            "SELECT id, data FROM commits WHERE session_id = ? ORDER BY seq", (session_id,)
        )
        for commit_id, data in listed:
            read = self.decode(commit_id, data)
            if isinstance(read, Failure):
                return read.map(lambda _: [])
            found.append(read.unwrap())
        return Success(found)

    def last(self, session_id: str) -> Result[ContextCommit | None, StoreError]:
        """The session's most recently stored commit, or None."""
        row = self.rows.one(
            "SELECT id, data FROM commits WHERE session_id = ? ORDER BY seq DESC LIMIT 1",
            (session_id,),
        )
        if row is None:
            return Success(None)
        return self.decode(row[0], row[1])

    def decode(self, commit_id: str, data: object) -> Result[ContextCommit, StoreError]:
        """The commit a row holds (its text or packed), its id recomputed and compared."""
        try:
            fields = commit_fields(data)
            if not isinstance(fields, dict):
                return _corrupt(commit_id, "the row is not a JSON object")
            if fields.get("format") != FORMAT:
                # A row of the first form (items inline), as an unmigrated store holds.
                return _inline(commit_id, fields)
            if "extends" in fields:
                built = self._guarded(commit_id, fields)
            else:
                built = Success(self._assemble(fields))
                self.depths[commit_id] = 0
        except (ValueError, TypeError, KeyError, AttributeError) as err:
            return _corrupt(commit_id, f"{type(err).__name__}: {err}")
        return built.bind(lambda commit: self._addressed(commit_id, commit))

    def _addressed(
        self, commit_id: str, commit: ContextCommit
    ) -> Result[ContextCommit, StoreError]:
        """``commit`` if its content hashes to ``commit_id`` (kept for the commits built on it)."""
        if commit.id != commit_id:
            return _corrupt(commit_id, f"the content hashes to {commit.id!r}")
        self.commits[commit_id] = commit
        return Success(commit)

    def _guarded(
        self, commit_id: str, fields: dict[str, object]
    ) -> Result[ContextCommit, StoreError]:
        """`_extended`, refusing a row that its own parents extend (a cycle)."""
        if commit_id in self._open:
            return _corrupt(commit_id, "it extends itself through its parents")
        self._open.add(commit_id)
        try:
            return self._extended(commit_id, fields)
        finally:
            self._open.discard(commit_id)

    def _extended(
        self, commit_id: str, fields: dict[str, object]
    ) -> Result[ContextCommit, StoreError]:
        """The commit an extension row holds: its parent's items with the added ones after them."""
        base, added, depth = fields["extends"], fields["added"], fields["depth"]
        if not isinstance(base, str) or not isinstance(added, list) or not isinstance(depth, int):
            msg = "extends, added or depth have the wrong type"
            raise TypeError(msg)
        if not 0 < depth <= MAX_CHAIN:
            msg = f"an extension {depth} long"
            raise ValueError(msg)
        read = self.get(base)
        if isinstance(read, Failure):
            return _corrupt(commit_id, f"its parent {base[:12]}: {read.failure().message}")
        parent = read.unwrap()
        if self.depths.get(base, MAX_CHAIN) != depth - 1 or base not in (
            fields["parent_ids"] if isinstance(fields["parent_ids"], list) else ()
        ):
            msg = "its parent is not the one it extends"
            raise ValueError(msg)
        self._fetch_items([str(d) for d in added])
        new = [self.items[str(d)] for d in added]
        self._read_last_chunk(parent)
        grown = parent.append_items(new)
        layout = _layout(fields)
        lazy = self.source is not None and layout is not None
        if lazy:
            assert layout is not None  # noqa: S101 - lazy implies a layout
            # The added items are read now: checked as a lazily read chunk is.
            _check_layout(new, len(parent.items), layout)
        if len(grown.items) != fields["length"]:
            msg = (
                f"the extension holds {len(grown.items)} items, the header says {fields['length']}"
            )
            raise ValueError(msg)
        self.depths[commit_id] = depth
        return Success(self._commit(fields, grown.items, grown.digest, layout if lazy else None))

    def _assemble(self, fields: dict[str, object]) -> ContextCommit:
        root, length = fields["root"], fields["length"]
        if root is not None and not isinstance(root, str):
            msg = "root is neither a digest nor null"
            raise TypeError(msg)
        layout = _layout(fields)
        lazy = self.source is not None and layout is not None
        leaves = self._leaves(root) if isinstance(root, str) else []
        chunks: list[AnyChunk]
        if lazy:
            assert layout is not None  # noqa: S101 - lazy implies a layout
            chunks = [self._lazy(leaf, number, layout) for number, leaf in enumerate(leaves)]
            digest = digests_digest(d for leaf in leaves for d in self.nodes[leaf][1])
        else:
            self._fetch_items([i for d in leaves if d not in self.chunks for i in self.nodes[d][1]])
            read = [self._chunk(d) for d in leaves]
            chunks, digest = list(read), chunks_digest(read, CHUNK, self.shares)
        items = ItemVector.from_chunks(chunks)
        if len(items) != length:
            msg = f"the tree holds {len(items)} items, the header says {length}"
            raise ValueError(msg)
        return self._commit(fields, items, digest, layout if lazy else None)

    @staticmethod
    def _commit(
        fields: dict[str, object], items: ItemVector, digest: int, layout: tuple[Spans, int] | None
    ) -> ContextCommit:
        """The commit of a row's header fields with these items (and, read lazily, its layout)."""
        marks, attached = fields["marks"], fields["attached"]
        parents = fields["parent_ids"]
        if not isinstance(marks, dict) or not isinstance(attached, list):
            msg = "marks or attached have the wrong type"
            raise TypeError(msg)
        if not isinstance(parents, list):
            msg = "parent_ids is not a list"
            raise TypeError(msg)
        return ContextCommit(
            session_id=fields["session_id"],  # type: ignore[arg-type]
            parent_ids=tuple(parents),
            created_at=fields["created_at"],  # type: ignore[arg-type]
            head_node_id=fields["head_node_id"],  # type: ignore[arg-type]
            rules_version=fields["rules_version"],  # type: ignore[arg-type]
            items=items,
            digest=digest,
            total_tokens=fields["total_tokens"],  # type: ignore[arg-type]
            summary=fields["summary"],  # type: ignore[arg-type]
            marks=pmap(marks),
            attached=pset(attached),
            hidden=layout[0] if layout else None,
            summary_at=layout[1] if layout else -2,
        )

    def _read_last_chunk(self, parent: ContextCommit) -> None:
        """Read the parent's last chunk in this transaction, when unread: the items go after it.

        Read through the source, it would be read in a transaction of its own while this
        one is under way.
        """
        chunks = parent.items.chunks()
        last = chunks[-1] if chunks else None
        if type(last) is not StoredChunk or last.loaded or parent.hidden is None:
            return
        self._fetch_items(last.digests)
        layout = (parent.hidden, parent.summary_at)
        last.prime(
            _leaf_chunk(last.key, last.digests, self.items, (len(chunks) - 1) * CHUNK, layout)
        )

    def _lazy(self, leaf: str, number: int, layout: tuple[Spans, int]) -> AnyChunk:
        """The chunk of ``leaf`` at chunk ``number``: shared if read, else a placeholder."""
        known = self.chunks.get(leaf)
        if known is not None:
            return known
        digests = self.nodes[leaf][1]
        start = number * CHUNK
        source = self.source
        assert source is not None  # noqa: S101 - only called with a source

        def load() -> Chunk:
            return _leaf_chunk(leaf, digests, source(digests), start, layout)

        return StoredChunk(leaf, digests, load)

    def _leaves(self, root: str) -> list[str]:
        """The digests of the leaves under ``root`` in order (every tree node read, no item)."""
        level_digests, height = [root], None
        while True:
            self._fetch_nodes(level_digests)
            levels = {self.nodes[d][0] for d in level_digests}
            if len(levels) != 1 or (height is not None and levels != {height - 1}):
                msg = "tree levels are inconsistent"
                raise ValueError(msg)
            height = levels.pop()
            if height == 0:
                break
            level_digests = [c for d in level_digests for c in self.nodes[d][1]]
        return level_digests

    def _chunk(self, digest: str) -> Chunk:
        chunk = self.chunks.get(digest)
        if chunk is None:
            chunk = Chunk(self.items[i] for i in self.nodes[digest][1])
            chunk.memo[_MEMO] = digest
            self.chunks[digest] = chunk
        return chunk

    def _fetch_nodes(self, digests: Iterable[str]) -> None:
        wanted = sorted({d for d in digests if d not in self.nodes})
        for digest, (text, fields) in self._select("trees", wanted, tree_text):
            if text_digest(text) != digest:
                msg = f"tree node {digest[:12]} does not match its digest"
                raise ValueError(msg)
            level, children = json.loads(text) if fields is None else fields
            if not isinstance(level, int) or not isinstance(children, list):
                msg = f"tree node {digest[:12]} is malformed"
                raise TypeError(msg)
            if not 0 < len(children) <= FANOUT:
                msg = f"tree node {digest[:12]} has {len(children)} children"
                raise ValueError(msg)
            self.nodes[digest] = (level, tuple(map(str, children)))

    def _fetch_items(self, digests: Iterable[str]) -> None:
        wanted = sorted({d for d in digests if d not in self.items})
        for digest, data in self._select("items", wanted, unpack):
            self.items[digest] = item_from_row(digest, data, check=self.check)

    def read_items(self, digests: Sequence[str]) -> dict[str, ContextItem]:
        """The items with these digests, each row's text hashed and compared (an `ItemSource`)."""
        self._fetch_items(digests)
        return {d: self.items[d] for d in digests}

    def _select(
        self, table: str, wanted: Sequence[str], read: Callable[[object], _Read]
    ) -> Iterator[tuple[str, _Read]]:
        found = 0
        for batch in in_batches(wanted):
            sql = f"SELECT digest, data FROM {table} WHERE digest IN ({placeholders(len(batch))})"  # noqa: S608 - table is a constant here
            for key, data in self.rows.all(sql, [self.keys(d) for d in batch]):
                found += 1
                yield key_digest(key), read(data)
        if found != len(wanted):
            msg = f"{len(wanted) - found} {table} rows named by the commit are missing"
            raise ValueError(msg)

    def digests(self) -> Iterator[str]:
        """Every object digest this reader has read or seen named (stored: a writer need not write them)."""
        yield from self.items
        yield from self.nodes
        for level, children in self.nodes.values():
            if level == 0:
                yield from children


def _layout(fields: Mapping[str, object]) -> tuple[Spans, int] | None:
    """The summarized spans and first summary position a header keeps, or None (older rows)."""
    hidden, summary_at = fields.get("hidden"), fields.get("summary_at")
    if not isinstance(hidden, list) or not isinstance(summary_at, int):
        return None
    spans = tuple((int(a), int(b)) for a, b in hidden)
    return spans, summary_at


def _leaf_chunk(
    leaf: str,
    digests: Sequence[str],
    items: Mapping[str, ContextItem],
    start: int,
    layout: tuple[Spans, int],
) -> Chunk:
    """The chunk of a stored leaf from its items read, checked against its commit's layout."""
    chunk = Chunk(items[d] for d in digests)
    _check_layout(chunk, start, layout)
    chunk.memo[_MEMO] = leaf
    return chunk


def _check_layout(chunk: Sequence[ContextItem], start: int, layout: tuple[Spans, int]) -> None:
    """Refuse a chunk whose summarized and summary items disagree with its commit's header."""
    spans, summary_at = layout
    for offset, item in enumerate(chunk):
        position = start + offset
        hidden = any(a <= position < b for a, b in spans)
        if (item.state is State.SUMMARIZED) is not hidden or (
            item.state is State.SUMMARY and not 0 <= summary_at <= position
        ):
            msg = f"item at {position} disagrees with its commit's summarized spans"
            raise ValueError(msg)
        if position == summary_at and item.state is not State.SUMMARY:
            msg = f"item at {position} is not the summary its commit names"
            raise ValueError(msg)


def _corrupt(commit_id: str, reason: str) -> Result[ContextCommit, StoreError]:
    return Failure(CorruptRecord("commit", commit_id, reason))


def _inline(commit_id: str, fields: dict[str, object]) -> Result[ContextCommit, StoreError]:
    parsed = commit_from_json(fields)
    if isinstance(parsed, Failure):
        return _corrupt(commit_id, parsed.failure().message)
    commit = parsed.unwrap()
    if commit.id != commit_id:
        return _corrupt(commit_id, f"the content hashes to {commit.id!r}")
    return Success(commit)
