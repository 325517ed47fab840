"""The part every kernel evaluator (``tpu``, ``metal``, ``trainium``) shares: a fresh runner
process per candidate, exclusive use of the device while it runs, and a typed result that
carries the device's fingerprint."""

from __future__ import annotations

import abc
import asyncio
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from evoforge.archive import EvalResult
from evoforge.evaluators import Evaluator
from evoforge.evaluators.devices import Device, DeviceSlots, fingerprint, inventory
from evoforge.evaluators.kernels._io import read_kernel_config
from evoforge.evaluators.sandbox import call_runner, reply_result, server_env

if TYPE_CHECKING:
    from evoforge.problems import Problem

RUNNER_MARGIN_S = 120.0
"""Runner start-up, imports and the reference check, on top of the candidate's own limit."""


class EvaluatorUnavailableError(RuntimeError):
    """An evaluator was asked to run where it cannot (see its ``availability()``)."""


class KernelEvaluator(Evaluator):
    """Runs each candidate through ``python -m <runner>`` (see
    :mod:`evoforge.evaluators.sandbox._runner`).

    Subclasses name the runner module, the device kind they hold while a candidate runs
    (``None``: none), and add their fields to the request.
    """

    runner: ClassVar[str]

    def __init__(self, problem: Problem, *, workers: int = 1) -> None:
        super().__init__(problem, workers=workers)
        self.config = read_kernel_config(problem)
        self.target = self.targets[0]
        self._running = asyncio.Semaphore(workers)
        self._slots: DeviceSlots | None = None
        self._device: Device = inventory().of_kind("cpu")[0]

    def use_device(self, kind: str) -> None:
        """Hold the first device of ``kind`` for every candidate (one candidate at a time)."""
        self._device = inventory().of_kind(kind)[0]
        self._slots = DeviceSlots([self._device])

    @abc.abstractmethod
    def request(self, source: str) -> dict[str, Any]:
        """The runner's request for ``source``, beyond :meth:`base_request`."""

    def base_request(self, source: str) -> dict[str, Any]:
        problem, config = self.problem, self.config
        return {
            "source": source,
            "seed_source": problem.seed_source,
            "entry": problem.entry,
            "spec_path": str(problem.spec_path),
            **config,
            "timeout_s": problem.timeout_s,
            "memory_mb": problem.memory_mb,
            "user": problem.options.get("sandbox_user", "nobody"),
            "allow_root": bool(problem.options.get("sandbox_allow_root", False)),
            "network": problem.options.get("sandbox_network", "server"),
        }

    async def evaluate(self, source: str) -> EvalResult:
        """Run and check one candidate. Never raises for a bad candidate.

        Raises:
            EvaluatorUnavailableError: this host cannot run the evaluator (no result is made
                up; a session refuses to start in that case).
        """
        kind = self._device.kind if self._slots is not None else None
        return await on_device(
            self, self._running, self._slots, kind, lambda _: self._evaluate(source)
        )

    async def _evaluate(self, source: str) -> EvalResult:
        start = time.perf_counter()
        reply = await call_runner(
            self.runner,
            {**self.base_request(source), **self.request(source)},
            deadline_s=self.problem.timeout_s + RUNNER_MARGIN_S,
            env=server_env(self.problem.options.get("sandbox_env") or ()),
        )
        return self._result(reply, time.perf_counter() - start)

    def _result(self, reply: Mapping[str, Any], caller_s: float) -> EvalResult:
        device = fingerprint(self._device)
        device["target"] = self.target
        return reply_result(self.problem, reply, caller_s, device)


async def on_device(
    evaluator: Evaluator,
    running: asyncio.Semaphore,
    slots: DeviceSlots | None,
    kind: str | None,
    evaluate: Callable[[Device | None], Awaitable[EvalResult]],
) -> EvalResult:
    """Run ``evaluate`` within the evaluator's concurrency limit and, when it times on a device
    (``slots`` given), with an exclusive slot on one device of ``kind``.

    Raises:
        EvaluatorUnavailableError: the evaluator cannot run on this host.
    """
    availability = type(evaluator).availability()
    if not availability.available:
        raise EvaluatorUnavailableError(f"evaluator {evaluator.name!r} {availability}")
    async with running:
        if slots is None or kind is None:
            return await evaluate(None)
        async with slots.claim(kind) as device:
            return await evaluate(device)
