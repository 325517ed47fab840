"""Read queries: a run's failed attempts and attempts in order, lineage tree, model usage and
call counts, run prefixes, read-only archives. What they mean is tested with
:mod:`evoforge.evolve.mining` (tests/evolve/test_mining_reads.py)."""

from __future__ import annotations

import dataclasses
import sqlite3

import pytest

from evoforge.archive import (
    Archive,
    ArchiveError,
    Status,
    call_counts,
    failure_rows,
    ids_by_seq,
    model_usage,
    timeline_rows,
)
from tests.archive.conftest import build_program, new_run


def test_failure_rows_count_equal_errors_together(archive, run_id, make_program):
    make_program()  # an ok one, never a failure
    for seq_error in ("overlap by 1e-3", "overlap by 1e-3", "overlap by 2e-3"):
        make_program(status=Status.INCORRECT, artifacts={"error": seq_error})
    make_program(status=Status.TIMEOUT, artifacts={"traceback": "Traceback\nTimeoutError"})
    rows = sorted(failure_rows(archive, run_id), key=lambda r: r.first_seq)
    assert [(r.status, dict(r.artifacts), r.count, r.first_seq, r.last_seq) for r in rows] == [
        ("incorrect", {"error": "overlap by 1e-3"}, 2, 1, 2),
        ("incorrect", {"error": "overlap by 2e-3"}, 1, 3, 3),
        ("timeout", {"traceback": "Traceback\nTimeoutError"}, 1, 4, 4),  # no error: its own row
    ]
    assert [r.status for r in failure_rows(archive, run_id, status="timeout")] == ["timeout"]
    ids = ids_by_seq(archive, run_id, [1, 4])
    assert {archive.get_program(run_id, ids[seq]).seq for seq in (1, 4)} == {1, 4}


def test_timeline_rows_are_the_attempts_in_seq_order(archive, run_id, make_program):
    make_program(score=1.0, island=1, created_at=10.0)
    make_program(status=Status.EDIT_ERROR, created_at=11.0)
    make_program(score=2.0, evaluations=3, created_at=12.0)
    assert list(timeline_rows(archive, run_id)) == [
        (0, "ok", 1, 1.0, 10.0, 1), (1, "edit_error", 0, None, 11.0, 1), (2, "ok", 0, 2.0, 12.0, 3),
    ]  # fmt: skip
    with pytest.raises(ArchiveError, match="no run 'nope'"):
        timeline_rows(archive, "nope")


def test_lineage_tree_has_ancestors_self_and_nearest_descendants(archive, run_id, make_program):
    seed = make_program()
    child = make_program(parent_id=seed.id, generation=1)
    sibling = make_program(parent_id=seed.id, generation=1)
    grand = [make_program(parent_id=child.id, generation=2) for _ in range(3)]
    great = make_program(parent_id=grand[0].id, generation=3)
    nodes = archive.lineage_tree(run_id, child.id)
    roles = {n.id: (n.role, n.depth) for n in nodes}
    assert roles == {
        seed.id: ("ancestor", -1),
        child.id: ("self", 0),
        **{g.id: ("descendant", 1) for g in grand},
        great.id: ("descendant", 2),
    }
    assert sibling.id not in roles
    assert [n.seq for n in nodes] == sorted(n.seq for n in nodes)
    capped = archive.lineage_tree(run_id, child.id, max_descendants=2)
    assert [n.id for n in capped if n.role == "descendant"] == [grand[0].id, grand[1].id]
    with pytest.raises(ArchiveError, match="no program"):
        archive.lineage_tree(run_id, "0" * 16)


def test_model_usage_per_model(archive, run_id):
    calls = [
        ("a", "ok", 10, 2, 0.01), ("a", "ok", 20, 3, None), ("a", "retry", None, None, None),
        ("b", "error", None, None, None),
    ]  # fmt: skip
    for seq, (model, status, tokens_in, tokens_out, cost) in enumerate(calls):
        archive.record_llm_call(
            run_id, seq=seq, model=model, latency_s=1.0 + seq, status=status,
            prompt_tokens=tokens_in, completion_tokens=tokens_out, cost_usd=cost,
        )  # fmt: skip
    a, b = model_usage(archive, run_id)
    assert (a.model, a.calls, a.retries, a.errors, a.tokens_in, a.tokens_out) == (
        "a", 2, 1, 0, 30, 5,
    )  # fmt: skip
    assert (a.cost_usd, a.unpriced, a.mean_latency_s) == (0.01, 1, 1.5)
    assert (b.calls, b.errors, b.cost_usd, b.mean_latency_s) == (0, 1, None, None)
    assert a.improvements is None and "improvements" not in a.to_dict()
    counted = model_usage(archive, run_id, improvements=True)
    assert [u.improvements for u in counted] == [0, 0]  # no call made a child here
    assert [dataclasses.replace(u, improvements=None) for u in counted] == [a, b]
    assert [c.seq for c in archive.llm_calls(run_id, seq=1)] == [1]
    counts = call_counts(archive, run_id)
    assert (counts.calls, counts.attempts, counts.evaluations) == (
        {"ok": 2, "retry": 1, "error": 1}, {}, 0,
    )  # fmt: skip


