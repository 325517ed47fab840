"""The interface every evaluator plugin implements."""

from __future__ import annotations

import abc
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

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


@dataclass(frozen=True)
class ResourceRequest:
    """What one evaluation needs from a cluster node (``--executor ray``).

    Attributes:
        num_cpus: CPU cores held while it runs.
        num_gpus: GPUs held (``1`` for kernel timing: one kernel on a GPU at a time).
        resources: custom resources, e.g. ``{"TPU": 1}`` or ``{"neuron_cores": 1}`` (the
            names Ray's TPU and Neuron nodes advertise), or any a cluster defines.
    """

    num_cpus: float = 1.0
    num_gpus: float = 0.0
    resources: Mapping[str, float] = field(default_factory=dict)

    @classmethod
    def of(cls, value: Mapping[str, object]) -> ResourceRequest:
        """From a problem's ``options["ray_resources"]``, e.g. ``{"num_gpus": 1}`` or
        ``{"num_cpus": 2, "resources": {"TPU": 4}}``.

        Raises:
            ValueError: an unknown key or a negative amount.
        """
        unknown = sorted(set(value) - {"num_cpus", "num_gpus", "resources"})
        if unknown:
            raise ValueError(
                f"ray_resources has unknown key(s) {', '.join(unknown)}; use num_cpus, "
                "num_gpus and resources (a table of custom resources)"
            )
        custom = value.get("resources") or {}
        if not isinstance(custom, Mapping):
            raise ValueError("ray_resources.resources must be a table, e.g. {TPU = 1}")
        amounts = {
            "num_cpus": value.get("num_cpus", 1.0),
            "num_gpus": value.get("num_gpus", 0.0),
            **{f"resources.{k}": v for k, v in custom.items()},
        }
        for name, amount in amounts.items():
            if isinstance(amount, bool) or not isinstance(amount, int | float) or amount < 0:
                raise ValueError(f"ray_resources {name} = {amount!r}: expected a number >= 0")
        return cls(
            float(amounts["num_cpus"]),
            float(amounts["num_gpus"]),
            {str(k): float(v) for k, v in custom.items()},
        )


class Evaluator(abc.ABC):
    """Evaluates candidate sources for one problem, with up to ``workers`` in parallel.

    Lifecycle: ``await start()`` once, ``await evaluate(source)`` concurrently up to ``workers``
    times, ``await close()`` once. ``evaluate`` never raises for a bad candidate: every
    failure is a typed :class:`~evoforge.evaluators.Status` in the returned result.
    """

    name: ClassVar[str]
    targets: ClassVar[tuple[str, ...]] = ("cpu",)
    default_scorers: ClassVar[Mapping[str, Callable[[dict[str, Any]], dict[str, Any]]]] = {}
    """Scoring functions this evaluator supplies to a spec that does not define them, by the
    name a spec would give them (``evaluate``, or a stage's ``"evaluate"``): an evaluator whose
    measure reports the objectives themselves (``native``: instructions, cycles) lets a spec
    leave ``evaluate`` out. Empty: every spec defines its own (the loader says so)."""

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

    @classmethod
    def resources(cls, problem: Problem) -> ResourceRequest:
        """What one evaluation of ``problem`` holds on a Ray node (``--executor ray``).

        A problem's ``options["ray_resources"]`` wins (see :meth:`ResourceRequest.of`);
        otherwise one CPU. Device evaluators ask for their device.
        """
        custom = (problem.options or {}).get("ray_resources")
        if isinstance(custom, Mapping):
            return ResourceRequest.of(custom)
        return cls.default_resources()

    @classmethod
    def default_resources(cls) -> ResourceRequest:
        """This evaluator's request when the problem names none: one CPU."""
        return ResourceRequest()

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
