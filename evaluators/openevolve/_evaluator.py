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

Metrics: the evaluator's own, plus ``fitness``, OpenEvolve's ranking score (``combined_score``
when returned, else the mean of the numeric, non-boolean metrics, ``fitness_exclude`` left out),
computed here in the engine from the metrics merged over the stages run so far; the cascade's
thresholds are checked on it (:func:`~evoforge.evaluators.run_cascade`).
"""

from __future__ import annotations

import asyncio
import math
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from evoforge.archive import EvalResult, Status
from evoforge.evaluators._base import Availability, Evaluator
from evoforge.evaluators._cascade import run_cascade
from evoforge.evaluators.devices import cpu_fingerprint
from evoforge.evaluators.sandbox import SandboxOptions, call_runner, reply_result, server_env
from evoforge.problems import ProblemSpecError

if TYPE_CHECKING:
    from evoforge.problems import Problem, Stage

RUNNER = "evoforge.evaluators.openevolve"
RUNNER_MARGIN_S = 60.0  # interpreter start, copying the folder, importing the evaluator
FITNESS = "fitness"


class OpenEvolveEvaluator(Evaluator):
    """Runs an OpenEvolve evaluator on each candidate (see the module docstring)."""

    name: ClassVar[str] = "openevolve"
    targets: ClassVar[tuple[str, ...]] = ("cpu",)

    def __init__(self, problem: Problem, *, workers: int = 1) -> None:
        super().__init__(problem, workers=workers)
        self.folder, self.evaluator_file, self.suffix, self.exclude = read_options(problem)
        self._sandbox = SandboxOptions.of(problem)
        self._running = asyncio.Semaphore(workers)

    @classmethod
    def availability(cls) -> Availability:
        if not sys.platform.startswith("linux"):
            return Availability(False, f"needs Linux (the shared sandbox), not {sys.platform}")
        return Availability(True)

    async def evaluate(self, source: str) -> EvalResult:
        """Run the OpenEvolve evaluator on ``source``; never raises for a bad candidate."""
        async with self._running:
            if not self.problem.stages:
                result = await self._run(source, "evaluate", "evaluate", None, {})
                return self._classified(result)
            merged: dict[str, Any] = {}

            async def run_stage(stage: Stage) -> EvalResult:
                function = str(stage.kwargs.get("function", "evaluate"))
                result = await self._run(source, function, stage.evaluate, stage, merged)
                if result.status is Status.OK:
                    merged.update(result.metrics)
                return result

            return await run_cascade(self.problem.stages, run_stage, problem=self.problem)

    async def _run(
        self,
        source: str,
        function: str,
        scoring: str,
        stage: Stage | None,
        earlier: Mapping[str, Any],
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
        if reply.get("status") == "ok":
            metrics = {**earlier, **(reply.get("metrics") or {})}
            metrics[FITNESS] = fitness(metrics, self.exclude)
            reply = {**reply, "metrics": metrics}
        result = reply_result(
            problem, reply, time.perf_counter() - start, cpu_fingerprint(), classify=False
        )
        return result

    def _classified(self, result: EvalResult) -> EvalResult:
        """A whole evaluation's result with its objectives and descriptors checked."""
        if result.status is not Status.OK:
            return result
        from evoforge.evaluators._scoring import classify_metrics

        status, error, objectives, descriptors = classify_metrics(self.problem, result.metrics)
        artifacts = dict(result.artifacts)
        if error:
            artifacts["error"] = error
        return EvalResult(
            status,
            result.metrics,
            objectives,
            descriptors,
            artifacts,
            result.timings,
            result.device,
        )


def fitness(metrics: Mapping[str, Any], exclude: tuple[str, ...] = ()) -> float:
    """OpenEvolve's ranking score: ``combined_score`` when it is a number, else the mean of the
    numeric metrics (booleans, NaN, ``fitness`` itself and ``exclude`` left out; 0 if none)."""
    combined = metrics.get("combined_score")
    if isinstance(combined, int | float) and not isinstance(combined, bool):
        if math.isfinite(combined):
            return float(combined)
    values = [
        float(v)
        for k, v in metrics.items()
        if k not in exclude
        and k != FITNESS
        and isinstance(v, int | float)
        and not isinstance(v, bool)
        and math.isfinite(v)
    ]
    return sum(values) / len(values) if values else 0.0


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
