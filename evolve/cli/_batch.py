"""``evoforge run`` on a suite (a built-in one, a folder of KernelBench tasks or of problem
folders): one run with one budget across the tasks (``--budget-per-task``: one run per task,
one after the other), then a table of the tasks, the allocation and the suite's metrics on
stdout (progress on stderr)."""

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


def run_suite_command(
    ref: str,
    resolved: Any,
    settings: Callable[[Any], dict],
    db: Path,
    quiet: bool,
    total: int | None,
) -> None:
    """Run the problems of ``resolved`` as one suite run of ``total`` evaluations (default:
    the sum of the tasks' own budgets) and print its table, allocation and metrics."""
    import asyncio

    from evoforge.evolve.config import RunConfig
    from evoforge.evolve.run import start_suite

    problems = resolved.problems
    configs = [RunConfig.from_dict(settings(p), origin=f"suite task {p.name}") for p in problems]
    if total is None:
        total = sum(c.budget for c in configs)
    suite = configs[0].suite
    echo(
        f"evoforge: a suite of {len(problems)} tasks, one run with a budget of {total} "
        f"evaluations, allocated by {suite.allocation}",
        err=True,
    )
    name = Path(ref).name if Path(ref).exists() else ref
    with _display(quiet) as display:
        report = asyncio.run(
            start_suite(
                name,
                problems,
                settings,
                db,
                budget=total,
                config=suite,
                progress=display,
                handle_signals=True,
            )
        )
    _suite_end(report, db)


def resume_suite_command(suite_id: str, db: Path, quiet: bool, budget: int | None) -> None:
    """Continue a suite (``evoforge resume``) and print its table like ``evoforge run``."""
    import asyncio

    from evoforge.evolve.run import resume_suite

    echo(f"evoforge: resuming suite {suite_id}", err=True)
    with _display(quiet) as display:
        report = asyncio.run(
            resume_suite(suite_id, db, budget=budget, progress=display, handle_signals=True)
        )
    _suite_end(report, db)


def suite_to_resume(db: Path, ref: str | None) -> str | None:
    """The suite ``evoforge resume REF`` continues: REF names a suite (id or prefix) or a
    task's run; without REF, the suite of the latest run, if it is a task of one."""
    from evoforge.archive import Archive, RunInfo

    with Archive(db) as archive:
        run: RunInfo | None
        if ref:
            suite = archive.find_suite(ref)
            if suite is not None:
                return suite.id
            run = archive.find_run(ref)
        else:
            run = archive.latest_run()
        found = archive.suite_of_run(run.id) if run is not None else None
    return None if found is None else found[0]


def _display(quiet: bool):
    from contextlib import nullcontext

    from evoforge.evolve.run import LiveSuiteProgress

    return nullcontext() if quiet else LiveSuiteProgress()


def _suite_end(report, db: Path) -> None:
    """The suite's table, its allocation, its metrics, and what to run next."""
    from evoforge.evolve.run import suite_metrics

    _table(report.results, db)
    _allocation(report)
    _metrics(suite_metrics([r for r in report.results if r.run_id is not None]))
    db_flag = "" if str(db) == DEFAULT_DB else f" --db {db}"
    echo(f"Suite {report.suite_id} {report.status}: {report.reason}")
    echo(f"  evoforge status {report.suite_id}{db_flag}")
    if report.status != "finished":
        echo(f"Continue it with: evoforge resume {report.suite_id}{db_flag}")
        sys.exit(1 if report.status == "failed" else 0)


def _allocation(report) -> None:
    """Evaluations each task got, of the suite's total."""
    spent = sum(a.spent for a in report.arms)
    shares = ", ".join(f"{a.name} {a.spent}" for a in report.arms)
    echo(f"Allocation: {spent} evaluations: {shares}")


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
