"""The dashboard in a real headless Chromium (Playwright), against the real ``evoforge ui``
server and archives from real runs: every page loads without an error, the click path run →
grid cell → program → lineage → program works, a hostile candidate's markup stays text, and a
live run's evaluation count grows on screen. Each page is saved as a PNG under
``build/screenshots/`` (or ``$EVOFORGE_SCREENSHOTS``)."""

from __future__ import annotations

import re
import signal
import sqlite3
import time

import pytest

pytest.importorskip("starlette", reason='the dashboard needs its extra: pip install "evoforge[ui]"')

from tests.evolve.dashboard.conftest import XSS, Server, evoforge, screenshot  # noqa: E402

pytestmark = pytest.mark.slow
CHART_DRAWN = (
    "(id) => { const n = document.getElementById(id); return n && n.querySelector('.main-svg'); }"
)


def visit(page, url: str, chart: str | None = None) -> None:
    response = page.goto(url, wait_until="load")
    assert response.status == 200, url
    if chart:
        page.wait_for_function(CHART_DRAWN, arg=chart, timeout=30_000)


def cell_position(page, chart: str, column: float, row: float) -> tuple[float, float]:
    """Pixel position of axis coordinates (category indices, or values) in a plotly chart."""
    return page.evaluate(
        """([id, x, y]) => {
            const gd = document.getElementById(id), fl = gd._fullLayout;
            const box = gd.getBoundingClientRect();
            const at = (ax, v) => ax._offset + ax.l2p(ax.type === "category" ? v : ax.d2l(v));
            return [box.left + at(fl.xaxis, x), box.top + at(fl.yaxis, y)];
        }""",
        [chart, column, row],
    )


def test_every_page_loads_without_errors(page, server, runs):
    cp, pair, xss = runs.ids["circle_packing"], runs.ids["pair"], runs.ids["xss"]
    ((best,),) = runs.sql("SELECT best_program_id FROM runs WHERE id = ?", cp)
    shots = [
        ("runs", "", None),
        ("run", f"runs/{cp}", "chart-best"),
        ("grid", f"runs/{cp}/grid", "chart-grid"),
        ("grid-island", f"runs/{cp}/grid?island=2", "chart-grid"),
        ("pareto", f"runs/{pair}/pareto", "chart-pareto"),
        ("failures", f"runs/{cp}/failures", "chart-failures"),
        ("program", f"runs/{cp}/programs/{best}", None),
        ("lineage", f"runs/{cp}/programs/{best}/lineage", "chart-lineage"),
        ("compare", f"compare?run={cp}&run={xss}", "chart-compare"),
        ("run-two-objectives", f"runs/{pair}", "chart-best"),
    ]
    for name, path, chart in shots:
        visit(page, server.url + path, chart)
        screenshot(page, name)
        assert page.problems == [], (path, page.problems)
    # The runs page lists every run with its status and best in its own direction.
    visit(page, server.url)
    rows = page.locator("#runs-table tbody tr")
    assert rows.count() == len(runs.ids)
    pair_row = page.locator(f'#runs-table tr[data-run="{pair}"]')
    ((cost,),) = runs.sql(
        "SELECT json_extract(objectives_json, '$.cost') FROM programs WHERE run_id = ? AND id = "
        "(SELECT best_program_id FROM runs WHERE id = ?)",
        pair,
        pair,
    )
    shown = pair_row.inner_text()
    assert "finished" in shown and re.search(r"cost ([0-9.]+) \(min\)", shown)
    assert float(re.search(r"cost ([0-9.]+) \(min\)", shown).group(1)) == pytest.approx(cost)


