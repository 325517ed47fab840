"""Page load times of the dashboard (`evoforge ui`) on a large archive.

Seeds a run of ``--size`` synthetic circle_packing attempts directly into an archive (as
``bench/prompt_context.py`` does: real lineage, a real status mix, a model call per attempt,
filled grids; see ``bench/_seed_archive.py``), starts the real server (``evoforge ui``, its own
process) and measures, for each page:

* server time: the HTML page and its JSON API over HTTP, the first request (nothing cached)
  and the median of the next ``--repeat`` (a finished run's page data is cached);
* browser time, when Chromium and Playwright are here: navigation to the ``load`` event and
  until the page's charts are drawn, first visit and a repeat visit.

    python bench/dashboard_load.py                       # 100k attempts
    python bench/dashboard_load.py --size 10000
    python bench/dashboard_load.py --db /tmp/big.db      # reuse (or create) this archive
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from _seed_archive import seed_run

from evoforge.archive import Archive
from evoforge.evolve import resolve_problem

CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]  # fmt: skip
DRAWN = "(ids) => ids.every((id) => document.querySelector('#' + id + ' .main-svg'))"


def pages(db: Path) -> list[tuple[str, str, list[str]]]:
    with Archive(db, read_only=True) as archive:
        run = archive.runs()[0]
        best = run.best_program_id
        seed = next(archive.programs(run.id)).id
    base = f"runs/{run.id}"
    return [
        ("runs", "", []),
        ("run", base, ["chart-best", "chart-rate", "chart-statuses", "chart-models"]),
        ("grid", f"{base}/grid", ["chart-grid"]),
        ("grid island 0", f"{base}/grid?island=0", ["chart-grid"]),
        ("failures", f"{base}/failures", ["chart-failures"]),
        ("program (best)", f"{base}/programs/{best}", []),
        ("lineage (best)", f"{base}/programs/{best}/lineage", ["chart-lineage"]),
        ("lineage (seed)", f"{base}/programs/{seed}/lineage", ["chart-lineage"]),
        ("pareto", f"{base}/pareto", []),
    ]


def fetch(url: str) -> float:
    started = time.perf_counter()
    with urllib.request.urlopen(url, timeout=600) as response:
        response.read()
        assert response.status == 200, url
    return time.perf_counter() - started


def start_server(db: Path) -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "evoforge", "ui", "--db", str(db), "--port", "0"],
        stderr=subprocess.PIPE,
        text=True,
    )
    for line in proc.stderr:
        found = re.search(r"at (http://127\.0\.0\.1:\d+/)", line)
        if found:
            return proc, found.group(1)
    raise SystemExit(f"evoforge ui did not start: {proc.stderr.read()}")


def server_times(url: str, table, repeat: int) -> None:
    print(f"\nserver time (HTTP, real uvicorn), first request / median of {repeat} more:")
    for name, path, _ in table:
        api = url + "api/" + (path or "runs")
        first_html = fetch(url + path)
        warm_html = statistics.median(fetch(url + path) for _ in range(repeat))
        warm_api = statistics.median(fetch(api) for _ in range(repeat))
        print(
            f"  {name:16s} page {first_html * 1e3:8.1f} ms / {warm_html * 1e3:7.1f} ms"
            f"   api {warm_api * 1e3:7.1f} ms"
        )


def browser_times(url: str, table) -> None:
    chromium = os.environ.get("EVOFORGE_CHROMIUM") or shutil.which("chromium")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        print("\nbrowser: skipped (pip install playwright)")
        return
    if not chromium:
        print("\nbrowser: skipped (apt-get install chromium)")
        return
    print("\nbrowser (headless Chromium): load event / charts drawn, first visit, then again:")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1300, "height": 1000})
        for name, path, charts in table:
            times = []
            for _ in range(2):
                started = time.perf_counter()
                page.goto(url + path, wait_until="load", timeout=600_000)
                loaded = time.perf_counter() - started
                if charts:
                    page.wait_for_function(DRAWN, arg=charts, timeout=600_000)
                times.append((loaded, time.perf_counter() - started))
            (l1, d1), (l2, d2) = times
            print(
                f"  {name:16s} {l1 * 1e3:7.0f} / {d1 * 1e3:7.0f} ms   again "
                f"{l2 * 1e3:7.0f} / {d2 * 1e3:7.0f} ms"
            )
        browser.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--db", type=Path, help="archive to use (seeded first if missing)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        db = args.db or Path(tmp) / "dashboard.db"
        if not db.exists():
            started = time.perf_counter()
            with Archive(db) as archive:
                seed_run(archive, resolve_problem("circle_packing"), args.size)
            print(f"seeded {args.size} attempts in {time.perf_counter() - started:.0f} s")
        with Archive(db, read_only=True) as archive:
            run = archive.runs()[0]
            size = db.stat().st_size >> 20
            print(f"archive {db}: run {run.id}, {run.attempts} attempts, {size} MiB")
        table = pages(db)
        proc, url = start_server(db)
        try:
            server_times(url, table, args.repeat)
            browser_times(url, table)
        finally:
            proc.terminate()
            proc.wait()


if __name__ == "__main__":
    main()
