"""Models: how evoforge calls a model, and which one answers.

- :func:`complete` calls one model through litellm (the offline model included), with retries
  (:class:`RetryPolicy`: exponential backoff with full jitter, ``Retry-After`` honoured) and
  keys redacted from every error and log record;
- :class:`ModelSpec` says how to call one model (a ``[[models]]`` table; its model string
  checked by :func:`check_model_string`, the one rule for every model string);
- :class:`ModelPool` chooses among several (by weight, or UCB1 on improvement per unit cost)
  and declares an outage;
- :func:`record_answer` and :func:`record_failure` write every attempt to the archive (what
  the failures mean, and their fixes, is :mod:`evoforge.evolve.mining`'s).

litellm is imported on first use (it costs seconds), never at import of this package.

Names are imported on first use (:mod:`evoforge.base.lazy`): the ``evoforge`` command reads
:data:`POLICIES` without numpy and pydantic.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evoforge.base.lazy import lazy_package

if TYPE_CHECKING:
    from evoforge.base.redaction import REDACTED as REDACTED, redact as redact
    from evoforge.evolve.models._calls import (
        call_tokens as call_tokens,
        record_answer as record_answer,
        record_failure as record_failure,
    )
    from evoforge.evolve.models._client import (
        DEFAULT_POLICY as DEFAULT_POLICY,
        Completion as Completion,
        complete as complete,
        load_litellm as load_litellm,
        prepare as prepare,
        register_custom_provider as register_custom_provider,
    )
    from evoforge.evolve.models._policy import POLICIES as POLICIES, Policy as Policy
    from evoforge.evolve.models._pool import (
        ModelOutage as ModelOutage,
        ModelPool as ModelPool,
        ModelStats as ModelStats,
    )
    from evoforge.evolve.models._redact import (
        RedactingFilter as RedactingFilter,
        install_log_redaction as install_log_redaction,
    )
    from evoforge.evolve.models._retry import (
        KINDS as KINDS,
        RETRYABLE as RETRYABLE,
        Attempt as Attempt,
        EmptyAnswer as EmptyAnswer,
        Failure as Failure,
        ModelError as ModelError,
        RetryPolicy as RetryPolicy,
        call_with_retries as call_with_retries,
        classify as classify,
        parse_retry_after as parse_retry_after,
    )
    from evoforge.evolve.models._spec import (
        ModelSpec as ModelSpec,
        ModelSpecError as ModelSpecError,
        ModelString as ModelString,
        check_model_string as check_model_string,
    )

__getattr__, __dir__, __all__ = lazy_package(__name__)
