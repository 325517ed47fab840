"""The interface every evaluator plugin implements."""

from __future__ import annotations

import abc
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

if TYPE_CHECKING:
    from evoforge.archive import EvalResult
    from evoforge.problems import Problem, Stage


@dataclass(frozen=True)
class Availability:
    """Whether an evaluator can run on this host, and if not why (``evoforge plugins``)."""

    available: bool
    reason: str = ""

    def __str__(self) -> str:
        return "available" if self.available else f"unavailable: {self.reason}"


class Evaluator(abc.ABC):
    """Evaluates candidate sources for one problem, with up to ``workers`` in parallel.

    Lifecycle: ``await start()`` once, ``await evaluate(source)`` concurrently up to ``workers``
    times, ``await close()`` once. ``evaluate`` never raises for a bad candidate: every
    failure is a typed :class:`~evoforge.evaluators.Status` in the returned result.
    """

    name: ClassVar[str]
    targets: ClassVar[tuple[str, ...]] = ("cpu",)

    def __init__(self, problem: Problem, *, workers: int = 1) -> None:
        self.problem = problem
        self.workers = workers

    @classmethod
    def availability(cls) -> Availability:
        return Availability(True)

    @classmethod
    def unmeasurable(cls, problem: Problem) -> dict[str, str]:
        """Objectives of ``problem`` this evaluator cannot measure on this host, each with why.

        A kernel evaluator without a GPU can check correctness but cannot time a kernel: it
        names the timing objectives here, and the run then ranks by the first objective it
        can measure (the session says so and records it) instead of by a made-up number.
        """
        return {}

    @classmethod
    def correctness_only(cls, problem: Problem) -> str:
        """Why a run of ``problem`` on this host can only check correctness ("" when it can
        measure, or when it cannot even check).

        Asked when :meth:`unmeasurable` leaves no objective: a kernel evaluator that runs the
        kernel on a CPU (an interpreter) but cannot time it says why here, and the run becomes
        correctness-only (every program gets a verdict; passing ones all score
        ``passed = 1``) instead of refusing to start, or ranking by the size of an error that
        is within tolerance.
        """
        return ""

    async def start(self) -> None:  # noqa: B027 - optional hook
        """Start worker processes; called once before the first ``evaluate``."""

    @abc.abstractmethod
    async def evaluate(self, source: str) -> EvalResult:
        """Run and score one candidate."""

    async def close(self) -> None:  # noqa: B027 - optional hook
        """Stop worker processes; safe to call twice."""

    async def run_stage(self, source: str, stage: Stage) -> EvalResult:
        """Run and score one stage of ``source`` (its metrics unchecked against objectives).

        Needed for held-out stages (:meth:`evaluate_held_out`) and knob-tuning trials that
        stop at a stage; evaluators without stages need not implement it.
        """
        raise NotImplementedError(f"the {self.name} evaluator cannot run single stages")

    async def evaluate_held_out(self, source: str) -> EvalResult | None:
        """Score ``source`` on the problem's held-out stages (None when it declares none).

        Called once per session on the best program; the metrics are reported, never stored
        with programs, so held-out data never reaches a prompt.
        """
        from evoforge.evaluators._cascade import run_cascade

        if not self.problem.held_out:
            return None
        return await run_cascade(
            self.problem.held_out,
            lambda stage: self.run_stage(source, stage),
            problem=self.problem,
            partial=True,
        )

    async def __aenter__(self) -> Evaluator:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()