def test_run_then_grid_cell_then_program_then_lineage(page, server, runs):
    cp = runs.ids["circle_packing"]
    visit(page, server.url)
    page.click(f'#runs-table a[href="/runs/{cp}"]')
    page.wait_for_function(CHART_DRAWN, arg="chart-best")
    assert page.url.endswith(f"/runs/{cp}")
    evaluations = page.inner_text("#card-evaluations")
    assert evaluations == "60 / 60"
    # what the calls bought: requests (retries included) per evaluation, and the wasted ones
    ((calls,),) = runs.sql("SELECT count(*) FROM llm_calls WHERE run_id = ?", cp)
    assert calls > 0  # fewer than evaluations: circle_packing tunes knobs (evaluations too)
    assert page.inner_text("#card-calls-per-evaluation") == f"{calls / 60:.2f}"
    ((wasted,),) = runs.sql(
        "SELECT count(*) FROM programs WHERE run_id = ? AND status IN "
        "('duplicate', 'edit_error', 'syntax_error')",
        cp,
    )
    ((failed,),) = runs.sql(
        "SELECT count(*) FROM llm_calls WHERE run_id = ? AND status != 'ok'", cp
    )
    assert page.inner_text("#card-wasted-calls") == str(wasted + failed)
    ((best,),) = runs.sql(
        "SELECT max(json_extract(objectives_json, '$.sum_radii')) FROM programs WHERE run_id = ?",
        cp,
    )
    assert float(page.inner_text("#card-best")) == pytest.approx(best, rel=1e-9)
    # best over evaluations: the run's trace and one per island
    assert page.evaluate("document.getElementById('chart-best').data.length") == 5

    page.click("#link-grid")
    page.wait_for_function(CHART_DRAWN, arg="chart-grid")
    elites = runs.sql(
        "SELECT cell, program_id FROM elites WHERE run_id = ? AND island = -1 ORDER BY score DESC",
        cp,
    )
    cell, program_id = elites[0]
    # circle_packing: radius_cv (10 bins) across, border_fraction (10 bins) up; cell = row-major
    x, y = cell_position(page, "chart-grid", cell // 10, cell % 10)
    with page.expect_navigation():
        page.mouse.click(x, y)
    assert page.url.endswith(f"/runs/{cp}/programs/{program_id}")
    assert page.inner_text("h1") == f"Program {program_id}"
    assert page.inner_text("#program-status") == "ok"
    assert page.locator("#source .hl").count() == 1  # highlighted
    assert page.locator("#diff").inner_text().startswith("---")

    page.click("#link-lineage")
    page.wait_for_function(CHART_DRAWN, arg="chart-lineage")
    chain = runs.sql(
        "WITH RECURSIVE up(id, parent_id, seq) AS (SELECT id, parent_id, seq FROM programs "
        "WHERE run_id = ?1 AND id = ?2 UNION ALL SELECT p.id, p.parent_id, p.seq FROM programs p "
        "JOIN up ON p.run_id = ?1 AND p.id = up.parent_id) SELECT id FROM up ORDER BY seq",
        cp,
        program_id,
    )
    table = page.locator("#ancestry-table tbody tr")
    assert [table.nth(i).locator("td").nth(1).inner_text() for i in range(table.count())] == [
        i for (i,) in chain
    ]
    screenshot(page, "lineage-clicked")
    seed = chain[0][0]
    ((seed_value,),) = runs.sql(
        "SELECT json_extract(objectives_json, '$.sum_radii') FROM programs WHERE run_id = ? "
        "AND id = ?",
        cp,
        seed,
    )
    if seed != program_id:
        x, y = cell_position(page, "chart-lineage", 0, seed_value)
        with page.expect_navigation():
            page.mouse.click(x, y)
        assert page.url.endswith(f"/runs/{cp}/programs/{seed}")
    assert page.problems == []


def test_pareto_front_points_open_their_programs(page, server, runs):
    pair = runs.ids["pair"]
    visit(page, f"{server.url}runs/{pair}/pareto", "chart-pareto")
    rows = runs.sql(
        "SELECT id, json_extract(objectives_json, '$.cost'), "
        "json_extract(objectives_json, '$.size') FROM programs WHERE run_id = ? AND status = 'ok'",
        pair,
    )
    front = {
        i
        for i, c, s in rows
        if not any(c2 <= c and s2 >= s and (c2 < c or s2 > s) for _, c2, s2 in rows)
    }
    table = page.locator("#front-table tbody tr")
    shown = {table.nth(i).locator("td").first.inner_text() for i in range(table.count())}
    assert shown == front
    target = sorted(front)[0]
    _, cost, size = next(r for r in rows if r[0] == target)
    x, y = cell_position(page, "chart-pareto", cost, size)
    with page.expect_navigation():
        page.mouse.click(x, y)
    clicked = page.url.rsplit("/", 1)[1]
    assert clicked in {i for i, c, s in rows if (c, s) == (cost, size)}


def test_a_candidate_that_prints_script_runs_no_script(page, server, runs):
    xss = runs.ids["xss"]
    ((hostile,),) = runs.sql("SELECT id FROM programs WHERE run_id = ? AND seq = 0", xss)
    for path in (f"runs/{xss}/programs/{hostile}", f"runs/{xss}", f"runs/{xss}/failures", ""):
        visit(page, server.url + path)
        page.wait_for_timeout(300)  # let any injected handler fire
        assert page.evaluate("typeof window.__evoforge_xss") == "undefined", path
        assert page.locator("img").count() == 0, path
    visit(page, f"{server.url}runs/{xss}/programs/{hostile}")
    artifacts = page.inner_text("#artifacts")
    assert artifacts.count(XSS) == 2  # stdout and stderr, shown as text
    assert XSS in page.inner_text("#metrics-table") and XSS in page.inner_text("#source")
    screenshot(page, "xss-program")
    assert page.problems == []


@pytest.fixture
def test_page(chromium):
    """A page whose own Content-Security-Policy does not apply to the test's injected polling
    (older Playwright runs wait_for_function predicates through eval). Only for the live test:
    the others keep the page's CSP, so they see any violation the page itself causes."""
    context = chromium.new_context(viewport={"width": 1300, "height": 1000}, bypass_csp=True)
    page = context.new_page()
    page.problems = []
    page.on("pageerror", lambda e: page.problems.append(f"page error: {e}"))
    yield page
    context.close()


def test_a_live_run_is_followed(test_page, tmp_path):
    page = test_page
    db = tmp_path / "live.db"
    run = evoforge("run", "circle_packing", "--budget", 5000, "--workers", 1, "--db", db, "-q")
    server = None
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            assert run.poll() is None, run.communicate()
            try:
                with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
                    if conn.execute("SELECT count(*) FROM programs").fetchone()[0] >= 3:
                        (run_id,) = conn.execute("SELECT id FROM runs").fetchone()
                        break
            except sqlite3.OperationalError:
                pass  # not created yet
            time.sleep(0.1)
        else:
            raise AssertionError("the run recorded nothing in 120 s")
        server = Server(db)
        visit(page, f"{server.url}runs/{run_id}", "chart-best")
        assert page.is_visible("#live")
        first = int(page.inner_text("#card-evaluations").split("/")[0])
        # No reload: the page polls the API and redraws.
        page.wait_for_function(
            "(n) => parseInt(document.getElementById('card-evaluations').textContent) > n",
            arg=first + 5,
            timeout=60_000,
        )
        later = int(page.inner_text("#card-evaluations").split("/")[0])
        assert later > first + 5
        screenshot(page, "run-live")
        visit(page, server.url)
        assert re.search(r"running", page.inner_text("#runs-table"))
        assert page.problems == []
    finally:
        if run.poll() is None:
            run.send_signal(signal.SIGINT)
            run.communicate(timeout=60)
        if server is not None:
            server.stop()


def test_the_failures_page_shows_failed_model_calls_and_why_the_run_failed(page, tmp_path):
    # A model without its key brings no program: the page says so, as `evoforge failures` does.
    db = tmp_path / "models.db"
    proc = evoforge(
        "run", "trivial", "--model", "openai/gpt-4o-mini", "--budget", 5, "--db", db, "-q",
        without=("OPENAI_API_KEY", "OPENAI_ADMIN_KEY"),
    )  # fmt: skip
    out, err = proc.communicate(timeout=300)
    assert proc.returncode != 0 and "no model can be reached" in out + err, out + err
    with sqlite3.connect(db) as conn:
        ((run_id,),) = conn.execute("SELECT id FROM runs").fetchall()
    conn.close()
    served = Server(db)
    try:
        visit(page, served.url + f"runs/{run_id}/failures")
        page.wait_for_selector("#model-errors-table tbody tr")
        screenshot(page, "failures-model-calls")
        table = page.locator("#model-errors-table").inner_text()
        assert "auth" in table and "openai/gpt-4o-mini" in table
        assert "--model offline/mutator" in table  # the fix
        assert "model calls failed" in page.locator("#model-errors-note").inner_text()
        stop = page.locator("#stop-reason").inner_text()
        assert stop.startswith("The run failed: no model can be reached")
        assert page.locator("#chart-failures").is_hidden()  # no program failed
        assert page.problems == []
    finally:
        served.stop()
