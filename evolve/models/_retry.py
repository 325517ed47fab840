"""Retries of model calls: what failed, whether to try again, and how long to wait.

litellm raises its own exception classes (``litellm.exceptions``, subclasses of the OpenAI
SDK's), each with an HTTP ``status_code``; the provider's response headers are on
``exc.litellm_response_headers`` (litellm 1.106 rebuilds ``exc.response`` without them).
Transport failures are mapped to ``InternalServerError``/``APIConnectionError`` with status 500,
so :func:`classify` looks down the exception's cause chain for the transport error itself.

Kinds: ``rate_limit`` (429), ``server`` (5xx), ``connection`` (refused, reset, dropped),
``timeout`` (408 or no answer in time), ``auth`` (401, 402, 403), ``bad_request`` (400, 413,
422: context window, content policy, unsupported parameter), ``not_found`` (404, unknown
model or provider), ``empty`` (an answer with no text), ``other``. The first four are
transient and retried; the others would fail the same way again.
"""

from __future__ import annotations

import asyncio
import email.utils
import math
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Annotated, Any, ClassVar, TypeVar, cast

import numpy as np
from pydantic import Field, model_validator

from evoforge.base.redaction import redact
from evoforge.base.settings import Settings

KINDS = (
    "rate_limit",
    "server",
    "connection",
    "timeout",
    "auth",
    "bad_request",
    "not_found",
    "empty",
    "other",
)
RETRYABLE = frozenset({"rate_limit", "server", "connection", "timeout"})
"""Kinds worth another attempt: the same request may well succeed a moment later."""

_MESSAGE_CHARS = 500
T = TypeVar("T")


@dataclass(frozen=True)
class Attempt:
    """One failed attempt of a model call.

    Attributes:
        kind: one of :data:`KINDS`.
        message: what went wrong, redacted (no key can be in it) and at most 500 characters.
        latency_s: seconds the attempt took.
        waited_s: seconds waited after it before the next attempt (0 for the last one).
        status_code: the HTTP status, when the provider answered with one.
        retry_after_s: the provider's ``Retry-After``, in seconds, when it sent one.
    """

    kind: str
    message: str
    latency_s: float
    waited_s: float = 0.0
    status_code: int | None = None
    retry_after_s: float | None = None


class ModelError(RuntimeError):
    """A model call failed, after its retries.

    Attributes:
        kind: the kind of the last failure (see :data:`KINDS`).
        attempts: every failed attempt, in order (the last one is why it gave up).
        latency_s: seconds from the first attempt to giving up, waits included.
    """

    def __init__(
        self,
        message: str,
        latency_s: float = 0.0,
        *,
        kind: str = "other",
        attempts: tuple[Attempt, ...] = (),
    ) -> None:
        super().__init__(redact(message))
        self.latency_s = latency_s
        self.kind = kind
        self.attempts = attempts


class EmptyAnswer(Exception):
    """Raised inside a call whose answer has no text; classified as ``empty``."""


@dataclass(frozen=True)
class Failure:
    """What :func:`classify` makes of an exception."""

    kind: str
    message: str
    status_code: int | None = None
    retry_after_s: float | None = None

    @property
    def retryable(self) -> bool:
        return self.kind in RETRYABLE


