"""One model call with a prompt fitted to the model's window, in the server's tokens.

:func:`call_fitted` is what :func:`~evoforge.evolve.proposals.propose` asks a model with:

1. the window (:func:`~evoforge.evolve.proposals._window.context_window`, a window the server
   named in a refusal included) and the prompt fitted to it beside the answer's
   ``max_tokens``, counted with tiktoken times the server's learned ratio
   (:mod:`~evoforge.evolve.proposals._calibration`); the answer gets what the window leaves,
   never more than configured;
2. where the server has a tokenize endpoint and the prompt may be near the window, the server
   counts it before it is sent; a prompt over its share is fitted again, smaller;
3. the call; its ``usage`` teaches the ratio (the first calls);
4. a refusal for the context window (``maximum context length is 2048 tokens``) teaches the
   window (and the ratio, when it says how large the prompt was): the prompt is fitted to it
   and sent again, once. The refused attempt stays in the call's attempts, so the archive
   keeps it as a ``retry`` row.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from evoforge.evolve.mining import read_refusal
from evoforge.evolve.models import (
    Attempt,
    Completion,
    ModelError,
    ModelSpec,
    complete,
)
from evoforge.evolve.prompts import PromptLimit
from evoforge.evolve.proposals import _calibration as calibration
from evoforge.evolve.proposals._messages import ProposalSetup
from evoforge.evolve.proposals._window import (
    ContextWindow,
    Fitted,
    Messages,
    PromptTooLarge,
    context_window as window_of,
    count_tokens,
    fit_messages,
    margin_tokens,
    note_shorter_answers,
    num_ctx,
)

_REFITS = 2  # fits after the first when the server's count says a prompt is over its share


@dataclass(frozen=True)
class Called:
    """What :func:`call_fitted` came to: exactly one of ``completion`` and ``error``.

    Attributes:
        completion: the answer (its ``attempts`` include a refusal that was learned from).
        error: why there is none (a prompt that cannot fit is a ``bad_request``, not sent).
        prompt_cpu_s: CPU seconds spent building and fitting prompts.
        messages: the messages last sent (or fitted), for whoever needs the prompt.
    """

    completion: Completion | None = None
    error: ModelError | None = None
    prompt_cpu_s: float = 0.0
    messages: Messages | None = None


async def call_fitted(
    setup: ProposalSetup,
    spec: ModelSpec,
    build: Callable[[PromptLimit | None], Messages],
    *,
    seed: int,
    jitter_seed: tuple[int, ...],
) -> Called:
    """Fit ``build``'s prompt to ``spec``'s window and ask the model (see the module doc)."""
    refused: tuple[Attempt, ...] = ()
    cpu = 0.0
    messages: Messages | None = None
    for attempt in range(2):  # the second: after a refusal that taught the window
        window = await window_of(spec, setup.prompts)
        answer_tokens = setup.max_tokens if spec.max_tokens is None else spec.max_tokens
        try:
            fitted, spent = await _fit(spec, build, window, answer_tokens)
        except PromptTooLarge as exc:
            if not calibration.on_prior(spec):
                return Called(error=_with_attempts(exc.error(), refused), prompt_cpu_s=cpu)
            # Only the assumed density says it cannot fit, and nothing can be learned from a
            # prompt never sent: send it counted in tiktoken's tokens. The server then accepts
            # it (its usage teaches the ratio) or refuses with its own count, which the
            # refusal below learns from; either way the next prompts are fitted to the truth.
            try:
                fitted, spent = await _fit(spec, build, window, answer_tokens, prior=False)
            except PromptTooLarge:
                return Called(error=_with_attempts(exc.error(), refused), prompt_cpu_s=cpu)
        cpu += spent
        messages = fitted.messages
        sent = spec
        if fitted.answer_tokens < answer_tokens and window is not None:
            note_shorter_answers(window, answer_tokens)
            sent = spec.model_copy(update={"max_tokens": fitted.answer_tokens})
        try:
            completion = await complete(
                sent,
                messages,
                seed=seed,
                temperature=setup.temperature,
                max_tokens=setup.max_tokens,
                policy=setup.retry,
                rng=np.random.default_rng(list(jitter_seed)),
                num_ctx=num_ctx(spec.model, window),
            )
        except ModelError as exc:
            if attempt == 0 and _learn_refusal(spec, exc, window, messages):
                refused = tuple(exc.attempts)
                continue
            return Called(error=_with_attempts(exc, refused), prompt_cpu_s=cpu, messages=messages)
        if completion.prompt_tokens is not None and calibration.wants_samples(spec):
            ours = count_tokens(spec.model, messages)
            if ours is not None:
                calibration.learn_ratio(spec, completion.prompt_tokens, ours)
        if refused:
            completion = dataclasses.replace(completion, attempts=(*refused, *completion.attempts))
        return Called(completion=completion, prompt_cpu_s=cpu, messages=messages)
    raise AssertionError("unreachable: the second attempt returns")


async def _fit(
    spec: ModelSpec,
    build: Callable[[PromptLimit | None], Messages],
    window: ContextWindow | None,
    answer_tokens: int,
    *,
    prior: bool = True,
) -> tuple[Fitted, float]:
    """The prompt fitted in the server's tokens, checked by its tokenize endpoint when the
    prompt may be near the window, and the thread CPU seconds the fitting took. With
    ``prior`` False, a server whose ratio is not learned yet is counted as tiktoken counts."""
    cpu = 0.0

    def count(messages: Messages) -> int | None:
        tokens = count_tokens(spec.model, messages)
        return (
            tokens if not prior and calibration.on_prior(spec) else calibration.scaled(tokens, spec)
        )

    for _ in range(1 + _REFITS):
        tick = time.thread_time()
        fitted = fit_messages(build, window, answer_tokens, count)
        cpu += time.thread_time() - tick
        if window is None:
            return fitted, cpu
        share = window.tokens - margin_tokens(window.tokens) - fitted.answer_tokens
        text = "\n".join(m["content"] for m in fitted.messages)
        if len(text.encode()) <= share:  # never more tokens than bytes: it fits
            return fitted, cpu
        theirs = await calibration.server_tokens(spec, text)
        if theirs is None:
            return fitted, cpu
        counted_as = calibration.ratio(spec)
        ours = count_tokens(spec.model, [{"role": "user", "content": text}])
        if ours is not None:
            calibration.learn_ratio(spec, theirs, ours)
        if theirs <= share or calibration.ratio(spec) <= counted_as:
            return fitted, cpu  # it fits, or fitting again would not make it smaller
    return fitted, cpu


def _learn_refusal(
    spec: ModelSpec, exc: ModelError, window: ContextWindow | None, messages: Messages
) -> bool:
    """Learn what a context-window refusal says; whether the prompt would now be fitted
    smaller (a smaller window, or a denser tokenizer, than this prompt was fitted to)."""
    if exc.kind != "bad_request":
        return False
    refusal = read_refusal(str(exc))
    if refusal is None:
        return False
    counted_as = calibration.ratio(spec)
    if refusal.prompt_tokens is not None:
        ours = count_tokens(spec.model, messages)
        if ours is not None:
            calibration.learn_ratio(spec, refusal.prompt_tokens, ours)
    if refusal.window is not None:
        words = f"maximum context length is {refusal.window} tokens"
        calibration.learn_window(spec, refusal.window, words)
    elif refusal.prompt_tokens is None and window is not None:  # no number: a quarter off
        smaller = window.tokens * 3 // 4
        calibration.learn_window(
            spec, smaller, f"a refusal of {window.tokens} tokens that named no window"
        )
    after = calibration.learned(spec)
    denser = calibration.ratio(spec) > counted_as
    smaller = after.window is not None and (window is None or after.window < window.tokens)
    return denser or smaller


def _with_attempts(error: ModelError, before: tuple[Attempt, ...]) -> ModelError:
    """``error`` with the refused attempts ``before`` it first."""
    if not before:
        return error
    return ModelError(
        str(error), error.latency_s, kind=error.kind, attempts=(*before, *error.attempts)
    )
