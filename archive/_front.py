"""A run's Pareto front, kept as its programs are stored (table ``run_pareto``).

A run created with :meth:`~evoforge.archive.Archive.create_run` records its problem's
objectives and their directions (``runs.objectives_json``). Each ok program stored afterwards
is checked against the run's current front: it joins unless a member dominates it, and the
members it dominates leave. Dominance is a strict partial order, so this keeps exactly the
non-dominated set :func:`~evoforge.archive._pareto.non_dominated` would compute over all of the
run's ok programs, with the same rules (equal points are all kept; a program missing an
objective, or with a NaN for one, takes no part). A query for those objectives then
reads the front's rows (tens), not the run's (millions).

Cost per stored ok program: one comparison against the front held in memory (numpy, F x M
for a front of F points and M objectives) and, when the front changes, a few row writes in the
caller's transaction. The in-memory front is re-read when another connection has written the
file since (``PRAGMA data_version``), and dropped on rollback.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from evoforge.archive._base import Store
from evoforge.archive._outcome import Status
from evoforge.base import jsonio
from evoforge.problems import Direction

if TYPE_CHECKING:
    from evoforge.archive._program import Program
    from evoforge.problems import Objective

Spec = tuple[tuple[str, bool], ...]  # (objective name, maximised) in declared order


def spec_of(objectives: Sequence[Objective]) -> Spec:
    return tuple((o.name, o.direction == Direction.MAXIMIZE) for o in objectives)


def spec_json(objectives: Sequence[Objective]) -> str:
    """What ``runs.objectives_json`` holds: ``[[name, "maximize" | "minimize"], ...]``."""
    return jsonio.dumps([[o.name, str(Direction(o.direction))] for o in objectives])


def point_of(objectives: Mapping[str, object], spec: Spec) -> tuple[float, ...] | None:
    """The oriented point (bigger is better) of a program, or None when it takes no part."""
    point = []
    for name, up in spec:
        try:
            value = float(objectives[name])  # type: ignore[arg-type]
        except (KeyError, TypeError, ValueError):
            return None
        if math.isnan(value):
            return None
        point.append(value if up else -value)
    return tuple(point)


@dataclass
class _Front:
    spec: Spec
    version: int
    ids: list[str] = field(default_factory=list)
    points: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))


class Fronts(Store):
    """Upkeep of ``run_pareto`` (mixed into :class:`~evoforge.archive.Archive`)."""

    _fronts: dict[str, _Front | None]

    def _front_spec(self, run_id: str) -> Spec | None:
        row = self.conn.execute(
            "SELECT objectives_json FROM runs WHERE id = ?", (run_id,)
        ).fetchone()
        if row is None or row[0] is None:
            return None
        return tuple((name, direction == "maximize") for name, direction in jsonio.loads(row[0]))

    def _front(self, run_id: str) -> _Front | None:
        """The run's front in memory (None: the run keeps none), re-read when stale."""
        version = self.conn.execute("PRAGMA data_version").fetchone()[0]
        cached = self._fronts.get(run_id, ...)
        if cached is not ... and (cached is None or cached.version == version):
            return cached
        spec = self._front_spec(run_id)
        if spec is None:
            self._fronts[run_id] = None
            return None
        rows = self.conn.execute(
            "SELECT f.program_id, (SELECT p.objectives_json FROM programs AS p "
            "WHERE p.run_id = f.run_id AND p.id = f.program_id) FROM run_pareto AS f "
            "WHERE f.run_id = ?",
            (run_id,),
        ).fetchall()
        front = _Front(spec, version)
        points = []
        for program_id, objectives_json in rows:
            point = point_of(jsonio.loads(objectives_json), spec)
            if point is not None:
                front.ids.append(program_id)
                points.append(point)
        front.points = np.asarray(points, dtype=float).reshape(len(points), len(spec))
        self._fronts[run_id] = front
        return front

    def _offer_front(self, programs: Iterable[Program]) -> None:
        """Update the fronts of the runs of ``programs`` (just stored, in the transaction)."""
        for program in programs:
            if program.status != Status.OK:
                continue
            front = self._front(program.run_id)
            if front is None:
                continue
            point = point_of(program.objectives, front.spec)
            if point is None:
                continue
            p = np.asarray(point)
            f = front.points
            if len(f) and np.any(np.all(f >= p, axis=1) & np.any(f > p, axis=1)):
                continue  # dominated: the front stays as it is
            beaten = np.all(p >= f, axis=1) & np.any(p > f, axis=1) if len(f) else np.zeros(0, bool)
            gone = [front.ids[i] for i in np.flatnonzero(beaten)]
            if gone:
                self.conn.executemany(
                    "DELETE FROM run_pareto WHERE run_id = ? AND program_id = ?",
                    [(program.run_id, i) for i in gone],
                )
            self.conn.execute(
                "INSERT OR IGNORE INTO run_pareto (run_id, program_id) VALUES (?, ?)",
                (program.run_id, program.id),
            )
            keep = ~beaten
            front.ids = [i for i, k in zip(front.ids, keep, strict=True) if k] + [program.id]
            front.points = np.vstack([f[keep], p[None, :]]) if len(f) else p[None, :]

    def _stored_front(self, run_id: str, objectives: Sequence[Objective]) -> list[str] | None:
        """Ids of the kept front when ``objectives`` are the ones the run keeps it for."""
        spec = self._front_spec(run_id)
        if spec is None or sorted(spec) != sorted(spec_of(objectives)):
            return None
        # Correlated look-ups through the programs' primary key: O(front), where a join lets
        # the planner scan the run's programs (tens of ms at 20k).
        rows = self.conn.execute(
            "SELECT f.program_id, (SELECT p.seq FROM programs AS p WHERE p.run_id = f.run_id "
            "AND p.id = f.program_id) AS seq FROM run_pareto AS f WHERE f.run_id = ? "
            "ORDER BY seq",
            (run_id,),
        )
        return [r[0] for r in rows]
