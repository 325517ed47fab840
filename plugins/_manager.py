"""The one plugin manager: built-ins and entry-point plugins, loaded lazily, once."""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Callable
from importlib import metadata
from typing import Any

import pluggy

from evoforge.plugins import _hookspecs
from evoforge.plugins._hookspecs import PROJECT

#: Built-in plugins, registered exactly like third-party ones.
DEFAULT_PLUGINS = (
    "evoforge.evaluators._plugin",
    "evoforge.evaluators.devices._plugin",
    "evoforge.problems._plugin",
    "evoforge.islands._plugin",
    "evoforge.evolve.offline._plugin",
)

#: Comma-separated entry-point names of the third-party plugins to load; unset loads them all,
#: an empty value loads none (built-ins always load).
PLUGINS_ENV = "EVOFORGE_PLUGINS"
#: Set to 1 to trace every hook call to stderr.
TRACE_ENV = "EVOFORGE_TRACE_HOOKS"

pm = pluggy.PluginManager(PROJECT)
pm.add_hookspecs(_hookspecs)
_loaded = False
# What each registration hook gave, by (hook, kind), with the implementations that gave it: a
# command asks for the evaluators once per problem, and each ask would otherwise call every
# plugin again (importing its classes' modules). Registering or removing a plugin changes the
# implementations, so the entry is made again.
_ImplsKey = tuple[tuple[str, Callable[..., Any]], ...]
_collected: dict[tuple[str, str], tuple[_ImplsKey, dict[str, Any]]] = {}


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


def collect(
    hook_name: str, kind: str, entry: Callable[..., tuple[str, Any]]
) -> dict[str, tuple[Any, str]]:
    """Call each plugin's ``hook_name`` implementation with a ``register`` callback.

    ``entry(plugin_name, *args)`` turns what a plugin passed to ``register`` into ``(name,
    value)``, raising :class:`PluginError` for a malformed registration. Implementations are
    called one by one, in pluggy's order, so that every error can name the plugin. The result is
    reused while the hook's implementations stay the same (a traced run shows the first call).

    Returns:
        ``{name: (value, plugin_name)}``.

    Raises:
        PluginError: a malformed registration (from ``entry``), two plugins registering
            different values under one name, or a plugin whose hook raised.
    """
    impls = getattr(pm.hook, hook_name).get_hookimpls()
    # The functions themselves, not their ids: the cache holds them alive, so a function freed
    # after a plugin is unregistered cannot hand its id to a new one and hit a stale entry.
    key = tuple((impl.plugin_name, impl.function) for impl in impls)
    cached = _collected.get((hook_name, kind))
    if cached is not None and cached[0] == key:
        return dict(cached[1])
    found: dict[str, tuple[Any, str]] = {}
    trace = pm.trace.root.get("hook")  # writes only when EVOFORGE_TRACE_HOOKS is set
    for impl in reversed(impls):
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
    _collected[hook_name, kind] = (key, dict(found))
    return found


def named(kind: str) -> Callable[..., tuple[str, Any]]:
    """The ``entry`` of :func:`collect` for hooks whose ``register`` takes ``(name, value)``."""

    def entry(plugin: str, name: Any, value: Any) -> tuple[str, Any]:
        if not (isinstance(name, str) and name):
            raise PluginError(
                f"plugin {plugin!r} registered a {kind} named {name!r}; the name must be a "
                "non-empty string"
            )
        return name, value

    return entry


def problems() -> dict[str, str]:
    """Problem paths by name."""
    load_plugins()
    return values(collect("register_problems", "problem", named("problem")))


def selection_strategies() -> dict[str, Callable[..., int]]:
    load_plugins()
    found = collect(
        "register_selection_strategies", "selection strategy", named("selection strategy")
    )
    return values(found)


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
    return values(collect("register_models", "model provider", named("model provider")))


def plugin_names() -> list[tuple[str, str]]:
    """``(name, origin)`` for each loaded plugin; origin is ``builtin`` or the distribution."""
    load_plugins()
    origins_ = origins()
    return [(name, origins_[name]) for name, _ in pm.list_name_plugin()]


def origins() -> dict[str, str]:
    """Origin of each loaded plugin by name: ``builtin`` or its distribution's name."""
    dists = {id(plugin): dist.project_name for plugin, dist in pm.list_plugin_distinfo()}
    return {
        name: "builtin" if name in DEFAULT_PLUGINS else dists.get(id(plugin), "registered")
        for name, plugin in pm.list_name_plugin()
    }


def values(found: dict[str, tuple[Any, str]]) -> dict[str, Any]:
    return {name: value for name, (value, _) in found.items()}
