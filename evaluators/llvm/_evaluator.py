"""The ``llvm`` evaluator: a Python policy makes LLVM's decisions, or lays out a program.

A problem of this evaluator names its task in ``options["llvm_task"]``:

- ``"inlining"``: ``decide(features) -> bool`` for every call site ``opt-19`` considers while
  running ``default<Oz>`` (LLVM 19's interactive ML-inliner channel);
- ``"regalloc_priority"``: ``decide(features) -> float``, the priority of each live range in
  ``llc-19``'s greedy register allocator;
- ``"code_layout"``: ``decide(function) -> list[int]``, an order of a function's basic
  blocks, scored by Ext-TSP on a real profile (and, in its second stage, applied for real).

Each stage (``stages`` in the spec, ``kwargs`` giving the ``corpus`` and whether to count
``instructions``) is one request to a trusted runner process (``python -m
evoforge.evaluators.llvm``, one per evaluation slot, kept across requests;
:mod:`evoforge.evaluators.llvm._runner` says how the policy is contained); the spec's stage
function scores the runner's measurements there. Corpora come from a cache prepared once
(:mod:`evoforge.evaluators.llvm._corpus`). Other options: ``decision_timeout_s`` (default 1 s
per decision) and the sandbox options of :class:`~evoforge.evaluators.sandbox.SandboxOptions`.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, ClassVar

from evoforge.archive import EvalResult
from evoforge.evaluators import Availability, Evaluator, run_cascade
from evoforge.evaluators.devices import cpu_fingerprint
from evoforge.evaluators.llvm._processes import RunnerPool
from evoforge.evaluators.llvm._tools import INSTALL, missing_tools
from evoforge.evaluators.sandbox import SandboxOptions, reply_result
from evoforge.evaluators.timing import valgrind_unavailable
from evoforge.evaluators.tuning import evaluate_tuned
from evoforge.problems import ProblemSpecError

if TYPE_CHECKING:
    from evoforge.problems import Problem, Stage

TASKS = ("inlining", "regalloc_priority", "code_layout")
_MARGIN_S = 60.0  # over a stage's limit, for the runner's start and callgrind's slowness


class LlvmEvaluator(Evaluator):
    """Runs policies against a real LLVM 19 (see the module docstring).

    Example::

        async with LlvmEvaluator(load_problem("llvm_inlining")) as evaluator:
            result = await evaluator.evaluate(policy_source)
    """

    name: ClassVar[str] = "llvm"
    targets: ClassVar[tuple[str, ...]] = ("cpu",)

    def __init__(self, problem: Problem, *, workers: int = 1) -> None:
        super().__init__(problem, workers=workers)
        self.task = str(problem.options.get("llvm_task", ""))
        if self.task not in TASKS:
            raise ProblemSpecError(
                problem.spec_path,
                "options['llvm_task']",
                f"found {self.task!r}; use one of {', '.join(TASKS)}",
            )
        self._sandbox = SandboxOptions.of(problem)
        self._pool: RunnerPool | None = None

    @classmethod
    def availability(cls) -> Availability:
        missing = missing_tools(("clang-19", "opt-19", "llc-19", "llvm-link-19", "ld.lld-19"))
        if missing:
            return Availability(False, f"{', '.join(missing)} not found; {INSTALL}")
        return Availability(True)

    @classmethod
    def unmeasurable(cls, problem: Problem) -> dict[str, str]:
        """``instructions`` (callgrind) without valgrind."""
        why = valgrind_unavailable()
        names = {o.name for o in problem.objectives}
        return {"instructions": why} if why and "instructions" in names else {}

    async def start(self) -> None:
        """Nothing starts yet: each slot's runner process starts with its first stage."""
        self._pool = RunnerPool(
            self.workers,
            {"user": self._sandbox.sandbox_user, "network": self._sandbox.sandbox_network},
        )

    async def close(self) -> None:
        if self._pool is not None:
            await self._pool.close()
            self._pool = None

    async def evaluate(self, source: str) -> EvalResult:
        """Run the cascade (and knob tuning, when the problem asks) on ``source``."""
        return await evaluate_tuned(self.problem, source, self._evaluate_once)

    async def run_stage(self, source: str, stage: Stage) -> EvalResult:
        """One stage: a runner process on the stage's corpus, scored by its function."""
        request = self.request(source, stage.timeout_s, stage.memory_mb, stage.kwargs)
        request["evaluate"] = stage.evaluate
        if self._pool is None:
            raise RuntimeError("call `await evaluator.start()` (or use `async with`) first")
        start = time.perf_counter()
        answer = await self._pool.call(request, stage.timeout_s + _MARGIN_S)
        return reply_result(
            self.problem, answer, time.perf_counter() - start, cpu_fingerprint(), classify=False
        )

    def request(self, source: str, timeout_s: float, memory_mb: int, kwargs: Any) -> dict[str, Any]:
        """The runner's request for ``source`` on one stage (also used by benchmarks)."""
        problem = self.problem
        return {
            "task": self.task,
            "source": source,
            "entry": problem.entry,
            "spec_path": str(problem.spec_path),
            "timeout_s": timeout_s,
            "memory_mb": memory_mb,
            "decision_timeout_s": float(problem.options.get("decision_timeout_s", 1.0)),
            "hidden": [str(problem.spec_path.parent)],
            **dict(kwargs),
        }

    async def _evaluate_once(self, source: str, upto: str | None = None) -> EvalResult:
        stages = self.problem.stages
        if upto is not None:
            stages = stages[: [s.name for s in stages].index(upto) + 1]
        return await run_cascade(
            stages,
            lambda stage: self.run_stage(source, stage),
            problem=self.problem,
            partial=upto is not None,
        )
