"""`ctxrules inspect` without a browser: its API, its headers, and its answers to bad input."""

from __future__ import annotations

import contextlib
import io
import subprocess
from pathlib import Path

import pytest

from ctxrules.cli.main import main
from ctxrules.cli.stored_log import missing_session
from ctxrules.inspect.read import Reader
from ctxrules.store import open_store

pytest.importorskip("starlette", reason="the [inspect] extra is a dev dependency")
from starlette.testclient import TestClient

from ctxrules.inspect.server import CSP, build_app


def _run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(list(argv))
    return status, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def client(real: tuple[str, str]) -> TestClient:
    """The app over a store made from the real session."""
    path, session = real
    app = build_app(Reader(open_store(path, read_only=True).unwrap(), 200_000))
    test = TestClient(app, base_url="http://127.0.0.1")
    test.session_id = session  # type: ignore[attr-defined]
    return test


def test_the_page_and_the_api_carry_a_strict_policy(client: TestClient) -> None:
    """Every response forbids other scripts, inline ones included, and framing."""
    page = client.get("/")
    assert page.status_code == 200
    assert page.headers["content-security-policy"] == CSP
    assert "'unsafe-inline'" not in CSP
    assert page.headers["x-content-type-options"] == "nosniff"
    sessions = client.get("/api/sessions").json()
    assert [s["id"] for s in sessions] == [client.session_id]  # type: ignore[attr-defined]
    assert client.get("/static/app.js").headers["content-type"].startswith("text/javascript")
    assert client.get("/static/../../etc/passwd").status_code == 404


def test_the_api_answers_each_view(client: TestClient) -> None:
    """Overview, version, a request and a node; unknown ones are 404 with the reason."""
    sid = client.session_id  # type: ignore[attr-defined]
    overview = client.get(f"/api/sessions/{sid}").json()
    assert overview["version"] == client.get(f"/api/sessions/{sid}/version").json()
    last = len(overview["requests"]) - 1
    assert overview["latest"]["detail"]["index"] == last
    detail = client.get(f"/api/sessions/{sid}/requests/0").json()
    assert len(detail["detail"]["items"]) == overview["requests"][0]["items"]
    node = overview["history"]["nodes"][0]["id"]
    assert client.get(f"/api/sessions/{sid}/node", params={"id": node}).json()["id"] == node
    missing = client.get("/api/sessions/nope")
    assert missing.status_code == 404
    assert missing.json() == {"error": "no session 'nope' in the store"}
    assert client.get(f"/api/sessions/{sid}/requests/{last + 1}").status_code == 404
    rows = client.get(f"/api/sessions/{sid}/history", params={"end": "2"})
    assert rows.status_code == 200
    bad = client.get(f"/api/sessions/{sid}/history", params={"end": "abc"})
    assert (bad.status_code, bad.json()) == (400, {"error": "end='abc': expected a row number"})
    for index in ("-1", "abc"):
        bad = client.get(f"/api/sessions/{sid}/requests/{index}")
        expected = {"error": f"request {index!r}: expected a request number"}
        assert (bad.status_code, bad.json()) == (400, expected)


def test_another_host_name_is_refused(client: TestClient) -> None:
    """A page elsewhere cannot read the store through a name that resolves to 127.0.0.1."""
    assert client.get("/api/sessions", headers={"host": "evil.example"}).status_code == 400


def test_bad_input_is_one_line_and_exit_2(tmp_path: Path) -> None:
    """A missing store, an empty one, an unknown session: one line each, exit 2, no traceback."""
    status, _, err = _run("inspect", str(tmp_path / "none.sqlite"))
    assert status == 2
    assert err.count("\n") == 1
    assert "No such file or directory" in err
    empty = tmp_path / "empty.sqlite"
    open_store(str(empty)).unwrap().close()
    status, _, err = _run("inspect", str(empty), "--export", str(tmp_path / "x.html"))
    assert (status, err) == (2, f"{empty} holds no sessions to export\n")
    status, _, err = _run("inspect", str(empty), "nope", "--export", str(tmp_path / "x.html"))
    assert (status, err) == (2, f"{missing_session(str(empty), 'nope')}\n")
    status, _, err = _run("inspect", str(empty), "--window", "0")
    assert status == 2
    assert "argument --window" in err


def test_serving_an_unknown_session_is_refused_before_a_url_is_printed(
    real: tuple[str, str],
) -> None:
    """Else the printed URL opens a page that silently shows another session."""
    from inspect_pages import CTXRULES  # noqa: PLC0415 - the helper conftest puts on the path

    path, _ = real
    done = subprocess.run(
        [*CTXRULES, "inspect", path, "nope", "--port", "0"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == f"{missing_session(path, 'nope')}\n"


def test_a_writer_that_wrote_and_closed_between_two_looks_is_seen(tmp_path: Path) -> None:
    """The store was read as immutable (no log beside it); a short writer leaves no log."""
    from ctxrules import Context  # noqa: PLC0415 - only this test writes a live session
    from ctxrules.cli.inspect import _opener  # noqa: PLC0415
    from ctxrules.testing.responses import openai_response  # noqa: PLC0415

    def write(session: str, turns: int) -> None:
        with Context(model="gpt-4o", window=16_000, store=str(path), session=session) as ctx:
            if turns == 1:
                ctx.add({"role": "user", "content": "go"})
            for i in range(turns):
                ctx.openai()
                ctx.record(openai_response(i, "step", [(f"c{session}{turns}{i}", "read", {})]))
                ctx.add_tool_result(f"c{session}{turns}{i}", f"out {i}")
            ctx.openai()

    path = tmp_path / "s.sqlite"
    write("a", 1)
    assert not Path(f"{path}-wal").exists()
    store, reopen = _opener(str(path))
    assert not isinstance(store, str)
    reader = Reader(store, 16_000, reopen=reopen)
    try:
        assert [row["id"] for row in reader.sessions().unwrap()] == ["a"]
        before = reader.version("a").unwrap()
        write("b", 1)
        write("a", 2)
        assert not Path(f"{path}-wal").exists()
        assert [row["id"] for row in reader.sessions().unwrap()] == ["a", "b"]
        assert reader.version("a").unwrap() != before
    finally:
        reader.close()
