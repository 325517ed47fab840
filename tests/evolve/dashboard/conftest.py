"""Fixtures for the dashboard tests: real runs in a real archive, the real ``evoforge ui``
server in its own process, and (for the browser tests) headless Chromium through Playwright."""

from __future__ import annotations

import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from tests.conftest import ROOT

SCREENSHOTS = Path(os.environ.get("EVOFORGE_SCREENSHOTS", ROOT / "build" / "screenshots"))
"""Where the browser tests save a screenshot of each page (``build/`` is git-ignored)."""
CHROMIUM = os.environ.get("EVOFORGE_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]  # fmt: skip

# Two objectives (one minimised) and two descriptors: the Pareto page and a 2-D grid.
PAIR_SPEC = """
    name = "pair"
    objectives = {"cost": "minimize", "size": "maximize"}
    descriptors = {"a": (0.0, 10.0, 5), "b": (0.0, 10.0, 4)}
    preload = []
    timeout_s = 5
    memory_mb = 512

    def evaluate(output):
        a, b = output
        return {"cost": (a - 3.0) ** 2 + (b - 7.0) ** 2 + 1877.375, "size": a * b, "a": a, "b": b}
"""
PAIR_SEED = """
    # EVOLVE-BLOCK-START
    def main():
        a = 1.5
        b = 2.25
        return [a, b]
    # EVOLVE-BLOCK-END
"""
# A candidate that prints markup, returns it and carries it in its source: it lands in the
# program's artifacts (stdout, stderr), metrics and source, and the model's answer.
XSS = (
    "</script><script>window.__evoforge_xss = 1</script>"
    '<img src=x onerror="window.__evoforge_xss = 2">'
)
XSS_SPEC = """
    name = "xss"
    objectives = {"score": "maximize"}
    descriptors = {"length": (0.0, 200.0, 10)}
    preload = []
    timeout_s = 5
    memory_mb = 512

    def evaluate(output):
        text, value = output
        return {"score": float(value), "length": float(len(text)), "echo": text}
"""
XSS_SEED = f"""
    import sys

    PAYLOAD = {XSS!r}


    # EVOLVE-BLOCK-START
    def main():
        print(PAYLOAD)
        print(PAYLOAD, file=sys.stderr)
        value = 1.5
        return [PAYLOAD, value]
    # EVOLVE-BLOCK-END
"""


def evoforge(*args, without: tuple[str, ...] = (), **kwargs) -> subprocess.Popen:
    """``python -m evoforge ARGS`` from the checkout, with the variables ``without`` unset."""
    env = {k: v for k, v in os.environ.items() if k not in without} | {"PYTHONPATH": str(ROOT)}
    return subprocess.Popen(
        [sys.executable, "-m", "evoforge", *map(str, args)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        **kwargs,
    )


def run_to_end(*args) -> None:
    proc = evoforge("run", *args, "-q")
    out, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, out + err


def write_problem(folder: Path, spec: str, seed: str) -> Path:
    folder.mkdir(parents=True)
    (folder / "problem.py").write_text(textwrap.dedent(spec))
    (folder / "seed.py").write_text(textwrap.dedent(seed))
    return folder


class Runs:
    """The archive the dashboard tests read, and the ids of its runs."""

    def __init__(self, db: Path) -> None:
        self.db = db
        with sqlite3.connect(db) as conn:
            self.ids = {p: r for r, p in conn.execute("SELECT id, problem FROM runs")}
        conn.close()

    def sql(self, query: str, *params):
        conn = sqlite3.connect(f"file:{self.db}?mode=ro", uri=True)
        try:
            return conn.execute(query, params).fetchall()
        finally:
            conn.close()


@pytest.fixture(scope="session")
def runs(tmp_path_factory) -> Runs:
    """Three short real runs: circle_packing, a two-objective problem, a hostile candidate."""
    folder = tmp_path_factory.mktemp("dashboard")
    db = folder / "ui.db"
    pair = write_problem(folder / "pair", PAIR_SPEC, PAIR_SEED)
    xss = write_problem(folder / "xss", XSS_SPEC, XSS_SEED)
    run_to_end("circle_packing", "--budget", 60, "--seed", 1, "--db", db)
    run_to_end(pair, "--budget", 40, "--seed", 1, "--db", db)
    run_to_end(xss, "--budget", 10, "--seed", 1, "--workers", 1, "--db", db)
    return Runs(db)


class Server:
    """``evoforge ui`` in its own process, on a free loopback port."""

    def __init__(self, db: Path, *extra: str) -> None:
        self.proc = evoforge("ui", "--db", db, "--port", 0, *extra)
        deadline = time.monotonic() + 60
        line = ""
        while time.monotonic() < deadline:
            line = self.proc.stderr.readline()
            found = re.search(r"at (http://127\.0\.0\.1:\d+/)", line)
            if found:
                self.url = found.group(1)
                return
            if not line and self.proc.poll() is not None:
                break
        self.stop()
        raise AssertionError(f"evoforge ui did not start: {line}{self.proc.stderr.read()}")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


@pytest.fixture(scope="session")
def server(runs):
    served = Server(runs.db)
    yield served
    served.stop()


def _no_browser(reason: str):
    """Skip, or fail where the browser tests must run (CI sets EVOFORGE_REQUIRE_BROWSER=1)."""
    if os.environ.get("EVOFORGE_REQUIRE_BROWSER"):
        pytest.fail(f"EVOFORGE_REQUIRE_BROWSER is set but {reason}")
    pytest.skip(reason)


@pytest.fixture(scope="module")
def chromium():
    """Headless Chromium (Debian's ``chromium`` package) driven by Playwright."""
    try:
        from playwright import sync_api
    except ImportError:
        _no_browser("the browser tests need Playwright: pip install playwright")
    if not Path(CHROMIUM).exists():
        _no_browser(f"no Chromium at {CHROMIUM}: apt-get install chromium (or EVOFORGE_CHROMIUM)")
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture
def page(chromium):
    """A fresh page that records console errors, page errors and dialogs."""
    context = chromium.new_context(viewport={"width": 1300, "height": 1000})
    page = context.new_page()
    page.problems = []
    page.on("console", lambda m: page.problems.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: page.problems.append(f"page error: {e}"))

    def dialog(d):
        page.problems.append(f"dialog: {d.message}")
        d.dismiss()

    page.on("dialog", dialog)
    yield page
    context.close()


def screenshot(page, name: str) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=True)
