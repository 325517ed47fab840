"""The ``openevolve`` evaluator: OpenEvolve problem folders, their own evaluator run in the
sandbox with each candidate (see :class:`OpenEvolveEvaluator` for what that protects)."""

from evoforge.evaluators.openevolve._evaluator import OpenEvolveEvaluator
from evoforge.evaluators.openevolve._scores import FITNESS, fitness, passes_threshold
from evoforge.evaluators.openevolve._shim import EvaluationResult

__all__ = [
    # the evaluator
    "OpenEvolveEvaluator",
    # OpenEvolve's ranking score
    "FITNESS",
    "fitness",
    "passes_threshold",
    # the stand-in for OpenEvolve's result type
    "EvaluationResult",
]
