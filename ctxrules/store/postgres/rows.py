"""`Rows` over a psycopg connection: the shared layers' ``?`` placeholders become ``%s``.

A write transaction (`WriteRows`) sends its statements in as few round trips as its reads
allow: ``BEGIN`` and every statement that returns nothing wait, bound on the client, and go
to the server in one message with the next read, or with the ``COMMIT``. psycopg spends
about 0.1 ms of the caller's CPU on each statement it sends alone, and a turn's writes were
forty of them.

A value longer than `PIECE_CHARS` (a huge tool output, its offloaded original) goes to the
server in pieces, each a statement of its own, and the server joins them: libpq keeps its
send buffer as large as the largest message it ever sent, so a 50 MB value sent whole
stayed in every pooled connection that carried it (~100 MB kept for one 50 MB output).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any

import psycopg

from ctxrules.store.rows import Params, Query

#: Statements whose values hold more characters than this are sent alone, bound by the
#: server: a huge tool output is not copied into one SQL text.
INLINE_CHARS = 65_536
#: Rows of an insert of many merged into one statement at the most.
MERGED_ROWS = 500
#: Characters (or bytes) of one value sent in one message at the most; a longer one is
#: staged in pieces this long (`WriteRows.run`).
PIECE_CHARS = 1_000_000
#: Where a transaction stages the pieces of its long values; emptied at its end.
_PIECES = "pg_temp.ctxrules_pieces"
_PIECES_TABLE = (
    f"CREATE TEMP TABLE IF NOT EXISTS {_PIECES.partition('.')[2]}"
    " (slot integer, n integer, t text, b bytea) ON COMMIT DELETE ROWS"
)


def pg_sql(sql: str) -> str:
    """The shared layers' SQL with psycopg's placeholders."""
    # The shared SQL holds no literal '?' or '%': each '?' is a placeholder.
    return sql.replace("?", "%s")


class PgRows:
    """`Rows` over one psycopg connection, inside the caller's transaction."""

    __slots__ = ("conn",)

    def __init__(self, conn: psycopg.Connection[Any]) -> None:
        self.conn = conn

    def one(self, sql: str, params: Params = ()) -> tuple[Any, ...] | None:
        """The first row the statement returns, or None."""
        row = self.conn.execute(pg_sql(sql), params).fetchone()
        return tuple(row) if row is not None else None

    def all(self, sql: str, params: Params = ()) -> list[tuple[Any, ...]]:
        """Every row the statement returns."""
        return [tuple(row) for row in self.conn.execute(pg_sql(sql), params).fetchall()]

    def run(self, sql: str, params: Params = ()) -> None:
        """Run a statement that returns no rows."""
        self.conn.execute(pg_sql(sql), params)

    def many(self, sql: str, rows: Iterable[Params]) -> None:
        """Run one statement once for each row of parameters."""
        with self.conn.cursor() as cursor:
            cursor.executemany(pg_sql(sql), list(rows))

    def reads(self, queries: Sequence[Query]) -> list[list[tuple[Any, ...]]]:
        """Every row of each query, in order."""
        return [self.all(sql, params) for sql, params in queries]


def _large(params: Params) -> bool:
    return sum(len(p) for p in params if isinstance(p, str | bytes)) > INLINE_CHARS


def _long(value: object) -> bool:
    return isinstance(value, str | bytes) and len(value) > PIECE_CHARS


def _literal(value: object) -> str | None:
    """``value`` as an SQL literal under ``standard_conforming_strings``, or None to let psycopg bind it."""
    literal: str | None = None
    if value is None:
        literal = "NULL"
    elif isinstance(value, str):
        # A NUL would end the statement's text early: psycopg refuses it instead.
        literal = None if "\0" in value else "'" + value.replace("'", "''") + "'"
    elif isinstance(value, bool):
        literal = "true" if value else "false"
    elif isinstance(value, int):
        literal = str(value)
    elif isinstance(value, float) and math.isfinite(value):
        # repr is the shortest text that reads back as the same double.
        literal = repr(value) + "::float8"
    elif isinstance(value, bytes):
        literal = f"'\\x{value.hex()}'::bytea"
    return literal


def _many_values(sql: str, count: int) -> str | None:
    """``INSERT … VALUES (?, …) …`` with ``count`` rows of values, when one statement can hold them."""
    head, found, tail = sql.partition(" VALUES (")
    if not found or not head.startswith("INSERT ") or "DO UPDATE" in tail:
        # An upsert may not touch one row twice in a statement: those go one by one.
        return None
    row, _, rest = tail.partition(")")
    if "(" in row:
        return None
    return f"{head} VALUES " + ", ".join([f"({row})"] * count) + rest


