"""Make docs/img/dashboard.png: a real screenshot of ``evoforge ui`` on a run's archive.

    evoforge run circle_packing --budget 400 --seed 1 --db /tmp/shot.db -q
    python docs/_tools/dashboard_screenshot.py /tmp/shot.db

Serves the archive with ``evoforge ui`` on a free port, opens the latest run's page in Debian's
Chromium through Playwright (``pip install -e ".[test,ui]"``, ``apt-get install chromium``; no
browser is downloaded) and saves the top of the page, 1200 x 900 CSS pixels, as PNG.
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

from playwright.sync_api import sync_playwright

OUT = Path(__file__).resolve().parents[1] / "img" / "dashboard.png"
CHROMIUM = os.environ.get("EVOFORGE_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_for(port: int, timeout_s: float = 60.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.2)
    raise SystemExit(f"evoforge ui did not listen on port {port} within {timeout_s:.0f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("db", type=Path, help="the archive to show")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    port = free_port()
    command = [sys.executable, "-m", "evoforge", "ui", "--db", str(args.db), "--port", str(port)]
    server = subprocess.Popen(command)
    try:
        wait_for(port)
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(
                executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"]
            )
            page = browser.new_page(viewport={"width": 1200, "height": 900})
            page.goto(f"http://127.0.0.1:{port}/")
            page.locator("a[href^='/runs/']").first.click()
            page.wait_for_load_state("networkidle")
            page.wait_for_timeout(1500)  # plotly draws after the page has loaded
            args.out.parent.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(args.out))
            browser.close()
    finally:
        server.terminate()
        server.wait(timeout=30)
    print(f"{args.out}: {args.out.stat().st_size // 1024} KiB")


if __name__ == "__main__":
    main()
