"""The `BlobStore` contract on both backends: content-addressed originals, a handle names one text forever."""

from __future__ import annotations

from ctxrules.commit import ContextCommit, ContextItem
from ctxrules.dag import Call, Graph
from ctxrules.recall import BlobStore, handle_for, offload
from ctxrules.store import Store, UnknownSession
from ctxrules.store.blobs import blob_digest

#: A large original with what PostgreSQL text refuses (a NUL) and more than ASCII.
ORIGINAL = "row\x00 naïve ✓\n" * 600


def test_a_blob_round_trips_byte_for_byte(store: Store) -> None:
    """put_blob returns the content digest; get_blob gives back exactly the text; unknown handles give None."""
    assert isinstance(store, BlobStore)
    store.create_session("s").unwrap()
    assert store.put_blob("s", "h:aaaaaaaa", ORIGINAL).unwrap() == blob_digest(ORIGINAL)
    assert store.get_blob("s", "h:aaaaaaaa").unwrap() == ORIGINAL
    assert store.get_blob("s", "h:bbbbbbbb").unwrap() is None


def test_a_handle_names_one_original_forever(store: Store) -> None:
    """The same text again is a no-op; another text under the handle is refused and changes nothing."""
    store.create_session("s").unwrap()
    store.put_blob("s", "h:aaaaaaaa", "first").unwrap()
    assert store.put_blob("s", "h:aaaaaaaa", "first").unwrap() == blob_digest("first")
    refused = store.put_blob("s", "h:aaaaaaaa", "second")
    assert refused.failure().name == "handle"
    assert store.get_blob("s", "h:aaaaaaaa").unwrap() == "first"


def test_blobs_are_shared_by_content_and_named_per_session(store: Store) -> None:
    """Two sessions may keep the same text (stored once) under their own handles; an unknown session fails."""
    store.create_session("a").unwrap()
    store.create_session("b").unwrap()
    store.put_blob("a", "h:aaaaaaaa", ORIGINAL).unwrap()
    store.put_blob("b", "h:cccccccc", ORIGINAL).unwrap()
    assert store.session_blobs("a").unwrap() == {"h:aaaaaaaa": ORIGINAL}
    assert store.session_blobs("b").unwrap() == {"h:cccccccc": ORIGINAL}
    assert store.get_blob("b", "h:aaaaaaaa").unwrap() is None
    assert isinstance(store.put_blob("nobody", "h:aaaaaaaa", "x").failure(), UnknownSession)
    assert isinstance(store.get_blob("nobody", "h:aaaaaaaa").failure(), UnknownSession)


def test_offload_writes_a_capped_original_to_either_store(store: Store) -> None:
    """`offload` keeps the whole original of a capped tool result in the store, as recall needs it."""
    graph = Graph().append(Call("t", "tool", name="cat", output=ORIGINAL)).unwrap()
    capped = ContextCommit("s").with_items(
        [ContextItem("t", "tool", state="aged", rendered="row…")]
    )
    store.create_session("s").unwrap()
    assert offload(store, "s", capped, graph).unwrap() == 1
    assert store.get_blob("s", handle_for("t")).unwrap() == ORIGINAL
