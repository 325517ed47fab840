"""Issue 3 acceptance: the real ``evoforge`` command against an OpenAI-compatible server.

Every test runs the CLI as a subprocess with a throw-away archive and talks HTTP to
:mod:`tests.evolve.openai_server` on 127.0.0.1, whose default answers are the offline model's
edits in a real model's prose, so runs improve as they would with a real model. Each test
reads what the run left in SQLite and checks it against what the server saw.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
import sys
import time
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from evoforge.archive import Status
from tests.conftest import ROOT
from tests.evolve.openai_server import OpenAIServer
from tests.evolve.test_cli_process import wait_for_programs

pytestmark = pytest.mark.slow

MODEL = "openai/gpt-4o-mini"  # litellm prices it, so calls have a cost
UNPRICED = "openai/evoforge-fake"  # litellm has no price for it: cost unknown
SEED_SCORE = 2.240496453  # sum of radii of circle_packing's seed
KEY = "sk-evoforge-SECRET-7c41e09b5fd2a863"  # recognisable; its random tail must not leak either
# No known key shape: only evoforge's redaction of the values of secret-named variables
# (MY_KEY here) can catch it.
NAMED_KEY = "evoforge-named-credential-d05e8f2b91a4c736"
FAST_RETRIES = "[retry]\nbase_s = 0.05\nmax_s = 0.2\n"
# Outage tests fail calls as fast as they go: the outage, not the failed-streak limit, must end
# the run.
NO_STREAK_LIMIT = "max_failed_streak = 1000000\n"
_PROXIES = ("http_proxy", "https_proxy", "all_proxy")


# --- helpers ---------------------------------------------------------------------------------


def environment(**extra: str) -> dict[str, str]:
    """The CLI's environment: the test's (isolated HOME), the fake key, no proxy for 127.0.0.1."""
    env = {k: v for k, v in os.environ.items() if k.lower() not in _PROXIES}
    env.update(PYTHONPATH=str(ROOT), OPENAI_API_KEY=KEY, NO_PROXY="127.0.0.1,localhost", **extra)
    return env


def evoforge(*args: Any, env: dict[str, str] | None = None) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "evoforge", *map(str, args)],
        env=env or environment(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def finish(*args: Any, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """Run ``evoforge ARGS`` to its end."""
    proc = evoforge(*args, env=env)
    out, err = proc.communicate(timeout=240)
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def query(db: Path, sql: str, *params: Any) -> list[dict[str, Any]]:
    with closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as conn:
        conn.row_factory = sqlite3.Row
        return [dict(row) for row in conn.execute(sql, params)]


def the_run(db: Path) -> dict[str, Any]:
    (run,) = query(db, "SELECT * FROM runs")
    return run


def config_file(tmp_path: Path, text: str) -> Path:
    """A ``--config`` TOML file with ``text`` (a new file each call)."""
    path = tmp_path / f"run-{len(list(tmp_path.glob('run-*.toml')))}.toml"
    path.write_text(text)
    return path


def serve(port: int = 0) -> tuple[subprocess.Popen, str]:
    """The fake server as a subprocess (so it can be killed); returns it and its URL."""
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.evolve.openai_server", "--port", str(port)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
        env=environment(),
    )
    line = process.stdout.readline().strip()  # blocks until it listens
    assert line.startswith("READY http://127.0.0.1:"), line
    return process, line.removeprefix("READY ")


def stop(process: subprocess.Popen) -> None:
    process.kill()
    process.stdout.close()
    process.wait(timeout=30)


def integrity(db: Path) -> str:
    with closing(sqlite3.connect(db)) as conn:
        return conn.execute("PRAGMA integrity_check").fetchone()[0]


def assert_no_key(where: str, data: str | bytes, *secrets: str) -> None:
    for secret in secrets:
        for text in (secret, secret.rsplit("-", 1)[1]):  # the whole key, and its random tail
            needle = text.encode() if isinstance(data, bytes) else text
            assert needle not in data, f"{text!r} leaked into {where}"


# --- 1. a run improves, and every call is accounted for ------------------------------------


def test_a_run_improves_and_every_call_is_in_the_archive(tmp_path):
    """A two-model ensemble: one model litellm prices, and one it does not (cost unknown:
    NULL, never 0). One run covers both, as a run's start-up costs seconds."""
    db = tmp_path / "improve.db"
    with OpenAIServer() as server:
        done = finish(
            "run", "circle_packing", "--no-tune", "--model", MODEL, "--model", UNPRICED,
            "--api-base", server.url, "--budget", 60, "--workers", 2, "--db", db, "-q",
        )  # fmt: skip
        requests = server.chat_requests()
    assert done.returncode == 0, done.stderr
    run = the_run(db)
    assert run["status"] == "finished" and run["evaluations"] == 60
    (seed,) = query(db, "SELECT * FROM programs WHERE seq = 0")
    assert seed["score"] == pytest.approx(SEED_SCORE, abs=1e-9) and seed["model"] is None
    assert run["best_score"] > SEED_SCORE
    assert f"Best  sum_radii={run['best_score']:.10g}" in done.stdout

    calls = query(db, "SELECT * FROM llm_calls ORDER BY id")
    assert {c["status"] for c in calls} == {"ok"}
    assert len(calls) == len(requests)  # one row per request the server answered
    assert {r.body["model"] for r in requests} == {"gpt-4o-mini", "evoforge-fake"}
    assert {r.headers["authorization"] for r in requests} == {f"Bearer {KEY}"}
    for call in calls:
        assert call["prompt_tokens"] >= 1 and call["completion_tokens"] >= 1
        assert call["error"] is None and call["attempt"] == 1
    priced = [c for c in calls if c["model"] == MODEL]
    unpriced = [c for c in calls if c["model"] == UNPRICED]
    assert priced and unpriced and len(priced) + len(unpriced) == len(calls)
    assert all(c["cost_usd"] > 0 for c in priced)
    assert all(c["cost_usd"] is None for c in unpriced)
    assert run["tokens_in"] == sum(c["prompt_tokens"] for c in calls)
    assert run["tokens_out"] == sum(c["completion_tokens"] for c in calls)
    assert run["cost_usd"] == pytest.approx(sum(c["cost_usd"] for c in priced))

    # Every program a model wrote names that model (the model of its call); an answer carried
    # to the run's best (no call of its own) names the model of the child it improved.
    children = query(
        db,
        "SELECT id, model, status, evaluations, edit_kind, inspirations_json "
        "FROM programs WHERE seq > 0",
    )
    wrote = {c["program_id"]: c["model"] for c in calls if c["program_id"] is not None}
    used = sum(c["evaluations"] for c in children if Status(c["status"]).evaluated)
    assert used == 59  # the seed took the 60th
    called = [c for c in children if c["edit_kind"] != "carry"]
    assert {c["id"]: c["model"] for c in called} == wrote
    for carried in (c for c in children if c["edit_kind"] == "carry"):
        (child,) = json.loads(carried["inspirations_json"])
        assert carried["model"] == wrote[child]


