"""Models: how evoforge calls a model, and which one answers.

- :func:`complete` calls one model through litellm (the offline model included), with retries
  (:class:`RetryPolicy`: exponential backoff with full jitter, ``Retry-After`` honoured) and
  keys redacted from every error and log record;
- :class:`ModelSpec` says how to call one model, :class:`ModelPool` chooses among several
  (by weight, or UCB1 on improvement per unit cost) and declares an outage;
- :func:`record_answer` and :func:`record_failure` write every attempt to the archive.

litellm is imported on first use (it costs seconds), never at import of this package.
"""

from evoforge._secrets import REDACTED, redact
from evoforge.evolve.models._calls import call_tokens, record_answer, record_failure
from evoforge.evolve.models._client import (
    DEFAULT_POLICY,
    Completion,
    complete,
    load_litellm,
    prepare,
    register_custom_provider,
)
from evoforge.evolve.models._pool import (
    POLICIES,
    ModelOutage,
    ModelPool,
    ModelSpec,
    ModelSpecError,
    ModelStats,
    Policy,
)
from evoforge.evolve.models._redact import RedactingFilter, install_log_redaction
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
    # keys
    "REDACTED",
    "RedactingFilter",
    "install_log_redaction",
    "redact",
]
