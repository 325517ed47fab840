"""The one plugin manager: built-ins and entry-point plugins, loaded lazily, once."""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import pluggy

from plugins import _hookspecs
from plugins._hookspecs import PROJECT

if TYPE_CHECKING:
    from evaluators import Evaluator

#: Built-in plugins, registered exactly like third-party ones.
DEFAULT_PLUGINS = (
    "evaluators._plugin",
    "problems._plugin",
    "islands._plugin",
    "evolve._plugin",
)

#: Comma-separated entry-point names of the third-party plugins to load; unset loads them all,
#: an empty value loads none (built-ins always load).
PLUGINS_ENV = "EVOFORGE_PLUGINS"
#: Set to 1 to trace every hook call to stderr.
TRACE_ENV = "EVOFORGE_TRACE_HOOKS"

pm = pluggy.PluginManager(PROJECT)
pm.add_hookspecs(_hookspecs)
_loaded = False


class PluginError(LookupError):
    """A plugin, evaluator, problem or strategy name does not resolve."""


def load_plugins() -> pluggy.PluginManager:
    """Register the built-ins, then ``evoforge`` entry-point plugins (first call only).

    Built-ins always load: the engine needs them. ``EVOFORGE_PLUGINS`` (comma-separated
    entry-point names) restricts which third-party plugins load; set it empty to load none.
    """
    global _loaded
    if _loaded:
        return pm
    _loaded = True
    for name in DEFAULT_PLUGINS:
        pm.register(importlib.import_module(name), name)
    allowed = os.environ.get(PLUGINS_ENV)
    if allowed is None:
        pm.load_setuptools_entrypoints(PROJECT)
    else:
        for name in filter(None, (part.strip() for part in allowed.split(","))):
            if not pm.load_setuptools_entrypoints(PROJECT, name=name):
                raise PluginError(
                    f"{PLUGINS_ENV} names {name!r}, but no installed package "
                    f"provides an {PROJECT!r} entry point of that name"
                )
    pm.check_pending()
    if os.environ.get(TRACE_ENV):
        pm.trace.root.setwriter(sys.stderr.write)
        pm.enable_tracing()
    return pm


def _collect(hook: Callable[..., Any], kind: str) -> dict[str, Any]:
    found: dict[str, Any] = {}

    def register(name: str, value: Any) -> None:
        if name in found and found[name] != value:
            raise PluginError(
                f"two plugins register the {kind} {name!r}; unregister one of them "
                f"(set {PLUGINS_ENV} to the plugins you want)"
            )
        found[name] = value

    hook(register=register)
    return found


def evaluators() -> dict[str, type[Evaluator]]:
    """Evaluator classes by name."""
    load_plugins()
    return _collect(
        lambda register: pm.hook.register_evaluators(register=lambda cls: register(cls.name, cls)),
        "evaluator",
    )


def evaluator_class(name: str) -> type[Evaluator]:
    found = evaluators()
    if name not in found:
        raise PluginError(
            f"no evaluator {name!r}; installed: {', '.join(sorted(found))}. "
            "Install the plugin that provides it or fix the problem's `evaluator`"
        )
    return found[name]


def problems() -> dict[str, str]:
    """Problem paths by name."""
    load_plugins()
    return _collect(pm.hook.register_problems, "problem")


def selection_strategies() -> dict[str, Callable[..., int]]:
    load_plugins()
    return _collect(pm.hook.register_selection_strategies, "selection strategy")


def selection_strategy(name: str) -> Callable[..., int]:
    found = selection_strategies()
    if name not in found:
        raise PluginError(
            f"no selection strategy {name!r}; choose one of {', '.join(sorted(found))} "
            "(or install the plugin that provides it)"
        )
    return found[name]


def model_providers() -> dict[str, Callable[[], None]]:
    load_plugins()
    return _collect(pm.hook.register_models, "model provider")


def plugin_names() -> list[tuple[str, str]]:
    """``(name, origin)`` for each loaded plugin; origin is ``builtin`` or the distribution."""
    load_plugins()
    dists = {id(plugin): dist.project_name for plugin, dist in pm.list_plugin_distinfo()}
    return [
        (name, "builtin" if name in DEFAULT_PLUGINS else dists.get(id(plugin), "registered"))
        for name, plugin in pm.list_name_plugin()
    ]