class RetryPolicy(Settings):
    """How often to try a call and how long to wait between attempts (``[retry]``).

    The wait after failed attempt ``n`` (0-based) is the provider's ``Retry-After`` when it
    sent one (capped at ``max_retry_after_s``), otherwise "full jitter" backoff: uniform in
    ``[0, min(max_s, base_s * 2**n)]``, which spreads concurrent callers apart instead of
    having them retry in lockstep.

    Attributes:
        max_attempts: attempts in all, the first included (1: never retry).
        base_s: backoff scale in seconds.
        max_s: cap of the backoff before jitter.
        max_retry_after_s: cap of a provider's ``Retry-After`` (a misconfigured proxy may ask
            for hours).
    """

    section: ClassVar[str] = "retry"

    max_attempts: Annotated[int, Field(ge=1)] = 4
    base_s: Annotated[float, Field(ge=0)] = 1.0
    max_s: Annotated[float, Field(ge=0)] = 60.0
    max_retry_after_s: Annotated[float, Field(ge=0)] = 300.0

    @model_validator(mode="after")
    def _cap_covers_scale(self) -> RetryPolicy:
        if self.max_s < self.base_s:
            raise ValueError(f"max_s = {self.max_s!r}: must be at least base_s ({self.base_s!r})")
        return self

    def delay(self, attempt: int, failure: Failure, rng: np.random.Generator) -> float:
        """Seconds to wait after failed attempt ``attempt`` (0-based) before the next."""
        if failure.retry_after_s is not None:
            return min(failure.retry_after_s, self.max_retry_after_s)
        ceiling = min(self.max_s, self.base_s * 2.0**attempt)
        return float(rng.uniform(0.0, ceiling)) if ceiling > 0 else 0.0


def parse_retry_after(value: str | None, now: float | None = None) -> float | None:
    """A ``Retry-After`` header value in seconds: delta-seconds or an HTTP date.

    Args:
        value: the header, e.g. ``"3"``, ``"1.5"`` or ``"Wed, 21 Oct 2026 07:28:00 GMT"``.
        now: Unix time to measure a date from (default: now).

    Returns:
        Seconds (0 for a date in the past), or None when the value is absent or unreadable.
    """
    if value is None:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError):
            return None
        if when.tzinfo is None:  # HTTP dates are GMT
            return None
        seconds = when.timestamp() - (time.time() if now is None else now)
    if not math.isfinite(seconds):
        return None
    return max(0.0, seconds)


def _headers(exc: BaseException) -> Mapping[str, str]:
    headers = getattr(exc, "litellm_response_headers", None)
    if headers is None:
        response = getattr(exc, "response", None)
        headers = getattr(response, "headers", None)
    if headers is None:
        headers = getattr(exc, "headers", None)
    if isinstance(headers, Mapping) or hasattr(headers, "get"):
        # httpx's Headers and dicts are Mappings; some SDKs hand over other objects with .get
        return cast("Mapping[str, str]", headers)
    return {}


def _retry_after(exc: BaseException) -> float | None:
    headers = _headers(exc)
    milliseconds = headers.get("retry-after-ms")  # OpenAI sends this finer-grained one too
    if milliseconds is not None:
        seconds = parse_retry_after(milliseconds)
        if seconds is not None:
            return seconds / 1000.0
    return parse_retry_after(headers.get("retry-after") or headers.get("Retry-After"))


def _chain(exc: BaseException) -> list[BaseException]:
    chain: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and current not in chain:
        chain.append(current)
        current = current.__cause__ or current.__context__
    return chain


_NO_CREDENTIALS = "Missing credentials"  # the OpenAI SDK's words when no key is set
_TRANSPORT_MODULES = ("httpx", "httpcore", "aiohttp", "urllib3", "requests")
_HTTP_ANSWERS = ("HTTPStatusError", "ClientResponseError")  # an answer, not a failure to get one


def _transport_kind(chain: list[BaseException]) -> str | None:
    """``timeout`` or ``connection`` when the chain holds a transport-level failure."""
    for e in chain:
        root, name = type(e).__module__.split(".", 1)[0], type(e).__name__
        if isinstance(e, TimeoutError) or (
            root in (*_TRANSPORT_MODULES, "openai", "litellm") and "Timeout" in name
        ):
            return "timeout"
    for e in chain:
        root, name = type(e).__module__.split(".", 1)[0], type(e).__name__
        if (
            isinstance(e, ConnectionError)
            or (root in _TRANSPORT_MODULES and name not in _HTTP_ANSWERS)
            # the SDK raises its own (not litellm's subclass) only when no answer came
            or (root == "openai" and name == "APIConnectionError")
        ):
            return "connection"
    return None


