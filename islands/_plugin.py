"""Built-in plugin: the selection strategies."""

from evoforge.islands._selection import BUILTIN_STRATEGIES
from evoforge.plugins import hookimpl


@hookimpl
def register_selection_strategies(register):
    for name, strategy in BUILTIN_STRATEGIES.items():
        register(name, strategy)
