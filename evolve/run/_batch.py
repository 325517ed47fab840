"""Batches: several problems (a folder of KernelBench tasks, a suite) run one after the other
into one archive, then summarised with KernelBench's metrics.

KernelBench's metrics, over the tasks of a batch that ran (each task judged by its run's best
program), for each baseline some task's best program reports a speedup over (a metric
``speedup_vs_<baseline>``: eager PyTorch and ``torch.compile`` for kernels, the seed and the
seed at -O3 for native programs):

- ``fast_p``: the share of tasks whose best program is correct and more than ``p`` times as
  fast as the baseline, for p = 0 (correctness alone), 1, 1.5 and 2;
- the geometric-mean speedup over the tasks that have a correct, timed program.

A task whose own reference never ran (its ``Model`` failed on this host, or its shapes could
not be brought into the interpreter's budget) is **not run**: no program could be judged
against it, so it is counted apart and left out of every share, where counting it as
incorrect would blame the candidates for the task.

Speedups exist only where the host times kernels (a GPU); elsewhere the summary says why and
reports correctness alone. Nothing is averaged over a task that failed.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evoforge.archive import Archive, Status
from evoforge.evolve.config import ConfigError, RunConfig
from evoforge.evolve.run._controller import SeedError
from evoforge.evolve.run._session import start_run
from evoforge.evolve.run._snapshot import Progress
from evoforge.problems import Problem

FAST_P = (0.0, 1.0, 1.5, 2.0)
"""The thresholds of KernelBench's fast_p reported (0: correct at all)."""
SPEEDUP_PREFIX = "speedup_vs_"
"""A metric ``speedup_vs_<baseline>`` is the best program's speedup over that baseline."""
FIRST_BASELINES = ("eager", "compile")
"""Shown first, in this order (KernelBench's); other baselines follow by name."""


def speedups_of(metrics: Mapping[str, Any]) -> dict[str, float]:
    """``{baseline: speedup}`` from a program's metrics: each ``speedup_vs_<baseline>``, and a
    bare ``speedup`` (the tpu evaluator's) as the one over eager when nothing names eager."""
    found: dict[str, float] = {}
    for name, value in metrics.items():
        if not name.startswith(SPEEDUP_PREFIX) or not _positive(value):
            continue
        found[name.removeprefix(SPEEDUP_PREFIX)] = float(value)
    if "eager" not in found and _positive(metrics.get("speedup")):
        found["eager"] = float(metrics["speedup"])
    return found


def baselines_of(results: Sequence[TaskResult]) -> list[str]:
    """The baselines any result has a speedup over, KernelBench's first."""
    named = {b for r in results for b in r.speedups}
    return [b for b in FIRST_BASELINES if b in named] + sorted(named - set(FIRST_BASELINES))


def _positive(value: Any) -> bool:
    number = isinstance(value, int | float) and not isinstance(value, bool)
    return number and math.isfinite(value) and value > 0


@dataclass(frozen=True)
class TaskResult:
    """How one task of a batch went, judged by its run's best program.

    Attributes:
        problem: the problem's name.
        run_id: its run in the archive (None if it never started).
        status: the run's status (``finished``, ``stopped``, ``failed``).
        reason: why it ended (the seed's failure, for a task whose seed failed).
        correct: its best program passed the correctness check.
        speedups: ``{"eager": x, "compile": y}`` of the best program, where timed.
        timing: why there are no speedups ("" when there are).
        time_ms, time_iqr_ms, time_cv: the best program's median time and its spread.
        evaluations: evaluations spent; passed: how many of them passed.
        best_is_seed: no program beat the seed.
        ran: False when the task's own reference failed, so nothing was judged (see the
            module docstring: not run).
    """

    problem: str
    run_id: str | None
    status: str
    reason: str
    correct: bool = False
    speedups: dict[str, float] = field(default_factory=dict)
    timing: str = ""
    time_ms: float | None = None
    time_iqr_ms: float | None = None
    time_cv: float | None = None
    evaluations: int = 0
    passed: int = 0
    best_is_seed: bool = False
    ran: bool = True


@dataclass(frozen=True)
class SuiteMetrics:
    """KernelBench's metrics over a batch (see the module docstring).

    Attributes:
        tasks: tasks in the batch that ran; correct: tasks with a correct best program.
        fast_p: ``{baseline: {p: share of the tasks that ran}}`` for the baselines some task
            was timed against.
        geomean: ``{baseline: geometric-mean speedup}`` over correct, timed tasks.
        untimed: why some correct tasks have no speedup ("" when all were timed).
        not_run: tasks whose reference never ran (not in ``tasks``).
    """

    tasks: int
    correct: int
    fast_p: dict[str, dict[float, float]]
    geomean: dict[str, float]
    untimed: str = ""
    not_run: int = 0

    @property
    def fast_0(self) -> float:
        return self.correct / self.tasks if self.tasks else 0.0


