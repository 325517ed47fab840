"""A server's refusal of a prompt too long for its context window, read for what it teaches.

A server started with a smaller window than the run was told (``llama-server -c 2048`` and
``--max-context 8192``) refuses every request that does not fit, and a refusal names the real
window: the run can refit its prompts to it instead of sending the same request 200 times.
The wordings read here:

- OpenAI, and vLLM before 0.7: ``This model's maximum context length is 4096 tokens. However,
  you requested 4298 tokens (3350 in the messages, 948 in the completion).``
- vLLM since: ``... maximum context length is 4096 tokens and your request has 3350 input
  tokens (948 > 4096 - 3350)``;
- llama.cpp's server: ``the request exceeds the available context size, try increasing it``
  with ``n_ctx`` and ``n_prompt_tokens`` in the error body (litellm quotes the body);
- others: ``context length exceeded``, ``context_length_exceeded``, ``n_ctx: 2048``.

A refusal that names no window (an old llama.cpp) is still a refusal: the run then knows the
window it was told is too large, but not by how much (:func:`read_refusal` returns None for
its window).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_REFUSAL = re.compile(
    r"maximum context length|context length exceeded|context_length_exceeded|"
    r"exceeds? the (?:available )?context size|exceed_context_size|"
    r"longer than the model's (?:maximum )?context length|maximum context limit|"
    r"context window (?:is )?(?:exceeded|too small)|\bn_ctx\b",
    re.IGNORECASE,
)
_WINDOW = (
    re.compile(r"maximum context (?:length|limit) is (\d+)", re.IGNORECASE),
    re.compile(r"['\"]?n_ctx['\"]?\s*[:=]\s*(\d+)"),
    re.compile(r"context (?:length|size|window) (?:is |of )?\(?(\d{3,})\)?", re.IGNORECASE),
)
_PROMPT = (
    re.compile(r"\((\d+) in the messages", re.IGNORECASE),
    re.compile(r"your request has (\d+) input tokens", re.IGNORECASE),
    re.compile(r"['\"]?n_prompt_tokens['\"]?\s*[:=]\s*(\d+)"),
)


@dataclass(frozen=True)
class ContextRefusal:
    """What a context-window refusal says.

    Attributes:
        window: the server's window in tokens, when the refusal names it.
        prompt_tokens: the refused prompt's size in the server's tokens, when it says.
    """

    window: int | None
    prompt_tokens: int | None


def read_refusal(message: str) -> ContextRefusal | None:
    """The refusal in ``message`` (a model error's text), or None when it is none.

    >>> read_refusal("This model's maximum context length is 2048 tokens. However, you "
    ...              "requested 2100 tokens (1600 in the messages, 500 in the completion).")
    ContextRefusal(window=2048, prompt_tokens=1600)
    """
    if not _REFUSAL.search(message):
        return None
    return ContextRefusal(_first(_WINDOW, message), _first(_PROMPT, message))


def _first(patterns: tuple[re.Pattern[str], ...], message: str) -> int | None:
    for pattern in patterns:
        match = pattern.search(message)
        if match and int(match.group(1)) > 0:
            return int(match.group(1))
    return None
