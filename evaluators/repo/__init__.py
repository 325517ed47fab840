"""The ``repo`` evaluator: a repository's own check and measure commands run on each
candidate, in its own copy of the repository, in the sandbox (see :class:`RepoEvaluator`).

Names are imported on first use (:mod:`evoforge.base.lazy`), so the per-candidate runner
(``python -m evoforge.evaluators.repo``) imports only what it runs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evoforge.base.lazy import lazy_exports

if TYPE_CHECKING:
    from evoforge.evaluators.repo._base import measure_base
    from evoforge.evaluators.repo._copies import SetupError, Slot
    from evoforge.evaluators.repo._evaluator import RepoEvaluator, RepoOptions

_EXPORTS = {
    "measure_base": "evoforge.evaluators.repo._base",
    "SetupError": "evoforge.evaluators.repo._copies",
    "Slot": "evoforge.evaluators.repo._copies",
    "RepoEvaluator": "evoforge.evaluators.repo._evaluator",
    "RepoOptions": "evoforge.evaluators.repo._evaluator",
}

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

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