def _kind_of_status(status: int) -> str | None:
    if status == 429:
        return "rate_limit"
    if status == 408:
        return "timeout"
    if status in (401, 402, 403):  # 402: the account cannot pay; no retry will fix it
        return "auth"
    if status == 404:
        return "not_found"
    if status in (400, 413, 422):
        return "bad_request"
    if status >= 500:
        return "server"
    return None


def _message(exc: BaseException) -> str:
    text = f"{type(exc).__name__}: {exc}"
    text = text.split("\nTraceback (most recent call last)", 1)[0]  # litellm appends one
    text = redact(text.strip())
    return text if len(text) <= _MESSAGE_CHARS else text[: _MESSAGE_CHARS - 1] + "…"


def classify(exc: BaseException) -> Failure:
    """The kind of failure ``exc`` is, its redacted message, HTTP status and Retry-After."""
    message = _message(exc)
    if isinstance(exc, EmptyAnswer):
        return Failure("empty", message)
    status = getattr(exc, "status_code", None)
    status = status if isinstance(status, int) else None
    chain = _chain(exc)
    transport = _transport_kind(chain)
    retry_after = _retry_after(exc)
    if transport is not None and (status is None or status >= 500 or status == 408):
        # litellm reports a dropped connection as a 500 and a timeout as a 408
        return Failure(transport, message, None, retry_after)
    if "LLM Provider NOT provided" in str(exc):
        return Failure("not_found", message, status, None)
    if any(_NO_CREDENTIALS in str(e) for e in chain):
        # the SDK refused before sending anything; litellm reports it as a 500
        return Failure("auth", message, None, None)
    kind = _kind_of_status(status) if status is not None else None
    if kind == "server" and type(exc).__name__ == "APIConnectionError":
        kind = "other"  # litellm wraps a provider plugin's own bug this way: retrying won't help
    return Failure(kind or "other", message, status, retry_after)


async def call_with_retries(
    call: Callable[[], Awaitable[T]],
    policy: RetryPolicy,
    rng: np.random.Generator,
    *,
    sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
    what: str = "model call",
    clock: Callable[[], float] = time.perf_counter,
) -> tuple[T, tuple[Attempt, ...]]:
    """Await ``call()`` until it succeeds, a failure is not retryable, or attempts run out.

    Args:
        call: makes one attempt; raises on failure (raise :class:`EmptyAnswer` for no text).
        policy: attempts and waits.
        rng: the only source of jitter, so waits are reproducible.
        sleep: awaited with each wait (tests pass one that records instead of sleeping).
        what: names the call in the error message, e.g. the model string.
        clock: measures latencies.

    Returns:
        The result and the failed attempts before it (empty when the first one succeeded).

    Raises:
        ModelError: the last failure was not retryable or ``policy.max_attempts`` were made;
            it carries every attempt and the last kind. Its message is redacted and its
            cause is dropped, so that no traceback shows a provider's unredacted text.
    """
    attempts: list[Attempt] = []
    started = clock()
    for number in range(policy.max_attempts):
        tick = clock()
        try:
            return await call(), tuple(attempts)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # classified below; anything unknown becomes "other"
            failure = classify(exc)
        latency = clock() - tick
        last = number + 1 == policy.max_attempts or not failure.retryable
        wait = 0.0 if last else policy.delay(number, failure, rng)
        attempts.append(
            Attempt(
                failure.kind,
                failure.message,
                latency,
                wait,
                failure.status_code,
                failure.retry_after_s,
            )
        )
        if last:
            break
        await sleep(wait)
    final = attempts[-1]
    if len(attempts) > 1:
        tried = f"after {len(attempts)} attempts"
    else:
        tried = "(retries are off)" if final.kind in RETRYABLE else "(not retryable)"
    raise ModelError(
        f"{what}: {final.kind} {tried}: {final.message}",
        clock() - started,
        kind=final.kind,
        attempts=tuple(attempts),
    )