async def run_batch(
    problems: Sequence[Problem],
    settings: Callable[[Problem], Mapping[str, Any]],
    db: Path,
    *,
    progress: Callable[[Problem], Progress | None] = lambda _: None,
    on_task: Callable[[TaskResult], None] = lambda _: None,
    handle_signals: bool = False,
) -> list[TaskResult]:
    """Run each problem to its budget, one after the other, in the archive at ``db``.

    Args:
        problems: the tasks.
        settings: the run settings of a task (``problem`` included), validated per task.
        db: the archive.
        progress: a progress receiver per task (the CLI's live display).
        on_task: called with each task's result as soon as it is known.
        handle_signals: SIGINT/SIGTERM stop the current task cleanly, and the batch.

    A task whose seed fails is recorded and the batch goes on; a setting or host problem that
    would fail every task (:class:`ConfigError`) stops the batch.
    """
    results = []
    for problem in problems:
        config = RunConfig.from_dict(settings(problem), origin=f"batch task {problem.name}")
        try:
            run, report = await start_run(
                config, db, progress=progress(problem), handle_signals=handle_signals
            )
            result = task_result(db, problem.name, run.id)
        except SeedError as exc:
            with Archive(db) as archive:
                latest = archive.latest_run()
            run_id = latest.id if latest is not None and latest.problem == problem.name else None
            ran = run_id is None or _reference_ran(db, run_id)
            result = TaskResult(problem.name, run_id, "failed", str(exc), ran=ran)
        except ConfigError:
            raise
        results.append(result)
        on_task(result)
        if result.status == "stopped":  # stopped by a signal: the batch stops too
            break
    return results


def task_result(db: Path, problem: str, run_id: str) -> TaskResult:
    """The result of task ``problem`` (its name) from its run in the archive."""
    with Archive(db) as archive:
        info = archive.run(run_id)
        best = archive.get_program(run_id, info.best_program_id) if info.best_program_id else None
        passed = archive.count_programs(run_id, Status.OK)
        seed = next(archive.programs(run_id), None)
    metrics = dict(best.metrics) if best is not None else {}
    speedups = speedups_of(metrics)
    timing = "" if speedups else str(metrics.get("timing") or "no timing in the metrics")

    def number(name: str) -> float | None:
        value = metrics.get(name)
        return float(value) if isinstance(value, int | float) else None

    return TaskResult(
        problem=problem,
        run_id=run_id,
        status=info.status,
        reason=info.stop_reason or "",
        correct=best is not None and best.status == Status.OK,
        speedups=speedups,
        timing=timing,
        time_ms=number("time_ms"),
        time_iqr_ms=number("time_iqr_ms"),
        time_cv=number("time_cv"),
        evaluations=info.evaluations,
        passed=passed,
        best_is_seed=best is not None and seed is not None and best.id == seed.id,
    )


def _reference_ran(db: Path, run_id: str) -> bool:
    """Whether the seed of a failed run was judged against a reference that ran (the
    evaluator marks a failure of the task's own code with a ``reference_error`` artifact)."""
    with Archive(db) as archive:
        seed = next(archive.programs(run_id), None)
    return seed is None or not seed.artifacts.get("reference_error")


def suite_metrics(results: Sequence[TaskResult]) -> SuiteMetrics:
    """KernelBench's metrics over ``results`` (see the module docstring)."""
    not_run = sum(1 for r in results if not r.ran)
    results = [r for r in results if r.ran]
    tasks = len(results)
    correct = [r for r in results if r.correct]
    fast_p: dict[str, dict[float, float]] = {}
    geomean: dict[str, float] = {}
    for baseline in baselines_of(correct):
        timed = [r.speedups[baseline] for r in correct if baseline in r.speedups]
        if not timed:
            continue
        fast_p[baseline] = {
            p: sum(1 for r in correct if r.speedups.get(baseline, 0.0) > p) / tasks
            if p > 0
            else len(correct) / tasks
            for p in FAST_P
        }
        geomean[baseline] = math.exp(sum(math.log(s) for s in timed) / len(timed))
    untimed = sorted({r.timing for r in correct if not r.speedups and r.timing})
    return SuiteMetrics(tasks, len(correct), fast_p, geomean, "; ".join(untimed), not_run)
