"""The model client: every model, the offline one included, is called through litellm."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from typing import Any

from plugins import model_providers

_ready_prefixes: set[str] = set()


class ModelError(RuntimeError):
    """A model call failed (unreachable, rejected, malformed reply) after ``latency_s``."""

    def __init__(self, message: str, latency_s: float = 0.0) -> None:
        super().__init__(message)
        self.latency_s = latency_s


@dataclass(frozen=True)
class Completion:
    """One model answer with its accounting; ``cost_usd`` is None when the price is unknown."""

    text: str
    model: str
    latency_s: float
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cost_usd: float | None = None


def _litellm() -> Any:
    # litellm fetches a price map at import unless told to use its bundled copy.
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    litellm.suppress_debug_info = True
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
    """Run the set-up of the plugin that provides ``model``'s prefix (once per prefix)."""
    prefix = model.split("/", 1)[0]
    if prefix in _ready_prefixes:
        return
    _litellm()
    setup = model_providers().get(prefix)
    if setup is not None:
        setup()
    _ready_prefixes.add(prefix)


async def complete(
    model: str,
    messages: list[dict[str, str]],
    *,
    seed: int,
    temperature: float,
    max_tokens: int,
    api_base: str | None = None,
    timeout_s: float = 600.0,
) -> Completion:
    """Ask ``model`` for one answer. Raises :class:`ModelError` on any failure."""
    litellm = _litellm()
    prepare(model)
    started = time.perf_counter()
    try:
        response = await litellm.acompletion(
            model=model,
            messages=messages,
            seed=seed,
            temperature=temperature,
            max_tokens=max_tokens,
            api_base=api_base,
            timeout=timeout_s,
            num_retries=0,
        )
    except Exception as exc:  # litellm maps every provider failure to its own exception types
        raise ModelError(
            f"{model}: {type(exc).__name__}: {str(exc)[:500]}", time.perf_counter() - started
        ) from exc
    latency = time.perf_counter() - started
    text = response.choices[0].message.content or ""
    usage = getattr(response, "usage", None)
    return Completion(
        text=text,
        model=model,
        latency_s=latency,
        prompt_tokens=getattr(usage, "prompt_tokens", None),
        completion_tokens=getattr(usage, "completion_tokens", None),
        cost_usd=_cost(litellm, response),
    )


def _cost(litellm: Any, response: Any) -> float | None:
    """USD from litellm's local price map; plugins price their own models (offline: 0)."""
    try:
        return float(litellm.completion_cost(completion_response=response))
    except Exception:  # unknown model in the price map: unknown cost, not zero
        return None
