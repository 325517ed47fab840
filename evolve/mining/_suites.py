"""Reading a suite back: each task's run, its share of the budget, its gain over its seed, and
the allocation over time (``evoforge status SUITE``, the dashboard's suite page).

A task's **gain** is the log-ratio of its best score to its seed's (:func:`gain_of`): for a
time or an instruction count, ``log(speedup over the seed)``; the suite's geometric-mean
ratio over its seeds is ``exp`` of the mean gain over the tasks that have one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from evoforge.evolve.mining._view import run_view

if TYPE_CHECKING:
    from evoforge.archive import Archive, Grant, SuiteInfo

ENDED = "ended: "
"""Prefix of the ``why`` of the grant that retires a task which ended by itself (its seed
failed, a failure streak, its own wall-time budget): it gives back what it did not spend and
gets nothing more, on resume too."""


def gain_of(seed_score: float | None, best_score: float | None) -> float:
    """The log-ratio of ``best_score`` to ``seed_score`` (both oriented: bigger is better).

    Same sign, neither zero: ``log(best / seed)`` for positive scores, ``log(seed / best)``
    for negative ones (a minimised time is stored negated: the ratio of the times, so
    ``log(speedup)``). Otherwise the improvement relative to the seed's magnitude. 0 while
    either is unknown.
    """
    if seed_score is None or best_score is None:
        return 0.0
    if seed_score * best_score > 0:
        ratio = best_score / seed_score
        return math.log(ratio) if seed_score > 0 else -math.log(ratio)
    return (best_score - seed_score) / (abs(seed_score) or 1.0)


@dataclass(frozen=True)
class SuiteTaskView:
    """One task of a suite as read back.

    Attributes:
        ord, problem: its place and name.
        run_id: its run (None before its first grant).
        status: its run's status (``queued`` before it has a run).
        granted: evaluations granted (its cap); spent: evaluations spent.
        grants: how many grants it got (the floor included).
        best: its best program's value of the primary objective (its own direction).
        best_text: that value with the objective's name and direction.
        vs_seed: ``exp(gain)``: its best over its seed (a speedup for a time or a count);
            None before its seed was scored.
        ended: why it was retired (ended by itself), "" while it may get more.
    """

    ord: int
    problem: str
    run_id: str | None
    status: str
    granted: int
    spent: int
    grants: int
    best: float | None
    best_text: str
    vs_seed: float | None
    ended: str = ""


@dataclass(frozen=True)
class SuiteView:
    """A suite as read back (see :func:`suite_view`).

    Attributes:
        suite: its row.
        tasks: its tasks, in order.
        grants: every allocation decision, in order.
        geomean_vs_seed: the geometric mean of the tasks' ``vs_seed`` (None when none has one).
    """

    suite: SuiteInfo
    tasks: list[SuiteTaskView] = field(default_factory=list)
    grants: list[Grant] = field(default_factory=list)
    geomean_vs_seed: float | None = None

    @property
    def spent(self) -> int:
        return sum(t.spent for t in self.tasks)

    @property
    def granted(self) -> int:
        return sum(t.granted for t in self.tasks)

    def to_dict(self) -> dict[str, Any]:
        """Plain data (``evoforge status --json``)."""
        suite = self.suite
        return {
            "id": suite.id,
            "name": suite.name,
            "status": str(suite.status),
            "stop_reason": suite.stop_reason,
            "budget": suite.budget,
            "allocation": suite.allocation,
            "spent": self.spent,
            "granted": self.granted,
            "geomean_vs_seed": self.geomean_vs_seed,
            "tasks": [vars(t) for t in self.tasks],
            "grants": [vars(g) for g in self.grants],
        }


def suite_view(archive: Archive, suite_id: str) -> SuiteView:
    """Read suite ``suite_id`` back: its tasks' runs and shares, and its grants.

    Costs a few queries per task (its run row and its seed).

    Raises:
        ArchiveError: there is no such suite.
    """
    suite = archive.suite(suite_id)
    grants = archive.grants(suite_id)
    tasks = []
    for task in archive.suite_tasks(suite_id):
        own = [g for g in grants if g.ord == task.ord]
        granted = own[-1].cap if own else 0
        ended = next((g.why for g in reversed(own) if g.why.startswith(ENDED)), "")
        count = sum(1 for g in own if g.evaluations > 0)
        run = None
        if task.run_id is not None:
            found = archive.conn.execute("SELECT 1 FROM runs WHERE id = ?", (task.run_id,))
            run = archive.run(task.run_id) if found.fetchone() else None
        if run is None:
            tasks.append(
                SuiteTaskView(
                    task.ord,
                    task.problem,
                    task.run_id,
                    "queued",
                    granted,
                    0,
                    count,
                    None,
                    "—",
                    None,
                    ended,
                )  # fmt: skip
            )
            continue
        view = run_view(archive, run)
        seed = next(archive.programs(run.id), None)
        seed_score = seed.score if seed is not None else None
        vs_seed = None
        if seed_score is not None and run.best_score is not None:
            vs_seed = math.exp(gain_of(seed_score, run.best_score))
        tasks.append(
            SuiteTaskView(
                task.ord,
                task.problem,
                run.id,
                str(run.status),
                granted,
                run.evaluations,
                count,
                view.value(run.best_score),
                view.describe(run.best_score),
                vs_seed,
                ended,
            )
        )
    ratios = [t.vs_seed for t in tasks if t.vs_seed is not None and t.vs_seed > 0]
    geomean = math.exp(sum(map(math.log, ratios)) / len(ratios)) if ratios else None
    return SuiteView(suite, tasks, grants, geomean)
