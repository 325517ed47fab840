"""MAP-Elites grids and island counters."""

from __future__ import annotations

import math
from functools import cache
from typing import Any

import numpy as np

from evoforge.archive._base import Store, check_fields
from evoforge.archive._errors import ArchiveError
from evoforge.archive._outcome import Status
from evoforge.archive._program import Program
from evoforge.archive._records import Elite, IslandState
from evoforge.archive._stats import ArchiveStats
from evoforge.archive._status import AddStatus

_ISLAND_FIELDS = (
    "accepted_since_migration", "evals_since_improvement", "best_score", "resets", "migrations",
    "evals_since_migration",
)  # fmt: skip
_ISLAND_SELECT = (
    f"SELECT {', '.join(_ISLAND_FIELDS)} FROM island_state WHERE run_id = ? AND island = ?"
)


@cache
def _set_island_sql(columns: tuple[str, ...]) -> str:
    names = "".join(f", {c}" for c in columns)
    marks = ", ?" * len(columns)
    if not columns:
        conflict = "DO NOTHING"
    else:
        conflict = "DO UPDATE SET " + ", ".join(f"{c} = excluded.{c}" for c in columns)
    return (
        f"INSERT INTO island_state (run_id, island{names}) VALUES (?, ?{marks}) "
        f"ON CONFLICT (run_id, island) {conflict}"
    )


class Grids(Store):
    """The ``elites`` and ``island_state`` tables (mixed into
    :class:`~evoforge.archive.Archive`)."""

    def offer(self, run_id: str, island: int, program: Program) -> AddStatus:
        """Offer a stored ok program to the grid of ``island`` (``-1``: the run's global grid).

        The program enters its cell if the cell is empty (``NEW``) or if its score is strictly
        greater than the incumbent's (``IMPROVE_EXISTING``). On a tie the incumbent stays
        (``NOT_ADDED``): the first program to reach a score keeps the cell, so the grid does
        not churn between equals and an elite's ``seq`` says when that score was first reached.

        Raises:
            ValueError: the program is not ok, has no cell or score, belongs to another run,
                or has not been stored with :meth:`add_program` yet.
        """
        score, cell = program.score, program.cell
        if program.run_id != run_id:
            raise ValueError(
                f"program {program.id} belongs to run {program.run_id!r}, not {run_id!r}"
            )
        if program.status != Status.OK:
            raise ValueError(
                f"only ok programs enter a grid; program {program.id} is {program.status}"
            )
        if cell is None or score is None or math.isnan(score):
            raise ValueError(
                f"program {program.id} has cell={cell} score={score}; an ok program needs "
                "both before it is offered (see Program.from_result)"
            )
        if island < -1:
            raise ValueError(f"island must be >= -1 (-1 is the global grid), got {island}")
        row = self.conn.execute(
            "SELECT score FROM elites WHERE run_id = ? AND island = ? AND cell = ?",
            (run_id, island, cell),
        ).fetchone()
        if row is not None and not score > row[0]:
            return AddStatus.NOT_ADDED
        stored = self.conn.execute(
            "SELECT 1 FROM programs WHERE run_id = ? AND id = ?", (run_id, program.id)
        ).fetchone()
        if stored is None:
            raise ValueError(
                f"program {program.id} is not in run {run_id!r}; add_program() it before "
                "offering it"
            )
        self.conn.execute(
            "INSERT INTO elites (run_id, island, cell, program_id, score, seq) "
            "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (run_id, island, cell) DO UPDATE SET "
            "program_id = excluded.program_id, score = excluded.score, seq = excluded.seq",
            (run_id, island, int(cell), program.id, float(score), program.seq),
        )
        self._elite_cache.pop((run_id, island), None)
        return AddStatus.NEW if row is None else AddStatus.IMPROVE_EXISTING

    def elites(self, run_id: str, island: int) -> list[Elite]:
        """The occupied cells of an island's grid (``-1``: global), in cell order."""
        key = (run_id, island)
        cached = self._elite_cache.get(key)
        if cached is None:
            rows = self.conn.execute(
                "SELECT cell, program_id, score, seq FROM elites WHERE run_id = ? AND island = ? "
                "ORDER BY cell",
                (run_id, island),
            )
            cached = self._elite_cache[key] = tuple(Elite(*row) for row in rows)
        return list(cached)

    def clear_island(self, run_id: str, island: int) -> int:
        """Empty an island's grid (programs stay stored); returns how many cells it held."""
        cursor = self.conn.execute(
            "DELETE FROM elites WHERE run_id = ? AND island = ?", (run_id, island)
        )
        self._elite_cache.pop((run_id, island), None)
        return cursor.rowcount

    def sample_elites(
        self, run_id: str, island: int, n: int, rng: np.random.Generator
    ) -> list[Elite]:
        """``n`` elites drawn uniformly with replacement, reproducibly for a seeded ``rng``.

        Draws index the grid's elites in cell order, so the same grid and RNG state give the
        same sample.

        Raises:
            ArchiveError: the grid is empty.
        """
        if n < 0:
            raise ValueError(f"n must be >= 0, got {n}")
        elites = self.elites(run_id, island)
        if not elites:
            raise ArchiveError(
                f"cannot sample: island {island} of run {run_id!r} has no elites; offer() an "
                "ok program (the seed) first"
            )
        return [elites[i] for i in rng.integers(0, len(elites), size=n)]

    def stats(
        self, run_id: str, island: int = -1, *, num_cells: int, qd_offset: float = 0.0
    ) -> ArchiveStats:
        """Coverage, QD score and best/mean score of a grid (see :class:`ArchiveStats`).

        Args:
            run_id: the run.
            island: the island, or -1 (default) for the run's global grid.
            num_cells: cells in the grid (``problem.num_cells``).
            qd_offset: subtracted from every elite's score in the QD score.
        """
        if num_cells < 1:
            raise ValueError(f"num_cells must be >= 1, got {num_cells}")
        elites = self.elites(run_id, island)
        scores = [e.score for e in elites]
        best = min(elites, key=lambda e: (-e.score, e.seq)) if elites else None
        return ArchiveStats(
            num_elites=len(elites),
            num_cells=num_cells,
            coverage=len(elites) / num_cells,
            qd_score=math.fsum(s - qd_offset for s in scores),
            best_score=None if best is None else best.score,
            mean_score=math.fsum(scores) / len(scores) if scores else None,
            best_program_id=None if best is None else best.program_id,
        )

    # -- island counters ------------------------------------------------------------------

    def island_state(self, run_id: str, island: int) -> IslandState:
        """The island's counters; all defaults for an island never written."""
        row = self.conn.execute(_ISLAND_SELECT, (run_id, island)).fetchone()
        return IslandState() if row is None else IslandState(*row)

    def set_island_state(self, run_id: str, island: int, **fields: Any) -> None:
        """Set some of an island's counters (see :class:`IslandState`); others keep their value.

        Raises:
            TypeError: an unknown field.
        """
        check_fields("set_island_state", fields, frozenset(_ISLAND_FIELDS))
        self.conn.execute(_set_island_sql(tuple(fields)), (run_id, island, *fields.values()))
