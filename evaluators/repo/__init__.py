"""The ``repo`` evaluator: a repository's own check and measure commands run on each
candidate, in its own copy of the repository, in the sandbox (see :class:`RepoEvaluator`).

Names are imported on first use (:mod:`evoforge.base.lazy`), so the per-candidate runner
(``python -m evoforge.evaluators.repo``) imports only what it runs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evoforge.base.lazy import lazy_package

if TYPE_CHECKING:
    from evoforge.evaluators.repo._base import measure_base as measure_base
    from evoforge.evaluators.repo._copies import SetupError as SetupError, Slot as Slot
    from evoforge.evaluators.repo._evaluator import (
        RepoEvaluator as RepoEvaluator,
        RepoOptions as RepoOptions,
    )

__getattr__, __dir__, __all__ = lazy_package(__name__)
