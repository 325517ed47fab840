"""``evoforge run`` on a batch (a folder of KernelBench tasks, a suite): one run per task, then
a table of the tasks and KernelBench's metrics on stdout (progress on stderr)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from evoforge.archive import DEFAULT_DB
from evoforge.evolve.cli._common import echo


def run_batch_command(
    resolved: Any, settings: Callable[[Any], dict], db: Path, quiet: bool
) -> None:
    """Run every problem of ``resolved`` and print the suite's table and metrics."""
    import asyncio

    from evoforge.evolve.run import LiveProgress, run_batch, suite_metrics

    problems = resolved.problems
    echo(f"evoforge: a batch of {len(problems)} problems, one run each", err=True)
    live: list[Any] = []

    def progress(problem):
        echo(f"evoforge: task {problem.name}", err=True)
        if quiet:
            return None
        display = LiveProgress().__enter__()
        live.append(display)
        return display

    def close_displays() -> None:
        while live:
            live.pop().__exit__(None, None, None)

    def on_task(result) -> None:
        close_displays()
        verdict = "correct" if result.correct else "no correct program"
        if not result.ran:
            verdict = "not run (the task's reference failed)"
        echo(f"evoforge: {result.problem}: {result.status}, {verdict}", err=True)

    try:
        results = asyncio.run(
            run_batch(
                problems, settings, db, progress=progress, on_task=on_task, handle_signals=True
            )
        )
    finally:
        close_displays()
    _table(results, db)
    metrics = suite_metrics(results)
    _metrics(metrics)
    if any(r.status == "stopped" for r in results):
        sys.exit(1)


def _table(results, db: Path) -> None:
    from evoforge.evolve.run import baselines_of

    width = max([len(r.problem) for r in results] + [4])
    baselines = baselines_of(results) or ["eager"]  # an untimed batch still shows the column
    columns = [(b, max(8, len(b) + 3)) for b in baselines]
    echo(
        f"{'task':{width}}  {'status':8}  {'correct':7}  {'passed':>9}  "
        + "".join(f"{'vs ' + b:>{w}}  " for b, w in columns)
        + f"{'time ms (IQR)':>16}  run"
    )
    for r in results:
        timed = "—"
        if r.time_ms is not None:
            timed = f"{r.time_ms:.4g} ({r.time_iqr_ms or 0:.2g})"
        echo(
            f"{r.problem:{width}}  {r.status:8}  {_correct(r):7}  "
            f"{f'{r.passed}/{r.evaluations}':>9}  "
            + "".join(f"{_x(r.speedups.get(b)):>{w}}  " for b, w in columns)
            + f"{timed:>16}  {r.run_id or '—'}"
        )
        if not r.correct and r.reason:
            echo(f"{'':{width}}  why: {r.reason[:300]}")
    db_flag = "" if str(db) == DEFAULT_DB else f" --db {db}"
    echo(f"Archive: {db.resolve()} (evoforge top RUN{db_flag} for a task's programs)")


def _correct(result) -> str:
    if not result.ran:
        return "not run"
    return "yes" if result.correct else "no"


def _metrics(metrics) -> None:
    over = f"{metrics.tasks} tasks"
    if metrics.not_run:
        over = (
            f"the {metrics.tasks} tasks that ran ({metrics.not_run} not run: the task's own "
            "reference failed, so no program was judged; see 'why' above)"
        )
    echo(
        f"Suite metrics (KernelBench's) over {over}: correct {metrics.correct}/"
        f"{metrics.tasks} (fast_0 = {metrics.fast_0:.3f})"
    )
    for baseline, shares in metrics.fast_p.items():
        fast = ", ".join(f"fast_{p:g} = {share:.3f}" for p, share in shares.items() if p > 0)
        echo(
            f"  vs {baseline}: {fast}; geometric-mean speedup over correct tasks "
            f"{metrics.geomean[baseline]:.3f}x"
        )
    if not metrics.fast_p:
        echo(
            "  fast_1, fast_1.5, fast_2 and the geometric-mean speedup: not measured on this "
            f"host ({metrics.untimed or 'no task was timed'})"
        )
    elif metrics.untimed:
        echo(f"  some correct tasks were not timed: {metrics.untimed}")


def _x(value: float | None) -> str:
    return "—" if value is None else f"{value:.3g}x"
