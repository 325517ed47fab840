"""Suites: several tasks run as one run with one evaluation budget (tables ``suites``,
``suite_tasks`` and ``suite_grants``).

A suite's task is an ordinary run (its programs, grid, events and counters are the run's);
the suite adds the total budget and every allocation decision, so ``evoforge status`` can show
how the budget was spent and a suite killed at any point resumes with the same budget and the
same allocation history. How evaluations are allocated is the engine's business
(:mod:`evoforge.evolve.run`); the archive only keeps the decisions.

Budget rule, kept by the writer: the grants of a task add up to its cap (the evaluation budget
stored in its run's configuration), and the caps of a suite's tasks never add up to more than
the suite's budget.
"""

from __future__ import annotations

import re
import secrets
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from evoforge.archive._base import Store, check_fields
from evoforge.archive._errors import ArchiveError
from evoforge.archive._outcome import Status
from evoforge.archive._records import RunStatus
from evoforge.base import jsonio

_SUITE_COLUMNS = (
    "id", "name", "budget", "allocation", "config_json", "status", "stop_reason",
    "created_at", "updated_at",
)  # fmt: skip
_SUITE_SELECT = f"SELECT {', '.join(_SUITE_COLUMNS)} FROM suites"
_SUITE_UPDATABLE = frozenset(("budget", "status", "stop_reason", "config"))
_GRANT_COLUMNS = "seq, ord, evaluations, cap, spent, gain, why, created_at"
_NOT_EVALUATED = ", ".join(f"'{s}'" for s in Status if not s.evaluated)


@dataclass(frozen=True)
class SuiteInfo:
    """One row of ``suites``.

    Attributes:
        id: readable unique id, e.g. ``suite-pie_suite-20261127-172322-9f91``.
        name: the suite's name (``pie_suite``) or the folder it was read from.
        budget: evaluations in total, across the tasks (the seeds' included).
        allocation: how evaluations go to tasks: ``bandit`` or ``equal``.
        config: the suite settings (``[suite]``) it runs with.
        status: running, stopped, finished or failed (as a run's).
        stop_reason: why it stopped; None while running.
        created_at, updated_at: Unix times.
    """

    id: str
    name: str
    budget: int
    allocation: str
    config: dict[str, Any]
    status: RunStatus
    stop_reason: str | None
    created_at: float
    updated_at: float


@dataclass(frozen=True)
class SuiteTask:
    """One task of a suite (a row of ``suite_tasks``).

    Attributes:
        ord: its place in the suite (0, 1, ...).
        problem: the problem's name.
        config: the run settings its run is created with (its budget is the first grant).
        run_id: its run, once created (None before the task got its first grant).
    """

    ord: int
    problem: str
    config: dict[str, Any]
    run_id: str | None


@dataclass(frozen=True)
class Grant:
    """One allocation decision of a suite (a row of ``suite_grants``).

    Attributes:
        seq: its place among the suite's decisions (0, 1, ...).
        ord: the task it concerns.
        evaluations: evaluations granted (negative: unspent ones given back by a task that
            ended before spending them).
        cap: the task's evaluation budget after it.
        spent: evaluations the task had spent when it was decided.
        gain: the task's progress then: the log-ratio of its best score to its seed's
            (``log(speedup)`` for a time or a count), 0 before it has one.
        why: the rule that decided it (``floor``, ``equal share``, the bandit's index, ...).
        created_at: Unix time.
    """

    seq: int
    ord: int
    evaluations: int
    cap: int
    spent: int
    gain: float
    why: str
    created_at: float


def _suite_from_row(row: Sequence[Any]) -> SuiteInfo:
    values = dict(zip(_SUITE_COLUMNS, row, strict=True))
    values["config"] = jsonio.loads(values.pop("config_json"))
    values["status"] = RunStatus(values["status"])
    return SuiteInfo(**values)


def _slug(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.]+", "_", name).strip("_.")[:60] or "suite"


