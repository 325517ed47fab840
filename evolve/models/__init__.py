"""Models: how evoforge calls a model, and which one answers.

- :func:`complete` calls one model through litellm (the offline model included), with retries
  (:class:`RetryPolicy`: exponential backoff with full jitter, ``Retry-After`` honoured) and
  keys redacted from every error and log record;
- :class:`ModelSpec` says how to call one model, :class:`ModelPool` chooses among several
  (by weight, or UCB1 on improvement per unit cost) and declares an outage;
- :func:`record_answer` and :func:`record_failure` write every attempt to the archive;
- :func:`read_refusal` reads the window a server names when it refuses a prompt as too long.

litellm is imported on first use (it costs seconds), never at import of this package.

Names are imported on first use (:mod:`evoforge.base.lazy`): the ``evoforge`` command reads
:data:`POLICIES` without numpy and pydantic.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evoforge.base.lazy import lazy_exports

if TYPE_CHECKING:
    from evoforge.base.redaction import REDACTED, redact
    from evoforge.evolve.models._calls import call_tokens, record_answer, record_failure
    from evoforge.evolve.models._client import (
        DEFAULT_POLICY,
        Completion,
        complete,
        load_litellm,
        prepare,
        register_custom_provider,
    )
    from evoforge.evolve.models._ensemble import (
        ModelOutage,
        ModelPool,
        ModelSpec,
        ModelSpecError,
        ModelStats,
    )
    from evoforge.evolve.models._failures import (
        ModelFailure,
        failed_calls_summary,
        failure_hint,
        model_failures,
    )
    from evoforge.evolve.models._policy import POLICIES, Policy
    from evoforge.evolve.models._redact import RedactingFilter, install_log_redaction
    from evoforge.evolve.models._refusal import ContextRefusal, read_refusal
    from evoforge.evolve.models._retry import (
        KINDS,
        RETRYABLE,
        Attempt,
        EmptyAnswer,
        Failure,
        ModelError,
        RetryPolicy,
        call_with_retries,
        classify,
        parse_retry_after,
    )

# name -> the module that defines it
_EXPORTS = {
    "REDACTED": "evoforge.base.redaction",
    "redact": "evoforge.base.redaction",
    "call_tokens": "evoforge.evolve.models._calls",
    "record_answer": "evoforge.evolve.models._calls",
    "record_failure": "evoforge.evolve.models._calls",
    "DEFAULT_POLICY": "evoforge.evolve.models._client",
    "Completion": "evoforge.evolve.models._client",
    "complete": "evoforge.evolve.models._client",
    "load_litellm": "evoforge.evolve.models._client",
    "prepare": "evoforge.evolve.models._client",
    "register_custom_provider": "evoforge.evolve.models._client",
    "ModelFailure": "evoforge.evolve.models._failures",
    "model_failures": "evoforge.evolve.models._failures",
    "failed_calls_summary": "evoforge.evolve.models._failures",
    "failure_hint": "evoforge.evolve.models._failures",
    "POLICIES": "evoforge.evolve.models._policy",
    "ModelOutage": "evoforge.evolve.models._ensemble",
    "ModelPool": "evoforge.evolve.models._ensemble",
    "ModelSpec": "evoforge.evolve.models._ensemble",
    "ModelSpecError": "evoforge.evolve.models._ensemble",
    "ModelStats": "evoforge.evolve.models._ensemble",
    "Policy": "evoforge.evolve.models._policy",
    "RedactingFilter": "evoforge.evolve.models._redact",
    "ContextRefusal": "evoforge.evolve.models._refusal",
    "read_refusal": "evoforge.evolve.models._refusal",
    "install_log_redaction": "evoforge.evolve.models._redact",
    "KINDS": "evoforge.evolve.models._retry",
    "RETRYABLE": "evoforge.evolve.models._retry",
    "Attempt": "evoforge.evolve.models._retry",
    "EmptyAnswer": "evoforge.evolve.models._retry",
    "Failure": "evoforge.evolve.models._retry",
    "ModelError": "evoforge.evolve.models._retry",
    "RetryPolicy": "evoforge.evolve.models._retry",
    "call_with_retries": "evoforge.evolve.models._retry",
    "classify": "evoforge.evolve.models._retry",
    "parse_retry_after": "evoforge.evolve.models._retry",
}

__all__ = [
    # calling a model
    "Completion",
    "ModelError",
    "complete",
    "load_litellm",
    "prepare",
    "register_custom_provider",
    # retries
    "DEFAULT_POLICY",
    "KINDS",
    "RETRYABLE",
    "Attempt",
    "EmptyAnswer",
    "Failure",
    "RetryPolicy",
    "call_with_retries",
    "classify",
    "parse_retry_after",
    # a refusal for the context window
    "ContextRefusal",
    "read_refusal",
    # the ensemble
    "POLICIES",
    "ModelOutage",
    "ModelPool",
    "ModelSpec",
    "ModelSpecError",
    "ModelStats",
    "Policy",
    # the archive's records of calls
    "call_tokens",
    "record_answer",
    "record_failure",
    "ModelFailure",
    "model_failures",
    "failed_calls_summary",
    "failure_hint",
    # keys
    "REDACTED",
    "RedactingFilter",
    "install_log_redaction",
    "redact",
]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
