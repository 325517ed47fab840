"""The model's context window: how large its prompt may be, and fitting the prompt into it.

A small local model (Ollama, llama.cpp's server, vLLM with a 4k or 8k window) rejects a prompt
larger than its window, or silently drops its beginning. So a prompt for a model with a known
window is kept within it by the rules that keep it within ``[prompts] max_chars`` (the same
pieces left out in the same order, see :mod:`evoforge.evolve.prompts`).

The window, in tokens, comes from the first of:

1. the model spec's ``max_context`` (a ``[[models]]`` table);
2. the run's ``[prompts] max_context``;
3. litellm's model info (``max_input_tokens``, else ``max_tokens``), looked up once per model
   and endpoint in the process that builds prompts (a proposal worker). litellm does not know
   most local models (``hosted_vllm/…``, ``openai/…`` at a custom ``api_base``) and raises;
   then there is no window, and only ``max_chars`` applies. For Ollama (``ollama/…``,
   ``ollama_chat/…``) litellm asks the server for the length the model was trained on; the
   window is at most :data:`OLLAMA_WINDOW` of it, and every request asks the server for that
   window (``num_ctx``), so what Ollama holds is what the prompt was fitted to.

A window the server named when it refused a prompt (``maximum context length is 2048 tokens``,
learned in :mod:`~evoforge.evolve.proposals._calibration`) wins over any larger one of these.

The prompt may take the window less the answer's ``max_tokens`` (the model's own, else the
run's) and a margin (:func:`margin_tokens`: chat template, tokenizer differences). That many
tokens times :data:`CHARS_PER_TOKEN` is the prompt's size limit in characters. The built prompt
is then counted with ``litellm.token_counter`` (tiktoken; never a tokenizer download) where it
could be too large, and built again smaller while it is; :func:`fit_messages` takes the count
as a function, and proposals pass one in the server's tokens (tiktoken's times the ratio
learned of the server, :mod:`~evoforge.evolve.proposals._call`). Where the pieces that are
never cut (the problem, the current program, the task, the answer format) do not fit beside
``max_tokens``, the answer is cut instead, to what the prompt leaves (at least
:data:`MIN_ANSWER_TOKENS`), and the log says so once. Only when even that cannot be done does
the proposal fail with :class:`PromptTooLarge`, a ``bad_request`` model failure that names the
model, its window, the prompt's size and the fixes; the run goes on.
"""

from __future__ import annotations

import asyncio
import logging
import math
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from evoforge.evolve.models import Attempt, ModelError, load_litellm
from evoforge.evolve.prompts import PromptLimit
from evoforge.evolve.proposals import _calibration as calibration

if TYPE_CHECKING:
    from evoforge.evolve.models import ModelSpec
    from evoforge.evolve.prompts import PromptConfig

CHARS_PER_TOKEN = 3.0
"""Characters of prompt per token, estimated low: code (indentation, operators, short names)
packs fewer characters into a token than prose (tiktoken: about 3.5 to 4 on Python), and a
local model's tokenizer may pack fewer still. The token count afterwards corrects a miss."""
MIN_PROMPT_TOKENS = 256
"""Fewer tokens left for the prompt beside ``max_tokens``, and the answer gets half the window
instead (max_tokens is too large for the window)."""
MIN_ANSWER_TOKENS = 512
"""The shortest answer a prompt is sent for: a few SEARCH/REPLACE blocks of a few lines. A
prompt whose fixed pieces leave less is not sent."""
_SHRINK_STEPS = 4  # builds after the first, each smaller, while the counted prompt is too large
_SHRINK_SLACK = 0.95  # each rebuild aims this far below the size the count asks for

Messages = list[dict[str, str]]
log = logging.getLogger("evoforge")


class PromptTooLarge(Exception):
    """The prompt cannot fit the model's context window; the message says why and the fixes."""

    def error(self) -> ModelError:
        """As a model failure of kind ``bad_request`` (what a server answers such a prompt)."""
        message = str(self)
        attempt = Attempt("bad_request", message, 0.0)
        return ModelError(message, kind="bad_request", attempts=(attempt,))


@dataclass(frozen=True)
class ContextWindow:
    """A model's context window.

    Attributes:
        model: the model string.
        tokens: the window, in tokens (prompt and answer together).
        source: where it was read, as an error message names it.
    """

    model: str
    tokens: int
    source: str

    def prompt_tokens(self, answer_tokens: int) -> int:
        """Tokens a prompt may take when ``answer_tokens`` are kept for the answer."""
        return self.tokens - answer_tokens - margin_tokens(self.tokens)


