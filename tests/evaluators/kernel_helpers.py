"""Helpers for the KernelBench evaluator tests: problem folders, evaluation, GPU skips."""

from __future__ import annotations

import asyncio
import textwrap
from pathlib import Path

import pytest

from evoforge.evaluators import EvalResult
from evoforge.evaluators.kernels.kernelbench._evaluator import KernelBenchEvaluator, gpu_missing
from evoforge.evaluators.kernels.kernelbench._triton import TritonEvaluator
from evoforge.evolve import measurable_problem
from evoforge.problems import Problem, load_problem

ROOT = Path(__file__).resolve().parents[2]
SOFTMAX = ROOT / "problems" / "builtin" / "triton_softmax"
CHEATS = Path(__file__).resolve().parent / "cheats"

SOFTMAX_TASK = (SOFTMAX / "task.py").read_text()
SEED = (SOFTMAX / "seed.py").read_text()

_TRITON = TritonEvaluator.availability()
needs_torch = pytest.mark.skipif(
    not _TRITON.available, reason=f"the kernel extras are missing: {_TRITON.reason}"
)
"""Skips a test that runs kernels where torch or triton is not installed, saying why."""

NO_GPU = gpu_missing()
gpu = pytest.mark.skipif(bool(NO_GPU), reason=f"needs a CUDA GPU: {NO_GPU}")
"""Skips a test where this host has no usable CUDA GPU, saying why."""


def make_kernel_problem(
    folder: Path,
    *,
    task: str = SOFTMAX_TASK,
    seed: str = SEED,
    evaluator: str = "triton",
    objectives: str = '{"max_abs_error": "minimize"}',
    options: str = "{}",
    timeout_s: float = 60,
) -> Path:
    """Write a KernelBench problem folder (``problem.py``, ``task.py``, ``seed.py``)."""
    folder.mkdir(parents=True)
    (folder / "task.py").write_text(textwrap.dedent(task))
    (folder / "seed.py").write_text(textwrap.dedent(seed))
    (folder / "problem.py").write_text(
        textwrap.dedent(
            f"""
            name = "kernel_test"
            evaluator = {evaluator!r}
            objectives = {objectives}
            timeout_s = {timeout_s!r}
            memory_mb = 4096
            preload = []
            options = {{"task_file": "task.py", **{options}}}

            def evaluate(metrics):
                return metrics
            """
        )
    )
    return folder


def measurable(path: Path, cls: type[KernelBenchEvaluator] = TritonEvaluator) -> Problem:
    """The problem as this host can score it (timing objectives dropped without a GPU)."""
    return measurable_problem(load_problem(path), cls)[0]


def evaluate_all(
    problem: Problem,
    sources: list[str],
    *,
    cls: type[KernelBenchEvaluator] = TritonEvaluator,
    workers: int = 2,
) -> list[EvalResult]:
    """Evaluate ``sources`` concurrently with one evaluator."""

    async def go() -> list[EvalResult]:
        async with cls(problem, workers=workers) as evaluator:
            return list(await asyncio.gather(*(evaluator.evaluate(s) for s in sources)))

    return asyncio.run(go())


def dedent(source: str) -> str:
    return textwrap.dedent(source).lstrip("\n")
