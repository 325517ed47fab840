"""Package namespaces whose public names are imported on first use (PEP 562).

A package's ``__init__`` that imports every submodule makes ``import evoforge.<package>`` (and
so every import of one of its submodules) pay for all of them: the ``evoforge`` command would
import the evaluators, the controller, pandas and litellm's client to print its help. A package
that lists its names with :func:`lazy_exports` imports the submodule defining a name when the
name is first read, and caches it in the package's namespace, so later reads cost a dict
look-up. The same names are imported under ``TYPE_CHECKING`` for type checkers and editors.

Example (a package's ``__init__.py``)::

    if TYPE_CHECKING:
        from evoforge.problems._spec import Problem

    _EXPORTS = {"Problem": "evoforge.problems._spec"}
    __getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any


def lazy_exports(
    package: str, exports: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of ``package``, which exports each name of
    ``exports`` (name -> the module that defines it) without importing it up front."""

    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        setattr(sys.modules[package], name, value)  # later reads skip this function
        return value

    def __dir__() -> list[str]:
        return sorted({*vars(sys.modules[package]), *exports})

    return __getattr__, __dir__


__all__ = ["lazy_exports"]
