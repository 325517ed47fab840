"""How a model call is written to the archive: one ``llm_calls`` row per attempt.

A call that needed retries leaves a ``retry`` row for each failed attempt before its ``ok``
row (an answer) or its ``error`` row (it gave up). Every function here runs inside the
caller's transaction.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING

from evoforge.evolve.models._client import Attempt, Completion, ModelError

if TYPE_CHECKING:
    from evoforge.archive import Archive

log = logging.getLogger("evoforge")


def record_answer(
    archive: Archive,
    run_id: str,
    seq: int,
    completion: Completion,
    program_id: str | None,
    request_key: bytes | None = None,
) -> None:
    """The call's retried attempts, then its ``ok`` row with tokens, cost and the key of the
    request it answered (None when requests are not keyed)."""
    record_retries(archive, run_id, seq, completion.model, completion.attempts)
    archive.record_llm_call(
        run_id,
        seq=seq,
        model=completion.model,
        latency_s=completion.latency_s,
        status="ok",
        program_id=program_id,
        prompt_tokens=completion.prompt_tokens,
        completion_tokens=completion.completion_tokens,
        cost_usd=completion.cost_usd,
        attempt=len(completion.attempts) + 1,
        request_key=request_key,
    )
    log.info(
        "model call %d to %s: ok, tokens in/out %s/%s, %.2f s%s",
        seq,
        completion.model,
        "?" if completion.prompt_tokens is None else completion.prompt_tokens,
        "?" if completion.completion_tokens is None else completion.completion_tokens,
        completion.latency_s,
        f" (after {len(completion.attempts)} failed attempts)" if completion.attempts else "",
    )


def record_failure(archive: Archive, run_id: str, seq: int, model: str, exc: ModelError) -> int:
    """The call's retried attempts, then the ``error`` row of the one that gave up; returns
    how many attempts were retried."""
    *retried, last = exc.attempts or (Attempt(exc.kind, str(exc), exc.latency_s),)
    record_retries(archive, run_id, seq, model, retried)
    _attempt_row(archive, run_id, seq, model, last, len(retried) + 1, "error", str(exc), None)
    log.info("model call %d to %s failed: %s", seq, model, exc)
    return len(retried)


def record_retries(
    archive: Archive, run_id: str, seq: int, model: str, attempts: Sequence[Attempt]
) -> None:
    """One ``retry`` row per failed attempt that was retried."""
    for number, attempt in enumerate(attempts, start=1):
        _attempt_row(
            archive, run_id, seq, model, attempt, number, "retry", attempt.message, attempt.waited_s
        )
        log.info(
            "model call %d to %s: %s (attempt %d), retrying in %.1f s",
            seq,
            model,
            attempt.kind,
            number,
            attempt.waited_s,
        )


def call_tokens(completion: Completion) -> int | None:
    """Prompt plus completion tokens; None when the provider reported neither."""
    if completion.prompt_tokens is None and completion.completion_tokens is None:
        return None
    return (completion.prompt_tokens or 0) + (completion.completion_tokens or 0)


def _attempt_row(
    archive: Archive,
    run_id: str,
    seq: int,
    model: str,
    attempt: Attempt,
    number: int,
    status: str,
    error: str,
    waited_s: float | None,
) -> None:
    archive.record_llm_call(
        run_id,
        seq=seq,
        model=model,
        latency_s=attempt.latency_s,
        status=status,
        error=error,
        attempt=number,
        error_kind=attempt.kind,
        status_code=attempt.status_code,
        retry_after_s=attempt.retry_after_s,
        waited_s=waited_s,
    )
