"""The dashboard's prompt-variants page, served by the real ``evoforge ui`` process over a real
archive with variants: linked from the run page, the same numbers as ``evoforge prompts``,
and a clear message for a run without variants."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("starlette", reason='the dashboard needs its extra: pip install "evoforge[ui]"')

from tests.evolve.dashboard.conftest import Server, screenshot  # noqa: E402
from tests.evolve.dashboard.test_app import get  # noqa: E402
from tests.evolve.prompt_history import build_prompt_archive  # noqa: E402

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def prompt_server(tmp_path_factory):
    db = build_prompt_archive(tmp_path_factory.mktemp("prompts") / "p.db")
    served = Server(db)
    yield served
    served.stop()


def test_the_run_page_links_to_its_prompt_variants(prompt_server):
    status, _, body = get(prompt_server.url + "runs/evolving")
    assert status == 200 and 'href="/runs/evolving/prompts"' in body


def test_the_prompts_page_shows_what_the_cli_shows(prompt_server):
    data = json.loads(get(prompt_server.url + "api/runs/evolving/prompts")[2])
    default, bank = data["variants"]
    assert [bank[k] for k in ("children", "evaluated", "improved", "best")] == [2, 2, 2, 4.0]
    assert bank["parent_id"] == default["id"]
    status, headers, body = get(prompt_server.url + "runs/evolving/prompts")
    assert status == 200 and "script-src 'self';" in headers["content-security-policy"]
    assert f'<tr data-variant="{bank["id"]}"' in body
    assert f'<a href="#variant-{default["id"]}">{default["id"]}</a>' in body
    assert ">100%<" in body and ">50%<" in body
    assert bank["change"].split(": ", 1)[1] in body  # the first changed line
    assert "$problem_name" in body  # templates are shown as written


def test_a_run_without_variants_says_how_to_turn_them_on(prompt_server):
    status, _, body = get(prompt_server.url + "runs/plain/prompts")
    assert status == 200 and 'id="prompts-off"' in body
    assert "set [search] prompt_evolution = true" in body
    assert get(prompt_server.url + "runs/ghost/prompts")[0] == 404


def test_the_prompts_page_loads_in_a_browser_without_errors(page, prompt_server):
    response = page.goto(prompt_server.url + "runs/evolving", wait_until="load")
    assert response.status == 200
    page.click("#link-prompts")
    page.wait_for_selector("#variants-table")
    assert page.locator("#variants-table tbody tr").count() == 2
    page.locator("details.variant summary").first.click()
    assert page.locator("details.variant pre").first.is_visible()
    screenshot(page, "prompts")
    assert page.problems == [], page.problems
