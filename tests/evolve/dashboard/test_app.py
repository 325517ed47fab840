"""The dashboard over HTTP, served by the real ``evoforge ui`` process: safety headers, the
loopback rule, escaping, read-only access, and pages that say what the archive says."""

from __future__ import annotations

import hashlib
import json
import re
import urllib.error
import urllib.request

import pytest

pytest.importorskip("starlette", reason='the dashboard needs its extra: pip install "evoforge[ui]"')

from evoforge.evolve.dashboard import DashboardError, check_host, is_loopback  # noqa: E402
from tests.evolve.dashboard.conftest import XSS, evoforge  # noqa: E402

pytestmark = pytest.mark.slow


def get(url: str, headers: dict | None = None):
    request = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, dict(response.headers), response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read().decode()


def pages(runs) -> list[str]:
    cp, pair, xss = runs.ids["circle_packing"], runs.ids["pair"], runs.ids["xss"]
    ((best,),) = runs.sql("SELECT best_program_id FROM runs WHERE id = ?", cp)
    ((hostile,),) = runs.sql("SELECT id FROM programs WHERE run_id = ? AND seq = 0", xss)
    return [
        "",
        f"runs/{cp}",
        f"runs/{cp}/grid",
        f"runs/{cp}/grid?island=1",
        f"runs/{pair}/pareto",
        f"runs/{cp}/pareto",
        f"runs/{cp}/failures",
        f"runs/{cp}/programs/{best}",
        f"runs/{cp}/programs/{best}/lineage",
        f"compare?run={cp}&run={pair}",
        f"runs/{xss}/programs/{hostile}",
    ]


def test_every_page_is_served_with_the_safety_headers(server, runs):
    for path in pages(runs):
        status, headers, body = get(server.url + path)
        assert status == 200, (path, body[:500])
        csp = headers["content-security-policy"]
        assert "script-src 'self';" in csp and "frame-ancestors 'none'" in csp
        assert "unsafe-eval" not in csp
        assert headers["x-content-type-options"] == "nosniff"
        assert "server" not in {k.lower() for k in headers}
        # Offline: nothing is loaded from another origin.
        assert not re.search(r"""(src|href)=["']?(https?:)?//""", body), path
        assert "<script>" not in body.replace("<script src=", "")  # no inline script


def test_a_page_asked_for_by_another_host_name_is_refused(server):
    """DNS rebinding: a web page whose name resolves to 127.0.0.1 gets nothing."""
    status, _, _ = get(server.url, headers={"Host": "attacker.example"})
    assert status == 400
    assert get(server.url, headers={"Host": "localhost"})[0] == 200


def test_hostile_text_is_escaped(server, runs):
    xss = runs.ids["xss"]
    ((hostile,),) = runs.sql("SELECT id FROM programs WHERE run_id = ? AND seq = 0", xss)
    _, _, body = get(f"{server.url}runs/{xss}/programs/{hostile}")
    assert "<script>window.__evoforge_xss" not in body and "<img src=x" not in body
    assert body.count("&lt;script&gt;window.__evoforge_xss = 1&lt;/script&gt;") >= 3
    # The page's JSON cannot end its <script> element either.
    data = re.search(r'<script type="application/json" id="page-data">(.*?)</script>', body, re.S)
    assert data and "<" not in data.group(1)
    assert json.loads(data.group(1))["program"]["metrics"]["echo"] == XSS


