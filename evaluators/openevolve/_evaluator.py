"""The ``openevolve`` evaluator: an OpenEvolve folder's own ``evaluator.py``, run in the sandbox.

A problem for it (written by :mod:`evoforge.problems.adapters`, from an OpenEvolve folder)
declares ``evaluator = "openevolve"`` and ``options``: ``openevolve_dir`` (the folder),
``evaluator_file`` (``evaluator.py``), ``program_suffix`` (``.py``) and optionally
``fitness_exclude`` (metrics left out of ``fitness``). Per candidate, and per cascade stage, a
fresh runner (:mod:`evoforge.evaluators.openevolve`) forks one sandboxed process that writes the
folder and the candidate program into its own working directory, imports ``evaluator.py``
there (a stand-in ``openevolve.evaluation_result.EvaluationResult`` is provided when OpenEvolve
is not installed: :mod:`evoforge.evaluators.openevolve._shim`) and calls ``evaluate(path)`` or
the stage's ``evaluate_stageN(path)``. What comes back (a dict of metrics, or an object with
``metrics`` and ``artifacts``) is all that leaves that process.

Trust: OpenEvolve's evaluators run the program in their own process (by importing it) or as a
subprocess they start, so evaluator and candidate share a process, or at least a sandbox. The
evaluator is therefore run *inside* the sandbox with the candidate: the candidate cannot reach
the network, the engine, the archive, the user's files (read-only view, its working directory
aside) or anything outside its limits, and no evaluator code runs in the engine's process. What
this cannot give: a candidate can read whatever the evaluator reads (its reference data is
copied into the same working directory) and, sharing its process, could tamper with the
metrics it returns; the runner accepts only JSON numbers, booleans and texts. This is
OpenEvolve's own trust model, with containment around it; a problem that needs reference data
kept from candidates is written as an evoforge problem (its ``evaluate()`` runs in a separate
trusted process).

Metrics: the evaluator's own (merged over the cascade's stages as OpenEvolve merges them:
:mod:`~evoforge.evaluators.openevolve._cascade`), plus ``fitness``, OpenEvolve's ranking score
and the primary objective (:func:`~evoforge.evaluators.openevolve._scores.fitness`: the
``combined_score`` when returned, else the mean of the numeric metrics, ``fitness_exclude``,
OpenEvolve's feature dimensions, left out). Options ``cascade_thresholds`` (OpenEvolve's) and
``feature_metrics`` (descriptor -> the metric it is read from, for the ``feature_dimensions``
that are metrics: :func:`~evoforge.problems.adapters.feature_metrics`) complete the mapping;
such a descriptor is returned as the metric's raw value, and the engine scales it over the
values its run has seen (:class:`~evoforge.islands.SeenRanges`).
"""

from __future__ import annotations

import asyncio
import dataclasses
import math
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from evoforge.archive import EvalResult, Status
from evoforge.evaluators import Availability, Evaluator
from evoforge.evaluators.devices import cpu_fingerprint
from evoforge.evaluators.openevolve._cascade import openevolve_cascade
from evoforge.evaluators.openevolve._scores import FITNESS, fitness
from evoforge.evaluators.sandbox import SandboxOptions, call_runner, reply_result, server_env
from evoforge.evaluators.tuning import evaluate_tuned
from evoforge.problems import ProblemSpecError
from evoforge.problems.adapters import feature_metrics

if TYPE_CHECKING:
    from evoforge.problems import Problem, Stage

RUNNER = "evoforge.evaluators.openevolve"
RUNNER_MARGIN_S = 60.0  # interpreter start, copying the folder, importing the evaluator


