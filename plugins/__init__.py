"""Plugins: pluggy hook specifications and the evoforge plugin manager.

Built-in evaluators, problems, selection strategies and the offline model register through the
same hooks a third-party package uses. A third-party plugin is a module with ``@hookimpl``
functions, exposed through the ``evoforge`` entry-point group::

    # pyproject.toml of your package
    [project.entry-points.evoforge]
    my_plugin = "my_package.evoforge_plugin"

    # my_package/evoforge_plugin.py
    from plugins import hookimpl

    @hookimpl
    def register_evaluators(register):
        register(MyEvaluator)

Environment: ``EVOFORGE_PLUGINS`` restricts which plugins load (comma-separated names; empty
for built-ins only); ``EVOFORGE_TRACE_HOOKS=1`` traces hook calls to stderr.
"""

from plugins._hookspecs import PROJECT, hookimpl, hookspec
from plugins._manager import (
    DEFAULT_PLUGINS,
    PluginError,
    evaluator_class,
    evaluator_origins,
    evaluators,
    load_plugins,
    model_providers,
    plugin_names,
    pm,
    problems,
    selection_strategies,
    selection_strategy,
)

__all__ = [
    # markers
    "PROJECT",
    "hookimpl",
    "hookspec",
    # manager
    "DEFAULT_PLUGINS",
    "PluginError",
    "load_plugins",
    "pm",
    # lookups
    "evaluator_class",
    "evaluator_origins",
    "evaluators",
    "model_providers",
    "plugin_names",
    "problems",
    "selection_strategies",
    "selection_strategy",
]