# --- 2. rate limits and server errors are retried, and recorded ----------------------------


def test_rate_limits_and_server_errors_are_retried_and_recorded(tmp_path):
    db, config = tmp_path / "faults.db", config_file(tmp_path, FAST_RETRIES)
    with OpenAIServer(faults="ok,429:1,ok,500,ok", cycle=True) as server:
        done = finish(
            "run", "circle_packing", "--no-tune", "--model", MODEL, "--api-base", server.url,
            "--budget", 20, "--workers", 2, "--config", config, "--db", db, "-q",
            env=environment(EVOFORGE_LOG="info"),
        )  # fmt: skip
        replies = list(server.replies)
    assert done.returncode == 0, done.stderr
    run = the_run(db)
    assert run["status"] == "finished" and run["evaluations"] == 20

    calls = query(db, "SELECT * FROM llm_calls ORDER BY id")
    statuses = [reply.status for reply in replies]
    assert sum(c["status"] == "ok" for c in calls) == statuses.count(200)
    assert sum(c["status"] != "ok" for c in calls) == len(statuses) - statuses.count(200)
    retries = [c for c in calls if c["status"] == "retry"]
    limited = [c for c in retries if c["error_kind"] == "rate_limit"]
    server_errors = [c for c in retries if c["error_kind"] == "server"]
    assert limited and server_errors
    for row in limited:
        assert (row["status_code"], row["retry_after_s"]) == (429, 1.0)
        assert row["waited_s"] == pytest.approx(1.0)
    for row in server_errors:
        assert row["status_code"] == 500 and row["retry_after_s"] is None
        assert 0.0 <= row["waited_s"] <= 0.2  # [retry] max_s
    # A retried attempt belongs to a call that went on: to an answer whose row counts the
    # attempts, or to an error.
    ok_attempts = {c["seq"]: c["attempt"] for c in calls if c["status"] == "ok"}
    for row in retries:
        assert ok_attempts.get(row["seq"], 0) > row["attempt"] or any(
            c["seq"] == row["seq"] and c["status"] == "error" for c in calls
        )

    # The client really waited what Retry-After asked: a retry (the same request body) comes
    # at least 1 s after the 429 was sent.
    gaps = []
    for k, reply in enumerate(replies):
        if reply.status == 429:
            again = next(
                (r for r in replies[k + 1 :] if r.request.body == reply.request.body), None
            )
            if again is not None:
                gaps.append(again.request.received_s - reply.sent_s)
    assert gaps and min(gaps) >= 0.99, gaps

    shown = re.findall(
        rf"model call \d+ to {MODEL}: (\w+) \(attempt \d\), retrying in", done.stderr
    )
    assert sorted(shown) == sorted(row["error_kind"] for row in retries)
    assert re.search(r": rate_limit \(attempt \d\), retrying in 1\.0 s", done.stderr)
    # diagnostics never reach stdout (litellm's own handlers would print its records there)
    assert "LiteLLM" not in done.stdout