class OpenEvolveEvaluator(Evaluator):
    """Runs an OpenEvolve evaluator on each candidate (see the module docstring)."""

    name: ClassVar[str] = "openevolve"
    targets: ClassVar[tuple[str, ...]] = ("cpu",)

    def __init__(self, problem: Problem, *, workers: int = 1) -> None:
        super().__init__(problem, workers=workers)
        self.folder, self.evaluator_file, self.suffix, self.exclude = read_options(problem)
        self.thresholds = read_thresholds(problem)
        self.features = feature_metrics(problem)
        self._sandbox = SandboxOptions.of(problem)
        self._running = asyncio.Semaphore(workers)

    @classmethod
    def availability(cls) -> Availability:
        if not sys.platform.startswith("linux"):
            return Availability(False, f"needs Linux (the shared sandbox), not {sys.platform}")
        return Availability(True)

    async def evaluate(self, source: str) -> EvalResult:
        """Run the OpenEvolve evaluator on ``source``; never raises for a bad candidate.

        The constants a candidate's edit changed are tuned when the run asks for it
        (``[search] tune_changed``): each trial is one more run of the folder's evaluator.
        """
        return await evaluate_tuned(self.problem, source, self._evaluate_once)

    async def _evaluate_once(self, source: str, upto: str | None = None) -> EvalResult:
        """One run of the folder's evaluator (its cascade, when it has stages) on ``source``
        (``upto`` is unused: a folder declares no tuning stage)."""
        async with self._running:
            stages = self.problem.stages
            if not stages:
                result = await self._run(source, "evaluate", "evaluate", None)
            else:

                async def run_stage(number: int) -> EvalResult:
                    stage = stages[number - 1]
                    function = str(stage.kwargs.get("function", f"evaluate_stage{number}"))
                    return await self._run(source, function, stage.evaluate, stage)

                result = await openevolve_cascade(len(stages), self.thresholds, run_stage)
            return self._classified(result)

    async def _run(
        self, source: str, function: str, scoring: str, stage: Stage | None
    ) -> EvalResult:
        problem = self.problem
        timeout_s = stage.timeout_s if stage is not None else problem.timeout_s
        request = {
            "source": source,
            "suffix": self.suffix,
            "folder": str(self.folder),
            "evaluator_file": self.evaluator_file,
            "function": function,
            "scoring": scoring,
            "spec_path": str(problem.spec_path),
            "timeout_s": timeout_s,
            "memory_mb": stage.memory_mb if stage is not None else problem.memory_mb,
            "user": self._sandbox.sandbox_user,
            "network": self._sandbox.sandbox_network,
        }
        start = time.perf_counter()
        reply = await call_runner(
            RUNNER, request, deadline_s=timeout_s + RUNNER_MARGIN_S, env=server_env()
        )
        return reply_result(
            problem, reply, time.perf_counter() - start, cpu_fingerprint(), classify=False
        )

    def _classified(self, result: EvalResult) -> EvalResult:
        """An ok result with ``fitness`` added (the objective) and the descriptors its
        metrics give (:func:`descriptor_values`); the engine adds ``size`` and ``distance``
        when the problem declares them (OpenEvolve's ``complexity`` and ``diversity``)."""
        if result.status is not Status.OK:
            return result
        from evoforge.evaluators import classify_metrics

        metrics = dict(result.metrics)
        metrics[FITNESS] = fitness(metrics, self.exclude)
        # the objective decides, as OpenEvolve ranks by its score alone: a "correct": False
        # among the metrics is one more metric there, not a verdict
        objectives_only = dataclasses.replace(self.problem, descriptors=())
        scored = {k: v for k, v in metrics.items() if k != "correct"}
        status, error, objectives, _ = classify_metrics(objectives_only, scored)
        # raw: the engine scales them over the values its run has seen (SeenRanges), and
        # only ok programs take part, as only programs OpenEvolve adds update its ranges
        descriptors = descriptor_values(self.features, metrics)
        artifacts = dict(result.artifacts)
        missing = [name for name in self.features if name not in descriptors]
        if missing:
            artifacts["feature_dimensions"] = (
                f"no finite metric for feature dimension(s) {', '.join(missing)} (it returned "
                f"{', '.join(sorted(metrics))}): as in OpenEvolve, the program gets no "
                "MAP-Elites cell"
            )
        if error:
            artifacts["error"] = error
        return EvalResult(
            status,
            metrics,
            objectives,
            descriptors if status is Status.OK else {},
            artifacts,
            result.timings,
            result.device,
        )


def descriptor_values(features: Mapping[str, str], metrics: Mapping[str, Any]) -> dict[str, float]:
    """The descriptors read from metrics: ``{descriptor: metrics[metric]}`` for each
    ``features`` entry whose metric is a finite number (booleans are not)."""
    values = {}
    for descriptor, metric in features.items():
        value = metrics.get(metric)
        if isinstance(value, int | float) and not isinstance(value, bool):
            if math.isfinite(value):
                values[descriptor] = float(value)
    return values


def read_options(problem: Problem) -> tuple[Path, str, str, tuple[str, ...]]:
    """``(folder, evaluator file, program suffix, fitness_exclude)`` from the options.

    Raises:
        ProblemSpecError: the folder or its evaluator file is missing, or an option has the
            wrong type.
    """
    options = problem.options
    where = problem.spec_path
    folder = options.get("openevolve_dir")
    if not isinstance(folder, str) or not folder:
        raise ProblemSpecError(
            where,
            "options['openevolve_dir']",
            "missing; name the OpenEvolve folder (initial_program.*, evaluator.py)",
        )
    path = (where.parent / folder).resolve()
    evaluator_file = options.get("evaluator_file", "evaluator.py")
    if not isinstance(evaluator_file, str) or not (path / evaluator_file).is_file():
        raise ProblemSpecError(
            where,
            "options['evaluator_file']",
            f"{path / str(evaluator_file)} does not exist; the OpenEvolve folder moved? Run "
            f"`evoforge run` on the folder again",
        )
    suffix = options.get("program_suffix", ".py")
    if not isinstance(suffix, str) or not suffix.startswith("."):
        raise ProblemSpecError(
            where, "options['program_suffix']", f"found {suffix!r}; use e.g. '.py'"
        )
    exclude = options.get("fitness_exclude", ())
    if not isinstance(exclude, list | tuple) or not all(isinstance(x, str) for x in exclude):
        raise ProblemSpecError(
            where, "options['fitness_exclude']", f"found {exclude!r}; use a list of names"
        )
    return path, evaluator_file, suffix, tuple(exclude)


def read_thresholds(problem: Problem) -> tuple[float, ...]:
    """``options['cascade_thresholds']``; for a problem written before that option, the
    stages' thresholds on ``fitness``.

    Raises:
        ProblemSpecError: the option is not a list of numbers.
    """
    thresholds = problem.options.get("cascade_thresholds")
    if thresholds is None:
        return tuple(
            s.threshold.min
            for s in problem.stages
            if s.threshold is not None and s.threshold.min is not None
        )
    ok = isinstance(thresholds, list | tuple) and all(
        isinstance(t, int | float) and not isinstance(t, bool) for t in thresholds
    )
    if not ok:
        raise ProblemSpecError(
            problem.spec_path,
            "options['cascade_thresholds']",
            f"found {thresholds!r}; use a list of numbers, e.g. [0.5, 0.75]",
        )
    return tuple(float(t) for t in thresholds)
