"""How to show a run's numbers: its objectives in their own directions, and its grid's axes.

The archive stores each program's ``score`` oriented so bigger is better (a minimised
objective negated), which is right for ranking and wrong for people: ``mean_comparisons``
1877.375 must not read -1877.375. A :class:`RunView` turns scores back into the objective's own
value and says which way is better.

Where it comes from, in order: what the run's last session recorded (its ranked objectives,
their directions and the descriptors, in the ``run_start``/``run_resume`` event); else the
problem spec at the run's ``problem_path``; else what the programs show (the primary objective
is the one whose value is the score or its negation).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, overload

from evoforge.base import jsonio
from evoforge.problems import Descriptor, Direction, Objective

if TYPE_CHECKING:
    from evoforge.archive import Archive, RunInfo

_SESSION_EVENTS = ("run_start", "run_resume")
_ARROW = {Direction.MAXIMIZE: "max", Direction.MINIMIZE: "min"}


@dataclass(frozen=True)
class RunView:
    """A run's objectives (ranked: ``score`` is the first one's, oriented) and descriptors.

    Attributes:
        objectives: the objectives the run ranked by, the primary first; empty when nothing
            says what the scores are (a run with no session and no spec).
        descriptors: the MAP-Elites axes, in the order cells are numbered (row-major).
        origin: ``archive`` (recorded by the run), ``spec`` (the problem file) or
            ``inferred`` (from the programs).
    """

    objectives: tuple[Objective, ...]
    descriptors: tuple[Descriptor, ...] = ()
    origin: str = "archive"

    @property
    def primary(self) -> Objective | None:
        """The objective ``score`` is of; None when unknown."""
        return self.objectives[0] if self.objectives else None

    @property
    def num_cells(self) -> int | None:
        """Cells of the grid; None when the descriptors are unknown."""
        return math.prod(d.bins for d in self.descriptors) if self.descriptors else None

    def objective(self, name: str) -> Objective:
        """The objective called ``name``.

        Raises:
            KeyError: no such objective, with the names there are.
        """
        for objective in self.objectives:
            if objective.name == name:
                return objective
        known = ", ".join(o.name for o in self.objectives) or "none known"
        raise KeyError(f"no objective {name!r} in this run (its objectives: {known})")

    @overload
    def value(self, score: float) -> float: ...
    @overload
    def value(self, score: None) -> None: ...
    @overload
    def value(self, score: float | None) -> float | None: ...

    def value(self, score: float | None) -> float | None:
        """The primary objective's own value for a stored ``score`` (None stays None)."""
        if score is None or self.primary is None:
            return score
        return self.primary.oriented(score) + 0.0  # + 0.0: never show -0

    def describe(self, score: float | None) -> str:
        """``sum_radii 2.635 (max)``: the primary objective's value and which way is better."""
        if score is None:
            return "—"
        if self.primary is None:
            return f"score {fmt(score)}"
        return f"{self.primary.name} {fmt(self.value(score))} ({arrow(self.primary)})"

    def cell_bins(self, cell: int) -> tuple[int, ...]:
        """The bin of each descriptor for a cell index (the inverse of ``Problem.cell_of``)."""
        bins = []
        for d in reversed(self.descriptors):
            cell, b = divmod(cell, d.bins)
            bins.append(b)
        return tuple(reversed(bins))

    def to_dict(self) -> dict[str, Any]:
        return {
            "objectives": [
                {"name": o.name, "direction": str(o.direction)} for o in self.objectives
            ],
            "descriptors": [
                {"name": d.name, "low": d.low, "high": d.high, "bins": d.bins}
                for d in self.descriptors
            ],
            "origin": self.origin,
        }


def arrow(objective: Objective) -> str:
    """``max`` or ``min``."""
    return _ARROW[objective.direction]


def fmt(value: Any) -> str:
    """A number as people read it: 10 significant digits, no ``-0``; None as ``—``."""
    if value is None:
        return "—"
    if isinstance(value, float):
        return f"{value + 0.0:.10g}"
    return str(value)


def run_view(archive: Archive, run: RunInfo) -> RunView:
    """The :class:`RunView` of ``run`` (see the module docstring for where it comes from)."""
    session = _last_session(archive, run.id)
    ranked = [str(n) for n in session.get("objectives") or []]
    directions = session.get("directions")
    descriptors = session.get("descriptors")
    if isinstance(directions, dict) and isinstance(descriptors, list):
        names = ranked or list(directions)
        return RunView(
            tuple(Objective(n, Direction(directions.get(n, "maximize"))) for n in names),
            tuple(Descriptor(str(d[0]), float(d[1]), float(d[2]), int(d[3])) for d in descriptors),
            "archive",
        )
    spec = _spec(run.problem_path)
    if spec is not None:
        declared = {o.name: o for o in spec.objectives}
        names = [n for n in ranked if n in declared] or list(declared)
        return RunView(tuple(declared[n] for n in names), spec.descriptors, "spec")
    return _inferred(archive, run, ranked)


def _last_session(archive: Archive, run_id: str) -> dict[str, Any]:
    # idx_events_run_kind: the run's session events only.
    row = archive.conn.execute(
        "SELECT data_json FROM events WHERE run_id = ? AND kind IN (?, ?) ORDER BY id DESC LIMIT 1",
        (run_id, *_SESSION_EVENTS),
    ).fetchone()
    return jsonio.loads(row[0]) if row else {}


def _spec(path: str):
    from evoforge.problems import load_problem

    try:
        return load_problem(path)
    except Exception:  # moved, edited, broken: the run's data still shows, less well
        return None


def _inferred(archive: Archive, run: RunInfo, ranked: list[str]) -> RunView:
    """The primary objective is the one whose value is ± the score; its sign says which way."""
    rows = (
        archive.conn.execute(
            "SELECT score, objectives_json FROM programs WHERE run_id = ? AND status = 'ok' "
            "AND score IS NOT NULL AND score != 0 LIMIT 1",
            (run.id,),
        ).fetchall()
        or archive.conn.execute(
            "SELECT score, objectives_json FROM programs WHERE run_id = ? AND status = 'ok' "
            "AND score IS NOT NULL LIMIT 1",
            (run.id,),
        ).fetchall()
    )
    if not rows:
        return RunView(tuple(Objective(n) for n in ranked), (), "inferred")
    score, objectives_json = rows[0]
    values = jsonio.loads(objectives_json)
    names = ranked or list(values)
    primary = next((n for n in names if _close(values.get(n), score)), None)
    if primary is None:
        primary = next((n for n in names if _close(values.get(n), -score)), None)
        direction = Direction.MINIMIZE
    else:
        direction = Direction.MAXIMIZE
    if primary is None:
        return RunView((), (), "inferred")
    others = tuple(Objective(n) for n in names if n != primary)
    return RunView((Objective(primary, direction), *others), (), "inferred")


def _close(value: Any, score: float) -> bool:
    return isinstance(value, int | float) and math.isclose(float(value), score, rel_tol=1e-12)
