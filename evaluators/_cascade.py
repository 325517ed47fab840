"""Cascade evaluation: cheap stages first, so a candidate that fails early costs nothing more.

A problem declares its stages (:class:`evoforge.problems.Stage`, each with an optional
:class:`evoforge.problems.Threshold`); an evaluator knows how to run *one* stage of a candidate and
hands that to :func:`run_cascade`, which runs the stages in order, stops at the first that
fails or misses its threshold, and folds what ran into one :class:`~evoforge.evaluators.EvalResult`.
Every evaluator gets the same cascade semantics this way::

    async def evaluate(self, source):
        if not self.problem.stages:
            return await self._run_once(source)          # no cascade: the fast path
        return await run_cascade(
            self.problem.stages, lambda stage: self._run_stage(source, stage),
            problem=self.problem,
        )

The folded result:

- ``status``: that of the stage that stopped the cascade (a missed threshold, or a stage whose
  scoring function said ``"correct": False``, is ``incorrect``), else ``ok``;
- ``metrics``: every metric of every stage that ran. When two stages report the same name the
  later stage keeps it and the earlier one's becomes ``"<stage>.<name>"``, so the last stage's
  metrics (which hold the objectives) always keep their declared names. Plus
  ``stage_reached`` (the name of the last stage that ran) and ``stages_passed`` (how many
  passed, thresholds included);
- ``objectives`` and ``descriptors``: from the last stage, only when every stage passed;
- ``artifacts``: merged by the same rule; a missed threshold is the ``error`` (``"stage
  'quick': accuracy 0.41 < 0.9 (threshold)"``), and ``cascade`` says where it stopped and
  which stages were not run;
- ``timings``: each stage's as ``"<stage>.<key>"``, plus the totals under the plain keys
  (seconds add up; ``max_*`` keys take the maximum);
- ``device``: where the last stage ran.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any

from evoforge.archive import EvalResult, Status
from evoforge.evaluators._scoring import classify_metrics

if TYPE_CHECKING:
    from evoforge.problems import Problem, Stage

StageRunner = Callable[["Stage"], Awaitable[EvalResult]]
"""Runs one stage of one candidate and scores it with ``stage.evaluate``.

Contract: ``status`` is ``ok`` when the candidate ran and the stage's scoring function returned
metrics (the cascade then checks them), any other status when it did not; ``metrics``,
``artifacts``, ``timings`` and ``device`` as for a whole evaluation. Objectives and descriptors
may be left empty: the cascade derives them from the last stage's metrics.
"""

RESERVED_METRICS = ("stage_reached", "stages_passed")


async def run_cascade(
    stages: Sequence[Stage], run_stage: StageRunner, *, problem: Problem, partial: bool = False
) -> EvalResult:
    """Run ``stages`` in order with ``run_stage`` and fold what ran into one result.

    Args:
        stages: the problem's stages, cheapest first (usually ``problem.stages``).
        run_stage: runs and scores one stage of the candidate (see :data:`StageRunner`).
        problem: whose objectives and descriptors the last stage's metrics must hold.
        partial: ``stages`` are a prefix of the cascade (knob-tuning trials) or held-out
            stages: the last one is checked like any other, and the result holds metrics but
            no objectives or descriptors.

    Returns:
        One result, as described in the module docstring.

    Raises:
        ValueError: ``stages`` is empty.
        Exception: whatever ``run_stage`` raises for a failure of the host (not of the
            candidate), e.g. :class:`~evoforge.evaluators.SandboxError`; the cascade stops there.
    """
    if not stages:
        raise ValueError("run_cascade() needs at least one stage; evaluate once without stages")
    ran: list[tuple[Stage, EvalResult]] = []
    status, error = Status.OK, ""
    objectives: dict[str, float] = {}
    descriptors: dict[str, float] = {}
    passed = 0
    for index, stage in enumerate(stages):
        result = await run_stage(stage)
        ran.append((stage, result))
        status = result.status
        if status is not Status.OK:
            break
        last = index == len(stages) - 1 and not partial
        if last:
            status, error, objectives, descriptors = classify_metrics(problem, result.metrics)
        elif "correct" in result.metrics and not result.metrics["correct"]:
            status = Status.INCORRECT
            error = str(result.metrics.get("error") or f"{stage.evaluate}() reported correct=False")
        if status is Status.OK and stage.threshold is not None:
            if miss := stage.threshold.miss(stage.name, result.metrics):
                status, error = Status.INCORRECT, miss
        if status is not Status.OK:
            objectives, descriptors = {}, {}
            break
        passed += 1
    return _fold(stages, ran, status, error, passed, objectives, descriptors)


def _fold(
    stages: Sequence[Stage],
    ran: list[tuple[Stage, EvalResult]],
    status: Status,
    error: str,
    passed: int,
    objectives: dict[str, float],
    descriptors: dict[str, float],
) -> EvalResult:
    metrics = _merge([(s.name, r.metrics) for s, r in ran])
    metrics["stage_reached"] = ran[-1][0].name
    metrics["stages_passed"] = passed
    artifacts = {k: str(v) for k, v in _merge([(s.name, r.artifacts) for s, r in ran]).items()}
    if error:
        artifacts["error"] = error
    stopped = ran[-1][0]
    if status is not Status.OK and len(stages) > 1:
        skipped = [s.name for s in stages[len(ran) :]]
        artifacts["cascade"] = (
            f"stopped at stage {stopped.name!r} ({len(ran)} of {len(stages)}): {status.value}"
            + (f"; not run: {', '.join(skipped)}" if skipped else "")
        )
    timings: dict[str, float] = {}
    for stage, result in ran:
        for key, value in result.timings.items():
            timings[f"{stage.name}.{key}"] = value
            if key.startswith("max_"):
                timings[key] = max(timings.get(key, value), value)
            else:
                timings[key] = timings.get(key, 0.0) + value
    return EvalResult(
        status=status,
        metrics=metrics,
        objectives=objectives,
        descriptors=descriptors,
        artifacts=artifacts,
        timings=timings,
        device=dict(ran[-1][1].device),
    )


def _merge(parts: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    """Merge per-stage dicts; a name reported again later is prefixed in the earlier stage."""
    merged: dict[str, Any] = {}
    for index, (stage, values) in enumerate(parts):
        later = {key for _, more in parts[index + 1 :] for key in more}
        for key, value in values.items():
            merged[f"{stage}.{key}" if key in later else key] = value
    return merged
