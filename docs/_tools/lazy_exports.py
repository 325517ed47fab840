"""Griffe extension: the API reference lists what each lazy package exports.

A package built with :func:`evoforge.base.lazy.lazy_package` computes ``__all__`` at import from
its ``if TYPE_CHECKING:`` imports, which static analysis (griffe, without importing anything)
cannot run. This extension reads the same imports with the same function,
:func:`evoforge.base.lazy.typed_exports`, and gives them to griffe as the module's exports, so
the reference shows exactly the names ``from evoforge.<package> import *`` gives.
"""

from __future__ import annotations

from typing import Any

import griffe

from evoforge.base.lazy import typed_exports


class LazyExports(griffe.Extension):
    def on_module_members(self, *, mod: griffe.Module, **_: Any) -> None:
        if mod.filepath is None or isinstance(mod.filepath, list):
            return
        source = mod.filepath.read_text(encoding="utf-8")
        if "lazy_package(__name__)" in source:
            mod.exports = list(typed_exports(source, str(mod.filepath)))
