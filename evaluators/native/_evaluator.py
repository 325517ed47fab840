"""The ``native`` evaluator: C, C++ (and Rust) candidates on a real compiler and simulators.

Each evaluation is one trusted runner process (``python -m evoforge.evaluators.native``,
:mod:`~evoforge.evaluators.native._runner`) that compiles, tests and measures the candidate in
the shared sandbox. Beside every result's metrics stand ratios to two references measured
once per evaluator with the same measure: the seed with the declared flags
(``speedup_vs_seed``) and the seed at ``-O3`` (``speedup_vs_O3``, the compiler alone); above 1
is better than the reference. Settings: :mod:`~evoforge.evaluators.native._settings`.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from evoforge.archive import EvalResult, Status
from evoforge.evaluators import Availability, Evaluator, classify_metrics, run_cascade
from evoforge.evaluators.devices import cpu_fingerprint
from evoforge.evaluators.native._generated import as_measured
from evoforge.evaluators.native._hot import block_functions, keep_out_of_line
from evoforge.evaluators.native._settings import METRICS, NativeSettings, o3_flags, read_settings
from evoforge.evaluators.native._tools import (
    SOURCE_NAMES,
    archer_library,
    measure_unavailable,
    missing,
)
from evoforge.evaluators.sandbox import SandboxOptions, call_runner, reply_result, server_env
from evoforge.problems import ProblemSpecError, import_spec

if TYPE_CHECKING:
    from evoforge.problems import Problem, Stage

log = logging.getLogger(__name__)

RUNNER = "evoforge.evaluators.native"
REFERENCES = {"seed": False, "O3": True}  # label -> compiled at -O3


class NativeEvaluator(Evaluator):
    """Compiles and measures native candidates (see the module docstring).

    Example::

        async with NativeEvaluator(load_problem("pie_inversions")) as evaluator:
            result = await evaluator.evaluate(cpp_source)
            result.metrics["instructions"], result.metrics["speedup_vs_O3"]
    """

    name: ClassVar[str] = "native"
    targets: ClassVar[tuple[str, ...]] = ("cpu",)
    # a native spec's objectives are its measure's metrics: scored as measured unless the spec
    # says otherwise (docs/native.md's example defines no evaluate)
    default_scorers: ClassVar[Mapping[str, Callable[[dict[str, Any]], dict[str, Any]]]] = {
        "evaluate": as_measured,
        "evaluate_held_out": as_measured,
        "as_measured": as_measured,
    }

    def __init__(self, problem: Problem, *, workers: int = 1) -> None:
        super().__init__(problem, workers=workers)
        self.settings = read_settings(problem)
        self._sandbox = SandboxOptions.of(problem)
        self._spec = import_spec(problem.spec_path)
        self._references: dict[tuple[str, tuple[str, ...]], dict[str, dict[str, float]]] = {}
        self._reference_lock = asyncio.Lock()
        self._slots = asyncio.Semaphore(max(1, workers))
        self.stages, self.skipped_stages = _runnable_stages(problem)
        for note in self.skipped_stages:
            log.warning("%s: %s", problem.name, note)

    @classmethod
    def availability(cls) -> Availability:
        why = missing(("clang-19", "clang++-19"))
        return Availability(not why, why)

    @classmethod
    def unmeasurable(cls, problem: Problem) -> dict[str, str]:
        """Every objective, when this host lacks the problem's measure (valgrind, llvm-mca,
        qemu-user): the run can then only check correctness."""
        settings = read_settings(problem)
        why = measure_unavailable(settings.language, settings.measure)
        return {o.name: why for o in problem.objectives} if why else {}

    @classmethod
    def correctness_only(cls, problem: Problem) -> str:
        """The tests still run on the host when only the measure is missing."""
        settings = read_settings(problem)
        if (
            missing(("clang-19", "clang++-19"))
            or settings.language == "rust"
            and missing(("rustc",))
        ):
            return ""
        return measure_unavailable(settings.language, settings.measure)

    async def evaluate(self, source: str) -> EvalResult:
        """Compile, test and measure ``source``; ratios to the references beside its metrics.
        With ``stages``, the cascade: each stage as :meth:`run_stage` runs it."""
        if self.problem.stages:
            result = await run_cascade(
                self.stages, lambda stage: self.run_stage(source, stage), problem=self.problem
            )
            if self.skipped_stages:
                result.artifacts["skipped_stages"] = "; ".join(self.skipped_stages)
            return result
        return await self._measured(source, self.settings, "evaluate")

    async def run_stage(self, source: str, stage: Stage) -> EvalResult:
        """One stage of the cascade or a held-out stage: its ``kwargs`` choose the tests
        (default: the problem's for a cascade stage, the stage's name for a held-out one),
        measure and sanitizers; scored by the stage's function. A cascade stage's metrics get
        the ratios to the seed under the stage's own measure (its threshold may use them)."""
        kwargs = dict(stage.kwargs)
        held_out = stage in self.problem.held_out
        if held_out:
            kwargs.setdefault("tests", stage.name)
        settings = read_settings(self.problem, stage=kwargs)
        return await self._measured(
            source, settings, stage.evaluate, timeout_s=stage.timeout_s, ratios=not held_out
        )

    async def _measured(
        self,
        source: str,
        settings: NativeSettings,
        scorer: str,
        *,
        timeout_s: float | None = None,
        ratios: bool = True,
    ) -> EvalResult:
        """``source`` run under ``settings``, its metrics (with the ratios to the seed's under
        the same measure) scored by the spec's ``scorer``."""
        result = await self._run(source, settings, timeout_s=timeout_s)
        if result.status is not Status.OK:
            return result
        metrics = dict(result.metrics)
        why_not = measure_unavailable(settings.language, settings.measure)
        if ratios and not why_not and settings.kind != "none":
            references = await self.references(settings)
            metrics.update(ratios_to(self._ratio_metric(settings), metrics, references))
        result.metrics = self._score(scorer, metrics)
        if scorer == "evaluate" and not self.problem.stages:  # a cascade classifies its last
            status, error, objectives, descriptors = classify_metrics(self.problem, result.metrics)
            result.status, result.objectives, result.descriptors = status, objectives, descriptors
            if error:
                result.artifacts["error"] = error
        return result

    async def references(
        self, settings: NativeSettings | None = None
    ) -> dict[str, dict[str, float]]:
        """The metrics of the seed (declared flags) and of the seed at ``-O3`` under
        ``settings``' measure (default the problem's), measured once per measure and inputs
        (the first caller waits; a failure is an empty entry, not an error)."""
        settings = settings or self.settings
        key = (settings.measure, settings.inputs)
        async with self._reference_lock:
            if key not in self._references:
                found: dict[str, dict[str, float]] = {}
                for label, at_o3 in REFERENCES.items():
                    flags = o3_flags(settings.compile_flags, settings.language) if at_o3 else None
                    result = await self._run(self.problem.seed_source, settings, flags=flags)
                    found[label] = dict(result.metrics) if result.status is Status.OK else {}
                self._references[key] = found
            return self._references[key]

    def request(
        self, source: str, settings: NativeSettings, flags: tuple[str, ...] | None = None
    ) -> dict[str, Any]:
        """The runner's request for ``source`` (also used by benchmarks)."""
        problem, sandbox = self.problem, self._sandbox
        seed_flags = settings.compile_flags
        # llvm-mca's default functions: the EVOLVE-BLOCK's, kept out of line in its assembly
        analyse_block = settings.kind == "mca" and not settings.hot_functions
        return {
            "language": settings.language,
            "source": source,
            "source_name": SOURCE_NAMES[settings.language],
            "flags": list(flags if flags is not None else settings.compile_flags),
            "measure": settings.measure,
            "measure_enabled": not measure_unavailable(settings.language, settings.measure),
            "sanitize": list(settings.sanitize),
            "archer": archer_library() or "",
            "threads": settings.thread_count,
            "max_procs": 64 + 2 * settings.thread_count,
            "tests": [list(t) for t in settings.tests],
            "inputs": list(settings.inputs),
            "hot_functions": list(settings.hot_functions),
            "evolved_functions": list(
                block_functions(source, settings.language) if analyse_block else ()
            ),
            "asm_source": keep_out_of_line(source, settings.language) if analyse_block else "",
            "test_timeout_s": settings.test_timeout_s,
            "compile_timeout_s": settings.compile_timeout_s,
            "output_mb": settings.output_mb,
            "timeout_s": problem.timeout_s,
            "memory_mb": problem.memory_mb,
            "seed_source": problem.seed_source,
            "reference_flags": [list(seed_flags), list(o3_flags(seed_flags, settings.language))],
            "reference_labels": list(REFERENCES),
            "repeats": int(problem.options.get("timing_repeats", 10)),
            "warmups": int(problem.options.get("timing_warmups", 2)),
            "user": sandbox.sandbox_user,
            "allow_root": sandbox.sandbox_allow_root,
            "network": sandbox.sandbox_network,
            "hidden": [str(problem.spec_path.parent), *sandbox.sandbox_hidden_paths],
        }

    async def _run(
        self,
        source: str,
        settings: NativeSettings,
        *,
        flags: tuple[str, ...] | None = None,
        timeout_s: float | None = None,
    ) -> EvalResult:
        request = self.request(source, settings, flags)
        deadline = 3 * (timeout_s or self.problem.timeout_s) + 2 * settings.compile_timeout_s + 60
        start = time.perf_counter()
        async with self._slots:
            answer = await call_runner(
                RUNNER, request, deadline_s=deadline, env=server_env(self._sandbox.sandbox_env)
            )
        elapsed = time.perf_counter() - start
        return reply_result(self.problem, answer, elapsed, cpu_fingerprint(), classify=False)

    def _score(self, scorer: str, metrics: dict[str, Any]) -> dict[str, Any]:
        function = getattr(self._spec, scorer, None)
        if not callable(function):
            function = self.default_scorers.get(scorer)
        if function is None:
            raise ProblemSpecError(
                self.problem.spec_path, scorer, "define it: def f(metrics) -> dict"
            )
        scored = function(dict(metrics))
        if not isinstance(scored, dict):
            raise ProblemSpecError(
                self.problem.spec_path, scorer, f"returned {type(scored).__name__}; return a dict"
            )
        return scored

    def _ratio_metric(self, settings: NativeSettings) -> tuple[str, str]:
        """The metric ``speedup_vs_<label>`` compares, and its direction: the primary objective
        when ``settings``' measure reports it, else that measure's first metric (all of
        which are costs: instructions, cycles, seconds)."""
        objective = self.problem.primary
        if objective.name in METRICS[settings.kind]:
            return objective.name, objective.direction
        return METRICS[settings.kind][0], "minimize"


