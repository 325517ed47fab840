"""Schema migrations: a blank file, a reopened one, one written by an older or newer evoforge."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
import sqlite_utils

from evoforge.archive import Archive, ArchiveError, Status, migrations
from tests.archive.conftest import build_program, new_run, undo_added_column

EXPECTED_COLUMNS = {
    "runs": {
        "id": "TEXT", "problem": "TEXT", "problem_path": "TEXT", "config_json": "TEXT",
        "seed": "INTEGER", "status": "TEXT", "stop_reason": "TEXT", "created_at": "REAL",
        "updated_at": "REAL", "next_seq": "INTEGER", "evaluations": "INTEGER",
        "attempts": "INTEGER", "duplicates": "INTEGER", "elapsed_s": "REAL",
        "best_score": "REAL", "best_program_id": "TEXT", "tokens_in": "INTEGER",
        "tokens_out": "INTEGER", "cost_usd": "REAL", "objectives_json": "TEXT",
    },
    "programs": {
        "run_id": "TEXT", "id": "TEXT", "seq": "INTEGER", "source": "TEXT",
        "parent_id": "TEXT", "island": "INTEGER", "generation": "INTEGER", "status": "TEXT",
        "edit": "TEXT", "edit_kind": "TEXT", "score": "REAL", "cell": "INTEGER",
        "metrics_json": "TEXT", "objectives_json": "TEXT", "descriptors_json": "TEXT",
        "artifacts_json": "TEXT", "timings_json": "TEXT", "device_json": "TEXT",
        "inspirations_json": "TEXT", "model": "TEXT", "created_at": "REAL",
        "evaluations": "INTEGER", "edit_match": "TEXT", "prompt_variant": "TEXT",
        "ast_key": "TEXT", "source_files": "INTEGER", "transfer_from": "TEXT",
    },
    "elites": {
        "run_id": "TEXT", "island": "INTEGER", "cell": "INTEGER", "program_id": "TEXT",
        "score": "REAL", "seq": "INTEGER",
    },
    "island_state": {
        "run_id": "TEXT", "island": "INTEGER", "accepted_since_migration": "INTEGER",
        "evals_since_improvement": "INTEGER", "best_score": "REAL", "resets": "INTEGER",
        "migrations": "INTEGER", "evals_since_migration": "INTEGER",
    },
    "events": {
        "id": "INTEGER", "run_id": "TEXT", "seq": "INTEGER", "kind": "TEXT",
        "island": "INTEGER", "data_json": "TEXT", "created_at": "REAL",
    },
    "llm_calls": {
        "id": "INTEGER", "run_id": "TEXT", "seq": "INTEGER", "program_id": "TEXT",
        "model": "TEXT", "prompt_tokens": "INTEGER", "completion_tokens": "INTEGER",
        "cost_usd": "REAL", "latency_s": "REAL", "status": "TEXT", "error": "TEXT",
        "created_at": "REAL", "attempt": "INTEGER", "error_kind": "TEXT",
        "status_code": "INTEGER", "retry_after_s": "REAL", "waited_s": "REAL",
        "request_key": "BLOB",
    },
    "evaluations": {
        "run_id": "TEXT", "program_id": "TEXT", "seq": "INTEGER", "attempts": "INTEGER",
        "started_at": "REAL",
    },
    "run_status_counts": {"run_id": "TEXT", "status": "TEXT", "n": "INTEGER"},
    "run_call_counts": {"run_id": "TEXT", "status": "TEXT", "n": "INTEGER"},
    "run_best_points": {"run_id": "TEXT", "seq": "INTEGER", "score": "REAL"},
    "run_pareto": {"run_id": "TEXT", "program_id": "TEXT"},
    "memory_states": {
        "run_id": "TEXT", "refresh_every": "INTEGER", "epoch": "INTEGER", "state_json": "TEXT",
    },
    "prompt_variants": {
        "run_id": "TEXT", "id": "TEXT", "parent_id": "TEXT", "seq": "INTEGER", "origin": "TEXT",
        "templates_json": "TEXT", "note": "TEXT", "created_at": "REAL",
    },
    "file_blobs": {"blob_id": "INTEGER", "blob_hash": "TEXT", "blob_text": "TEXT"},
    "run_files": {"rf_run": "TEXT", "rf_ord": "INTEGER", "rf_path": "TEXT", "rf_blob": "INTEGER"},
    "program_files": {
        "pf_run": "TEXT", "pf_program": "TEXT", "pf_path": "TEXT", "pf_blob": "INTEGER",
    },
    "suites": {
        "id": "TEXT", "name": "TEXT", "budget": "INTEGER", "allocation": "TEXT",
        "config_json": "TEXT", "status": "TEXT", "stop_reason": "TEXT", "created_at": "REAL",
        "updated_at": "REAL",
    },
    "suite_tasks": {
        "suite_id": "TEXT", "ord": "INTEGER", "problem": "TEXT", "config_json": "TEXT",
        "run_id": "TEXT",
    },
    "suite_grants": {
        "suite_id": "TEXT", "seq": "INTEGER", "ord": "INTEGER", "evaluations": "INTEGER",
        "cap": "INTEGER", "spent": "INTEGER", "gain": "REAL", "why": "TEXT",
        "created_at": "REAL",
    },
}  # fmt: skip
EXPECTED_PKS = {
    "runs": ["id"],
    "programs": ["run_id", "id"],
    "elites": ["run_id", "island", "cell"],
    "island_state": ["run_id", "island"],
    "events": ["id"],
    "llm_calls": ["id"],
    "evaluations": ["run_id", "program_id"],
    "run_status_counts": ["run_id", "status"],
    "run_call_counts": ["run_id", "status"],
    "run_best_points": ["run_id", "seq"],
    "run_pareto": ["run_id", "program_id"],
    "memory_states": ["run_id", "refresh_every"],
    "prompt_variants": ["run_id", "id"],
    "file_blobs": ["blob_id"],
    "run_files": ["rf_run", "rf_ord"],
    "program_files": ["pf_run", "pf_program", "pf_path"],
    "suites": ["id"],
    "suite_tasks": ["suite_id", "ord"],
    "suite_grants": ["suite_id", "seq"],
}
EXPECTED_INDEXES = {
    "idx_programs_top": ("programs", ["run_id", "status", "score", "seq"]),
    "idx_programs_seq": ("programs", ["run_id", "seq"]),
    "idx_programs_id": ("programs", ["id"]),
    "idx_programs_parent": ("programs", ["run_id", "parent_id"]),
    "idx_events_run_kind": ("events", ["run_id", "kind"]),
    "idx_llm_calls_run_seq": ("llm_calls", ["run_id", "seq"]),
    "idx_programs_timeline": (
        "programs",
        ["run_id", "seq", "status", "island", "score", "created_at", "evaluations"],
    ),  # fmt: skip
    "idx_programs_variant": ("programs", ["run_id", "prompt_variant", "status", "score"]),
    "idx_programs_ast_key": ("programs", ["run_id", "ast_key"]),
    "idx_suite_tasks_run": ("suite_tasks", ["run_id"]),
}


def test_blank_file_gets_every_table(archive: Archive) -> None:
    assert set(archive.db.table_names()) == {*EXPECTED_COLUMNS, "_sqlite_migrations"}
    assert [m.name for m in migrations.applied(archive.db)] == [
        "m001_initial",
        "m002_llm_call_attempts",
        "m003_evaluations",
        "m004_mining_indexes",
        "m005_derived_at_scale",
        "m006_memory_states",
        "m007_search_quality",
        "m008_repository_files",
        "m009_spread_and_cost",
        "m010_suites",
        "m011_transfer",
        "m012_request_keys",
    ]
    assert migrations.pending(archive.db) == []


@pytest.mark.parametrize("table", sorted(EXPECTED_COLUMNS))
def test_table_is_strict_with_expected_columns(archive: Archive, table: str) -> None:
    columns = {c.name: c.type for c in archive.db[table].columns}
    assert columns == EXPECTED_COLUMNS[table]
    assert archive.db[table].pks == EXPECTED_PKS[table]
    strict = {row[1]: row[5] for row in archive.conn.execute("PRAGMA table_list")}
    assert strict[table] == 1


def test_indexes(archive: Archive) -> None:
    found = {
        name: (table, [c[2] for c in archive.conn.execute(f"PRAGMA index_info({name})")])
        for name, table in archive.conn.execute(
            "SELECT name, tbl_name FROM sqlite_master WHERE type = 'index' AND name LIKE 'idx_%'"
        )
    }
    found.pop("idx__sqlite_migrations_migration_set_name")
    assert found == EXPECTED_INDEXES


def test_connection_settings(archive: Archive) -> None:
    pragma = lambda name: archive.conn.execute(f"PRAGMA {name}").fetchone()[0]  # noqa: E731
    assert pragma("journal_mode") == "wal"
    assert pragma("foreign_keys") == 1
    assert pragma("synchronous") == 1  # NORMAL
    assert pragma("busy_timeout") > 0
    assert archive.conn.isolation_level is None


def test_strict_tables_refuse_wrong_types(archive: Archive, run_id: str) -> None:
    with pytest.raises(sqlite3.IntegrityError, match="cannot store TEXT value in INTEGER"):
        archive.conn.execute(
            "INSERT INTO elites (run_id, island, cell, program_id, score, seq) "
            "VALUES (?, 0, 'one', 'p', 1.0, 0)",
            (run_id,),
        )


def test_reopening_applies_nothing_and_keeps_data(tmp_path: Path, problem) -> None:
    path = tmp_path / "evoforge.db"
    with Archive(path) as archive:
        run_id = new_run(archive, problem)
        archive.add_program(build_program(run_id, 0))
        applied = migrations.applied(archive.db)
    with Archive(path) as archive:
        assert migrations.applied(archive.db) == applied  # same names, same applied_at
        assert archive.count_programs(run_id) == 1
        assert archive.run(run_id).problem == problem.name


def test_file_migrated_by_an_older_writer_opens(tmp_path: Path) -> None:
    """A file migrated outside Archive (rollback journal, no pragmas) with data in it."""
    path = tmp_path / "old.db"
    db = sqlite_utils.Database(path)
    migrations.apply(db)
    db.execute(
        "INSERT INTO runs (id, problem, problem_path, seed, created_at, updated_at) "
        "VALUES ('old', 'p', '/p', 1, 0, 0)"
    )
    assert db.journal_mode == "delete"
    db.close()
    with Archive(path) as archive:
        assert archive.db.journal_mode == "wal"
        run = archive.run("old")
        assert (run.config, run.status, run.attempts, run.cost_usd) == ({}, "running", 0, 0.0)


def test_archive_of_the_first_schema_upgrades(tmp_path: Path) -> None:
    """An archive written before m002 gains the attempt columns; its calls read as attempt 1."""
    path = tmp_path / "m001.db"
    db = sqlite_utils.Database(path)
    migrations.apply(db, stop_before="m002_llm_call_attempts")
    assert [m.name for m in migrations.applied(db)] == ["m001_initial"]
    db.execute(
        "INSERT INTO runs (id, problem, problem_path, seed, created_at, updated_at) "
        "VALUES ('old', 'p', '/p', 1, 0, 0)"
    )
    db.execute(
        "INSERT INTO llm_calls (run_id, seq, model, latency_s, status, error, created_at) "
        "VALUES ('old', 3, 'openai/gpt-4o-mini', 2.5, 'error', 'RateLimitError', 0)"
    )
    db.close()
    with Archive(path) as archive:
        assert migrations.pending(archive.db) == []
        columns = {c.name: c.type for c in archive.db["llm_calls"].columns}
        assert columns == EXPECTED_COLUMNS["llm_calls"]
        strict = {row[1]: row[5] for row in archive.conn.execute("PRAGMA table_list")}
        assert strict["llm_calls"] == 1
        (old,) = archive.llm_calls("old")
        assert (old.seq, old.status, old.error, old.attempt) == (3, "error", "RateLimitError", 1)
        assert (old.error_kind, old.status_code, old.retry_after_s, old.waited_s) == (None,) * 4
        archive.record_llm_call("old", seq=4, model="m", latency_s=0.1, status="retry",
                                attempt=1, error_kind="rate_limit", status_code=429,
                                retry_after_s=2.0, waited_s=2.0)  # fmt: skip
        retried = archive.llm_calls("old")[-1]
        assert (retried.status, retried.error_kind, retried.status_code) == (
            "retry", "rate_limit", 429,
        )  # fmt: skip
        assert (retried.retry_after_s, retried.waited_s) == (2.0, 2.0)


def test_archive_of_the_second_schema_gets_its_derived_data(tmp_path: Path, problem) -> None:
    """An archive written before m003: its counts and best-over-time points are backfilled;
    its runs keep no Pareto front (directions unknown) and are scanned instead."""
    path = tmp_path / "m002.db"
    with Archive(path) as archive:
        run_id = new_run(archive, problem)
        for seq, (score, time) in enumerate([(1.0, 1.0), (3.0, 2.0), (2.0, 0.5), (5.0, 9.0)]):
            objectives = {"score": score, "time": time}
            archive.add_program(build_program(run_id, seq, score=score, objectives=objectives))
        archive.add_program(build_program(run_id, 4, status=Status.RUNTIME_ERROR))
        expected = (archive.status_counts(run_id), archive.best_over_time(run_id))
        front = [p.id for p in archive.pareto_front(run_id, problem.objectives)]
    db = sqlite_utils.Database(path)
    for statement in (
        "DROP TRIGGER programs_count", "DROP TRIGGER programs_best", "DROP TABLE run_pareto",
        "DROP TABLE run_status_counts", "DROP TABLE run_best_points",
        "ALTER TABLE runs DROP COLUMN objectives_json",
        "DELETE FROM _sqlite_migrations WHERE name = 'm005_derived_at_scale'",
    ):  # fmt: skip
        db.execute(statement)
    db.close()
    with Archive(path) as archive:
        assert migrations.pending(archive.db) == []
        assert (archive.status_counts(run_id), archive.best_over_time(run_id)) == expected
        assert archive.count_programs(run_id) == 5
        assert [p.id for p in archive.pareto_front(run_id, problem.objectives)] == front
        assert len(front) == 3  # (1, 1) is beaten by (2, 0.5)
        archive.add_program(build_program(run_id, 5, score=9.0))
        assert archive.best_over_time(run_id)[-1] == (5, 9.0)


def test_archive_before_m009_counts_every_duplicate_and_its_calls(tmp_path: Path, problem) -> None:
    """A run recorded before m009 counted only exact copies in ``runs.duplicates`` and kept
    no call counts: both are brought up to its rows; its islands start counting evaluations
    since migration at 0; calls recorded afterwards are counted by the trigger."""
    from evoforge.archive import call_counts

    path = tmp_path / "m008.db"
    db = sqlite_utils.Database(path)
    migrations.apply(db, stop_before="m009_spread_and_cost")
    db.close()
    with Archive(path) as archive:  # opening applies m009: roll it back by hand below
        run_id = new_run(archive, problem)
        archive.add_program(build_program(run_id, 0, score=1.0))
        for seq in (1, 2, 3):
            archive.add_program(
                build_program(run_id, seq, status=Status.DUPLICATE, score=None, cell=None)
            )
        archive.bump_run(run_id, duplicates=1, evaluations=1)  # the old writer: copies only
        for seq, status in ((1, "ok"), (2, "ok"), (3, "retry"), (3, "ok")):
            archive.record_llm_call(run_id, seq=seq, model="m", latency_s=0.1, status=status)
        archive.set_island_state(run_id, 0, migrations=2)
    db = sqlite_utils.Database(path)
    for statement in (
        "DROP TRIGGER llm_calls_count", "DROP TABLE run_call_counts",
        "ALTER TABLE island_state DROP COLUMN evals_since_migration",
        "DELETE FROM _sqlite_migrations WHERE name = 'm009_spread_and_cost'",
    ):  # fmt: skip
        db.execute(statement)
    db.close()
    with Archive(path, read_only=True) as reader:  # not migrated: views stand in
        assert call_counts(reader, run_id).calls == {"ok": 3, "retry": 1}
        assert reader.island_state(run_id, 0).evals_since_migration == 0
    with Archive(path) as archive:
        assert migrations.pending(archive.db) == []
        assert archive.run(run_id).duplicates == 3
        state = archive.island_state(run_id, 0)
        assert (state.migrations, state.evals_since_migration) == (2, 0)
        counts = call_counts(archive, run_id)
        assert (counts.calls, counts.evaluations) == ({"ok": 3, "retry": 1}, 1)
        assert counts.attempts == {"duplicate": 3, "ok": 1}
        archive.record_llm_call(run_id, seq=4, model="m", latency_s=0.1, status="error")
        assert call_counts(archive, run_id).calls == {"ok": 3, "retry": 1, "error": 1}


def test_file_from_a_newer_evoforge_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "evoforge.db"
    Archive(path).close()
    with sqlite3.connect(path) as conn:
        conn.execute(
            "INSERT INTO _sqlite_migrations (migration_set, name, applied_at) "
            "VALUES ('evoforge', 'm999_future', '2030-01-01')"
        )
    conn.close()
    with pytest.raises(ArchiveError, match="newer evoforge.*m999_future.*upgrade"):
        Archive(path)


def test_missing_directory_is_a_clear_error(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere"
    with pytest.raises(ArchiveError, match=f"directory {missing} does not exist; create it"):
        Archive.open(missing / "evoforge.db")
    assert not missing.exists()


def test_a_file_that_is_not_sqlite_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "notes.db"
    path.write_text("these are my notes, not a database\n" * 100)
    with pytest.raises(ArchiveError, match="not a database; is it an evoforge archive"):
        Archive(path)


def test_the_light_list_of_migration_names_is_the_migration_set() -> None:
    """Opening an archive skips sqlite-utils when it has applied exactly these names
    (evoforge.archive._schema): a migration missing from the list would never be applied."""
    from evoforge.archive._migrations import NAMES
    from evoforge.archive._schema import MIGRATION_NAMES

    assert MIGRATION_NAMES == NAMES, "add the new migration's name to archive/_schema.py"


def test_calls_stored_before_request_keys_read_as_unkeyed(tmp_path: Path, problem) -> None:
    path = tmp_path / "m011.db"
    with Archive(path) as writer:
        run_id = new_run(writer, problem)
        writer.record_llm_call(run_id, seq=1, model="m", latency_s=0.1, status="ok")
    undo_added_column(path, "m012_request_keys", "llm_calls", "request_key")
    with Archive(path, read_only=True) as reader:
        assert reader.pending_migrations == ("m012_request_keys",)
        assert [c.request_key for c in reader.llm_calls(run_id)] == [None]
        assert reader.answered_request_keys(run_id, 10) == []
    with Archive(path) as writer:  # a writer adds the column; the old call stays unkeyed
        writer.record_llm_call(
            run_id, seq=2, model="m", latency_s=0.1, status="ok", request_key=b"k" * 16
        )
        assert writer.answered_request_keys(run_id, 10) == [b"k" * 16]
        assert writer.answered_request_keys(run_id, 0) == []
