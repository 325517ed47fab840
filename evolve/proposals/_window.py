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
   then there is no window, and only ``max_chars`` applies.

The prompt may take the window less the answer's ``max_tokens`` (the model's own, else the
run's) and a margin (:func:`margin_tokens`: chat template, tokenizer differences). That many
tokens times :data:`CHARS_PER_TOKEN` is the prompt's size limit in characters. The built prompt
is then counted with ``litellm.token_counter`` (tiktoken; never a tokenizer download) where it
could be too large, and built again smaller while it is. When even the pieces that are never
cut (the problem, the current program, the task, the answer format) do not fit, the proposal
fails with :class:`PromptTooLarge`, a ``bad_request`` model failure that names the model, its
window, the prompt's size and the fixes; the run goes on.
"""

from __future__ import annotations

import asyncio
import math
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from evoforge.evolve.models import Attempt, ModelError, load_litellm
from evoforge.evolve.prompts import PromptLimit

if TYPE_CHECKING:
    from evoforge.evolve.models import ModelSpec
    from evoforge.evolve.prompts import PromptConfig

CHARS_PER_TOKEN = 3.0
"""Characters of prompt per token, estimated low: code (indentation, operators, short names)
packs fewer characters into a token than prose (tiktoken: about 3.5 to 4 on Python), and a
local model's tokenizer may pack fewer still. The token count afterwards corrects a miss."""
MIN_PROMPT_TOKENS = 256
"""Below this many tokens left for the prompt, no prompt is attempted (max_tokens is too large
for the window)."""
_SHRINK_STEPS = 4  # builds after the first, each smaller, while the counted prompt is too large
_SHRINK_SLACK = 0.95  # each rebuild aims this far below the size the count asks for

Messages = list[dict[str, str]]


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


async def context_window(spec: ModelSpec, prompts: PromptConfig) -> ContextWindow | None:
    """The window of ``spec``'s model: its own ``max_context``, else ``prompts.max_context``,
    else litellm's model info (looked up off the event loop, once per model and endpoint: for
    Ollama it asks the server). None: unknown, only ``max_chars`` limits the prompt."""
    if spec.max_context is not None:
        return ContextWindow(spec.model, spec.max_context, "its max_context")
    if prompts.max_context is not None:
        return ContextWindow(spec.model, prompts.max_context, "[prompts] max_context")
    key = (spec.model, spec.api_base)
    tokens = _known[key] if key in _known else await asyncio.to_thread(litellm_window, *key)
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


def fit_messages(
    build: Callable[[PromptLimit | None], Messages],
    window: ContextWindow | None,
    answer_tokens: int,
    count: Callable[[Messages], int | None],
) -> Messages:
    """The messages ``build`` makes, within ``window`` with ``answer_tokens`` kept free.

    Args:
        build: builds the messages within a size limit (None: ``max_chars`` only).
        window: the model's context window; None builds with ``max_chars`` only.
        answer_tokens: the answer's ``max_tokens``.
        count: the messages' tokens, or None when they cannot be counted. Called only when
            the prompt has more UTF-8 bytes than it may have tokens (a byte-level tokenizer
            never makes more tokens than bytes, so a smaller prompt fits uncounted).

    Raises:
        PromptTooLarge: no prompt fits: ``answer_tokens`` leave too little of the window, or
            the pieces that are never cut are larger than what is left.
    """
    if window is None:
        return build(None)
    allowed = window.prompt_tokens(answer_tokens)
    kept = f"{answer_tokens} kept for the answer"
    where = f"its context window of {window.tokens} tokens (from {window.source})"
    if allowed < MIN_PROMPT_TOKENS:
        raise PromptTooLarge(
            f"{window.model}: max_tokens = {answer_tokens} for the answer leaves "
            f"{max(allowed, 0)} tokens for the prompt in {where}; lower max_tokens (e.g. "
            f"--max-tokens {window.tokens // 4}), or use a model with a larger window and set "
            "its max_context"
        )
    reason = f"the context window of {window.model} ({window.tokens} tokens, {kept})"
    chars = int(allowed * CHARS_PER_TOKEN)
    for _ in range(1 + _SHRINK_STEPS):
        messages = build(PromptLimit(chars, reason))
        size = prompt_chars(messages)
        counted = None
        if sum(len(m["content"].encode()) for m in messages) > allowed:
            counted = count(messages)
        tokens = math.ceil(size / CHARS_PER_TOKEN) if counted is None else counted
        if tokens <= allowed:
            return messages
        if size > chars:  # build went over the limit it was given: nothing more to leave out
            how = "with everything optional left out"
            break
        chars = int(size * allowed / tokens * _SHRINK_SLACK)
    else:
        how = f"after {_SHRINK_STEPS} smaller builds"
    about = "" if counted is not None else "about "
    raise PromptTooLarge(
        f"{window.model}: the prompt is {about}{tokens} tokens ({size} characters) {how}, "
        f"over the {allowed} tokens left for it in {where}, {kept}; use a model with a larger "
        "context window (and set its max_context), raise max_context if the server accepts "
        "more, lower max_tokens, or make the program smaller"
    )
