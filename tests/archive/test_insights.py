"""Mining queries: timeline, failure groups, lineage tree, call usage, run prefixes, read-only."""

from __future__ import annotations

import sqlite3

import pytest

from evoforge.archive import (
    Archive,
    ArchiveError,
    Status,
    call_usage,
    failure_message,
    signature,
)
from evoforge.archive._timeline import bucket_width
from tests.archive.conftest import build_program, new_run


def test_timeline_counts_evaluations_and_keeps_successive_bests(archive, run_id, make_program):
    specs = [  # (status, score, island)
        (Status.OK, 1.0, 0),
        (Status.EDIT_ERROR, None, 1),  # costs no evaluation
        (Status.OK, 0.5, 1),  # island 1's first best, not the run's
        (Status.RUNTIME_ERROR, None, 0),
        (Status.OK, 2.0, 1),  # the run's and island 1's
        (Status.OK, 2.0, 0),  # ties the run's best: not an improvement of the run
        (Status.SYNTAX_ERROR, None, 0),
        (Status.OK, 3.0, 0),
    ]
    for seq, (status, score, island) in enumerate(specs):
        make_program(status=status, score=score, island=island, created_at=100.0 + 7 * seq)
    timeline = archive.timeline(run_id)
    assert [(s.evaluation, s.seq, s.score) for s in timeline.best] == [
        (1, 0, 1.0), (4, 4, 2.0), (6, 7, 3.0),
    ]  # fmt: skip
    assert [(s.seq, s.score) for s in timeline.islands[0]] == [(0, 1.0), (5, 2.0), (7, 3.0)]
    assert [(s.seq, s.score) for s in timeline.islands[1]] == [(2, 0.5), (4, 2.0)]
    ids = dict(archive.conn.execute("SELECT seq, id FROM programs WHERE run_id = ?", (run_id,)))
    assert all(s.program_id == ids[s.seq] for s in timeline.best)
    assert timeline.best_at(3).score == 1.0 and timeline.best_at(0) is None
    # 49 s of attempts: 5 s buckets; statuses and evaluations per bucket add up
    assert timeline.bucket_s == 5.0
    assert sum(sum(b.statuses.values()) for b in timeline.buckets) == len(specs)
    assert sum(b.evaluations for b in timeline.buckets) == 6
    assert (timeline.first_at, timeline.last_at) == (100.0, 149.0)


def test_timeline_counts_knob_tuning_trials_as_evaluations(archive, run_id, make_program):
    make_program(score=1.0)
    make_program(score=2.0, evaluations=9)  # 8 tuning trials of the budget, then stored
    make_program(score=3.0)
    timeline = archive.timeline(run_id)
    assert [(s.evaluation, s.score) for s in timeline.best] == [(1, 1.0), (10, 2.0), (11, 3.0)]
    assert sum(b.evaluations for b in timeline.buckets) == 11
    assert archive.get_program(run_id, timeline.best[1].program_id).evaluations == 9


def test_timeline_of_an_empty_or_missing_run(archive, run_id):
    empty = archive.timeline(run_id)
    assert empty.best == () and empty.buckets == () and empty.first_at is None
    with pytest.raises(ArchiveError, match="no run 'nope'"):
        archive.timeline("nope")


@pytest.mark.parametrize(
    ("span", "width"),
    [(0, 5), (599, 5), (600, 10), (3600, 60), (86400, 900), (864000, 10800), (8640000, 86400)],
)
def test_bucket_width_keeps_at_most_120_buckets(span, width):
    assert bucket_width(span) == width
    assert span / width < 120 or width >= 86400


def test_failure_groups_mask_numbers_and_count(archive, run_id, make_program):
    errors = [
        (Status.INCORRECT, "circles 3 and 7 overlap by 1.2e-03"),
        (Status.INCORRECT, "circles 5 and 9 overlap by 4.0e-04"),
        (Status.INCORRECT, "circle 2 sticks out of the left side of the square by 1e-2"),
        (Status.RUNTIME_ERROR, "IndexError: index 30 is out of bounds for axis 0 with size 26"),
        (Status.TIMEOUT, None),  # no error artifact: the traceback's last line
    ]
    make_program()  # an ok one, never a failure
    for status, error in errors:
        traceback = "Traceback\n  x\nTimeoutError: 5 s"
        artifacts = {"error": error} if error else {"traceback": traceback}
        make_program(status=status, artifacts=artifacts)
    groups = archive.failure_groups(run_id)
    found = {(g.status, g.signature): g.count for g in groups}
    assert found == {
        ("incorrect", "circles # and # overlap by #"): 2,
        ("incorrect", "circle # sticks out of the left side of the square by #"): 1,
        ("runtime_error", "IndexError: index # is out of bounds for axis # with size #"): 1,
        ("timeout", "TimeoutError: # s"): 1,
    }
    first = groups[0]
    assert (first.count, first.example, first.first_seq, first.last_seq) == (
        2, "circles 5 and 9 overlap by 4.0e-04", 1, 2,
    )  # fmt: skip
    assert archive.get_program(run_id, first.example_id).seq == 2
    only = archive.failure_groups(run_id, status="runtime_error")
    assert [g.status for g in only] == ["runtime_error"]
    with pytest.raises(ValueError, match="status 'ok' is not one"):
        archive.failure_groups(run_id, status="ok")


def test_failure_message_and_signature():
    assert failure_message({"error": "  a\n  b "}) == "a b"
    assert failure_message({"stderr": "x\nlast line"}) == "last line"
    assert failure_message({}) == "(no message)"
    assert signature("x1 at 0x1f: -3.5e+10 and v2") == "x1 at #: # and v2"


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


def test_call_usage_per_model(archive, run_id):
    calls = [
        ("a", "ok", 10, 2, 0.01), ("a", "ok", 20, 3, None), ("a", "retry", None, None, None),
        ("b", "error", None, None, None),
    ]  # fmt: skip
    for seq, (model, status, tokens_in, tokens_out, cost) in enumerate(calls):
        archive.record_llm_call(
            run_id, seq=seq, model=model, latency_s=1.0 + seq, status=status,
            prompt_tokens=tokens_in, completion_tokens=tokens_out, cost_usd=cost,
        )  # fmt: skip
    a, b = call_usage(archive, run_id)
    assert (a.model, a.calls, a.retries, a.errors, a.tokens_in, a.tokens_out) == (
        "a", 2, 1, 0, 30, 5,
    )  # fmt: skip
    assert (a.cost_usd, a.unpriced, a.mean_latency_s) == (0.01, 1, 1.5)
    assert (b.calls, b.errors, b.cost_usd, b.mean_latency_s) == (0, 1, None, None)
    assert [c.seq for c in archive.llm_calls(run_id, seq=1)] == [1]


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
            "m010_suites", "m011_transfer",
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
        assert [s.evaluation for s in reader.timeline(run).best] == [1, 2, 3]
        assert [p.evaluations for p in reader.top(run, 3)] == [1, 1, 1]
        assert {(p.edit_match, p.prompt_variant) for p in reader.top(run, 3)} == {(None, None)}
        assert reader.count_programs(run) == 3 and reader.runs()[0].id == run
        front = [p.id for p in reader.pareto_front(run, problem.objectives)]
        assert (reader.status_counts(run), reader.best_over_time(run), front) == expected
    assert path.read_bytes() == before  # the reader's view lived in its temp database