def ratios_to(
    metric: tuple[str, str], metrics: dict[str, Any], references: dict[str, dict[str, float]]
) -> dict[str, float]:
    """``speedup_vs_<label>`` of ``metric`` (name, direction) against each reference (above
    1: better than it); ratios already measured (wall time's, interleaved) are kept."""
    name, direction = metric
    value = metrics.get(name)
    ratios: dict[str, float] = {}
    for label, reference in references.items():
        key = f"speedup_vs_{label}"
        if key in metrics:
            continue
        base = reference.get(name)
        if isinstance(value, int | float) and isinstance(base, int | float) and value and base:
            ratios[key] = base / value if direction == "minimize" else value / base
    return ratios


def _runnable_stages(problem: Problem) -> tuple[tuple[Stage, ...], tuple[str, ...]]:
    """The cascade's stages this host can measure, and a note for each one left out.

    A cheap stage before the last (``llvm-mca`` as a prefilter) whose measure's tool is
    missing is skipped, not run: run, it would fail every candidate at its threshold, and the
    measure that ranks them (the last stage's, which :meth:`NativeEvaluator.unmeasurable`
    checks) could still run. The last stage always stays.
    """
    stages = tuple(problem.stages)
    kept, skipped = [], []
    for index, stage in enumerate(stages):
        settings = read_settings(problem, stage=dict(stage.kwargs))
        why = measure_unavailable(settings.language, settings.measure)
        if why and index < len(stages) - 1:
            skipped.append(
                f"cascade stage {stage.name!r} skipped: its measure {settings.measure} cannot "
                f"run here ({why}); candidates go on to the next stage"
            )
        else:
            kept.append(stage)
    return tuple(kept), tuple(skipped)
