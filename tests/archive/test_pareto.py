"""Pareto-front queries against a brute-force definition of dominance."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from evoforge.archive import Archive
from evoforge.archive._pareto import non_dominated
from evoforge.evaluators import Status
from evoforge.problems import Direction, Objective, Problem
from tests.archive.conftest import MakeProgram, build_program, new_run

NAMES = ("f", "g", "h")


def brute_force(points: list[list[float]]) -> list[int]:
    """Indices of points that no other point dominates (all columns maximised)."""

    def dominates(a: list[float], b: list[float]) -> bool:
        pairs = list(zip(a, b, strict=True))
        return all(x >= y for x, y in pairs) and any(x > y for x, y in pairs)

    return [i for i, p in enumerate(points) if not any(dominates(q, p) for q in points)]


small_floats = st.sampled_from([-2.0, -1.0, 0.0, 0.5, 1.0, 3.0])  # few values: ties, duplicates


@settings(max_examples=100, deadline=None)
@given(
    points=st.integers(1, 3).flatmap(
        lambda m: st.lists(st.lists(small_floats, min_size=m, max_size=m), max_size=40)
    )
)
def test_non_dominated_matches_brute_force(points: list[list[float]]) -> None:
    m = len(points[0]) if points else 1
    got = non_dominated(np.asarray(points, dtype=float).reshape(len(points), m))
    assert list(got) == brute_force(points)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    directions=st.lists(st.sampled_from(Direction), min_size=1, max_size=3),
    rows=st.lists(st.lists(small_floats, min_size=3, max_size=3), max_size=25),
)
def test_pareto_front_with_mixed_directions(
    shared_archive: Archive,
    problem: Problem,
    directions: list[Direction],
    rows: list[list[float]],
) -> None:
    run_id = new_run(shared_archive, problem)
    objectives = [Objective(NAMES[i], d) for i, d in enumerate(directions)]
    with shared_archive.transaction():
        for seq, row in enumerate(rows):
            values = dict(zip(NAMES, row, strict=True))
            shared_archive.add_program(build_program(run_id, seq, objectives=values))
    oriented = [[o.oriented(row[i]) for i, o in enumerate(objectives)] for row in rows]
    front = shared_archive.pareto_front(run_id, objectives)
    assert [p.seq for p in front] == brute_force(oriented)


def test_only_ok_programs_with_every_objective_count(
    archive: Archive, make_program: MakeProgram, run_id: str
) -> None:
    objectives = [Objective("f"), Objective("g", Direction.MINIMIZE)]
    kept = make_program(objectives={"f": 1.0, "g": 1.0})
    make_program(objectives={"f": 0.0, "g": 2.0})  # dominated by kept
    make_program(status=Status.INCORRECT, objectives={"f": 9.0, "g": 0.0})
    make_program(objectives={"f": 9.0})  # lacks g
    make_program(objectives={"f": float("nan"), "g": 0.0})
    assert archive.pareto_front(run_id, objectives) == [kept]


@pytest.mark.parametrize(
    ("direction", "winner"),
    [(Direction.MAXIMIZE, 2), (Direction.MINIMIZE, 0)],
    ids=["maximize", "minimize"],
)
def test_one_objective_front_is_the_best(
    archive: Archive, make_program: MakeProgram, run_id: str, direction, winner: int
) -> None:
    programs = [make_program(objectives={"f": float(v)}) for v in range(3)]
    assert archive.pareto_front(run_id, [Objective("f", direction)]) == [programs[winner]]


def test_empty_run_and_no_objectives(archive: Archive, run_id: str) -> None:
    assert archive.pareto_front(run_id, [Objective("f")]) == []
    with pytest.raises(ValueError, match="at least one objective"):
        archive.pareto_front(run_id, [])


def test_equal_points_are_all_kept() -> None:
    points = np.array([[1.0, 1.0], [1.0, 1.0], [0.0, 0.0]])
    assert list(non_dominated(points)) == [0, 1]
    assert list(non_dominated(np.zeros((0, 2)))) == []
    assert list(non_dominated(np.array(list(itertools.permutations([0.0, 1.0, 2.0]))))) == list(
        range(6)
    )
