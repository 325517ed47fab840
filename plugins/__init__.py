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

from __future__ import annotations

from typing import TYPE_CHECKING

from evoforge.base.lazy import lazy_package

if TYPE_CHECKING:
    from evoforge.plugins._hookspecs import (
        PROJECT as PROJECT,
        hookimpl as hookimpl,
        hookspec as hookspec,
    )
    from evoforge.plugins._manager import (
        DEFAULT_PLUGINS as DEFAULT_PLUGINS,
        PLUGINS_ENV as PLUGINS_ENV,
        TRACE_ENV as TRACE_ENV,
        PluginError as PluginError,
        collect as collect,
        load_plugins as load_plugins,
        model_providers as model_providers,
        named as named,
        origins as origins,
        plugin_names as plugin_names,
        pm as pm,
        problems as problems,
        selection_strategies as selection_strategies,
        selection_strategy as selection_strategy,
        values as values,
    )

__getattr__, __dir__, __all__ = lazy_package(__name__)
