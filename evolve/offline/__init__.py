"""The offline mutation model: evolution with no LLM, served through litellm as ``offline/…``.

A tree-sitter search over a program's EVOLVE-BLOCK regions (:func:`mutate`): constant
perturbation, operator and comparison swaps, statement duplication, deletion and reordering,
and crossover with inspirations. It reads the same prompt every model gets
(:func:`read_prompt`) and answers with a SEARCH/REPLACE diff, so the engine calls it exactly as
it calls a real model.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evoforge.base.lazy import lazy_package

if TYPE_CHECKING:
    from evoforge.evolve.offline._model import (
        MODEL as MODEL,
        PROVIDER as PROVIDER,
        register_offline_provider as register_offline_provider,
    )
    from evoforge.evolve.offline._mutator import (
        DEFAULT_WEIGHTS as DEFAULT_WEIGHTS,
        NOTHING_TO_CHANGE as NOTHING_TO_CHANGE,
        mutate as mutate,
    )
    from evoforge.evolve.offline._prompt import (
        call_rng as call_rng,
        message_text as message_text,
        read_prompt as read_prompt,
    )

__getattr__, __dir__, __all__ = lazy_package(__name__)
