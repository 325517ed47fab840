"""Evaluators: run a candidate in a sandbox and return a typed, honest result.

Each evaluator is a plugin class registered through the ``register_evaluators`` hook, exactly as
a third-party package would register its own.
"""

from evaluators._base import Availability, Evaluator
from evaluators._python import PythonEvaluator
from evaluators._result import EvalResult, Status
from evaluators._sandbox import SandboxError
from evaluators._scoring import classify_metrics

__all__ = [
    # interface
    "Availability",
    "Evaluator",
    # built-in evaluators
    "PythonEvaluator",
    "SandboxError",
    # results
    "EvalResult",
    "Status",
    "classify_metrics",
]
