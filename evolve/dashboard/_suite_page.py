"""The dashboard's suite pages: the suites on the runs page, and one suite's page (each task's
best, its ratio to its baselines, the evaluations it got, and its allocation over time)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from evoforge.archive import ArchiveError
from evoforge.evolve.mining import suite_view
from evoforge.evolve.run import TaskResult, speedups_of, suite_metrics

if TYPE_CHECKING:
    from evoforge.archive import Archive


class SuiteNotFound(LookupError):
    """The suite the URL names does not exist."""


def suites_summary(archive: Archive) -> list[dict[str, Any]]:
    """Every suite, newest first: its status, budget spent and geometric mean over seeds."""
    rows = []
    for suite in archive.suites():
        view = suite_view(archive, suite.id)
        rows.append(
            {
                "id": suite.id,
                "name": suite.name,
                "status": str(suite.status),
                "allocation": suite.allocation,
                "tasks": len(view.tasks),
                "spent": view.spent,
                "budget": suite.budget,
                "geomean_vs_seed": view.geomean_vs_seed,
                "updated_at": suite.updated_at,
            }
        )
    return rows


def suite_page(archive: Archive, suite_id: str) -> dict[str, Any]:
    """One suite: its tasks (best, ratios to their baselines, evaluations spent and granted,
    run), its metrics (KernelBench's fast_p and geometric means where tasks report speedups,
    vs seed and vs -O3 for native programs), and each task's cap after every grant."""
    try:
        view = suite_view(archive, suite_id)
    except ArchiveError:
        raise SuiteNotFound(f"no suite {suite_id!r} in this archive") from None
    tasks = []
    results = []
    for task in view.tasks:
        row = {k: v for k, v in vars(task).items()}
        row["speedups"] = {}
        if task.run_id is not None and task.status != "queued":
            result = _result(archive, task.problem, task.run_id)
            results.append(result)
            row["speedups"] = dict(result.speedups)
        tasks.append(row)
    metrics = suite_metrics(results)
    caps: dict[int, list[list[float]]] = {t.ord: [] for t in view.tasks}
    for grant in view.grants:
        caps[grant.ord].append([grant.seq, grant.created_at, grant.cap, grant.spent, grant.gain])
    suite = view.suite
    return {
        "title": suite.id,
        "live": str(suite.status) == "running",
        "stamp": [suite.updated_at, len(view.grants), view.spent],
        **view.to_dict(),
        "task_rows": tasks,
        "metrics": {
            "tasks": metrics.tasks,
            "correct": metrics.correct,
            "fast_p": {
                b: {str(p): s for p, s in shares.items()} for b, shares in metrics.fast_p.items()
            },  # fmt: skip
            "geomean": metrics.geomean,
            "untimed": metrics.untimed,
        },
        # each task's cap after each of its grants: [decision, time, cap, spent, gain]
        "caps": [{"ord": t.ord, "problem": t.problem, "points": caps[t.ord]} for t in view.tasks],
    }


def _result(archive: Archive, problem: str, run_id: str) -> TaskResult:
    """What the suite's metrics need of a task, read through the page's read-only archive."""
    run = archive.run(run_id)
    best = archive.get_program(run_id, run.best_program_id) if run.best_program_id else None
    metrics = dict(best.metrics) if best is not None else {}
    speedups = speedups_of(metrics)
    timing = "" if speedups else str(metrics.get("timing") or "no timing in the metrics")
    correct = best is not None and str(best.status) == "ok"
    return TaskResult(problem, run_id, str(run.status), run.stop_reason or "", correct,
                      speedups, timing, evaluations=run.evaluations)  # fmt: skip
