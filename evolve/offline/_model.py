"""The offline model's names in litellm, and its registration there (which imports litellm:
seconds, so only before the first call to an ``offline/…`` model)."""

from __future__ import annotations

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
