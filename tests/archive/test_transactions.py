"""transaction(): all or nothing, nesting joins the outer block, the file stays sound."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import nullcontext
from pathlib import Path

import pytest

from evoforge.archive import Archive, ArchiveError, IslandState
from tests.archive.conftest import build_program


class Boom(Exception):
    pass


@pytest.fixture
def reader(archive: Archive) -> Iterator[sqlite3.Connection]:
    """A second connection, as `evoforge status` in another process would have."""
    conn = sqlite3.connect(archive.path, isolation_level=None)
    yield conn
    conn.close()


def record_candidate(archive: Archive, run_id: str, seq: int) -> None:
    """Everything the controller writes for one candidate."""
    program = build_program(run_id, seq)
    archive.add_program(program)
    archive.offer(run_id, 0, program)
    archive.offer(run_id, -1, program)
    archive.set_island_state(run_id, 0, accepted_since_migration=seq + 1)
    archive.record_event(run_id, "migration", island=0, seq=seq)
    archive.record_llm_call(run_id, seq=seq, model="m", latency_s=0.1, status="ok")
    archive.bump_run(run_id, attempts=1, evaluations=1, tokens_in=10)


def snapshot(archive: Archive, run_id: str) -> tuple:
    run = archive.run(run_id)
    return (
        archive.count_programs(run_id),
        archive.elites(run_id, 0),
        archive.elites(run_id, -1),
        archive.island_state(run_id, 0),
        len(archive.events(run_id)),
        len(archive.llm_calls(run_id)),
        (run.attempts, run.evaluations, run.tokens_in),
    )


@pytest.mark.parametrize("error", [Boom, KeyboardInterrupt], ids=["exception", "interrupt"])
def test_an_exception_rolls_back_everything(archive: Archive, run_id: str, error) -> None:
    with archive.transaction():
        record_candidate(archive, run_id, 0)
    before = snapshot(archive, run_id)
    with pytest.raises(error):
        with archive.transaction():
            record_candidate(archive, run_id, 1)
            raise error
    assert snapshot(archive, run_id) == before
    assert not archive.conn.in_transaction
    record_candidate(archive, run_id, 1)  # usable afterwards
    assert archive.count_programs(run_id) == 2


def test_commit_is_visible_to_other_connections_only_at_the_end(
    archive: Archive, run_id: str, reader: sqlite3.Connection
) -> None:
    count = lambda: reader.execute("SELECT count(*) FROM programs").fetchone()[0]  # noqa: E731
    with archive.transaction():
        record_candidate(archive, run_id, 0)
        assert count() == 0
    assert count() == 1


def test_nested_transactions_join_the_outer_one(
    archive: Archive, run_id: str, reader: sqlite3.Connection
) -> None:
    count = lambda: reader.execute("SELECT count(*) FROM programs").fetchone()[0]  # noqa: E731
    with archive.transaction():
        with archive.transaction() as inner:
            assert inner is archive
            record_candidate(archive, run_id, 0)
        assert count() == 0  # the inner block did not commit
        record_candidate(archive, run_id, 1)
    assert count() == 2


def test_an_exception_escaping_the_outer_block_undoes_inner_blocks(
    archive: Archive, run_id: str
) -> None:
    with pytest.raises(Boom):
        with archive.transaction():
            with archive.transaction():
                record_candidate(archive, run_id, 0)
            raise Boom
    assert archive.count_programs(run_id) == 0
    assert archive.island_state(run_id, 0) == IslandState()


def test_the_write_lock_is_taken_at_begin(archive: Archive, reader: sqlite3.Connection) -> None:
    reader.execute("PRAGMA busy_timeout = 0")
    with archive.transaction():
        with pytest.raises(sqlite3.OperationalError, match="locked"):
            reader.execute("BEGIN IMMEDIATE")
    reader.execute("BEGIN IMMEDIATE")  # free again
    reader.execute("ROLLBACK")


def test_the_file_passes_integrity_check(tmp_path: Path, problem) -> None:
    path = tmp_path / "evoforge.db"
    with Archive(path) as archive:
        run_id = archive.create_run(problem, config={}, seed=1).id
        for seq in range(50):
            with pytest.raises(Boom) if seq % 3 == 0 else nullcontext():
                with archive.transaction():
                    record_candidate(archive, run_id, seq)
                    if seq % 3 == 0:
                        raise Boom
        assert archive.count_programs(run_id) == 33
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    assert conn.execute("PRAGMA foreign_key_check").fetchall() == []
    conn.close()


def test_read_caches_never_outlive_a_rollback(archive: Archive, run_id: str) -> None:
    """Elites and programs read inside a rolled-back transaction are not served afterwards."""
    program = build_program(run_id, 1, score=1.0, cell=0)
    with pytest.raises(Boom):
        with archive.transaction():
            archive.add_program(program)
            archive.offer(run_id, 0, program)
            assert [e.program_id for e in archive.elites(run_id, 0)] == [program.id]
            assert archive.get_program(run_id, program.id) == program
            raise Boom
    assert archive.elites(run_id, 0) == []
    with pytest.raises(ArchiveError):
        archive.get_program(run_id, program.id)


def test_elite_cache_follows_offers_and_clears(archive: Archive, run_id: str) -> None:
    first = build_program(run_id, 1, score=1.0, cell=0)
    better = build_program(run_id, 2, score=2.0, cell=0)
    for program in (first, better):
        archive.add_program(program)
    archive.offer(run_id, 0, first)
    assert [e.score for e in archive.elites(run_id, 0)] == [1.0]
    archive.offer(run_id, 0, better)
    assert [e.score for e in archive.elites(run_id, 0)] == [2.0]
    archive.clear_island(run_id, 0)
    assert archive.elites(run_id, 0) == []