class WriteRows(PgRows):
    """`Rows` of one write transaction on an autocommit connection: ``BEGIN`` to ``COMMIT``.

    Statements that return nothing are bound here and wait; a read sends them with itself
    in one message (the server runs them in order, so the read sees them), and `commit`
    sends the rest with the ``COMMIT``. Nothing waits longer than the transaction.
    """

    __slots__ = ("_binder", "_conforming", "_opening", "_pending", "_slots", "begun")

    def __init__(self, conn: psycopg.Connection[Any], *, durable: bool = True) -> None:
        super().__init__(conn)
        self._binder = psycopg.ClientCursor(conn)
        # Backslashes are plain characters in a quoted literal only when this is on (the
        # default since PostgreSQL 9.1); else every value is bound by psycopg.
        self._conforming = conn.info.parameter_status("standard_conforming_strings") == "on"
        self._pending: list[str] = ["BEGIN"]
        if not durable:
            # This transaction only: its COMMIT returns before the server's log flush; the
            # next commit that waits flushes the log up to itself, this one included.
            self._pending.append("SET LOCAL synchronous_commit = off")
        self._opening = len(self._pending)
        #: Long values staged so far in this transaction (`_staged`).
        self._slots = 0
        #: Whether ``BEGIN`` reached the server (so a failure must roll back).
        self.begun = False

    def one(self, sql: str, params: Params = ()) -> tuple[Any, ...] | None:
        """The first row the statement returns, or None."""
        found = self.reads([(sql, params)])[0]
        return found[0] if found else None

    def all(self, sql: str, params: Params = ()) -> list[tuple[Any, ...]]:
        """Every row the statement returns."""
        return self.reads([(sql, params)])[0]

    def run(self, sql: str, params: Params = ()) -> None:
        """Run a statement that returns no rows (with the next read, or the commit)."""
        if _large(params):
            self._send([])
            staged, kept = self._staged(sql, params)
            self.conn.execute(pg_sql(staged), kept)
            return
        self._pending.append(self._bind(sql, params))

    def _staged(self, sql: str, params: Params) -> tuple[str, Params]:
        """The statement with each value over `PIECE_CHARS` sent ahead in pieces and joined by the server.

        Each piece is one small message; the statement (still with ``?`` placeholders)
        reads the joined pieces in place of the value, so no message holds a huge value.
        """
        parts = sql.split("?")
        if len(parts) != len(params) + 1 or not any(_long(value) for value in params):
            return sql, params
        bound: list[str] = [parts[0]]
        kept: list[object] = []
        for value, part in zip(params, parts[1:], strict=True):
            if isinstance(value, str | bytes) and _long(value):
                bound.append(self._stage(value))
            else:
                bound.append("?")
                kept.append(value)
            bound.append(part)
        return "".join(bound), kept

    def _stage(self, value: str | bytes) -> str:
        """Send ``value`` in pieces to this transaction's staging table; the SQL that joins them."""
        if self._slots == 0:
            self.conn.execute(_PIECES_TABLE)
        self._slots += 1
        slot, column = self._slots, "t" if isinstance(value, str) else "b"
        insert = f"INSERT INTO {_PIECES} (slot, n, {column}) VALUES (%s, %s, %s)"  # noqa: S608 - constants
        view = memoryview(value) if isinstance(value, bytes) else None
        for n, at in enumerate(range(0, len(value), PIECE_CHARS)):
            piece = (
                view[at : at + PIECE_CHARS] if view is not None else value[at : at + PIECE_CHARS]
            )
            self.conn.execute(insert, (slot, n, piece))
        joint = "''" if column == "t" else "''::bytea"
        return (
            f"(SELECT string_agg({column}, {joint} ORDER BY n) FROM {_PIECES} WHERE slot = {slot})"  # noqa: S608 - constants
        )

    def many(self, sql: str, rows: Iterable[Params]) -> None:
        """Run one statement for each row of parameters: an insert's rows in one statement."""
        group: list[Params] = []
        chars = 0
        for params in rows:
            size = sum(len(p) for p in params if isinstance(p, str | bytes))
            # Rows merge while they stay small: a statement over the size sent alone
            # would be bound by the server, which takes at most 65,535 values.
            if group and (len(group) >= MERGED_ROWS or chars + size > INLINE_CHARS):
                self._merged(sql, group)
                group, chars = [], 0
            group.append(params)
            chars += size
        if group:
            self._merged(sql, group)

    def _merged(self, sql: str, group: list[Params]) -> None:
        merged = _many_values(sql, len(group)) if len(group) > 1 else None
        if merged is None or _large([value for params in group for value in params]):
            for params in group:
                self.run(sql, params)
            return
        self.run(merged, [value for params in group for value in params])

    def reads(self, queries: Sequence[Query]) -> list[list[tuple[Any, ...]]]:
        """Every row of each query, sent in one message after the statements waiting."""
        if any(_long(value) for _, params in queries for value in params):
            self._send([])
            queries = [self._staged(sql, params) for sql, params in queries]
        return self._send([self._bind(sql, params) for sql, params in queries])

    def commit(self) -> None:
        """Send what waits with the ``COMMIT`` (nothing, if nothing was written or read)."""
        if self.begun or len(self._pending) > self._opening:
            self._pending.append("COMMIT")
            self._send([])

    def _bind(self, sql: str, params: Params) -> str:
        # The shared SQL's '?' are its only placeholders (see `pg_sql`).
        parts = sql.split("?")
        literals = [_literal(value) for value in params]
        if len(parts) != len(params) + 1 or None in literals or not self._conforming:
            return self._binder.mogrify(pg_sql(sql), params)
        bound = [parts[0]]
        for literal, part in zip(literals, parts[1:], strict=True):
            bound += [str(literal), part]
        return "".join(bound)

    def _send(self, reads: list[str]) -> list[list[tuple[Any, ...]]]:
        skipped = len(self._pending)
        statements = [*self._pending, *reads]
        self._pending = []
        if not statements:
            return []
        self.begun = True
        # Never prepared (the values are in the text, so no two are alike): psycopg would
        # otherwise count each text in its cache of statements to prepare.
        cursor = self.conn.execute(";\n".join(statements), prepare=False)
        for _ in range(skipped):
            cursor.nextset()
        found: list[list[tuple[Any, ...]]] = []
        for n in range(len(reads)):
            if n:
                cursor.nextset()
            found.append([tuple(row) for row in cursor.fetchall()])
        return found