def test_the_api_says_what_the_archive_says(server, runs):
    cp = runs.ids["circle_packing"]
    _, _, body = get(f"{server.url}api/runs/{cp}")
    data = json.loads(body)
    statuses = dict(
        runs.sql("SELECT status, count(*) FROM programs WHERE run_id = ? GROUP BY 1", cp)
    )
    assert data["statuses"] == statuses and data["evaluations"] == 60
    ((best,),) = runs.sql(
        "SELECT max(json_extract(objectives_json, '$.sum_radii')) FROM programs WHERE run_id = ?",
        cp,
    )
    assert data["best"] == best and data["objective"] == "sum_radii"
    top = runs.sql(
        "SELECT id FROM programs WHERE run_id = ? AND status = 'ok' ORDER BY score DESC, seq "
        "LIMIT 10",
        cp,
    )
    assert [p["id"] for p in data["top"]] == [i for (i,) in top]
    listed = json.loads(get(server.url + "api/runs")[2])["runs"]
    assert {r["id"] for r in listed} == set(runs.ids.values())


def test_grid_cells_hold_the_elites(server, runs):
    pair = runs.ids["pair"]
    data = json.loads(get(f"{server.url}api/runs/{pair}/grid")[2])
    elites = runs.sql(
        "SELECT e.cell, e.program_id, json_extract(p.objectives_json, '$.cost') FROM elites e "
        "JOIN programs p ON p.run_id = e.run_id AND p.id = e.program_id "
        "WHERE e.run_id = ? AND e.island = -1",
        pair,
    )
    shown = {
        (r, c): (data["ids"][r][c], data["z"][r][c])
        for r in range(len(data["z"]))
        for c in range(len(data["z"][r]))
        if data["ids"][r][c]
    }
    # cell = a_bin * 4 + b_bin; x is a (5 bins), y is b (4 bins); cost shown as it is
    assert shown == {(cell % 4, cell // 4): (pid, cost) for cell, pid, cost in elites}


def test_unknown_things_are_404_pages(server, runs):
    cp = runs.ids["circle_packing"]
    for path in ("runs/nope", f"runs/{cp}/programs/0000", f"runs/{cp}/grid?island=99", "x/y"):
        status, headers, body = get(server.url + path)
        assert status == 404, path
        assert "content-security-policy" in headers
    status, _, body = get(f"{server.url}api/runs/nope")
    assert status == 404 and "no run 'nope'" in json.loads(body)["error"]


def test_source_download_is_plain_text(server, runs):
    xss = runs.ids["xss"]
    ((hostile, source),) = runs.sql(
        "SELECT id, source FROM programs WHERE run_id = ? AND seq = 0", xss
    )
    status, headers, body = get(f"{server.url}runs/{xss}/programs/{hostile}/source.py")
    assert status == 200 and body == source
    assert headers["content-type"].startswith("text/plain")
    assert headers["content-disposition"] == f'attachment; filename="{hostile}.py"'


def test_the_dashboard_never_writes_the_archive(server, runs):
    before = hashlib.sha256(runs.db.read_bytes()).hexdigest()
    for path in pages(runs):
        assert get(server.url + path)[0] == 200
        assert get(server.url + "api/" + (path or "runs"))[0] in (200, 404)
    assert hashlib.sha256(runs.db.read_bytes()).hexdigest() == before


@pytest.mark.parametrize(
    ("host", "loopback"),
    [("127.0.0.1", True), ("127.8.0.1", True), ("localhost", True), ("::1", True),
     ("[::1]", True), ("0.0.0.0", False), ("192.168.1.4", False), ("example.com", False)],
)  # fmt: skip
def test_loopback_addresses(host, loopback):
    assert is_loopback(host) is loopback
    if not loopback:
        with pytest.raises(DashboardError, match="--allow-remote"):
            check_host(host, allow_remote=False)
        check_host(host, allow_remote=True)


def test_ui_refuses_a_public_address_without_consent(runs):
    proc = evoforge("ui", "--db", runs.db, "--host", "0.0.0.0", "--port", 0)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 1
    assert "refusing to serve on 0.0.0.0" in err and "--allow-remote" in err
    assert "Traceback" not in err


def test_ui_without_an_archive_says_so(tmp_path):
    proc = evoforge("ui", "--db", tmp_path / "none.db", "--port", 0)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 1 and "no archive at" in err
