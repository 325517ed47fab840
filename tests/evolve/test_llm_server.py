"""The fake OpenAI server itself: routes, fault scripts, and the subprocess mode CLI tests use.

Plain HTTP with the standard library, so these tests do not depend on litellm.
"""

from __future__ import annotations

import http.client
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from evoforge.evolve.edits import apply_edit
from evoforge.evolve.prompts import CURRENT_PROGRAM_HEADING
from tests.evolve.openai_server import OpenAIServer
from tests.evolve.server_faults import Fault, parse_faults
from tests.evolve.test_offline import PARAMETRIC

ROOT = Path(__file__).resolve().parents[2]


def post(port: int, body: dict, path: str = "/v1/chat/completions") -> tuple[int, dict, dict]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.request("POST", path, json.dumps(body), {"Content-Type": "application/json"})
        response = conn.getresponse()
        return response.status, dict(response.getheaders()), json.loads(response.read())
    finally:
        conn.close()


def chat(seed: int = 1) -> dict:
    """A request shaped like evoforge's prompts: the program after the heading, fenced."""
    task = f"{CURRENT_PROGRAM_HEADING}\n```python\n{PARAMETRIC}```\nImprove it."
    messages = [
        {"role": "system", "content": "You improve programs."},
        {"role": "user", "content": task},
    ]
    return {"model": "gpt-4o-mini", "messages": messages, "seed": seed}


def test_fault_script_is_consumed_in_order_then_ok() -> None:
    with OpenAIServer(answer="fine", faults="429:2,500,503") as server:
        statuses = [post(server.port, chat())[0] for _ in range(5)]
        status, headers, body = post(server.port, chat())
    assert statuses == [429, 500, 503, 200, 200]
    assert body["choices"][0]["message"]["content"] == "fine"
    assert body["usage"]["total_tokens"] == body["usage"]["prompt_tokens"] + 1


def test_cycled_faults_repeat_and_429_carries_retry_after() -> None:
    with OpenAIServer(faults=["429:7", "ok"], cycle=True, answer="x") as server:
        results = [post(server.port, chat()) for _ in range(4)]
        assert len(server.chat_requests()) == 4
    assert [r[0] for r in results] == [429, 200, 429, 200]
    assert results[0][1]["Retry-After"] == "7"
    assert results[0][2]["error"]["type"] == "rate_limit_exceeded"


def test_drop_closes_the_connection_without_a_reply() -> None:
    with OpenAIServer(faults=["drop"]) as server:
        with pytest.raises(http.client.RemoteDisconnected):
            post(server.port, chat())
        assert post(server.port, chat())[0] == 200


def test_models_route_and_unknown_routes() -> None:
    with OpenAIServer() as server:
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
        conn.request("GET", "/v1/models")
        listed = json.loads(conn.getresponse().read())
        conn.close()
        status, _, body = post(server.port, {}, path="/v1/embeddings")
    assert [m["id"] for m in listed["data"]] == ["gpt-4o-mini", "evoforge-fake"]
    assert status == 404 and "no route" in body["error"]["message"]


def test_default_answer_is_seeded_and_applies() -> None:
    with OpenAIServer() as server:
        texts = [post(server.port, chat(seed))[2]["choices"][0]["message"]["content"]
                 for seed in (1, 1, 2, 3, 4)]  # fmt: skip
    assert texts[0] == texts[1] and len(set(texts[1:])) > 1
    for text in texts:
        assert apply_edit(PARAMETRIC, text).source != PARAMETRIC


def test_bad_fault_tokens_say_what_is_accepted() -> None:
    assert parse_faults("429:3, delay:0.5,drop") == [
        Fault("status", 429, "3"),
        Fault("delay", delay_s=0.5),
        Fault("drop"),
    ]
    with pytest.raises(ValueError, match="unknown fault 'teapot': expected ok, drop"):
        parse_faults("teapot")


def _start(port: int, *args: str) -> tuple[subprocess.Popen, str]:
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.evolve.openai_server", "--port", str(port), *args],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    line = process.stdout.readline().strip()  # blocks until the server is listening
    assert line.startswith("READY http://127.0.0.1:"), line
    return process, line.removeprefix("READY ")


def test_subprocess_serves_and_restarts_on_the_same_port() -> None:
    first, url = _start(0, "--faults", "503", "--answer", "from the subprocess")
    port = int(url.rsplit(":", 1)[1].split("/")[0])
    try:
        assert url == f"http://127.0.0.1:{port}/v1"
        assert post(port, chat())[0] == 503
        assert post(port, chat())[2]["choices"][0]["message"]["content"] == "from the subprocess"
    finally:
        first.send_signal(signal.SIGTERM)
        first.stdout.close()
        assert first.wait(timeout=10) == 0
    with pytest.raises(ConnectionRefusedError):
        post(port, chat())
    second, again = _start(port, "--answer", "back again")
    try:
        assert again == url
        assert post(port, chat())[2]["choices"][0]["message"]["content"] == "back again"
    finally:
        second.kill()
        second.stdout.close()
        second.wait(timeout=10)
