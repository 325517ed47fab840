"""The ``openevolve`` evaluator: OpenEvolve problem folders, their own evaluator run in the
sandbox with each candidate (see :class:`OpenEvolveEvaluator` for what that protects)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from evoforge.base.lazy import lazy_package

if TYPE_CHECKING:
    from evoforge.evaluators.openevolve._evaluator import OpenEvolveEvaluator as OpenEvolveEvaluator
    from evoforge.evaluators.openevolve._scores import (
        FITNESS as FITNESS,
        fitness as fitness,
        passes_threshold as passes_threshold,
    )
    from evoforge.evaluators.openevolve._shim import EvaluationResult as EvaluationResult

__getattr__, __dir__, __all__ = lazy_package(__name__)
