"""Where `ctxrules replay` keeps its run: the ``--store`` opened before the replay, written after.

The store is opened first, so a path that cannot hold one (a text file, a damaged
database, a folder that cannot be made, a PostgreSQL URL without its driver) stops the
command before the replay's work, not after it.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from returns.result import Failure

from ctxrules.canonical import content_hash
from ctxrules.cli.listing import first_user_text
from ctxrules.commit import ContextCommit
from ctxrules.dag import Session
from ctxrules.engine import DefaultContextEngine
from ctxrules.engine.frame import RUN_KEY
from ctxrules.engine.turn import SessionState
from ctxrules.store.protocol import Store
from ctxrules.store.redact import shown_url
from ctxrules.store.url import parse_store_url


def in_memory(path: str) -> bool:
    """Whether ``path`` names a store that lasts only as long as the process.

    >>> in_memory(":memory:"), in_memory("sqlite://"), in_memory("s.sqlite")
    (True, True, False)
    """
    where = parse_store_url(path).value_or(None)
    return where is not None and where.backend == "sqlite" and where.target == ":memory:"


def open_target(path: str) -> Store | str:
    """The store ``--store`` names, opened for writing (its folder made), or the one line saying why not."""
    from ctxrules.store import open_store  # noqa: PLC0415 - the store is the only I/O layer

    where = parse_store_url(path).value_or(None)
    if where is not None and where.backend == "sqlite" and not in_memory(path):
        # The default store lives in .ctxrules/, which a fresh checkout does not have yet.
        try:
            Path(where.target).parent.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            return f"cannot create the store's folder for {path}: {error}"
    opened = open_store(path)
    return str(opened.failure()) if isinstance(opened, Failure) else opened.unwrap()


def _request_order(state: SessionState, session: Session) -> list[ContextCommit]:
    """The run's commits in the order of its requests, each request's own last at its head.

    The engine keeps them by id, in an order that changes with the process's hash seed; stored
    so, the same replay would list its commits differently in each run.
    """
    at = {node: seq for seq, node in enumerate(session.graph.order)}
    final = {commit.id for commit in state.commits.values()}

    def key(commit: ContextCommit) -> tuple[int, bool, str]:
        return (at.get(commit.head_node_id or "", -1), commit.id in final, commit.id)

    return sorted(state.by_id.values(), key=key)


def run_key(
    spec: str,
    engine: DefaultContextEngine,
    window: int,
    profile: str,
    source: str | None = None,
) -> dict[str, object]:
    """What tells a replay's run apart: the spec (named and hashed), the window, the profile, the log's first node.

    Two logs under one session id (``main`` of two stores) are two runs: stored in one
    session, the second's messages would be another branch of the first's.

    >>> from ctxrules.rules import Pipeline
    >>> sorted(run_key("default", DefaultContextEngine(pipeline=Pipeline(())), 32_000, "anthropic", "n_1"))
    ['profile', 'rules_version', 'source', 'spec', 'window']
    """
    key: dict[str, object] = {
        "spec": spec,
        "rules_version": engine.pipeline.version,
        "window": window,
        "profile": profile,
    }
    if source is not None:
        key["source"] = source
    return key


def run_session_id(store: Store, base: str, run: dict[str, object]) -> str:
    """The session a replay keeps its run in: ``base``, unless another run already fills it.

    Two runs of one log by different specs (or windows) in one session would interleave
    their commits, and `show` and `inspect` would show whichever was stored last; a run
    stored again adds nothing. So a run unlike the one ``base`` holds goes to
    ``base@<8 hex of the run>``, and the same run again to the same session.
    """
    listed = store.list_sessions()
    held = {info.id: info.metadata.get(RUN_KEY) for info in listed.value_or([])}
    if base not in held or _same_run(held[base], run):
        return base
    return f"{base}@{content_hash(run)[:8]}"


def _same_run(stored: object, run: dict[str, object]) -> bool:
    """Whether a session's stored run key (frozen, as metadata is read back) is ``run``.

    A key stored before runs named their log's first node is compared without it.
    """
    if not isinstance(stored, Mapping):
        return False
    held = dict(stored)
    return held == (run if "source" in held else {k: v for k, v in run.items() if k != "source"})


def save_run(
    store: Store, session: Session, engine: DefaultContextEngine, fmt: str, run: dict[str, object]
) -> str | None:
    """Store the replayed session with its commits and usage in ``store``; why not, or None."""
    # A session with no LLM call was never prepared: it is stored with no commits.
    state = engine.states.get(session.session_id, SessionState())
    calls = session.branch()
    # The listing shows where a session came from and what it was about; a session stored
    # before keeps its row (create_session refuses a different one, which is fine here).
    store.create_session(
        session.session_id,
        created_at=calls[0].created_at if calls else 0.0,
        title=first_user_text(session.graph)[:80],
        metadata={"format": fmt, RUN_KEY: run},
    )
    head = store.get_head(session.session_id).value_or(None)
    saved = store.save_session(
        session, commits=_request_order(state, session), usage=state.usage, expected_head=head
    )
    # No offloaded copies: the stored nodes are the originals (`Store.get_blob`).
    return str(saved.failure()) if isinstance(saved, Failure) else None


def stored_line(path: str, session_id: str, base: str | None = None) -> str:
    """What the replay says of where its run was kept (an in-memory store keeps nothing).

    >>> stored_line(":memory:", "s")
    'not stored: --store :memory: keeps the run only while the replay runs'
    >>> print(stored_line("s.sqlite", "s@1a2b3c4d", "s"))
    stored session s@1a2b3c4d in s.sqlite (s holds a run of another log, spec, window or provider)
    """
    if in_memory(path):
        return f"not stored: --store {path} keeps the run only while the replay runs"
    apart = (
        f" ({base} holds a run of another log, spec, window or provider)"
        if base is not None and base != session_id
        else ""
    )
    return f"stored session {session_id} in {shown_url(path)}{apart}"
