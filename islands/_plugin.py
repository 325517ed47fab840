"""Built-in plugin: the selection strategies (imported when the hook runs, not when the plugin
loads: every ``evoforge`` command loads the plugins)."""

from evoforge.plugins import hookimpl


@hookimpl
def register_selection_strategies(register):
    from evoforge.islands._selection import BUILTIN_STRATEGIES

    for name, strategy in BUILTIN_STRATEGIES.items():
        register(name, strategy)
