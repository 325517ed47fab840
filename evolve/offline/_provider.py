"""The offline mutation model served as the litellm provider ``offline``.

After :func:`register_offline_provider`, ``litellm.acompletion(model="offline/mutator", ...)`` reads
the prompt as an LLM would and answers with :func:`evoforge.evolve.offline._mutator.mutate`, so the
controller calls every model the same way. This module imports litellm (seconds): import it lazily,
where a model is about to be called.

The call's ``seed`` reaches a litellm ``CustomLLM`` as ``optional_params["seed"]``. The random
generator is seeded from that seed *and* a hash of the messages, so the same call gives the same
answer while different prompts under one run seed do not share a random stream; without a seed
the hash alone is used.
"""

from __future__ import annotations

import os
import time
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
import litellm  # noqa: E402  (the environment variable must be set first)

from evoforge.evolve.models import register_custom_provider  # noqa: E402
from evoforge.evolve.offline._model import MODEL, PROVIDER  # noqa: E402
from evoforge.evolve.offline._mutator import mutate  # noqa: E402
from evoforge.evolve.offline._prompt import call_rng, message_text, read_prompt  # noqa: E402
from evoforge.evolve.prompts import CURRENT_PROGRAM_HEADING, INSPIRATION_HEADING  # noqa: E402

__all__ = [
    "CURRENT_PROGRAM_HEADING",
    "INSPIRATION_HEADING",
    "MODEL",
    "OfflineMutator",
    "read_prompt",
    "register_offline_provider",
]


NO_PROGRAM = (
    f"I cannot propose an edit: the last user message has no line starting with "
    f"{CURRENT_PROGRAM_HEADING!r} followed by a fenced code block holding the program."
)


def _tokens(text: str) -> int:
    return max(1, len(text) // 4)


class OfflineMutator(litellm.CustomLLM):
    """litellm handler answering chat completions with the offline mutation model."""

    def completion(self, model: str, messages: list, *args: Any, **kwargs: Any) -> Any:
        optional_params = kwargs.get("optional_params") or {}
        program, inspirations = read_prompt(messages)
        if program is None:
            answer = NO_PROGRAM
        else:
            answer = mutate(program, inspirations, call_rng(messages, optional_params.get("seed")))
        response = kwargs.get("model_response") or litellm.ModelResponse()
        response.choices[0].message.content = answer
        response.choices[0].finish_reason = "stop"
        response.model = f"{PROVIDER}/{model}"
        response.created = int(time.time())
        prompt_tokens = _tokens("".join(message_text(m) for m in messages))
        completion_tokens = _tokens(answer)
        # ModelResponse sets usage in __init__ without declaring it
        response.usage = litellm.Usage(  # type: ignore[union-attr]
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
            total_tokens=prompt_tokens + completion_tokens,
        )
        return response

    async def acompletion(self, model: str, messages: list, *args: Any, **kwargs: Any) -> Any:
        return self.completion(model, messages, *args, **kwargs)  # a few ms of pure CPU


def register_offline_provider() -> None:
    """Route ``offline/<anything>`` to :class:`OfflineMutator`; calling it again does nothing.

    litellm adds every ``custom_provider_map`` entry to its provider list at the start of each
    call, so the map entry is all the routing it needs.
    """
    if any(item.get("provider") == PROVIDER for item in litellm.custom_provider_map):
        return
    register_custom_provider(PROVIDER, OfflineMutator())
    # A zero price, so that litellm.completion_cost() answers 0.0 instead of raising.
    price = dict.fromkeys(
        (
            "input_cost_per_token",
            "output_cost_per_token",
            "cache_creation_input_token_cost",
            "cache_read_input_token_cost",
        ),
        0.0,
    )
    litellm.register_model({MODEL: {**price, "litellm_provider": PROVIDER, "mode": "chat"}})
