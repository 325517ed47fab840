"""The model client against a real HTTP server speaking OpenAI, through litellm.

Every call goes over a socket to :class:`tests.evolve.openai_server.OpenAIServer` on
127.0.0.1; waits between attempts are recorded by an injected ``sleep`` instead of slept.
"""

from __future__ import annotations

import asyncio
import io
import logging

import numpy as np
import pytest

from evoforge.evolve.edits import apply_edit
from evoforge.evolve.models import REDACTED, ModelSpec
from evoforge.evolve.models._client import ModelError, complete
from evoforge.evolve.models._retry import RetryPolicy
from tests.evolve.openai_server import OpenAIServer
from tests.evolve.test_offline import PARAMETRIC
from tests.evolve.test_offline_provider import prompt

KEY_ENV = "EVOFORGE_TEST_KEY"
KEY = "fake-openai-key-7Qz9"  # no key shape: only the environment lets redaction catch it
MESSAGES = [{"role": "user", "content": "Say something."}]


class Sleeps(list):
    async def __call__(self, seconds: float) -> None:
        self.append(seconds)


@pytest.fixture(autouse=True)
def key(monkeypatch) -> str:
    monkeypatch.setenv(KEY_ENV, KEY)
    return KEY


def spec(server: OpenAIServer, model: str = "openai/gpt-4o-mini", **fields) -> ModelSpec:
    return ModelSpec(model, api_base=server.url, api_key_env=KEY_ENV, **fields)


def call(model: ModelSpec, messages=MESSAGES, *, sleeps: Sleeps | None = None, **kwargs):
    return asyncio.run(
        complete(
            model,
            messages,
            seed=7,
            rng=np.random.default_rng(0),
            sleep=sleeps if sleeps is not None else Sleeps(),
            **kwargs,
        )
    )


def test_an_answer_with_usage_cost_and_the_key_sent() -> None:
    with OpenAIServer(answer="Use a bigger constant.") as server:
        done = call(spec(server, temperature=0.3, max_tokens=99), max_tokens=5000)
        (request,) = server.chat_requests()
    assert (done.text, done.model, done.attempts) == (
        "Use a bigger constant.",
        spec(server).model,
        (),
    )
    assert done.prompt_tokens == 3 and done.completion_tokens == 5  # the server's len // 4
    assert done.cost_usd == pytest.approx(3 * 0.15e-6 + 5 * 0.6e-6)  # gpt-4o-mini's price
    assert request.headers["authorization"] == f"Bearer {KEY}"
    body = request.body
    assert (body["model"], body["seed"], body["temperature"], body["max_tokens"]) == (
        "gpt-4o-mini", 7, 0.3, 99,
    )  # fmt: skip


def test_an_unpriced_model_costs_none_not_zero() -> None:
    with OpenAIServer(answer="ok then") as server:
        done = call(spec(server, "openai/evoforge-fake"))
    assert done.cost_usd is None and done.prompt_tokens == 3


def test_no_usage_means_unknown_tokens_and_cost() -> None:
    with OpenAIServer(answer="fine", faults=["nousage"]) as server:
        done = call(spec(server))
    assert (done.prompt_tokens, done.completion_tokens, done.cost_usd) == (None, None, None)


def test_rate_limit_waits_what_retry_after_says() -> None:
    sleeps = Sleeps()
    with OpenAIServer(answer="after the wait", faults=["429:3", "429:5"]) as server:
        done = call(spec(server), sleeps=sleeps)
        assert len(server.chat_requests()) == 3
    assert done.text == "after the wait" and sleeps == [3.0, 5.0]
    assert [(a.kind, a.status_code, a.retry_after_s, a.waited_s) for a in done.attempts] == [
        ("rate_limit", 429, 3.0, 3.0),
        ("rate_limit", 429, 5.0, 5.0),
    ]


def test_retry_after_is_capped() -> None:
    sleeps = Sleeps()
    with OpenAIServer(answer="ok", faults=["429:86400"]) as server:
        call(spec(server), sleeps=sleeps, policy=RetryPolicy(max_retry_after_s=20.0))
    assert sleeps == [20.0]


@pytest.mark.parametrize(
    ("fault", "kind", "status"),
    [("500", "server", 500), ("503", "server", 503), ("drop", "connection", None),
     ("429", "rate_limit", 429)],
)  # fmt: skip
def test_transient_failure_then_ok(fault: str, kind: str, status: int | None) -> None:
    sleeps = Sleeps()
    policy = RetryPolicy(base_s=1.0)
    with OpenAIServer(answer="recovered", faults=[fault]) as server:
        done = call(spec(server), sleeps=sleeps, policy=policy)
        assert len(server.chat_requests()) == 2
    assert done.text == "recovered"
    ((attempt),) = done.attempts
    assert (attempt.kind, attempt.status_code, attempt.retry_after_s) == (kind, status, None)
    assert sleeps == [attempt.waited_s] and 0.0 <= attempt.waited_s <= 1.0  # full jitter


