"""litellm without the per-call work evoforge has no use for.

Each litellm 1.106 call costs milliseconds of Python CPU besides the request itself (the
``client`` column of ``bench/engine_overhead.py`` measures it). Two parts of it do nothing for
evoforge, which records every call itself (``llm_calls`` rows):

* **The success-logging payload.** After every answer litellm schedules a task that builds its
  "standard logging payload" (and prices the answer once more) for its callbacks (Langfuse,
  S3, Prometheus, ...), whether or not any callback is configured. :func:`skip_unused_logging`
  makes litellm skip that task while no success callback is configured; configure one
  (``litellm.callbacks``, ``litellm.success_callback``, ...) and it runs as before, checked
  per call.
* **The second price calculation.** litellm already prices each answer
  (``response._hidden_params["response_cost"]``); :func:`answer_cost` reads that instead of
  calling ``litellm.completion_cost()`` again (None when litellm could not price it: an unknown
  price stays unknown, never 0).

Nothing else changes: the request, retries (ours), every provider, the price map, redaction.
"""

from __future__ import annotations

import logging
from typing import Any

log = logging.getLogger("evoforge")

_skipping = False


def _callbacks_configured(litellm: Any) -> bool:
    return any(
        getattr(litellm, name, None)
        for name in ("callbacks", "success_callback", "_async_success_callback")
    )


def skip_unused_logging(litellm: Any) -> bool:
    """Skip litellm's per-call success-logging task while no success callback is configured.

    The task is claimed once per request by ``Logging.claim_async_success_log()`` (litellm
    1.106); answering "already claimed" there is litellm's own way of not scheduling it twice,
    so nothing is half-built. Idempotent; returns whether the skip is in place (False on a
    litellm without that method: nothing is changed then).
    """
    global _skipping
    if _skipping:
        return True
    try:
        from litellm.litellm_core_utils.litellm_logging import Logging
    except ImportError:  # pragma: no cover - another litellm layout: leave it alone
        return False
    claim = getattr(Logging, "claim_async_success_log", None)
    if claim is None:  # pragma: no cover
        log.debug("litellm has no claim_async_success_log(); its success logging stays on")
        return False

    def claim_when_needed(self: Any) -> bool:
        if not _callbacks_configured(litellm):
            return False  # nothing would read the payload: do not build it
        return claim(self)

    Logging.claim_async_success_log = claim_when_needed  # type: ignore[method-assign]
    _skipping = True
    return True


def answer_cost(response: Any) -> float | None:
    """USD litellm priced the answer at; None when it could not (an unknown price)."""
    hidden = getattr(response, "_hidden_params", None)
    if isinstance(hidden, dict):
        cost = hidden.get("response_cost")
    else:  # litellm's HiddenParams object
        cost = getattr(hidden, "response_cost", None)
    if isinstance(cost, bool) or not isinstance(cost, int | float):
        return None
    return float(cost)
