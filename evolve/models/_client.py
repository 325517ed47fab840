"""The model client: every model, the offline one included, is called through litellm.

:func:`complete` makes one call through :func:`evoforge.evolve.models._retry.call_with_retries`
(litellm and the provider SDKs never retry by themselves), reads the key from the spec's
``api_key_env``, and accounts tokens and cost (None when unknown, never 0). Importing this module
does not import litellm (seconds); :func:`prepare` does, off the event loop. litellm's per-call
work that evoforge does not use is skipped (:mod:`evoforge.evolve.models._lean`).
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from evoforge.base.redaction import redact
from evoforge.evolve.models._lean import answer_cost, skip_unused_logging
from evoforge.evolve.models._redact import install_log_redaction
from evoforge.evolve.models._retry import (
    Attempt,
    EmptyAnswer,
    ModelError,
    RetryPolicy,
    call_with_retries,
)
from evoforge.evolve.models._spec import ModelSpec, ModelSpecError
from evoforge.plugins import model_providers

DEFAULT_POLICY = RetryPolicy()

_ready_prefixes: set[str] = set()
_LITELLM_LOGGERS = ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy")


@dataclass(frozen=True)
class Completion:
    """One model answer with its accounting.

    Attributes:
        text: the answer (never empty: an empty one raises ``ModelError(kind="empty")``).
        model: the model string that answered.
        latency_s: seconds the successful attempt took.
        prompt_tokens, completion_tokens: None when the provider did not report usage.
        cost_usd: None when the price is unknown (never 0 for unknown).
        attempts: the failed attempts before this answer, oldest first (empty: first try).
    """

    text: str
    model: str
    latency_s: float
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cost_usd: float | None = None
    attempts: tuple[Attempt, ...] = ()


def load_litellm() -> Any:
    """Import litellm (seconds of CPU) and quiet it: its records go through evoforge's
    logging (stderr), its per-call work evoforge does not use is skipped. Idempotent."""
    return _litellm()


def _litellm() -> Any:
    # litellm fetches a price map at import unless told to use its bundled copy.
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    if not litellm.suppress_debug_info:  # first call: quiet litellm's own output once
        litellm.suppress_debug_info = True
        # litellm routes its records below WARNING to stdout through handlers of its own;
        # stdout holds results only, so its records go through evoforge's (stderr) logging,
        # from WARNING up: its INFO lines ("LiteLLM completion() model=...", one a call) would
        # bury evoforge's own per-call records under EVOFORGE_LOG=info. LITELLM_LOG, when the
        # user sets it, still decides.
        quiet = "LITELLM_LOG" not in os.environ
        for name in _LITELLM_LOGGERS:
            logging.getLogger(name).handlers.clear()
            logging.getLogger(name).propagate = True
            if quiet:
                logging.getLogger(name).setLevel(logging.WARNING)
        litellm.set_verbose = False  # its print()-style debug output
        skip_unused_logging(litellm)
    return litellm


def register_custom_provider(prefix: str, handler: Any) -> None:
    """Route ``prefix/<model>`` to ``handler`` (a ``litellm.CustomLLM``), replacing any earlier
    handler for that prefix. Model-provider plugins call this from their set-up."""
    litellm = _litellm()
    litellm.custom_provider_map = [
        entry for entry in litellm.custom_provider_map if entry.get("provider") != prefix
    ] + [{"provider": prefix, "custom_handler": handler}]
    litellm.utils.custom_llm_setup()  # known to get_llm_provider() before the first call


def prepare(model: str) -> None:
    """Run the set-up of the plugin that provides ``model``'s prefix (once per prefix), and
    redact keys from the log records of evoforge, litellm and its HTTP clients."""
    prefix = model.split("/", 1)[0]
    if prefix in _ready_prefixes:
        return
    _litellm()
    install_log_redaction()  # after the import, so that litellm's own loggers exist
    setup = model_providers().get(prefix)
    if setup is not None:
        setup()
    _ready_prefixes.add(prefix)


async def complete(
    spec: ModelSpec | str,
    messages: list[dict[str, str]],
    *,
    seed: int,
    temperature: float = 0.7,
    max_tokens: int = 4096,
    api_base: str | None = None,
    policy: RetryPolicy = DEFAULT_POLICY,
    rng: np.random.Generator | None = None,
    sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
    num_ctx: int | None = None,
) -> Completion:
    """Ask a model for one answer, retrying transient failures.

    Args:
        spec: the model (a model string is read with :meth:`ModelSpec.from_value`).
        messages: chat messages.
        seed: passed to the model (providers that support it sample reproducibly).
        temperature, max_tokens, api_base: the run's settings, used where ``spec`` leaves
            its own unset (:meth:`ModelSpec.request_params`).
        policy: attempts and waits between them; litellm itself never retries.
        rng: draws the backoff jitter; None: a generator seeded with ``seed``.
        sleep: awaited for each wait (tests record waits instead of sleeping).
        num_ctx: the context window to ask the server for, with this request (Ollama's
            option; litellm passes it to Ollama's API); None sends none.

    Raises:
        ModelError: the call failed: not retryable, or out of attempts. ``kind`` and
            ``attempts`` say how; the message is redacted.
    """
    spec = ModelSpec.from_value(spec)
    litellm = _litellm()
    prepare(spec.model)
    try:
        api_key = spec.read_api_key()
    except ModelSpecError as exc:
        failed = Attempt("auth", redact(str(exc)), 0.0)
        raise ModelError(str(exc), kind="auth", attempts=(failed,)) from None
    run_defaults = {"temperature": temperature, "max_tokens": max_tokens, "api_base": api_base}
    kwargs: dict[str, Any] = dict(
        model=spec.model,
        messages=messages,
        seed=seed,
        **spec.request_params(run_defaults),
        timeout=spec.timeout_s,
        num_retries=0,  # retries are ours: one policy, every attempt recorded
        max_retries=0,  # nor may the provider's SDK retry behind our back
    )
    if api_key is not None:
        kwargs["api_key"] = api_key
    if num_ctx is not None:
        kwargs["num_ctx"] = num_ctx
    latency = 0.0

    async def attempt() -> Any:
        nonlocal latency
        started = time.perf_counter()
        try:
            response = await litellm.acompletion(**kwargs)
        finally:
            latency = time.perf_counter() - started
        if not (response.choices[0].message.content or "").strip():
            raise EmptyAnswer(_no_text(spec.model, response.choices[0], kwargs.get("max_tokens")))
        return response

    response, attempts = await call_with_retries(
        attempt,
        policy,
        np.random.default_rng(seed) if rng is None else rng,
        sleep=sleep,
        what=spec.model,
    )
    prompt_tokens, completion_tokens = _usage(response)
    return Completion(
        text=response.choices[0].message.content,
        model=spec.model,
        latency_s=latency,
        prompt_tokens=prompt_tokens,
        completion_tokens=completion_tokens,
        cost_usd=answer_cost(response) if prompt_tokens is not None else None,
        attempts=attempts,
    )


def _no_text(model: str, choice: Any, max_tokens: int | None) -> str:
    """Why an answer has no text, as far as the reply says: a reasoning model that spent its
    ``max_tokens`` thinking (its thoughts come back apart, in ``reasoning_content``, from
    vLLM's reasoning parser, DeepSeek and litellm's own split) says so, and what to change."""
    thought = getattr(choice.message, "reasoning_content", None)
    cut = getattr(choice, "finish_reason", None) == "length"
    limit = f"max_tokens ({max_tokens})" if max_tokens else "max_tokens"
    fix = "raise --max-tokens (max_tokens in the run's configuration)"
    if isinstance(thought, str) and thought.strip():
        return (
            f"{model} answered with no text, only {len(thought)} characters of reasoning"
            + (f": it was cut off at {limit} while it was still thinking" if cut else "")
            + f"; {fix} so that the answer fits after the thinking"
        )
    if cut:
        return f"{model} answered with no text: it was cut off at {limit}; {fix}"
    return f"{model} answered with no text"


def _usage(response: Any) -> tuple[int | None, int | None]:
    """Prompt and completion tokens; None when the provider reported no usage.

    litellm fills in ``Usage(0, 0, 0)`` when the reply had none; a real answer to a real
    prompt is never zero tokens, so all-zero means "not reported".
    """
    usage = getattr(response, "usage", None)
    prompt = getattr(usage, "prompt_tokens", None)
    completion = getattr(usage, "completion_tokens", None)
    if not prompt and not completion:
        return None, None
    return prompt, completion
