"""Opening a PostgreSQL store to look at it (``read_only=True``) creates no schema.

`open_store(url, read_only=True)` is how ``ctxrules show``, ``verify``, ``export`` and
``migrate``'s source open a store. On PostgreSQL the flag was dropped: showing an empty
database (a mistyped name, the application's own database) created the 13 tables of a
store in it, and a role that may not create tables got "permission denied for schema".
"""

from __future__ import annotations

import pg_server
import pytest
from returns.result import Failure

from ctxrules.dag import Call
from ctxrules.store import OpenFailed, open_store


def _tables(server: pg_server.Server, url: str) -> int:
    import psycopg  # noqa: PLC0415 - only where PostgreSQL runs

    schema = url.rsplit("search_path%3D", 1)[1]
    with psycopg.connect(server.url(), autocommit=True) as conn:
        row = conn.execute(
            "SELECT count(*) FROM information_schema.tables WHERE table_schema = %s", (schema,)
        ).fetchone()
    return int(row[0]) if row is not None else -1


def test_an_empty_schema_opened_to_read_is_refused_and_left_empty(
    postgres_server: pg_server.Server,
) -> None:
    """No store there: `OpenFailed` saying so, and not one table created."""
    url = pg_server.fresh_schema_url(postgres_server)
    opened = open_store(url, read_only=True)
    assert isinstance(opened, Failure)
    assert isinstance(opened.failure(), OpenFailed)
    assert "holds no ctxrules store" in str(opened.failure())
    assert _tables(postgres_server, url) == 0


def test_a_store_opened_to_read_reads_as_before(postgres_server: pg_server.Server) -> None:
    """A store made by a writer opens read-only and reads back what it holds."""
    url = pg_server.fresh_schema_url(postgres_server)
    with open_store(url).unwrap() as store:
        store.create_session("s").unwrap()
        store.append_node("s", Call("n1", "user", output="hello")).unwrap()
    with open_store(url, read_only=True).unwrap() as store:
        assert store.load_graph("s").unwrap().nodes["n1"].output == "hello"


def test_another_applications_tables_are_refused_when_read(
    postgres_server: pg_server.Server,
) -> None:
    """A schema with a foreign ``sessions`` table: refused as another application's."""
    import psycopg  # noqa: PLC0415 - only where PostgreSQL runs

    url = pg_server.fresh_schema_url(postgres_server)
    schema = url.rsplit("search_path%3D", 1)[1]
    with psycopg.connect(postgres_server.url(), autocommit=True) as conn:
        conn.execute(f"CREATE TABLE {schema}.sessions (id int)")
    opened = open_store(url, read_only=True)
    assert "another application" in str(opened.failure())


def test_the_commands_never_print_the_password_of_a_store_url(
    postgres_server: pg_server.Server, capsys: pytest.CaptureFixture[str]
) -> None:
    """`show`, `export`, `migrate` and `inspect --export` name the store with its password hidden."""
    from ctxrules.cli.main import main  # noqa: PLC0415 - the CLI, only where it is tested

    url = pg_server.fresh_schema_url(postgres_server)
    open_store(url).unwrap().close()  # a store with no sessions yet
    secret = url.replace("postgres@", "postgres:s3cret@", 1)
    assert secret != url
    codes = [
        main(["show", secret]),
        main(["show", secret, "nosuch"]),
        main(["export", secret]),
        main(["migrate", secret, secret]),
        main(["migrate", secret, ":memory:", "--session", "nosuch"]),
    ]
    said = capsys.readouterr()
    assert codes == [0, 2, 2, 2, 2]
    assert "holds no sessions yet" in said.out
    assert "postgres:***@" in said.out + said.err
    assert "s3cret" not in said.out + said.err
