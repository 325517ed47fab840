"""Package namespaces whose public names are imported on first use (PEP 562).

A package's ``__init__`` that imports every submodule makes ``import evoforge.<package>`` (and
so every import of one of its submodules) pay for all of them: the ``evoforge`` command would
import the evaluators, the controller, pandas and litellm's client to print its help. A package
built with :func:`lazy_package` imports the submodule defining a name when the name is first
read, and caches it in the package's namespace, so later reads cost a dict look-up.

Each public name is written once: in the package's ``if TYPE_CHECKING:`` imports, which type
checkers and editors read as they are, and which :func:`lazy_package` reads (from the package's
source, at import) to learn what to serve and to build ``__all__``. Example (a package's
``__init__.py``)::

    from typing import TYPE_CHECKING

    from evoforge.base.lazy import lazy_package

    if TYPE_CHECKING:
        from evoforge.problems._spec import Objective, Problem

    __getattr__, __dir__, __all__ = lazy_package(__name__)
"""

from __future__ import annotations

import ast
import importlib
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any


class LazyPackageError(ImportError):
    """A lazy package's ``TYPE_CHECKING`` block holds something other than absolute
    ``from module import name`` lines, so what it exports cannot be read from it."""


def typed_exports(source: str, filename: str = "<package>") -> dict[str, tuple[str, str]]:
    """``exported name -> (module, name there)`` for the imports under the top-level
    ``if TYPE_CHECKING:`` blocks of a package's ``source``, in the order written."""
    exports: dict[str, tuple[str, str]] = {}
    for node in ast.parse(source, filename).body:
        if not (isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)):
            continue
        for stmt in node.body:
            if not (isinstance(stmt, ast.ImportFrom) and stmt.module and stmt.level == 0):
                raise LazyPackageError(
                    f"{filename}:{stmt.lineno}: a lazy package's TYPE_CHECKING block may only "
                    "hold absolute `from module import name` lines (each one an export)"
                )
            for alias in stmt.names:
                exports[alias.asname or alias.name] = (stmt.module, alias.name)
    return exports


def lazy_package(
    package: str,
) -> tuple[Callable[[str], Any], Callable[[], list[str]], list[str]]:
    """The ``__getattr__``, ``__dir__`` and ``__all__`` of ``package``, which exports the
    names its ``if TYPE_CHECKING:`` block imports without importing them up front."""
    origin = sys.modules[package].__file__
    assert origin is not None, f"{package} has no source file to read its exports from"
    exports = typed_exports(Path(origin).read_text(encoding="utf-8"), origin)

    def __getattr__(name: str) -> Any:
        if name not in exports:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module, attribute = exports[name]
        value = getattr(importlib.import_module(module), attribute)
        setattr(sys.modules[package], name, value)  # later reads skip this function
        return value

    def __dir__() -> list[str]:
        return sorted({*vars(sys.modules[package]), *exports})

    return __getattr__, __dir__, list(exports)


__all__ = ["LazyPackageError", "lazy_package", "typed_exports"]