# --- 3. an outage stops the run; resume finishes it ----------------------------------------


def test_an_outage_stops_the_run_and_resume_finishes_it(tmp_path):
    db = tmp_path / "outage.db"
    config = config_file(tmp_path, NO_STREAK_LIMIT + FAST_RETRIES)
    outage_s, budget = 3.0, 30
    server, url = serve()
    port = int(url.rsplit(":", 1)[1].split("/")[0])
    proc = evoforge(
        "run", "circle_packing", "--no-tune", "--model", MODEL, "--api-base", url,
        "--outage", outage_s, "--budget", budget, "--workers", 2, "--config", config,
        "--db", db, "-q",
    )  # fmt: skip
    try:
        wait_for_programs(db, 6, proc)  # the server has answered several calls
        stop(server)  # SIGKILL: the provider vanishes mid-run
        killed = time.monotonic()
        out, err = proc.communicate(timeout=120)
        took = time.monotonic() - killed
    finally:
        stop(server)
        proc.kill()  # only if it is still running
    assert proc.returncode == 1, err
    assert took < outage_s + 20, f"the run took {took:.1f} s to give up"
    run = the_run(db)
    assert run["status"] == "failed" and run["evaluations"] < budget
    assert f"Run {run['id']} failed: every model has been failing for" in out
    assert f"{MODEL}: last error connection" in out
    assert f"evoforge resume {run['id']} --db {db}" in out and "Traceback" not in err
    assert "never awaited" not in err  # the failed run shut its model clients down
    errors = query(db, "SELECT * FROM llm_calls WHERE status = 'error'")
    assert errors and {e["error_kind"] for e in errors} == {"connection"}
    assert {e["attempt"] for e in errors} == {4}  # each retried before it counted as failed
    assert integrity(db) == "ok"

    server, again = serve(port)  # the provider is back, where it was
    try:
        resumed = finish("resume", run["id"], "--db", db, "-q")
    finally:
        stop(server)
    assert again == url
    assert resumed.returncode == 0, resumed.stderr
    run = the_run(db)
    assert run["status"] == "finished" and run["evaluations"] == budget
    events = [e["kind"] for e in query(db, "SELECT kind FROM events ORDER BY id")]
    assert events.index("run_fail") < events.index("run_resume") and events[-1] == "run_finish"
    assert integrity(db) == "ok"


# --- 4. keys never leak ----------------------------------------------------------------------


def _everything(db: Path, *outputs: str) -> list[tuple[str, str | bytes]]:
    """Each place a key could end up: the database files and the texts given."""
    files = [db, Path(f"{db}-wal"), Path(f"{db}-shm")]
    places: list[tuple[str, str | bytes]] = [(p.name, p.read_bytes()) for p in files if p.exists()]
    return places + [(f"output {k}", text) for k, text in enumerate(outputs)]


