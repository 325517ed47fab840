"""Evaluator lookups: the classes plugins registered, checked against the evaluator contract."""

from __future__ import annotations

import inspect
from typing import Any

from evoforge.evaluators._base import Evaluator
from evoforge.plugins import PluginError, collect, load_plugins, origins


def _entry(plugin: str, cls: Any) -> tuple[str, type[Evaluator]]:
    """Check one registered evaluator class against the contract in the hookspec."""
    if not (isinstance(cls, type) and issubclass(cls, Evaluator)):
        raise PluginError(
            f"plugin {plugin!r} registered {cls!r} as an evaluator; register_evaluators "
            "expects a subclass of evoforge.evaluators.Evaluator (the class, not an instance)"
        )
    name = getattr(cls, "name", None)
    if not (isinstance(name, str) and name):
        raise PluginError(
            f"plugin {plugin!r} registered the evaluator class {cls.__qualname__} without a "
            f'name; add `name: ClassVar[str] = "my-evaluator"` to the class'
        )
    if inspect.isabstract(cls):
        raise PluginError(
            f"plugin {plugin!r} registered the evaluator {name!r} ({cls.__qualname__}), which "
            f"does not implement {', '.join(sorted(cls.__abstractmethods__))}; define "
            "`async def evaluate(self, source) -> EvalResult`"
        )
    targets = getattr(cls, "targets", None)
    if not (
        isinstance(targets, tuple) and targets and all(isinstance(t, str) and t for t in targets)
    ):
        raise PluginError(
            f"plugin {plugin!r}: evaluator {name!r} has targets {targets!r}; use a tuple of "
            'device kinds, e.g. targets = ("cpu",) or ("cuda",)'
        )
    return name, cls


def evaluators() -> dict[str, type[Evaluator]]:
    """Evaluator classes by name.

    Raises:
        PluginError: a plugin registered something that breaks the evaluator contract, or two
            plugins registered different evaluators under one name.
    """
    load_plugins()
    found = collect("register_evaluators", "evaluator", _entry)
    return {name: cls for name, (cls, _) in found.items()}


def evaluator_origins() -> dict[str, tuple[str, str]]:
    """``(plugin, origin)`` of each evaluator by name; origin as in :func:`plugin_names`."""
    load_plugins()
    found = collect("register_evaluators", "evaluator", _entry)
    where = origins()
    return {name: (plugin, where.get(plugin, "registered")) for name, (_, plugin) in found.items()}


def evaluator_class(name: str) -> type[Evaluator]:
    """The evaluator class registered as ``name``.

    Raises:
        PluginError: no plugin registered one by that name (the message lists those that did).
    """
    found = evaluators()
    if name not in found:
        raise PluginError(
            f"no evaluator {name!r}; installed: {', '.join(sorted(found))}. "
            "Install the plugin that provides it or fix the problem's `evaluator`"
        )
    return found[name]
