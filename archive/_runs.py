"""Runs: creating them, reading them, and keeping their counters."""

from __future__ import annotations

import re
import secrets
import time
from collections.abc import Sequence
from functools import cache
from typing import TYPE_CHECKING, Any

from evoforge.archive._base import Store, check_fields
from evoforge.archive._errors import ArchiveError
from evoforge.archive._front import spec_json
from evoforge.archive._records import RunInfo, RunStatus
from evoforge.base import jsonio

if TYPE_CHECKING:
    from evoforge.problems import Problem

_RUN_COLUMNS = (
    "id", "problem", "problem_path", "config_json", "seed", "status", "stop_reason",
    "created_at", "updated_at", "next_seq", "evaluations", "attempts", "duplicates",
    "elapsed_s", "best_score", "best_program_id", "tokens_in", "tokens_out", "cost_usd",
)  # fmt: skip
_RUN_SELECT = f"SELECT {', '.join(_RUN_COLUMNS)} FROM runs"
_RUN_COUNTERS = frozenset(
    ("next_seq", "evaluations", "attempts", "duplicates", "elapsed_s", "tokens_in",
     "tokens_out", "cost_usd")
)  # fmt: skip
_RUN_UPDATABLE = _RUN_COUNTERS | {
    "problem_path", "config", "seed", "status", "stop_reason", "best_score", "best_program_id",
}  # fmt: skip


def _run_from_row(row: Sequence[Any]) -> RunInfo:
    values = dict(zip(_RUN_COLUMNS, row, strict=True))
    values["config"] = jsonio.loads(values.pop("config_json"))
    values["status"] = RunStatus(values["status"])
    return RunInfo(**values)


@cache
def _update_run_sql(columns: tuple[str, ...]) -> str:
    sets = "".join(f"{c} = ?, " for c in columns)
    return f"UPDATE runs SET {sets}updated_at = ? WHERE id = ?"


@cache
def _bump_run_sql(columns: tuple[str, ...]) -> str:
    sets = "".join(f"{c} = {c} + ?, " for c in columns)
    return f"UPDATE runs SET {sets}updated_at = ? WHERE id = ?"


def _slug(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.]+", "_", name).strip("_.") or "run"


