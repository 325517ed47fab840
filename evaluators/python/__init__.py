"""The ``python`` evaluator: any Python candidate, run in a pool of sandboxed fork servers.

``python -m evoforge.evaluators.python SPEC ...`` is one fork server (started by
:class:`PythonEvaluator`, one per worker).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evoforge.base.lazy import lazy_package

if TYPE_CHECKING:
    from evoforge.evaluators.python._evaluator import PythonEvaluator as PythonEvaluator

__getattr__, __dir__, __all__ = lazy_package(__name__)