def test_timeout_is_retried() -> None:
    with OpenAIServer(answer="in time", faults=["delay:5"]) as server:
        done = call(spec(server, timeout_s=0.3))
    assert [a.kind for a in done.attempts] == ["timeout"]
    assert 0.25 < done.attempts[0].latency_s < 3.0


@pytest.mark.parametrize(
    ("fault", "kind"),
    [("401", "auth"), ("403", "auth"), ("404", "not_found"), ("400", "bad_request"),
     ("empty", "empty")],
)  # fmt: skip
def test_failures_that_would_repeat_are_not_retried(fault: str, kind: str) -> None:
    sleeps = Sleeps()
    with OpenAIServer(faults=[fault]) as server:
        with pytest.raises(ModelError) as info:
            call(spec(server), sleeps=sleeps)
        assert len(server.chat_requests()) == 1
    assert (info.value.kind, len(info.value.attempts), sleeps) == (kind, 1, [])


def test_a_reasoning_model_that_thought_until_max_tokens_is_told_so() -> None:
    # a server with a reasoning parser sends the thinking apart and no text when the
    # answer's tokens ran out first: the error says so and what to raise
    with OpenAIServer(faults=["thinking"]) as server:
        with pytest.raises(ModelError) as info:
            call(spec(server), max_tokens=256)
    assert info.value.kind == "empty"
    assert "only 1160 characters of reasoning" in str(info.value)
    assert "cut off at max_tokens (256) while it was still thinking" in str(info.value)
    assert "raise --max-tokens" in str(info.value)


def test_exhausted_retries_raise_with_every_attempt() -> None:
    sleeps = Sleeps()
    with OpenAIServer(faults=["503"], cycle=True) as server:
        with pytest.raises(ModelError) as info:
            call(spec(server), sleeps=sleeps, policy=RetryPolicy(max_attempts=4, base_s=0.5))
        assert len(server.chat_requests()) == 4  # litellm and the SDK retried nothing
    error = info.value
    assert error.kind == "server"
    assert [(a.kind, a.status_code) for a in error.attempts] == [("server", 503)] * 4
    assert [a.waited_s for a in error.attempts] == [*sleeps, 0.0] and len(sleeps) == 3
    assert str(error).startswith("openai/gpt-4o-mini: server after 4 attempts: ")
    assert error.latency_s >= sum(a.latency_s for a in error.attempts)


def test_an_unknown_provider_is_not_found_without_a_request() -> None:
    with pytest.raises(ModelError) as info:
        call(ModelSpec("nosuchprovider/model"))
    assert info.value.kind == "not_found" and len(info.value.attempts) == 1


def test_an_unset_key_variable_is_named_and_nothing_is_sent(monkeypatch) -> None:
    monkeypatch.delenv(KEY_ENV)
    with OpenAIServer(answer="never") as server:
        with pytest.raises(ModelError, match=f"{KEY_ENV} .*is not set; export") as info:
            call(spec(server))
        assert server.chat_requests() == []
    assert info.value.kind == "auth"


def test_a_key_quoted_by_the_provider_never_reaches_the_error_or_the_logs() -> None:
    """The server rejects the key and quotes it back, as careless providers do. No explicit
    set-up: preparing a model installs the log redaction."""
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    loggers = [logging.getLogger(n) for n in ("evoforge", "LiteLLM")]
    for logger in loggers:
        logger.addHandler(handler)
    try:
        with OpenAIServer(api_key="the-right-key-000") as server:
            with pytest.raises(ModelError) as info:
                call(spec(server))
            (request,) = server.chat_requests()
        assert request.headers["authorization"] == f"Bearer {KEY}"  # the key did reach it
        error = info.value
        logging.getLogger("evoforge").error("model call failed: %s", error.attempts[0].message)
        try:  # as litellm logs the exception of a failed call, with its traceback
            raise RuntimeError(f"OpenAIException - Incorrect API key provided: {KEY}")
        except RuntimeError:
            logging.getLogger("LiteLLM").exception("litellm.acompletion(): Exception occured")
    finally:
        for logger in loggers:
            logger.removeHandler(handler)
    assert error.kind == "auth"
    assert KEY not in str(error) and f"Incorrect API key provided: {REDACTED}" in str(error)
    assert all(KEY not in a.message for a in error.attempts)
    assert KEY not in stream.getvalue() and stream.getvalue().count(REDACTED) == 2


def test_default_answer_is_an_offline_edit_that_applies() -> None:
    with OpenAIServer() as server:
        first = call(spec(server), prompt())
        again = call(spec(server), prompt())
    assert first.text == again.text  # seeded by the request's seed and messages
    assert first.text.startswith("Looking at the current program")
    assert apply_edit(PARAMETRIC, first.text).source != PARAMETRIC