class Runs(Store):
    """The ``runs`` table (mixed into :class:`~evoforge.archive.Archive`)."""

    def create_run(
        self, problem: Problem, *, config: dict[str, Any], seed: int, run_id: str | None = None
    ) -> RunInfo:
        """Start a new run of ``problem`` with status ``running``.

        Args:
            problem: the problem being evolved (its name, spec path and objectives with
                their directions are stored: the run's Pareto front is kept for those).
            config: the run configuration, stored as JSON so ``resume`` needs only the id.
            seed: the run's RNG seed.
            run_id: the id to use; by default a readable unique one such as
                ``circle_packing-20261122-031500-a1b2`` (problem, UTC time, random suffix).

        Raises:
            ArchiveError: ``run_id`` is already taken.
        """
        now = time.time()
        with self.transaction():
            if run_id is None:
                stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime(now))
                while True:
                    run_id = f"{_slug(problem.name)}-{stamp}-{secrets.token_hex(2)}"
                    if not self._run_exists(run_id):
                        break
            elif not run_id:
                raise ValueError("run_id must be a non-empty string or None")
            elif self._run_exists(run_id):
                raise ArchiveError(
                    f"run {run_id!r} already exists in {self.path}; choose another id or "
                    "resume that run"
                )
            objectives = getattr(problem, "objectives", ())
            self.conn.execute(
                "INSERT INTO runs (id, problem, problem_path, config_json, seed, status, "
                "created_at, updated_at, objectives_json) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (run_id, problem.name, str(problem.spec_path), jsonio.dumps(config), int(seed),
                 RunStatus.RUNNING.value, now, now,
                 spec_json(objectives) if objectives else None),
            )  # fmt: skip
        return self.run(run_id)

    def run(self, run_id: str) -> RunInfo:
        """The run ``run_id``.

        Raises:
            ArchiveError: there is no such run.
        """
        row = self.conn.execute(f"{_RUN_SELECT} WHERE id = ?", (run_id,)).fetchone()
        if row is None:
            raise self._no_run(run_id)
        return _run_from_row(row)

    def find_run(self, id_or_prefix: str) -> RunInfo:
        """The run whose id is ``id_or_prefix``, or the one run whose id starts with it.

        Run ids are long (``circle_packing-20261122-031500-a1b2``); a prefix such as
        ``circle_packing-20261122`` is enough when only one run matches.

        Raises:
            ArchiveError: no run matches, or several do (the message lists them).
        """
        ref = id_or_prefix.strip()
        if not ref:
            raise ArchiveError("no run id given; give a run id or a prefix of one")
        row = self.conn.execute(f"{_RUN_SELECT} WHERE id = ?", (ref,)).fetchone()
        if row is not None:
            return _run_from_row(row)
        # A range on the primary key rather than LIKE (which treats _ as a wildcard).
        rows = self.conn.execute(
            f"{_RUN_SELECT} WHERE id >= ? AND id < ? ORDER BY id LIMIT 11", (ref, ref + "\uffff")
        ).fetchall()
        if len(rows) == 1:
            return _run_from_row(rows[0])
        if not rows:
            raise self._no_run(ref)
        listed = ", ".join(r[0] for r in rows[:10]) + (" and more" if len(rows) > 10 else "")
        raise ArchiveError(
            f"run id prefix {ref!r} is ambiguous: it matches {listed}; give more of the id"
        )

    def runs(self) -> list[RunInfo]:
        """All runs, newest first."""
        rows = self.conn.execute(f"{_RUN_SELECT} ORDER BY created_at DESC, rowid DESC")
        return [_run_from_row(row) for row in rows]

    def latest_run(self) -> RunInfo | None:
        """The newest run, or None when the archive has none."""
        row = self.conn.execute(
            f"{_RUN_SELECT} ORDER BY created_at DESC, rowid DESC LIMIT 1"
        ).fetchone()
        return None if row is None else _run_from_row(row)

    def update_run(self, run_id: str, **fields: Any) -> None:
        """Set columns of a run (``status``, ``stop_reason``, ``best_score``, ``config``, …).

        ``updated_at`` is set to now. ``status`` must be a :class:`RunStatus` value.

        Raises:
            TypeError: an unknown or read-only field.
            ArchiveError: there is no such run.
        """
        check_fields("update_run", fields, _RUN_UPDATABLE)
        if "status" in fields:
            fields["status"] = RunStatus(fields["status"]).value
        if "config" in fields:
            fields["config_json"] = jsonio.dumps(fields.pop("config"))
        columns = tuple(fields)
        sql = _update_run_sql(columns)
        cursor = self.conn.execute(sql, (*fields.values(), time.time(), run_id))
        if cursor.rowcount == 0:
            raise self._no_run(run_id)

    def bump_run(self, run_id: str, **increments: float) -> None:
        """Add to a run's counters, e.g. ``bump_run(rid, attempts=1, evaluations=1)``.

        Counters: ``next_seq``, ``evaluations``, ``attempts``, ``duplicates``, ``elapsed_s``,
        ``tokens_in``, ``tokens_out``, ``cost_usd``. ``updated_at`` is set to now.

        Raises:
            TypeError: an unknown counter.
            ArchiveError: there is no such run.
        """
        check_fields("bump_run", increments, _RUN_COUNTERS)
        sql = _bump_run_sql(tuple(increments))
        cursor = self.conn.execute(sql, (*increments.values(), time.time(), run_id))
        if cursor.rowcount == 0:
            raise self._no_run(run_id)

    def reserve_seq(self, run_id: str) -> int:
        """Hand out the run's next attempt number (``next_seq``) and advance the counter."""
        rows = self.conn.execute(
            "UPDATE runs SET next_seq = next_seq + 1 WHERE id = ? RETURNING next_seq - 1",
            (run_id,),
        ).fetchall()
        if not rows:
            raise self._no_run(run_id)
        return rows[0][0]

    def memory_state(self, run_id: str, refresh_every: int) -> tuple[int, str] | None:
        """The last checkpoint of a run's prompt memory, ``(epoch, state_json)``, or None.

        What the state means is the memory's business
        (:class:`~evoforge.evolve.prompts.OptimizationMemory`); the archive only keeps it.
        """
        row = self.conn.execute(
            "SELECT epoch, state_json FROM memory_states WHERE run_id = ? AND refresh_every = ?",
            (run_id, refresh_every),
        ).fetchone()
        return None if row is None else (row[0], row[1])

    def save_memory_state(
        self, run_id: str, refresh_every: int, epoch: int, state_json: str
    ) -> None:
        """Replace the checkpoint of a run's prompt memory (one row per refresh interval).

        Raises:
            ArchiveWriteError: SQLite could not write (the message says why and the fix).
        """
        with self.transaction():
            self.conn.execute(
                "INSERT INTO memory_states (run_id, refresh_every, epoch, state_json) "
                "VALUES (?, ?, ?, ?) ON CONFLICT (run_id, refresh_every) "
                "DO UPDATE SET epoch = excluded.epoch, state_json = excluded.state_json",
                (run_id, refresh_every, epoch, state_json),
            )
