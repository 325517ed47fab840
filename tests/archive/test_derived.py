"""Data the archive keeps as programs are stored (migration m003): exactly what a scan of the
run would compute, whatever the order programs arrive in."""

from __future__ import annotations

import math
from pathlib import Path

from hypothesis import HealthCheck, given, settings, strategies as st

from evoforge.archive import Archive, Status
from evoforge.problems import Direction, Objective, Problem
from tests.archive.conftest import build_program, new_run
from tests.archive.test_pareto import NAMES, brute_force, small_floats

STATUSES = (Status.OK, Status.OK, Status.OK, Status.RUNTIME_ERROR, Status.TIMEOUT)


def problem_with(directions: list[Direction]) -> Problem:
    return Problem(
        name="kept",
        spec_path=Path("/problems/kept/problem.py"),
        seed_source="def main():\n    return 1\n",
        objectives=tuple(Objective(NAMES[i], d) for i, d in enumerate(directions)),
    )


values = st.one_of(small_floats, st.just(math.nan), st.none())  # None: the objective is missing


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    directions=st.lists(st.sampled_from(Direction), min_size=1, max_size=3),
    rows=st.lists(
        st.tuples(st.sampled_from(STATUSES), st.lists(values, min_size=3, max_size=3)),
        max_size=30,
    ),
    order=st.randoms(use_true_random=False),
    batched=st.booleans(),
)
def test_kept_pareto_front_equals_a_scan(
    shared_archive: Archive, directions, rows, order, batched
) -> None:
    problem = problem_with(directions)
    run_id = new_run(shared_archive, problem)
    programs = []
    for seq, (status, row) in enumerate(rows):
        objectives = {NAMES[i]: v for i, v in enumerate(row[: len(directions)]) if v is not None}
        programs.append(build_program(run_id, seq, status=status, objectives=objectives))
    order.shuffle(programs)  # commit order differs from seq order with several slots
    with shared_archive.transaction():
        if batched:
            shared_archive.add_programs(programs)
        else:
            for program in programs:
                shared_archive.add_program(program)
    kept = [p.seq for p in shared_archive.pareto_front(run_id, problem.objectives)]

    # The definition: brute force over the ok programs with every objective, in seq order.
    candidates = []
    for seq, (status, row) in enumerate(rows):
        point = row[: len(directions)]
        if status is Status.OK and all(v is not None and not math.isnan(v) for v in point):
            pairs = zip(point, directions, strict=True)
            oriented = [v if d == Direction.MAXIMIZE else -v for v, d in pairs]
            candidates.append((seq, oriented))
    expected = [candidates[i][0] for i in brute_force([p for _, p in candidates])]
    assert kept == expected
    assert shared_archive._stored_front(run_id, problem.objectives) is not None  # not a scan


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    rows=st.lists(st.tuples(st.sampled_from(STATUSES), small_floats), max_size=40),
    order=st.randoms(use_true_random=False),
)
def test_best_over_time_and_counts_equal_a_scan(shared_archive: Archive, rows, order) -> None:
    problem = problem_with([Direction.MAXIMIZE])
    run_id = new_run(shared_archive, problem)
    programs = [build_program(run_id, seq, status=s, score=v) for seq, (s, v) in enumerate(rows)]
    order.shuffle(programs)
    for program in programs:
        shared_archive.add_program(program)
    points, best = [], None
    for seq, (status, score) in enumerate(rows):  # the definition, in seq order
        if status is Status.OK and (best is None or score > best):
            best = score
            points.append((seq, score))
    assert shared_archive.best_over_time(run_id) == points
    counts: dict[str, int] = {}
    for status, _ in rows:
        counts[str(status)] = counts.get(str(status), 0) + 1
    assert shared_archive.status_counts(run_id) == dict(sorted(counts.items()))
    assert shared_archive.count_programs(run_id) == len(rows)
    assert shared_archive.count_programs(run_id, Status.OK) == counts.get("ok", 0)


def test_a_rolled_back_insert_leaves_no_derived_trace(archive: Archive) -> None:
    problem = problem_with([Direction.MAXIMIZE, Direction.MINIMIZE])
    run_id = new_run(archive, problem)
    archive.add_program(build_program(run_id, 0, objectives={"f": 1.0, "g": 1.0}))
    try:
        with archive.transaction():
            archive.add_program(
                build_program(run_id, 1, score=5.0, objectives={"f": 2.0, "g": 0.0})
            )
            raise RuntimeError("boom")
    except RuntimeError:
        pass
    assert [p.seq for p in archive.pareto_front(run_id, problem.objectives)] == [0]
    assert archive.best_over_time(run_id) == [(0, 1.0)]
    assert archive.status_counts(run_id) == {"ok": 1}
    archive.add_program(build_program(run_id, 2, objectives={"f": 0.5, "g": 2.0}))
    assert [p.seq for p in archive.pareto_front(run_id, problem.objectives)] == [0]


def test_a_front_written_by_another_connection_is_reread(tmp_path: Path) -> None:
    problem = problem_with([Direction.MAXIMIZE])
    path = tmp_path / "two.db"
    with Archive(path) as first, Archive(path) as second:
        run_id = new_run(first, problem)
        first.add_program(build_program(run_id, 0, objectives={"f": 1.0}))
        second.add_program(build_program(run_id, 1, objectives={"f": 3.0}))  # another writer
        first.add_program(build_program(run_id, 2, objectives={"f": 2.0}))
        assert [p.seq for p in first.pareto_front(run_id, problem.objectives)] == [1]


def test_lineage_follows_parents_to_the_root_and_stops_at_a_missing_one(
    archive: Archive, problem
) -> None:
    run_id = new_run(archive, problem)
    chain = [build_program(run_id, 0)]
    for seq in range(1, 300):
        chain.append(build_program(run_id, seq, parent_id=chain[-1].id, generation=seq))
    archive.add_programs(chain)
    assert [p.seq for p in archive.lineage(run_id, chain[-1].id)] == list(range(300))
    orphan = build_program(run_id, 300, parent_id="0123456789abcdef")
    child = build_program(run_id, 301, parent_id=orphan.id)
    archive.add_programs([orphan, child])
    assert [p.seq for p in archive.lineage(run_id, child.id)] == [300, 301]