class Suites(Store):
    """The suite tables (mixed into :class:`~evoforge.archive.Archive`)."""

    def create_suite(
        self,
        name: str,
        *,
        budget: int,
        allocation: str,
        config: dict[str, Any],
        tasks: Sequence[tuple[str, dict[str, Any]]],
    ) -> SuiteInfo:
        """Record a new suite (status ``running``) and its tasks, ``(problem name, run
        settings)`` each, in order; no run exists yet.

        Raises:
            ValueError: no tasks, or a budget below 1.
        """
        if not tasks:
            raise ValueError("a suite needs at least one task")
        if budget < 1:
            raise ValueError(f"a suite's budget must be at least 1, not {budget}")
        now = time.time()
        stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime(now))
        with self.transaction():
            while True:
                suite_id = f"suite-{_slug(name)}-{stamp}-{secrets.token_hex(2)}"
                if self.conn.execute("SELECT 1 FROM suites WHERE id = ?", (suite_id,)).fetchone():
                    continue
                break
            self.conn.execute(
                "INSERT INTO suites (id, name, budget, allocation, config_json, status, "
                "created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (suite_id, name, budget, allocation, jsonio.dumps(config),
                 RunStatus.RUNNING.value, now, now),
            )  # fmt: skip
            self.conn.executemany(
                "INSERT INTO suite_tasks (suite_id, ord, problem, config_json) VALUES (?, ?, ?, ?)",
                [(suite_id, i, problem, jsonio.dumps(c)) for i, (problem, c) in enumerate(tasks)],
            )
        return self.suite(suite_id)

    def suite(self, suite_id: str) -> SuiteInfo:
        """The suite ``suite_id``.

        Raises:
            ArchiveError: there is no such suite.
        """
        row = self.conn.execute(f"{_SUITE_SELECT} WHERE id = ?", (suite_id,)).fetchone()
        if row is None:
            raise ArchiveError(
                f"no suite {suite_id!r} in {self.path}; `evoforge status` lists the suites"
            )
        return _suite_from_row(row)

    def find_suite(self, id_or_prefix: str) -> SuiteInfo | None:
        """The suite whose id is ``id_or_prefix`` or the one that starts with it; None when
        none does.

        Raises:
            ArchiveError: several suites start with it.
        """
        ref = id_or_prefix.strip()
        rows = self.conn.execute(
            f"{_SUITE_SELECT} WHERE id >= ? AND id < ? ORDER BY id LIMIT 11",
            (ref, ref + "\uffff"),
        ).fetchall()
        exact = [r for r in rows if r[0] == ref]
        if exact or len(rows) == 1:
            return _suite_from_row((exact or rows)[0])
        if not rows:
            return None
        listed = ", ".join(r[0] for r in rows[:10])
        raise ArchiveError(
            f"suite id prefix {ref!r} is ambiguous: it matches {listed}; give more of the id"
        )

    def suites(self) -> list[SuiteInfo]:
        """All suites, newest first."""
        rows = self.conn.execute(f"{_SUITE_SELECT} ORDER BY created_at DESC, rowid DESC")
        return [_suite_from_row(row) for row in rows]

    def update_suite(self, suite_id: str, **fields: Any) -> None:
        """Set ``status``, ``stop_reason``, ``budget`` or ``config`` of a suite.

        Raises:
            TypeError: an unknown field.
            ArchiveError: there is no such suite.
        """
        check_fields("update_suite", fields, _SUITE_UPDATABLE)
        if "status" in fields:
            fields["status"] = RunStatus(fields["status"]).value
        if "config" in fields:
            fields["config_json"] = jsonio.dumps(fields.pop("config"))
        sets = "".join(f"{c} = ?, " for c in fields)
        cursor = self.conn.execute(
            f"UPDATE suites SET {sets}updated_at = ? WHERE id = ?",
            (*fields.values(), time.time(), suite_id),
        )
        if cursor.rowcount == 0:
            self.suite(suite_id)  # raises

    def suite_tasks(self, suite_id: str) -> list[SuiteTask]:
        """The suite's tasks, in order."""
        rows = self.conn.execute(
            "SELECT ord, problem, config_json, run_id FROM suite_tasks WHERE suite_id = ? "
            "ORDER BY ord",
            (suite_id,),
        )
        return [SuiteTask(o, p, jsonio.loads(c), r) for o, p, c, r in rows]

    def set_task_run(self, suite_id: str, ord: int, run_id: str) -> None:
        """Name the run of task ``ord`` (before the run is created, so a suite killed in
        between creates it under this id when it resumes)."""
        self.conn.execute(
            "UPDATE suite_tasks SET run_id = ? WHERE suite_id = ? AND ord = ?",
            (run_id, suite_id, ord),
        )

    def suite_of_run(self, run_id: str) -> tuple[str, int] | None:
        """``(suite id, task ord)`` of a run that is a suite's task; None for a lone run."""
        row = self.conn.execute(
            "SELECT suite_id, ord FROM suite_tasks WHERE run_id = ?", (run_id,)
        ).fetchone()
        return None if row is None else (row[0], row[1])

    def record_grant(
        self,
        suite_id: str,
        ord: int,
        evaluations: int,
        *,
        spent: int,
        gain: float,
        why: str,
    ) -> Grant:
        """Record a decision: ``evaluations`` more (or fewer) for task ``ord``; the task's run,
        when it exists, gets the new cap as its budget in the same transaction.

        Raises:
            ArchiveError: the caps would exceed the suite's budget, or a cap would fall below
                what its task spent.
        """
        with self.transaction():
            budget = self.suite(suite_id).budget
            caps = dict(
                self.conn.execute(
                    "SELECT ord, sum(evaluations) FROM suite_grants WHERE suite_id = ? "
                    "GROUP BY ord",
                    (suite_id,),
                ).fetchall()
            )
            cap = caps.get(ord, 0) + evaluations
            if sum(caps.values()) + evaluations > budget:
                raise ArchiveError(
                    f"suite {suite_id}: granting {evaluations} evaluations to task {ord} would "
                    f"exceed its budget of {budget} ({sum(caps.values())} granted)"
                )
            if cap < spent:
                raise ArchiveError(
                    f"suite {suite_id}: task {ord} spent {spent} evaluations, more than the "
                    f"cap of {cap} this grant would leave"
                )
            seq = self.conn.execute(
                "SELECT coalesce(max(seq) + 1, 0) FROM suite_grants WHERE suite_id = ?",
                (suite_id,),
            ).fetchone()[0]
            now = time.time()
            self.conn.execute(
                f"INSERT INTO suite_grants (suite_id, {_GRANT_COLUMNS}) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (suite_id, seq, ord, evaluations, cap, spent, float(gain), why, now),
            )
            row = self.conn.execute(
                "SELECT run_id FROM suite_tasks WHERE suite_id = ? AND ord = ?", (suite_id, ord)
            ).fetchone()
            stored = None
            if row is not None and row[0] is not None:
                stored = self.conn.execute(
                    "SELECT id, config_json FROM runs WHERE id = ?", (row[0],)
                ).fetchone()
            if stored is not None:
                run_id, config = stored[0], jsonio.loads(stored[1])
                config["budget"] = cap
                self.conn.execute(
                    "UPDATE runs SET config_json = ?, updated_at = ? WHERE id = ?",
                    (jsonio.dumps(config), now, run_id),
                )
        return Grant(seq, ord, evaluations, cap, spent, float(gain), why, now)

    def grants(self, suite_id: str) -> list[Grant]:
        """Every allocation decision of the suite, in order."""
        rows = self.conn.execute(
            f"SELECT {_GRANT_COLUMNS} FROM suite_grants WHERE suite_id = ? ORDER BY seq",
            (suite_id,),
        )
        return [Grant(*row) for row in rows]

    def transfer_outcomes(self, run_id: str) -> dict[bool, tuple[int, int]]:
        """The run's evaluated children by whether their prompt offered another task's elite
        (``Program.transfer_from``): ``{offered: (children, improved)}``, improved as
        :func:`~evoforge.archive.improved` counts it (above its parent, or scored where its
        parent, a failure being repaired, was not). Scans the run's rows (``evoforge
        stats``)."""
        rows = self.conn.execute(
            "SELECT p.transfer_from IS NOT NULL, count(*), coalesce(sum(p.score IS NOT NULL AND "
            "(pp.score IS NULL OR p.score > pp.score)), 0) FROM programs AS p LEFT JOIN "
            "programs AS pp ON pp.run_id = p.run_id AND pp.id = p.parent_id WHERE p.run_id = ? "
            f"AND p.parent_id IS NOT NULL AND p.status NOT IN ({_NOT_EVALUATED}) "
            "GROUP BY p.transfer_from IS NOT NULL",
            (run_id,),
        )
        found = {bool(offered): (int(n), int(better)) for offered, n, better in rows}
        return {True: found.get(True, (0, 0)), False: found.get(False, (0, 0))}
