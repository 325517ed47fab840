"""OpenEvolve's cascade (``Evaluator._cascade_evaluate`` of OpenEvolve 0.4.0), exactly.

Unlike evoforge's own cascades (:func:`evoforge.evaluators.run_cascade`, where a missed
threshold makes a candidate ``incorrect``), OpenEvolve never refuses a program for missing a
threshold: the cascade just stops, and the program keeps the metrics of the stages it ran and
is ranked by them with every other program. So:

- ``evaluate_stage1`` runs; if its metrics do not pass ``cascade_thresholds[0]``
  (:func:`~evoforge.evaluators.openevolve._scores.passes_threshold`), or there is no
  ``evaluate_stage2``, the result is stage 1's, as it returned it;
- otherwise ``evaluate_stage2`` runs and its metrics are merged over stage 1's
  (:func:`~evoforge.evaluators.openevolve._scores.merge_stage`); stage 3 follows the same
  rule with ``cascade_thresholds[1]`` (no second threshold: no stage 3);
- a stage after the first that raises, times out or runs out of memory leaves the earlier
  stages' metrics, plus ``stage<N>_passed: 0.0`` (and ``timeout: True`` on a timeout), with
  its error in the artifacts as ``stage<N>_stderr`` / ``stage<N>_traceback``;
  ``failure_stage`` names it. Still a scored, ranked program, as in OpenEvolve.

Where evoforge differs, on purpose: a first stage that fails (raises, times out, runs out of
memory) is a typed failure (``runtime_error``, ``timeout``, ...) stored with its traceback,
where OpenEvolve records ``{"stage1_passed": 0.0, "error": 0.0}`` (score 0.0); failures are
data here, shown to the model, never parents. A stage whose evaluator broke (the folder's
``evaluator.py`` failed to load: not the candidate's fault) or whose result was tampered with
stops the evaluation with that verdict at any stage.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from evoforge.archive import EvalResult, Status
from evoforge.evaluators.openevolve._scores import merge_stage, passes_threshold

StageCall = Callable[[int], Awaitable[EvalResult]]
"""Runs stage ``N`` (1-based) of one candidate: the folder's ``evaluate_stageN`` on it, its
metrics as returned (not merged)."""

_KEPT_FAILURES = frozenset({Status.RUNTIME_ERROR, Status.TIMEOUT, Status.MEMORY_LIMIT})
"""Failures of a later stage that OpenEvolve catches, keeping the earlier stages' metrics."""


async def openevolve_cascade(
    stages: int, thresholds: Sequence[float], run_stage: StageCall
) -> EvalResult:
    """Run up to ``stages`` stages as OpenEvolve does (see the module docstring).

    Args:
        stages: how many ``evaluate_stageN`` the folder defines (1 to 3).
        thresholds: ``cascade_thresholds``; threshold ``N - 1`` gates stage ``N + 1``.
        run_stage: runs one stage.

    Returns:
        The result: ``ok`` with the metrics of the stages that ran (their timings summed,
        ``cascade`` in the artifacts saying where it stopped and why), or stage 1's failure.
    """
    first = await run_stage(1)
    if first.status is not Status.OK:
        return first
    metrics: dict[str, Any] = dict(first.metrics)
    artifacts = dict(first.artifacts)
    timings = dict(first.timings)
    device = dict(first.device)
    reached, note = 1, ""
    for number in range(2, stages + 1):
        if len(thresholds) < number - 1:
            note = f"no cascade_thresholds[{number - 2}]: evaluate_stage{number} is not run"
            break
        threshold = thresholds[number - 2]
        if not passes_threshold(metrics, threshold):
            note = (
                f"stopped after stage {reached}: its score is below cascade_thresholds"
                f"[{number - 2}] = {threshold:g}; as in OpenEvolve, the program keeps the "
                f"metrics of the stage{'s' if reached > 1 else ''} it ran and is ranked by them"
            )
            break
        result = await run_stage(number)
        for key, value in result.timings.items():
            timings[f"stage{number}.{key}"] = value
            timings[key] = (
                max(timings.get(key, value), value)
                if key.startswith("max_")
                else (timings.get(key, 0.0) + value)
            )
        if result.status in _KEPT_FAILURES:
            metrics[f"stage{number}_passed"] = 0.0
            if result.status is Status.TIMEOUT:
                metrics["timeout"] = True
                artifacts[f"stage{number}_timeout"] = "True"
            error = result.artifacts.get("error", result.status.value)
            artifacts[f"stage{number}_stderr"] = error
            if "traceback" in result.artifacts:
                artifacts[f"stage{number}_traceback"] = result.artifacts["traceback"]
            artifacts["failure_stage"] = f"stage{number}"
            note = f"stage {number} failed ({result.status.value}): the earlier stages' metrics"
            break
        if result.status is not Status.OK:
            return result
        metrics = merge_stage(metrics, result.metrics)
        artifacts.update(result.artifacts)
        device = dict(result.device)
        reached = number
    artifacts["cascade"] = note or f"ran {reached} of {stages} stage{'s' * (stages > 1)}"
    return EvalResult(Status.OK, metrics, {}, {}, artifacts, timings, device)
