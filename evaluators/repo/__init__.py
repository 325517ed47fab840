"""The ``repo`` evaluator: a repository's own check and measure commands run on each
candidate, in its own copy of the repository, in the sandbox (see :class:`RepoEvaluator`)."""

from evoforge.evaluators.repo._base import measure_base
from evoforge.evaluators.repo._copies import SetupError, Slot
from evoforge.evaluators.repo._evaluator import RepoEvaluator, RepoOptions

__all__ = [
    # the evaluator
    "RepoEvaluator",
    "RepoOptions",
    # the unchanged repository's metrics (a repository problem's baseline)
    "measure_base",
    # evaluation copies
    "SetupError",
    "Slot",
]
