"""Knob tuning: constants a candidate declares (``X = 3  # knob: int 1..8``) tuned by optuna.

:func:`evaluate_tuned` wraps an evaluator's own evaluation: the candidate as written first,
then up to ``tuning["trials"]`` settings proposed by TPE, each an evaluation taken from the
run's budget (:data:`TRIAL_BUDGET`); the best setting is written back into the program.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evoforge.base.lazy import lazy_package

if TYPE_CHECKING:
    from evoforge.evaluators.tuning._knobs import (
        Knob as Knob,
        KnobError as KnobError,
        find_knobs as find_knobs,
        literal as literal,
        write_back as write_back,
    )
    from evoforge.evaluators.tuning._tuner import (
        TRIAL_BUDGET as TRIAL_BUDGET,
        TrialBudget as TrialBudget,
        evaluate_tuned as evaluate_tuned,
        tuning_unavailable as tuning_unavailable,
    )

__getattr__, __dir__, __all__ = lazy_package(__name__)
