"""The one plugin manager: built-ins and entry-point plugins, loaded lazily, once."""

from __future__ import annotations

import importlib
import inspect
import os
import sys
from collections.abc import Callable
from importlib import metadata
from typing import TYPE_CHECKING, Any

import pluggy

from plugins import _hookspecs
from plugins._hookspecs import PROJECT

if TYPE_CHECKING:
    from evaluators import Evaluator

#: Built-in plugins, registered exactly like third-party ones.
DEFAULT_PLUGINS = (
    "evaluators._plugin",
    "evaluators._devices_plugin",
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
    """A plugin does not load or breaks a hook's contract, or a name does not resolve."""


def load_plugins() -> pluggy.PluginManager:
    """Register the built-ins, then ``evoforge`` entry-point plugins (first call only).

    Built-ins always load: the engine needs them. ``EVOFORGE_PLUGINS`` (comma-separated
    entry-point names) restricts which third-party plugins load; set it empty to load none.

    Raises:
        PluginError: ``EVOFORGE_PLUGINS`` names an entry point no package provides, or an
            entry point fails to import (the message names it and its distribution).
    """
    global _loaded
    if _loaded:
        return pm
    for name in DEFAULT_PLUGINS:
        if not pm.has_plugin(name):
            pm.register(importlib.import_module(name), name)
    points = {ep.name: ep for ep in metadata.entry_points(group=PROJECT)}
    allowed = os.environ.get(PLUGINS_ENV)
    wanted = sorted(points)
    if allowed is not None:
        wanted = list(dict.fromkeys(filter(None, (part.strip() for part in allowed.split(",")))))
        if missing := [name for name in wanted if name not in points]:
            raise PluginError(
                f"{PLUGINS_ENV} names {missing[0]!r}, but no installed package provides an "
                f"{PROJECT!r} entry point of that name (installed: "
                f"{', '.join(sorted(points)) or 'none'})"
            )
    for name in wanted:
        try:
            pm.load_setuptools_entrypoints(PROJECT, name=name)
        except Exception as exc:
            dist = getattr(points[name].dist, "name", None) or "an unknown distribution"
            raise PluginError(
                f"the {PROJECT!r} entry point {name!r} ({points[name].value}, from {dist}) "
                f"failed to load: {type(exc).__name__}: {exc}. Fix or uninstall {dist}, or "
                f"leave {name!r} out of {PLUGINS_ENV}"
            ) from exc
    pm.check_pending()
    if os.environ.get(TRACE_ENV):
        pm.trace.root.setwriter(sys.stderr.write)
        pm.enable_tracing()
    _loaded = True
    return pm


def _collect(
    hook_name: str, kind: str, entry: Callable[..., tuple[str, Any]]
) -> dict[str, tuple[Any, str]]:
    """Call each plugin's ``hook_name`` implementation with a ``register`` callback.

    ``entry(plugin_name, *args)`` turns what a plugin passed to ``register`` into ``(name,
    value)``, raising :class:`PluginError` for a malformed registration. Implementations are
    called one by one, in pluggy's order, so that every error can name the plugin.

    Returns:
        ``{name: (value, plugin_name)}``.
    """
    found: dict[str, tuple[Any, str]] = {}
    trace = pm.trace.root.get("hook")  # writes only when EVOFORGE_TRACE_HOOKS is set
    for impl in reversed(getattr(pm.hook, hook_name).get_hookimpls()):
        if impl.hookwrapper or impl.wrapper:  # nothing to wrap: each plugin is called alone
            continue
        plugin = impl.plugin_name

        def register(*args: Any, _plugin: str = plugin) -> None:
            name, value = entry(_plugin, *args)
            if name in found and found[name][0] != value:
                first = found[name][1]
                raise PluginError(
                    f"plugin {first!r} registers two different {kind}s named {name!r}; "
                    "give them different names"
                    if first == _plugin
                    else f"plugins {first!r} and {_plugin!r} both register the {kind} "
                    f"{name!r}; uninstall one of them, or set {PLUGINS_ENV} to the plugins "
                    "you want"
                )
            found.setdefault(name, (value, _plugin))

        trace(hook_name, f"[{plugin}]")
        try:
            impl.function(**dict.fromkeys(impl.argnames, register))
        except PluginError:
            raise
        except Exception as exc:
            raise PluginError(
                f"plugin {plugin!r} failed in {hook_name}(): {type(exc).__name__}: {exc}"
            ) from exc
    return found


def _named(kind: str) -> Callable[..., tuple[str, Any]]:
    def entry(plugin: str, name: Any, value: Any) -> tuple[str, Any]:
        if not (isinstance(name, str) and name):
            raise PluginError(
                f"plugin {plugin!r} registered a {kind} named {name!r}; the name must be a "
                "non-empty string"
            )
        return name, value

    return entry


def _evaluator_entry(plugin: str, cls: Any) -> tuple[str, type[Evaluator]]:
    """Check one registered evaluator class against the contract in the hookspec."""
    from evaluators import Evaluator

    if not (isinstance(cls, type) and issubclass(cls, Evaluator)):
        raise PluginError(
            f"plugin {plugin!r} registered {cls!r} as an evaluator; register_evaluators "
            "expects a subclass of evaluators.Evaluator (the class, not an instance)"
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
    found = _collect("register_evaluators", "evaluator", _evaluator_entry)
    return {name: cls for name, (cls, _) in found.items()}


def evaluator_origins() -> dict[str, tuple[str, str]]:
    """``(plugin, origin)`` of each evaluator by name; origin as in :func:`plugin_names`."""
    load_plugins()
    found = _collect("register_evaluators", "evaluator", _evaluator_entry)
    origins = _origins()
    return {
        name: (plugin, origins.get(plugin, "registered")) for name, (_, plugin) in found.items()
    }


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
    return _values(_collect("register_problems", "problem", _named("problem")))


def selection_strategies() -> dict[str, Callable[..., int]]:
    load_plugins()
    found = _collect(
        "register_selection_strategies", "selection strategy", _named("selection strategy")
    )
    return _values(found)


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
    return _values(_collect("register_models", "model provider", _named("model provider")))


def plugin_names() -> list[tuple[str, str]]:
    """``(name, origin)`` for each loaded plugin; origin is ``builtin`` or the distribution."""
    load_plugins()
    origins = _origins()
    return [(name, origins[name]) for name, _ in pm.list_name_plugin()]


def _origins() -> dict[str, str]:
    dists = {id(plugin): dist.project_name for plugin, dist in pm.list_plugin_distinfo()}
    return {
        name: "builtin" if name in DEFAULT_PLUGINS else dists.get(id(plugin), "registered")
        for name, plugin in pm.list_name_plugin()
    }


def _values(found: dict[str, tuple[Any, str]]) -> dict[str, Any]:
    return {name: value for name, (value, _) in found.items()}
