"""Retry policy, Retry-After parsing and the retry loop, without a server."""

from __future__ import annotations

import asyncio
import email.utils

import numpy as np
import pytest

from evoforge.evolve.models import REDACTED
from evoforge.evolve.models._retry import (
    EmptyAnswer,
    Failure,
    ModelError,
    RetryPolicy,
    call_with_retries,
    classify,
    parse_retry_after,
)


class Sleeps(list):
    """An injected ``sleep`` that records each wait instead of sleeping."""

    async def __call__(self, seconds: float) -> None:
        self.append(seconds)


def scripted(*outcomes):
    """A call that raises or returns ``outcomes`` in order."""
    remaining = list(outcomes)

    async def call():
        outcome = remaining.pop(0)
        if isinstance(outcome, BaseException):
            raise outcome
        return outcome

    return call


@pytest.mark.parametrize(
    ("value", "seconds"),
    [("3", 3.0), ("1.5", 1.5), (" 0 ", 0.0), ("-4", 0.0), ("soon", None), (None, None),
     ("nan", None)],
)  # fmt: skip
def test_retry_after_in_seconds(value, seconds) -> None:
    assert parse_retry_after(value) == seconds


def test_retry_after_as_an_http_date() -> None:
    now = 1_800_000_000.0
    later = email.utils.formatdate(now + 42, usegmt=True)
    assert parse_retry_after(later, now=now) == 42.0
    earlier = email.utils.formatdate(now - 42, usegmt=True)
    assert parse_retry_after(earlier, now=now) == 0.0


def test_backoff_is_full_jitter_under_an_exponential_cap() -> None:
    policy = RetryPolicy(base_s=1.0, max_s=5.0)
    rng = np.random.default_rng(0)
    failure = Failure("server", "500")
    for attempt, ceiling in [(0, 1.0), (1, 2.0), (2, 4.0), (3, 5.0), (9, 5.0)]:
        waits = [policy.delay(attempt, failure, rng) for _ in range(300)]
        assert 0.0 <= min(waits) and max(waits) <= ceiling
        assert max(waits) > 0.9 * ceiling and min(waits) < 0.1 * ceiling  # spread, not fixed


def test_retry_after_is_honoured_and_capped() -> None:
    policy = RetryPolicy(max_retry_after_s=30.0)
    rng = np.random.default_rng(0)
    assert policy.delay(0, Failure("rate_limit", "429", 429, 7.0), rng) == 7.0
    assert policy.delay(0, Failure("rate_limit", "429", 429, 3600.0), rng) == 30.0


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"max_attempts": 0}, "max_attempts = 0: must be at least 1"),
        ({"base_s": -1.0}, "base_s = -1.0: must be at least 0"),
        ({"base_s": 10.0, "max_s": 5.0}, "max_s = 5.0: must be at least base_s"),
    ],
)
def test_policy_settings_are_checked(settings, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        RetryPolicy(**settings)


def test_transient_failures_are_retried_with_recorded_waits() -> None:
    sleeps = Sleeps()
    call = scripted(TimeoutError("read timed out"), ConnectionResetError("reset"), "answer")
    result, attempts = asyncio.run(
        call_with_retries(call, RetryPolicy(base_s=2.0), np.random.default_rng(1), sleep=sleeps)
    )
    assert result == "answer"
    assert [a.kind for a in attempts] == ["timeout", "connection"]
    assert [a.waited_s for a in attempts] == sleeps
    assert 0 <= sleeps[0] <= 2.0 and 0 <= sleeps[1] <= 4.0


def test_same_rng_same_waits() -> None:
    def waits(seed: int) -> list[float]:
        sleeps = Sleeps()
        call = scripted(*[TimeoutError()] * 3, "ok")
        asyncio.run(
            call_with_retries(call, RetryPolicy(), np.random.default_rng(seed), sleep=sleeps)
        )
        return list(sleeps)

    assert waits(3) == waits(3) != waits(4)


def test_a_failure_that_would_repeat_is_not_retried() -> None:
    sleeps = Sleeps()
    call = scripted(ValueError("a bug in a provider plugin"), "never reached")
    with pytest.raises(ModelError) as info:
        asyncio.run(
            call_with_retries(
                call, RetryPolicy(), np.random.default_rng(0), sleep=sleeps, what="bad/model"
            )
        )
    error = info.value
    assert (error.kind, len(error.attempts), sleeps) == ("other", 1, [])
    assert str(error).startswith("bad/model: other (not retryable): ValueError: a bug")
    assert error.__cause__ is None and error.__context__ is None  # no unredacted traceback


def test_empty_answers_are_their_own_kind_and_not_retried() -> None:
    call = scripted(EmptyAnswer("openai/x answered with no text"), "never reached")
    with pytest.raises(ModelError) as info:
        asyncio.run(call_with_retries(call, RetryPolicy(), np.random.default_rng(0)))
    assert info.value.kind == "empty" and len(info.value.attempts) == 1


def test_out_of_attempts_carries_every_attempt(monkeypatch) -> None:
    monkeypatch.setenv("SOME_PROVIDER_TOKEN", "tok-0123456789")
    sleeps = Sleeps()
    call = scripted(*[ConnectionRefusedError("refused with tok-0123456789")] * 3)
    with pytest.raises(ModelError) as info:
        asyncio.run(
            call_with_retries(
                call, RetryPolicy(max_attempts=3), np.random.default_rng(0), sleep=sleeps
            )
        )
    error = info.value
    assert error.kind == "connection" and len(error.attempts) == 3
    assert [a.waited_s for a in error.attempts] == [*sleeps, 0.0]
    assert "after 3 attempts" in str(error)
    assert all(
        a.message == f"ConnectionRefusedError: refused with {REDACTED}" for a in error.attempts
    )
    assert "tok-0123456789" not in str(error)


def test_cancellation_is_not_a_failure() -> None:
    call = scripted(asyncio.CancelledError())
    with pytest.raises(asyncio.CancelledError):
        asyncio.run(call_with_retries(call, RetryPolicy(), np.random.default_rng(0)))


def test_classify_reads_status_codes_of_sdk_style_errors() -> None:
    class StatusError(Exception):
        def __init__(self, status: int, headers: dict[str, str] | None = None) -> None:
            super().__init__(f"HTTP {status}")
            self.status_code = status
            self.litellm_response_headers = headers or {}

    kinds = {s: classify(StatusError(s)).kind for s in (400, 401, 402, 403, 404, 408, 413, 422)}
    assert kinds == {400: "bad_request", 401: "auth", 402: "auth", 403: "auth", 404: "not_found",
                     408: "timeout", 413: "bad_request", 422: "bad_request"}  # fmt: skip
    assert [classify(StatusError(s)).kind for s in (500, 502, 503, 529)] == ["server"] * 4
    limited = classify(StatusError(429, {"retry-after-ms": "1500", "retry-after": "2"}))
    assert (limited.kind, limited.status_code, limited.retry_after_s) == ("rate_limit", 429, 1.5)
    assert classify(StatusError(429, {"retry-after": "2"})).retry_after_s == 2.0
    assert classify(StatusError(418)).kind == "other"
