"""A model plugin for tests: a litellm custom provider answering from a script of texts.

It goes through the same path as any model (``register_models`` hook, litellm routing), so
tests exercise the real client, with answers chosen by the test instead of the network.
"""

from __future__ import annotations

import asyncio
import itertools
import os

from evoforge.evolve.models._client import register_custom_provider
from evoforge.plugins import hookimpl

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

#: model name (after "scripted/") -> answers, served in order and then cycled;
#: "sleep:S" answers after S seconds (a slow model)
SCRIPTS: dict[str, list[str]] = {}
_cursors: dict[str, itertools.cycle] = {}


def rewrite(body: str) -> str:
    """An answer replacing the whole EVOLVE-BLOCK of a one-block program with ``body``."""
    return f"Here is a new version.\n```python\n{body.strip()}\n```\n"


def _setup() -> None:
    import litellm

    class Scripted(litellm.CustomLLM):
        def _answer(self, model: str) -> str:
            name = model.split("/", 1)[-1]
            if name not in _cursors:
                _cursors[name] = itertools.cycle(SCRIPTS[name])
            return next(_cursors[name])

        def completion(self, model, messages, *args, **kwargs):
            return litellm.completion(
                model="gpt-4o-mini", messages=messages, mock_response=self._answer(model)
            )

        async def acompletion(self, model, messages, *args, **kwargs):
            answer = self._answer(model)
            if answer.startswith("sleep:"):  # a model that takes this many seconds to answer
                await asyncio.sleep(float(answer.removeprefix("sleep:")))
            return await litellm.acompletion(
                model="gpt-4o-mini", messages=messages, mock_response=answer
            )

    register_custom_provider("scripted", Scripted())


@hookimpl
def register_models(register):
    register("scripted", _setup)
