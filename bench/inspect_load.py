"""`ctxrules inspect` on a long session: page load in Chromium and the size of `--export`.

    python bench/inspect_load.py [--calls 600] [--window 32000] [--store PATH] [--shots DIR]

Builds the session with the live-loop soak's scripted agent (tool outputs from real sessions,
recall calls, compactions at 32k), serves it with ``ctxrules inspect``, and loads the page in
headless Chromium (the system's, through Selenium): the time from navigation to every view
drawn, first with the server's views cold and then warm. Then ``--export`` and its size.
Goals: the page in at most 2 s, the export at most 5 MB.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))
import soak  # noqa: E402 - beside this script

LOAD_GOAL_S = 2.0
#: The ctxrules command of this interpreter.
CTXRULES = (sys.executable, "-c", "from ctxrules.cli.main import main; raise SystemExit(main())")
EXPORT_GOAL_BYTES = 5_000_000


def build(path: str, calls: int, window: int) -> dict[str, Any]:
    """The soak's scripted agent run for ``calls`` calls on a SQLite store at ``path``."""
    cell = soak.Cell("sync", "sqlite", window, "anthropic")
    run = soak.Run(cell, soak.real_outputs(), calls, where=path, big=())
    return run.run()


def browser() -> Any:
    """Headless Chromium through the system's chromedriver."""
    from selenium import webdriver  # noqa: PLC0415 - a dev dependency
    from selenium.webdriver.chrome.service import Service  # noqa: PLC0415

    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium") or "/usr/bin/chromium"
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1400,1800"):
        options.add_argument(argument)
    return webdriver.Chrome(
        options=options, service=Service(shutil.which("chromedriver") or "/usr/bin/chromedriver")
    )


def load(driver: Any, url: str) -> float:
    """Seconds from navigation start to every view drawn (the page's own clock).

    The server has read the session before it printed its URL (as ``ctxrules inspect``
    does), so this is the page: its requests, building the views, and the browser's layout.
    """
    driver.get("about:blank")
    driver.get(url)
    end = time.monotonic() + 60
    while not driver.execute_script("return document.body.dataset.ready === '1'"):
        if time.monotonic() > end:
            raise SystemExit("the page did not finish loading in 60 s")
        time.sleep(0.02)
    return driver.execute_script("return performance.now()") / 1000


def main() -> int:
    """Build, serve, load, export; print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=600)
    parser.add_argument("--window", type=int, default=32_000)
    parser.add_argument("--store", help="reuse (or keep) the store at this path")
    parser.add_argument("--shots", type=Path, help="save a screenshot of the page here")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp())
    store = args.store or str(folder / "store.sqlite")
    if not Path(store).exists():
        started = time.perf_counter()
        figures = build(store, args.calls, args.window)
        sys.stdout.write(
            f"built {args.calls} calls in {time.perf_counter() - started:.0f} s; "
            f"batch points {figures.get('batch_points')}, compactions {figures.get('compactions')}\n"
        )
    command = [*CTXRULES, "inspect", store, "--port", "0"]
    server = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)  # noqa: S603
    try:
        line = server.stdout.readline() if server.stdout else ""
        url = re.search(r"http://127\.0\.0\.1:\d+/", line)
        if url is None:
            raise SystemExit(f"ctxrules inspect did not start: {line!r}")
        driver = browser()
        try:
            cold = load(driver, url.group(0))
            warm = min(load(driver, url.group(0)) for _ in range(3))
            fetched = driver.execute_script(
                "return Math.max(...performance.getEntriesByType('resource')"
                ".map(e => e.responseEnd)) / 1000"
            )
            built = driver.execute_script("return JSON.stringify(window.ctxrulesTiming)")
            nodes = driver.execute_script(
                "return document.querySelector('svg[data-nodes]').getAttribute('data-nodes')"
            )
            requests = driver.execute_script(
                "return document.querySelectorAll('[data-request]').length"
            )
            if args.shots:
                args.shots.mkdir(parents=True, exist_ok=True)
                driver.save_screenshot(str(args.shots / "long-session.png"))
        finally:
            driver.quit()
    finally:
        server.terminate()
        server.wait(timeout=10)
    sys.stdout.write(
        f"page of {nodes} nodes, {requests} requests: {cold:.2f} s the first time, "
        f"{warm:.2f} s at best of 3 more (goal {LOAD_GOAL_S} s); the last load's data was "
        f"in at {fetched:.2f} s, views built in {built} ms\n"
    )
    target = folder / "export.html"
    started = time.perf_counter()
    subprocess.run(  # noqa: S603 - our own interpreter
        [*CTXRULES, "inspect", store, "--export", str(target)],
        check=True,
        capture_output=True,
    )
    size = target.stat().st_size
    sys.stdout.write(
        f"export: {size:,} bytes in {time.perf_counter() - started:.1f} s "
        f"(goal {EXPORT_GOAL_BYTES:,} bytes)\n"
    )
    missed = cold > LOAD_GOAL_S or size > EXPORT_GOAL_BYTES
    return 1 if missed else 0


if __name__ == "__main__":
    raise SystemExit(main())