def test_find_run_by_prefix(archive, problem):
    one = archive.create_run(problem, config={}, seed=0, run_id="alpha-1")
    archive.create_run(problem, config={}, seed=0, run_id="alpha_2")
    archive.create_run(problem, config={}, seed=0, run_id="beta")
    assert archive.find_run("alpha-1") == one
    assert archive.find_run("alpha-").id == "alpha-1"  # "_" is no wildcard
    assert archive.find_run("be").id == "beta"
    with pytest.raises(ArchiveError, match="ambiguous: it matches alpha-1, alpha_2"):
        archive.find_run("alpha")
    with pytest.raises(ArchiveError, match="no run 'gamma'"):
        archive.find_run("gamma")


def test_read_only_archive_reads_while_a_writer_writes_and_cannot_write(tmp_path, problem):
    path = tmp_path / "a.db"
    with Archive(path) as writer:
        run_id = new_run(writer, problem)
        with Archive(path, read_only=True) as reader:
            writer.add_program(build_program(run_id, 0))
            assert reader.count_programs(run_id) == 1  # sees the committed write
            assert reader.pending_migrations == ()
            with pytest.raises(sqlite3.OperationalError, match="readonly|read-only"):
                reader.conn.execute("DELETE FROM programs")
        assert writer.count_programs(run_id) == 1


def test_read_only_archive_never_creates_a_file(tmp_path):
    with pytest.raises(ArchiveError, match="no such file"):
        Archive(tmp_path / "missing.db", read_only=True)
    assert not (tmp_path / "missing.db").exists()
    empty = tmp_path / "empty.db"
    sqlite3.connect(empty).close()
    with pytest.raises(ArchiveError, match="no evoforge tables"):
        Archive(empty, read_only=True)


def test_read_only_archive_of_an_older_schema_lists_what_a_writer_would_apply(tmp_path):
    import sqlite_utils

    from evoforge.archive import migrations

    path = tmp_path / "old.db"
    db = sqlite_utils.Database(path)
    migrations.apply(db, stop_before="m004_mining_indexes")
    db.close()
    with Archive(path, read_only=True) as reader:
        assert reader.pending_migrations == (
            "m004_mining_indexes", "m005_derived_at_scale", "m006_memory_states",
            "m007_search_quality", "m008_repository_files", "m009_spread_and_cost",
            "m010_suites", "m011_transfer", "m012_request_keys",
        )  # fmt: skip
        assert reader.runs() == []


def test_read_only_archive_of_an_older_schema_reads_programs_as_one_evaluation_each(
    tmp_path, problem
):
    path = tmp_path / "old.db"
    with Archive(path) as writer:
        run = writer.create_run(problem, config={}, seed=0).id
        for seq in range(3):
            writer.add_program(build_program(run, seq, score=float(seq)))
        expected = (
            writer.status_counts(run),
            writer.best_over_time(run),
            [p.id for p in writer.pareto_front(run, problem.objectives)],
        )
    # as an archive written before m004 and m005: no evaluations column, no timeline index,
    # no derived tables
    conn = sqlite3.connect(path)
    conn.executescript(
        "DROP INDEX idx_programs_timeline; ALTER TABLE programs DROP COLUMN evaluations; "
        "DROP TRIGGER programs_count; DROP TRIGGER programs_best; DROP TABLE run_pareto; "
        "DROP TABLE run_status_counts; DROP TABLE run_best_points; DROP TABLE memory_states; "
        "ALTER TABLE runs DROP COLUMN objectives_json; DROP INDEX idx_programs_variant; "
        "DROP INDEX idx_programs_ast_key; ALTER TABLE programs DROP COLUMN ast_key; "
        "ALTER TABLE programs DROP COLUMN edit_match; "
        "ALTER TABLE programs DROP COLUMN prompt_variant; DROP TABLE prompt_variants; "
        "ALTER TABLE programs DROP COLUMN source_files; DROP TABLE program_files; "
        "DROP TABLE run_files; DROP TABLE file_blobs; "
        "DELETE FROM _sqlite_migrations WHERE name IN ('m004_mining_indexes', "
        "'m005_derived_at_scale', 'm006_memory_states', 'm007_search_quality', "
        "'m008_repository_files');"
    )
    conn.close()
    before = path.read_bytes()
    with Archive(path, read_only=True) as reader:
        assert reader.pending_migrations == (
            "m004_mining_indexes", "m005_derived_at_scale", "m006_memory_states",
            "m007_search_quality", "m008_repository_files",
        )  # fmt: skip
        assert reader.memory_state(run, 50) is None
        assert [row[-1] for row in timeline_rows(reader, run)] == [1, 1, 1]  # evaluations
        assert [p.evaluations for p in reader.top(run, 3)] == [1, 1, 1]
        assert {(p.edit_match, p.prompt_variant) for p in reader.top(run, 3)} == {(None, None)}
        assert reader.count_programs(run) == 3 and reader.runs()[0].id == run
        front = [p.id for p in reader.pareto_front(run, problem.objectives)]
        assert (reader.status_counts(run), reader.best_over_time(run), front) == expected
    assert path.read_bytes() == before  # the reader's view lived in its temp database
