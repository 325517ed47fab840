"""OpenEvolve's scores, computed as OpenEvolve 0.4.0 computes them.

Two different functions decide in OpenEvolve, and they disagree on purpose-free details that
change which programs win, so both are copied exactly rather than unified:

- :func:`fitness` is ``openevolve.utils.metrics_utils.get_fitness_score``, what OpenEvolve
  ranks programs by and keeps in its MAP-Elites cells: ``combined_score`` when it converts to
  a float, else the mean of the numeric metrics (booleans and NaN left out, and the
  ``feature_dimensions`` too, unless nothing else is numeric);
- :func:`passes_threshold` is ``Evaluator._passes_threshold``, what decides whether a cascade
  goes on: ``combined_score`` when it is a number, else the mean of the numeric metrics
  *including* booleans, ``error`` left out; no numbers at all never passes.

:func:`merge_stage` is how OpenEvolve merges a later stage's metrics over the earlier ones
(numbers only, as floats, ``error`` dropped), and :func:`unnest` reads the ``{"metrics": ...,
"artifacts": ...}`` dicts some evaluators return (``examples/k_module_problem``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

FITNESS = "fitness"
"""The metric evoforge adds to every OpenEvolve evaluation: :func:`fitness`, the objective."""
COMBINED = "combined_score"


def _number(value: Any, *, booleans: bool) -> float | None:
    if isinstance(value, bool) and not booleans:
        return None
    if not isinstance(value, int | float):
        return None
    number = float(value)
    return None if math.isnan(number) else number


def _average(values: Iterable[float]) -> float:
    numbers = list(values)
    return sum(numbers) / len(numbers) if numbers else 0.0


def fitness(metrics: Mapping[str, Any], exclude: Iterable[str] = ()) -> float:
    """OpenEvolve's ranking score (``get_fitness_score``; see the module docstring).

    Args:
        metrics: what the evaluator returned (merged over the stages that ran).
        exclude: the ``feature_dimensions``; :data:`FITNESS` itself is always left out.
    """
    own = {k: v for k, v in metrics.items() if k != FITNESS}
    if not own:
        return 0.0
    if COMBINED in own:
        try:
            return float(own[COMBINED])
        except (TypeError, ValueError, OverflowError):
            pass
    skip = set(exclude)
    values = [_number(v, booleans=False) for k, v in own.items() if k not in skip]
    kept = [v for v in values if v is not None]
    if kept:
        return _average(kept)
    every = [_number(v, booleans=False) for v in own.values()]
    return _average(v for v in every if v is not None)


def passes_threshold(metrics: Mapping[str, Any], threshold: float) -> bool:
    """Whether a cascade goes on past ``threshold`` (``_passes_threshold``; see the module
    docstring)."""
    own = {k: v for k, v in metrics.items() if k != FITNESS}
    if not own:
        return False
    if COMBINED in own and isinstance(own[COMBINED], int | float):
        return float(own[COMBINED]) >= threshold
    values = [float(v) for k, v in own.items() if k != "error" and isinstance(v, int | float)]
    if not values:
        return False
    return _average(values) >= threshold


def merge_stage(earlier: Mapping[str, Any], later: Mapping[str, Any]) -> dict[str, Any]:
    """``later`` merged over ``earlier`` as OpenEvolve merges cascade stages: numbers only
    (booleans as 0.0/1.0), as floats, ``error`` dropped from both."""
    merged: dict[str, Any] = {}
    for metrics in (earlier, later):
        for name, value in metrics.items():
            if name not in ("error", FITNESS) and isinstance(value, int | float):
                merged[name] = float(value)
    return merged


def unnest(
    metrics: Mapping[str, Any], artifacts: Mapping[str, Any] | None
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Metrics and artifacts of a dict return that nests them.

    ``{"metrics": {...}, "artifacts": {...}}`` (nothing else at the top) is read as an
    ``EvaluationResult``; a dict ``artifacts`` beside top-level metrics is moved to the
    artifacts. OpenEvolve 0.4.0 reads neither: it wraps the whole dict as metrics, so a nested
    return scores 0.0 there (no number at the top) and an ``artifacts`` entry is a metric it
    ignores. Unnesting scores what the evaluator meant; for ``k_module_problem``, whose nested
    returns all carry ``combined_score`` 0.0, the score is the same.
    """
    metrics, out = dict(metrics), dict(artifacts or {})
    nested = metrics.get("metrics")
    if isinstance(nested, Mapping) and set(metrics) <= {"metrics", "artifacts"}:
        inner = metrics.get("artifacts")
        if isinstance(inner, Mapping):
            out = {**inner, **out}
        return dict(nested), out
    inner = metrics.get("artifacts")
    if isinstance(inner, Mapping):
        del metrics["artifacts"]
        out = {**inner, **out}
    return metrics, out
