"""Suites in the archive: tasks, grants, the budget rule, and what an older reader sees."""

from __future__ import annotations

from pathlib import Path

import pytest
import sqlite_utils

from evoforge.archive import Archive, ArchiveError, migrations
from evoforge.archive._schema import MIGRATION_NAMES


def _suite(archive: Archive, budget: int = 30):
    return archive.create_suite(
        "pie_suite",
        budget=budget,
        allocation="bandit",
        config={"floor": 5},
        tasks=[("a", {"problem": "/p/a", "budget": 5}), ("b", {"problem": "/p/b"})],
    )


def test_a_suite_keeps_its_tasks_in_order_and_is_found_by_a_prefix(archive: Archive) -> None:
    suite = _suite(archive)
    assert suite.id.startswith("suite-pie_suite-") and suite.status == "running"
    assert (suite.budget, suite.allocation, suite.config) == (30, "bandit", {"floor": 5})
    tasks = archive.suite_tasks(suite.id)
    assert [(t.ord, t.problem, t.run_id) for t in tasks] == [(0, "a", None), (1, "b", None)]
    assert tasks[0].config == {"problem": "/p/a", "budget": 5}
    assert archive.find_suite(suite.id[:20]) == suite
    assert archive.find_suite("suite-nothing") is None
    assert archive.suites() == [suite]
    archive.update_suite(suite.id, status="stopped", stop_reason="SIGINT", budget=40)
    again = archive.suite(suite.id)
    assert (again.status, again.stop_reason, again.budget) == ("stopped", "SIGINT", 40)
    with pytest.raises(ArchiveError, match="no suite"):
        archive.suite("suite-gone")


def test_a_grant_raises_the_task_runs_budget_and_the_caps_never_exceed_the_suites(
    archive: Archive, problem
) -> None:
    suite = _suite(archive, budget=30)
    first = archive.record_grant(suite.id, 0, 5, spent=0, gain=0.0, why="floor")
    assert (first.seq, first.cap) == (0, 5)
    run = archive.create_run(problem, config={"budget": 5, "seed": 1}, seed=1, run_id="run-a")
    archive.set_task_run(suite.id, 0, run.id)
    assert archive.suite_of_run(run.id) == (suite.id, 0)
    assert archive.suite_of_run("elsewhere") is None
    grant = archive.record_grant(suite.id, 0, 10, spent=5, gain=0.25, why="bandit")
    assert (grant.seq, grant.cap, grant.gain) == (1, 15, 0.25)
    assert archive.run(run.id).config == {"budget": 15, "seed": 1}  # the same transaction
    archive.record_grant(suite.id, 1, 15, spent=0, gain=0.0, why="floor")
    with pytest.raises(ArchiveError, match="exceed its budget of 30"):
        archive.record_grant(suite.id, 1, 1, spent=0, gain=0.0, why="too much")
    with pytest.raises(ArchiveError, match="spent 12 evaluations, more than the cap of 10"):
        archive.record_grant(suite.id, 0, -5, spent=12, gain=0.0, why="given back")
    back = archive.record_grant(suite.id, 0, -3, spent=12, gain=0.0, why="ended: failed")
    assert back.cap == 12
    assert [g.why for g in archive.grants(suite.id)] == [
        "floor",
        "bandit",
        "floor",
        "ended: failed",
    ]


def test_a_reader_of_an_archive_before_m010_sees_no_suites(tmp_path: Path) -> None:
    path = tmp_path / "m009.db"
    db = sqlite_utils.Database(path)
    migrations.apply(db, stop_before="m010_suites")
    db.close()
    with Archive(path, read_only=True) as reader:
        assert reader.pending_migrations == MIGRATION_NAMES[MIGRATION_NAMES.index("m010_suites") :]
        assert reader.suites() == [] and reader.suite_of_run("r") is None
        assert reader.find_suite("suite-") is None
        assert reader.runs() == []
    with Archive(path) as writer:
        assert migrations.pending(writer.db) == []
        assert _suite(writer).status == "running"


def test_programs_of_an_archive_before_m011_read_as_offered_nothing(tmp_path: Path, problem):
    from tests.archive.conftest import build_program, new_run, undo_added_column

    path = tmp_path / "m010.db"
    with Archive(path) as writer:
        run_id = new_run(writer, problem)
        writer.add_program(build_program(run_id, 0, score=1.0))
        writer.add_program(build_program(run_id, 1, score=2.0, parent_id=None))
    undo_added_column(path, "m011_transfer", "programs", "transfer_from")
    with Archive(path, read_only=True) as reader:
        assert reader.pending_migrations == ("m011_transfer",)
        assert [p.transfer_from for p in reader.programs(run_id)] == [None, None]
        assert reader.transfer_outcomes(run_id)[True] == (0, 0)
    with Archive(path) as writer:  # a writer adds the column; old rows offered nothing
        assert writer.get_program(run_id, build_program(run_id, 1).id).transfer_from is None
