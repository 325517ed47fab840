"""The offline mutation model: evolution with no LLM, served through litellm as ``offline/…``.

A tree-sitter search over a program's EVOLVE-BLOCK regions (:func:`mutate`): constant
perturbation, operator and comparison swaps, statement duplication, deletion and reordering,
and crossover with inspirations. It reads the same prompt every model gets
(:func:`read_prompt`) and answers with a SEARCH/REPLACE diff, so the engine calls it exactly as
it calls a real model.
"""

from evoforge.evolve.offline._mutator import DEFAULT_WEIGHTS, NOTHING_TO_CHANGE, mutate
from evoforge.evolve.offline._prompt import call_rng, message_text, read_prompt

PROVIDER = "offline"
"""The litellm provider prefix the offline model is served under."""
MODEL = f"{PROVIDER}/mutator"
"""The model string of the built-in offline model (any ``offline/<name>`` routes here too)."""


def register_offline_provider() -> None:
    """Serve the offline model through litellm as the ``offline`` provider.

    Imports litellm (seconds), so it is called lazily, by the model client, before the first
    call to an ``offline/…`` model.
    """
    from evoforge.evolve.offline._provider import register_offline_provider as register

    register()


__all__ = [
    "DEFAULT_WEIGHTS",
    "MODEL",
    "NOTHING_TO_CHANGE",
    "PROVIDER",
    "call_rng",
    "message_text",
    "mutate",
    "read_prompt",
    "register_offline_provider",
]
