"""The dashboard's suite page, served by the real ``evoforge ui`` process: each task's best and
ratios, the suite's metrics, the allocation over time, and the suites on the runs page."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("starlette", reason='the dashboard needs its extra: pip install "evoforge[ui]"')

from tests.evolve.dashboard.conftest import Server, screenshot  # noqa: E402
from tests.evolve.dashboard.test_app import get  # noqa: E402
from tests.evolve.suite_history import build_suite_archive  # noqa: E402

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def suite_server(tmp_path_factory):
    db = tmp_path_factory.mktemp("suite") / "s.db"
    suite_id = build_suite_archive(db)
    served = Server(db)
    served.suite_id = suite_id
    yield served
    served.stop()


def test_the_suite_page_says_what_each_task_got_and_gained(suite_server):
    data = json.loads(get(suite_server.url + f"api/suites/{suite_server.suite_id}")[2])
    assert (data["spent"], data["budget"], data["granted"]) == (20, 30, 20)
    rows = {t["problem"]: t for t in data["task_rows"]}
    assert rows["pie_a"]["vs_seed"] == pytest.approx(2.0)
    assert rows["pie_a"]["speedups"] == {"seed": 2.0, "O3": pytest.approx(1.8)}
    assert (rows["pie_a"]["granted"], rows["pie_a"]["grants"]) == (15, 2)
    assert data["geomean_vs_seed"] == pytest.approx(2.0**0.5)
    assert data["metrics"]["geomean"]["seed"] == pytest.approx(2.0**0.5)
    assert data["metrics"]["fast_p"]["seed"]["1.5"] == 0.5
    assert data["allocation"] == "bandit"
    caps = {a["problem"]: [p[2] for p in a["points"]] for a in data["caps"]}
    assert caps == {"pie_a": [5, 15], "pie_b": [5]}
    status, _, body = get(suite_server.url + f"suites/{suite_server.suite_id}")
    assert status == 200 and 'id="chart-allocation"' in body
    assert get(suite_server.url + "suites/suite-nothing")[0] == 404
    task_page = get(suite_server.url + "runs/pie_a-run")[2]
    assert f'href="/suites/{suite_server.suite_id}" id="link-suite"' in task_page


def test_the_runs_page_lists_the_suites(suite_server):
    data = json.loads(get(suite_server.url + "api/runs")[2])
    (suite,) = data["suites"]
    assert (suite["id"], suite["tasks"], suite["spent"]) == (suite_server.suite_id, 2, 20)


def test_the_suite_page_loads_in_a_browser_without_errors(page, suite_server):
    response = page.goto(suite_server.url, wait_until="load")
    assert response.status == 200
    page.click(f"#suites-table a[href='/suites/{suite_server.suite_id}']")
    page.wait_for_selector("#tasks-table tbody tr")
    assert page.locator("#tasks-table tbody tr").count() == 2
    assert page.locator("#chart-allocation .main-svg").count() >= 1
    assert "1.414x" in page.text_content("#card-geomean")
    assert "allocated by bandit" in page.text_content("#suite-note")
    screenshot(page, "suite")
    assert page.problems == []
