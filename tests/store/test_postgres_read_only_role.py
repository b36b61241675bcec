"""A PostgreSQL role that may only SELECT opens a store at the current schema (issue 33 item 12).

Opening always migrated (a CREATE TABLE IF NOT EXISTS first), so such a role could not
open a store at all, and so could not ``show``, ``verify`` or ``export`` it. A schema
already at this version is now only read.
"""

from __future__ import annotations

import uuid

import pg_server
from returns.result import Failure

from ctxrules.dag import Call
from ctxrules.store import open_store


def test_a_select_only_role_reads_a_store(postgres_server: pg_server.Server) -> None:
    """The owner writes a session; a SELECT-only role opens the store and reads it back."""
    import psycopg  # noqa: PLC0415 - only where PostgreSQL runs

    url = pg_server.fresh_schema_url(postgres_server)
    with open_store(url).unwrap() as store:
        store.create_session("s").unwrap()
        store.append_node("s", Call("n1", "user", output="hello")).unwrap()
    schema = url.rsplit("search_path%3D", 1)[1]
    role = f"reader_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(postgres_server.url(), autocommit=True) as conn:
        conn.execute(f"CREATE ROLE {role} LOGIN")
        conn.execute(f"GRANT USAGE ON SCHEMA {schema} TO {role}")
        conn.execute(f"GRANT SELECT ON ALL TABLES IN SCHEMA {schema} TO {role}")
    with open_store(url.replace("postgres@", f"{role}@", 1)).unwrap() as store:
        assert store.load_graph("s").unwrap().nodes["n1"].output == "hello"
        assert store.export_jsonl("s").unwrap()
        # A write is refused as a value, not raised.
        assert isinstance(store.append_node("s", Call("n2", "user", output="no")), Failure)
