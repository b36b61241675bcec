"""The store's way to the server: a pool while it answers, one bounded attempt per call while not.

psycopg_pool, left alone, reconnects in the background with a growing backoff (1, 2, 4 …
seconds for five minutes) and makes every caller wait for a connection up to the pool's
``timeout``: with the server down each call waited the whole 30 s before its error, and
once the server was back calls still waited for the pool's next attempt. Here the first
sign that the server is gone (a connection broken under a call, or a connection the pool
could not make) drops the pool, which fails its waiting callers at once. Until the server
answers again each call makes one direct connection attempt, bounded by
``connect_timeout``, and fails with the server's reason; the first attempt that succeeds
serves its call and opens a new pool for the calls after it.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import attrs
import psycopg
from psycopg_pool import ConnectionPool, PoolClosed

#: A connection as psycopg gives it (tuple rows).
Conn = psycopg.Connection[Any]


@attrs.frozen
class PoolSettings:
    """How big the pool is, how long a call waits for a busy one, how long a connect may take."""

    min_size: int
    max_size: int
    timeout: float
    connect_timeout: float

    @property
    def connect_seconds(self) -> int:
        """The connect timeout as libpq counts it: whole seconds, at least 2."""
        return max(2, round(self.connect_timeout))


class Link:
    """Connections to one server for one store; safe to share between threads."""

    __slots__ = ("_closed", "_lock", "_pool", "dsn", "settings")

    def __init__(self, dsn: str, settings: PoolSettings) -> None:
        self.dsn = dsn
        self.settings = settings
        self._lock = threading.Lock()
        self._closed = False
        self._pool: ConnectionPool[Any] | None = self._new_pool()

    @property
    def reachable(self) -> bool:
        """False from the first sign the server is gone until a connection to it succeeds."""
        return self._pool is not None

    @contextmanager
    def connection(self) -> Iterator[Conn]:
        """A connection for one call: a pooled one, or a direct one while the server was away.

        Raises a psycopg error (the server's reason) when no connection can be made; a
        pooled call waits up to ``timeout`` only while every connection is busy.
        """
        pool = self._pool
        conn: Conn | None = None
        if pool is not None:
            try:
                conn = pool.getconn()
            except PoolClosed:
                # Dropped while this call waited: the server was found gone meanwhile.
                pool = None
        if pool is None or conn is None:
            with self._reconnect() as direct:
                yield direct
            return
        try:
            with conn:
                yield conn
        finally:
            broken = conn.broken
            pool.putconn(conn)
            if broken:
                self._drop(pool)

    def close(self) -> None:
        """Close the pool; later calls make no connection. Closing twice is fine."""
        with self._lock:
            self._closed = True
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.close()

    def _reconnect(self) -> Conn:
        # One attempt, bounded by connect_timeout: raises while the server is still away.
        if self._closed:
            raise PoolClosed("the store is closed")
        conn: Conn = psycopg.connect(
            self.dsn, connect_timeout=self.settings.connect_seconds, autocommit=True
        )
        with self._lock:
            if self._pool is None and not self._closed:
                self._pool = self._new_pool()
        return conn

    def _new_pool(self) -> ConnectionPool[Any]:
        s = self.settings
        pool: ConnectionPool[Any] = ConnectionPool(
            self.dsn,
            min_size=s.min_size,
            max_size=s.max_size,
            timeout=s.timeout,
            # Autocommit: every transaction says its own BEGIN, so a write can send it with
            # its first statements (`rows.WriteRows`).
            kwargs={"connect_timeout": self.settings.connect_seconds, "autocommit": True},
            # No background retries: a connection the pool cannot make drops the pool, and
            # the next call tries for itself (see the module docstring).
            reconnect_timeout=0,
            reconnect_failed=self._drop,
            open=False,
        )
        pool.open()
        return pool

    def _drop(self, pool: ConnectionPool[Any]) -> None:
        """The server stopped answering on ``pool``: forget it; its waiters fail at once."""
        with self._lock:
            if self._pool is not pool:
                return
            self._pool = None
        # Closing joins the pool's workers, which may be this thread (reconnect_failed runs
        # on one) or in a connect for up to connect_timeout: never on the caller's time.
        wait = {"timeout": self.settings.connect_seconds + 1.0}
        threading.Thread(
            target=pool.close, kwargs=wait, name="ctxrules-pool-drop", daemon=True
        ).start()
