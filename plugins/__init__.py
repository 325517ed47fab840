"""Plugins: pluggy hook specifications and the evoforge plugin manager.

Built-in evaluators, problems, selection strategies and the offline model register through the
same hooks a third-party package uses. A third-party plugin is a module with ``@hookimpl``
functions, exposed through the ``evoforge`` entry-point group::

    # pyproject.toml of your package
    [project.entry-points.evoforge]
    my_plugin = "my_package.evoforge_plugin"

    # my_package/evoforge_plugin.py
    from evoforge import hookimpl
    from evoforge.evaluators import Evaluator

    class MyEvaluator(Evaluator):
        name = "my-evaluator"
        ...

    @hookimpl
    def register_evaluators(register):
        register(MyEvaluator)

Environment: ``EVOFORGE_PLUGINS`` restricts which plugins load (comma-separated names; empty
for built-ins only); ``EVOFORGE_TRACE_HOOKS=1`` traces hook calls to stderr.
"""

from evoforge.plugins._hookspecs import PROJECT, hookimpl, hookspec
from evoforge.plugins._manager import (
    DEFAULT_PLUGINS,
    PLUGINS_ENV,
    TRACE_ENV,
    PluginError,
    collect,
    load_plugins,
    model_providers,
    named,
    origins,
    plugin_names,
    pm,
    problems,
    selection_strategies,
    selection_strategy,
    values,
)

__all__ = [
    # markers
    "PROJECT",
    "hookimpl",
    "hookspec",
    # manager
    "DEFAULT_PLUGINS",
    "PLUGINS_ENV",
    "TRACE_ENV",
    "PluginError",
    "load_plugins",
    "pm",
    # registrations, for typed lookups in the packages that own the types
    "collect",
    "named",
    "origins",
    "values",
    # lookups (evaluators: evoforge.evaluators.evaluators())
    "model_providers",
    "plugin_names",
    "problems",
    "selection_strategies",
    "selection_strategy",
]