def _inspect(db: Path, run_id: str) -> list[str]:
    """``evoforge status --json`` of the run and ``show --json`` of its best program (the seed
    when nothing beat it), checked to work."""
    commands = [("status", run_id), ("show", the_run(db)["best_program_id"])]
    texts = []
    for command in commands:
        done = finish(*command, "--db", db, "--json")
        assert done.returncode == 0, done.stderr
        json.loads(done.stdout)
        texts += [done.stdout, done.stderr]
    return texts


def test_keys_never_leak(tmp_path):
    debug = environment(EVOFORGE_LOG="debug")

    # (a) The key is sent, and (b) a provider that quotes it back in errors (500s, retried)
    # gets nowhere: not into the archive, the output or the debug log.
    db = tmp_path / "sent.db"
    with OpenAIServer(faults="500,ok,500,ok,ok", cycle=True, echo_auth=True) as server:
        done = finish(
            "run", "circle_packing", "--no-tune", "--model", MODEL, "--api-base", server.url,
            "--budget", 6, "--workers", 2, "--config", config_file(tmp_path, FAST_RETRIES),
            "--db", db, env=debug,
        )  # fmt: skip
        requests = server.chat_requests()
    assert done.returncode == 0, done.stderr
    assert requests and {r.headers["authorization"] for r in requests} == {f"Bearer {KEY}"}
    quoted = query(db, "SELECT error FROM llm_calls WHERE status = 'retry'")
    assert quoted and all("the key sent was [REDACTED]" in row["error"] for row in quoted)
    run_id = the_run(db)["id"]
    for where, data in _everything(db, done.stdout, done.stderr, *_inspect(db, run_id)):
        assert_no_key(where, data, KEY)

    # A 401 that quotes the key, on every call: the run stops on the outage and says why.
    db = tmp_path / "rejected.db"
    with OpenAIServer(api_key="the-right-key-000") as server:
        done = finish(
            "run", "circle_packing", "--no-tune", "--model", MODEL, "--api-base", server.url,
            "--outage", 1, "--budget", 50, "--workers", 2,
            "--config", config_file(tmp_path, NO_STREAK_LIMIT), "--db", db, env=debug,
        )  # fmt: skip
        requests = server.chat_requests()
    assert done.returncode == 1, done.stderr
    assert requests[0].headers["authorization"] == f"Bearer {KEY}"
    # A refused key ends the run at once (no model can be reached), naming the model.
    assert "no model can be reached: missing or refused credentials" in done.stdout
    assert MODEL in done.stdout and "--model offline/mutator" in done.stdout
    assert "Incorrect API key provided: [REDACTED]" in done.stdout
    run = the_run(db)
    assert run["status"] == "failed" and "[REDACTED]" in run["stop_reason"]
    for where, data in _everything(db, done.stdout, done.stderr, *_inspect(db, run["id"])):
        assert_no_key(where, data, KEY)

    # The key may come from a variable the settings name (api_key_env); the archive stores the
    # name. This key has no known shape, and the provider quotes it back bare in its 500s.
    db = tmp_path / "named.db"
    with OpenAIServer(api_key=NAMED_KEY, faults="500,ok", cycle=True, echo_auth=True) as server:
        settings = config_file(
            tmp_path,
            f'[[models]]\nmodel = "{MODEL}"\napi_base = "{server.url}"\napi_key_env = "MY_KEY"\n'
            + FAST_RETRIES,
        )
        done = finish(
            "run", "circle_packing", "--no-tune", "--budget", 4, "--workers", 1,
            "--config", settings, "--db", db,
            env=environment(EVOFORGE_LOG="debug", MY_KEY=NAMED_KEY),
        )  # fmt: skip
        requests = server.chat_requests()
    assert done.returncode == 0, done.stderr  # OPENAI_API_KEY would have been refused
    assert {r.headers["authorization"] for r in requests} == {f"Bearer {NAMED_KEY}"}
    stored = json.loads(the_run(db)["config_json"])
    assert [m["api_key_env"] for m in stored["models"]] == ["MY_KEY"]
    quoted = query(db, "SELECT error FROM llm_calls WHERE status = 'retry'")
    assert quoted and all("the key sent was [REDACTED]" in row["error"] for row in quoted)
    for where, data in _everything(db, done.stdout, done.stderr):
        assert_no_key(where, data, KEY, NAMED_KEY)
