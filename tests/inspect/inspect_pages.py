"""Helpers of the inspector's tests: the CLI in process, a store from a real session, the page."""

from __future__ import annotations

import contextlib
import io
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from ctxrules.cli.main import main
from ctxrules.cli.options import bundled_session
from ctxrules.store import open_store

#: The real session every inspector test starts from (shipped with the package).
LOG = bundled_session()
SHOTS = os.environ.get("CTXRULES_SHOTS")
#: The ctxrules command of this interpreter.
CTXRULES = (sys.executable, "-c", "from ctxrules.cli.main import main; raise SystemExit(main())")


def run_cli(*argv: str) -> str:
    """Run ``ctxrules ARGV`` in process; its standard output (a non-zero exit fails the test)."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        status = main(list(argv))
    assert status == 0, (argv, out.getvalue())
    return out.getvalue()


def real_store(url: str) -> str:
    """Replay the bundled session into ``url`` (small window: items get tightened), add a retry."""
    run_cli("replay", str(LOG), "--window", "8000", "--spec", "small-window", "--store", url)
    store = open_store(url).unwrap()
    try:
        session_id = store.list_sessions().unwrap()[0].id
        session = store.load_session(session_id).unwrap()
        old = session.head
        retried = session.retry(old, created_at=session.graph.nodes[old].created_at + 1).unwrap()
        store.save_session(retried, expected_head=old).unwrap()
    finally:
        store.close()
    return session_id


class Server:
    """A running ``ctxrules inspect`` process and its URL."""

    def __init__(self, store: str, *extra: str) -> None:
        command = [*CTXRULES, "inspect", store, "--port", "0"]
        self.process = subprocess.Popen(
            [*command, *extra], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        line = self.process.stdout.readline() if self.process.stdout else ""
        found = re.search(r"http://127\.0\.0\.1:\d+/", line)
        if found is None:
            self.stop()
            pytest.fail(f"ctxrules inspect did not start: {line!r} {self.process.stderr.read()!r}")
        self.url = found.group(0)

    def stop(self) -> None:
        """Stop the server."""
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()


def browser_paths() -> tuple[str, str] | None:
    """The system's Chromium and chromedriver, or None when either is missing."""
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    return (chromium, driver) if chromium and driver else None


def wait_for(driver: Any, script: str, timeout: float = 10.0) -> Any:
    """Poll ``return (script)`` in the page until it is truthy; its value (fails on timeout)."""
    end = time.monotonic() + timeout
    while True:
        value = driver.execute_script(f"return ({script});")
        if value:
            return value
        if time.monotonic() > end:
            pytest.fail(f"timed out after {timeout} s waiting for: {script}")
        time.sleep(0.05)


def open_page(driver: Any, url: str) -> None:
    """Load the page and wait until its first session is drawn."""
    driver.get(url)
    wait_for(driver, "document.body.dataset.ready === '1' || document.querySelector('.error')")
    error = driver.execute_script(
        "const e = document.querySelector('.error'); return e && e.textContent;"
    )
    assert not error, error


def shot(driver: Any, name: str, selector: str | None = None) -> None:
    """Save a screenshot (of one view, when ``selector`` is given) where CTXRULES_SHOTS says."""
    if not SHOTS:
        return
    Path(SHOTS).mkdir(parents=True, exist_ok=True)
    target = Path(SHOTS) / f"{name}.png"
    if selector is not None:
        # The view at the top of the window: an element's own screenshot clips a long one.
        driver.execute_script(
            "document.querySelector(arguments[0]).scrollIntoView({block: 'start'})", selector
        )
    driver.save_screenshot(str(target))
