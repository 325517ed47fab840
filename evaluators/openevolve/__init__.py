"""The ``openevolve`` evaluator: OpenEvolve problem folders, their own evaluator run in the
sandbox with each candidate (see :class:`OpenEvolveEvaluator` for what that protects)."""

from evoforge.evaluators.openevolve._evaluator import FITNESS, OpenEvolveEvaluator, fitness
from evoforge.evaluators.openevolve._shim import EvaluationResult

__all__ = [
    # the evaluator
    "OpenEvolveEvaluator",
    # OpenEvolve's ranking score
    "FITNESS",
    "fitness",
    # the stand-in for OpenEvolve's result type
    "EvaluationResult",
]
