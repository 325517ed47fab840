"""Knob tuning: constants a candidate declares (``X = 3  # knob: int 1..8``) tuned by optuna.

:func:`evaluate_tuned` wraps an evaluator's own evaluation: the candidate as written first,
then up to ``tuning["trials"]`` settings proposed by TPE, each an evaluation taken from the
run's budget (:data:`TRIAL_BUDGET`); the best setting is written back into the program.
"""

from evoforge.evaluators.tuning._knobs import Knob, KnobError, find_knobs, literal, write_back
from evoforge.evaluators.tuning._tuner import (
    TRIAL_BUDGET,
    TrialBudget,
    evaluate_tuned,
    tuning_unavailable,
)

__all__ = [
    # knobs in a program
    "Knob",
    "KnobError",
    "find_knobs",
    "literal",
    "write_back",
    # tuning
    "TRIAL_BUDGET",
    "TrialBudget",
    "evaluate_tuned",
    "tuning_unavailable",
]