def margin_tokens(window: int) -> int:
    """Tokens of the window kept free besides the answer's: the server's chat template (a few
    tokens a message) and the difference between tiktoken's count and the model's tokenizer."""
    return max(64, window // 32)


OLLAMA_PREFIXES = ("ollama/", "ollama_chat/")
OLLAMA_WINDOW = 8192
"""The window evoforge asks Ollama for (its ``num_ctx``, sent with every request) when the
model was trained on more, or when the server says nothing of it. Without ``num_ctx`` Ollama
gives a request its server's default (2048; 4096 on newer servers; ``OLLAMA_CONTEXT_LENGTH``)
and silently cuts the beginning of a longer prompt: the task and the answer format. A larger
window costs the server memory for every token of it: set ``max_context`` for more."""


def is_ollama(model: str) -> bool:
    """Whether ``model`` goes to Ollama's own API (which takes the window per request)."""
    return model.startswith(OLLAMA_PREFIXES)


def num_ctx(model: str, window: ContextWindow | None) -> int | None:
    """The window to send with a request as Ollama's ``num_ctx``: the one prompts were fitted
    to, so the server holds all of them. None for other providers (their window is the
    server's, set where it starts)."""
    return window.tokens if window is not None and is_ollama(model) else None


async def context_window(spec: ModelSpec, prompts: PromptConfig) -> ContextWindow | None:
    """The window of ``spec``'s model: its own ``max_context``, else ``prompts.max_context``,
    else litellm's model info (looked up off the event loop, once per model and endpoint: for
    Ollama it asks the server, and the window is at most :data:`OLLAMA_WINDOW`). None:
    unknown, only ``max_chars`` limits the prompt. A window the server named in a refusal
    (:mod:`~evoforge.evolve.proposals._calibration`) wins over a larger one."""
    window = await _configured_window(spec, prompts)
    refused = calibration.learned(spec)
    if refused.window is not None and (window is None or refused.window < window.tokens):
        source = f"the server's refusal: {refused.window_source}"
        return ContextWindow(spec.model, refused.window, source)
    return window


async def _configured_window(spec: ModelSpec, prompts: PromptConfig) -> ContextWindow | None:
    if spec.max_context is not None:
        return ContextWindow(spec.model, spec.max_context, "its max_context")
    if prompts.max_context is not None:
        return ContextWindow(spec.model, prompts.max_context, "[prompts] max_context")
    key = (spec.model, spec.api_base)
    tokens = _known[key] if key in _known else await asyncio.to_thread(litellm_window, *key)
    if is_ollama(spec.model):
        if tokens is None:
            source = "evoforge's window for Ollama models its server says nothing of"
            return ContextWindow(spec.model, OLLAMA_WINDOW, source)
        if tokens > OLLAMA_WINDOW:
            source = f"at most {OLLAMA_WINDOW} of the {tokens} it was trained on, sent as num_ctx"
            return ContextWindow(spec.model, OLLAMA_WINDOW, source)
        return ContextWindow(spec.model, tokens, "Ollama's model info, sent as num_ctx")
    return None if tokens is None else ContextWindow(spec.model, tokens, "litellm's model info")


_known: dict[tuple[str, str | None], int | None] = {}
_lookup_lock = threading.Lock()


def litellm_window(model: str, api_base: str | None = None) -> int | None:
    """litellm's context window for ``model`` (``max_input_tokens``, else ``max_tokens``), or
    None when litellm does not know the model. Looked up once per model and endpoint."""
    with _lookup_lock:  # concurrent first requests wait for one look-up
        if (model, api_base) not in _known:
            _known[model, api_base] = _look_up(model, api_base)
        return _known[model, api_base]


def _look_up(model: str, api_base: str | None) -> int | None:
    litellm = load_litellm()
    try:
        info = litellm.get_model_info(model, api_base=api_base)
    except Exception:  # noqa: BLE001 - an unknown model (ModelNotMappedError, or worse): no window
        return None
    for field in ("max_input_tokens", "max_tokens"):
        tokens = info.get(field)
        if isinstance(tokens, int) and tokens > 0:
            return tokens
    return None


_noted: set[tuple[str, int]] = set()


def note_shorter_answers(window: ContextWindow, answer_tokens: int) -> None:
    """Say once per model and window, on the log, that its answers are kept shorter than
    ``answer_tokens`` (the run's max_tokens) so that prompts fit its window."""
    if (window.model, window.tokens) in _noted:
        return
    _noted.add((window.model, window.tokens))
    log.warning(
        "%s: max_tokens = %d leaves too little of %d tokens (%s) for the prompt; its answers "
        "get what the prompt leaves (at least %d tokens). Set --max-tokens (about a quarter of "
        "the window) or a larger max_context to choose the split yourself",
        window.model,
        answer_tokens,
        window.tokens,
        window.source,
        min(answer_tokens, MIN_ANSWER_TOKENS),
    )


def count_tokens(model: str, messages: Messages) -> int | None:
    """``messages``' tokens as ``litellm.token_counter`` counts them for ``model``; None when it
    cannot. Never downloads a tokenizer (litellm would fetch Llama's from Hugging Face, seconds
    to minutes, or a hang offline): tiktoken's bundled one stands in, which the margin covers."""
    litellm = load_litellm()
    litellm.disable_hf_tokenizer_download = True
    try:
        tokens = litellm.token_counter(model=model, messages=messages)
    except Exception:  # noqa: BLE001 - counting is a check; without it the estimate stands
        return None
    return tokens if isinstance(tokens, int) and tokens > 0 else None


def prompt_chars(messages: Sequence[dict[str, str]]) -> int:
    """The prompt's size as ``max_chars`` measures it: its messages' characters."""
    return sum(len(m["content"]) for m in messages)


@dataclass(frozen=True)
class Fitted:
    """A prompt fitted to a window, and the answer's ``max_tokens`` to send with it.

    Attributes:
        messages: the chat messages.
        answer_tokens: the run's ``max_tokens``, or fewer where the window cannot hold the
            prompt beside that many (a small local model's window).
    """

    messages: Messages
    answer_tokens: int


class _NoFit(Exception):
    """No build was small enough; the last (smallest) one, its size and how it was made."""

    def __init__(self, messages: Messages, tokens: int, size: int, counted: bool, how: str):
        super().__init__(how)
        self.messages, self.tokens, self.size, self.counted, self.how = (
            messages, tokens, size, counted, how
        )  # fmt: skip


def fit_messages(
    build: Callable[[PromptLimit | None], Messages],
    window: ContextWindow | None,
    answer_tokens: int,
    count: Callable[[Messages], int | None],
) -> Fitted:
    """The messages ``build`` makes, within ``window`` beside an answer of ``answer_tokens``.

    The answer keeps its ``answer_tokens`` while the prompt can have at least
    :data:`MIN_PROMPT_TOKENS` beside it (optional pieces are left out first); else it gets half
    the window. When even the pieces that are never cut do not fit beside that, the answer is
    cut instead, down to :data:`MIN_ANSWER_TOKENS`: a 4k-window model with the run's 4096
    max_tokens still gets prompts, with a shorter answer, rather than failing every call.

    Args:
        build: builds the messages within a size limit (None: ``max_chars`` only).
        window: the model's context window; None builds with ``max_chars`` only.
        answer_tokens: the answer's ``max_tokens``.
        count: the messages' tokens, or None when they cannot be counted. Called only when
            the prompt has more UTF-8 bytes than it may have tokens (a byte-level tokenizer
            never makes more tokens than bytes, so a smaller prompt fits uncounted).

    Raises:
        PromptTooLarge: the pieces that are never cut are larger than the window less
            :data:`MIN_ANSWER_TOKENS` for the answer.
    """
    if window is None:
        return Fitted(build(None), answer_tokens)
    room = window.tokens - margin_tokens(window.tokens)  # prompt and answer together
    answer = answer_tokens if room - answer_tokens >= MIN_PROMPT_TOKENS else room // 2
    where = f"its context window of {window.tokens} tokens (from {window.source})"
    try:
        messages, tokens = _fit_prompt(build, window, room - answer, answer, count)
    except _NoFit as no_fit:
        floor = min(answer_tokens, MIN_ANSWER_TOKENS)
        if no_fit.tokens <= room - floor:  # the smallest prompt fits beside a shorter answer
            return Fitted(no_fit.messages, min(answer_tokens, room - no_fit.tokens))
        about = "" if no_fit.counted else "about "
        raise PromptTooLarge(
            f"{window.model}: the prompt is {about}{no_fit.tokens} tokens ({no_fit.size} "
            f"characters) {no_fit.how}, over the {room - floor} tokens left for it in {where} "
            f"with at least {floor} kept for the answer; use a model with a larger context "
            "window (and set its max_context), raise max_context if the server accepts more, "
            "or make the program smaller"
        ) from None
    if answer < answer_tokens:  # the answer was cut: it gets all the prompt left
        answer = min(answer_tokens, room - tokens)
    return Fitted(messages, answer)


def _fit_prompt(
    build: Callable[[PromptLimit | None], Messages],
    window: ContextWindow,
    allowed: int,
    answer: int,
    count: Callable[[Messages], int | None],
) -> tuple[Messages, int]:
    """Messages of at most ``allowed`` tokens and their tokens; :class:`_NoFit` (with the
    smallest build) when none is that small."""
    kept = f"{window.tokens} tokens, {answer} kept for the answer"
    reason = f"the context window of {window.model} ({kept})"
    chars = int(allowed * CHARS_PER_TOKEN)
    for _ in range(1 + _SHRINK_STEPS):
        messages = build(PromptLimit(chars, reason))
        size = prompt_chars(messages)
        counted = None
        if sum(len(m["content"].encode()) for m in messages) > allowed:
            counted = count(messages)
        tokens = math.ceil(size / CHARS_PER_TOKEN) if counted is None else counted
        if tokens <= allowed:
            return messages, tokens
        if size > chars:  # build went over the limit it was given: nothing more to leave out
            raise _NoFit(
                messages, tokens, size, counted is not None, "with everything optional left out"
            )
        chars = int(size * allowed / tokens * _SHRINK_SLACK)
    raise _NoFit(
        messages, tokens, size, counted is not None, f"after {_SHRINK_STEPS} smaller builds"
    )
