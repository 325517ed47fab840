"""Repository programs stored by content: the changed files against the run's base."""

from __future__ import annotations

import sqlite3
from dataclasses import replace
from pathlib import Path

import sqlite_utils
from hypothesis import HealthCheck, given, settings, strategies as st

from evoforge.archive import Archive, Status, attempt_id, migrations
from evoforge.problems import make_bundle
from tests.archive.conftest import build_program, new_run

CORE = "def mean(xs):\n    return sum(xs) / len(xs)\n" * 40  # a file worth storing once
WINDOW = "# EVOLVE-BLOCK-START\nWIDTH = 3\n# EVOLVE-BLOCK-END\n"


def bundle(core: str = CORE, window: str = WINDOW) -> str:
    return make_bundle({"pkg/core.py": core, "pkg/window.py": window})


def count(archive: Archive, table: str) -> int:
    return archive.conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]


def stored_source(archive: Archive, run_id: str, program_id: str) -> str | None:
    row = archive.conn.execute(
        "SELECT source FROM main.programs WHERE run_id = ? AND id = ?", (run_id, program_id)
    ).fetchone()
    return row[0]


def test_a_child_stores_only_the_file_it_changed(archive: Archive, run_id: str) -> None:
    seed = build_program(run_id, 0, bundle())
    child_source = bundle(window=WINDOW.replace("3", "5"))
    child = build_program(run_id, 1, child_source, parent_id=seed.id)
    archive.add_program(seed)
    archive.add_program(child)
    assert stored_source(archive, run_id, child.id) is None  # not the whole bundle again
    changed = archive.conn.execute(
        "SELECT pf_program, pf_path FROM program_files WHERE pf_run = ?", (run_id,)
    ).fetchall()
    assert changed == [(child.id, "pkg/window.py")]
    assert count(archive, "file_blobs") == 3  # two base files, one changed window
    archive._program_cache.clear()
    assert archive.get_program(run_id, child.id).source == child_source
    assert archive.get_program(run_id, seed.id).source == seed.source
    assert [p.source for p in archive.programs(run_id)] == [seed.source, child_source]
    assert [p.source for p in archive.lineage(run_id, child.id)] == [seed.source, child_source]
    assert {p.source for p in archive.top(run_id, 2)} == {seed.source, child_source}


def test_identical_files_cost_nothing(archive: Archive, problem) -> None:
    """The same file text in another program or another run adds no blob."""
    sources = [bundle(window=WINDOW.replace("3", str(n))) for n in (4, 5, 4)]
    for run in (new_run(archive, problem), new_run(archive, problem)):
        archive.add_program(build_program(run, 0, bundle()))
        for seq, source in enumerate(sources[:2], start=1):
            archive.add_program(build_program(run, seq, source))
    assert count(archive, "file_blobs") == 4  # core, window 3, window 4, window 5
    size = sum(len(t) for (t,) in archive.conn.execute("SELECT blob_text FROM file_blobs"))
    assert size < 2 * len(CORE)


def test_other_programs_keep_their_text(archive: Archive, run_id: str) -> None:
    """A single-file program, a bundle of other files and a text that would not come back
    byte for byte are stored whole, and read back unchanged."""
    archive.add_program(build_program(run_id, 0, bundle()))
    plain = build_program(run_id, 1, "def main():\n    return 1\n")
    other = build_program(run_id, 2, make_bundle({"pkg/core.py": CORE}))
    crlf = build_program(run_id, 3, bundle().replace(" ===\n", " ===\r\n", 1))
    failed = replace(
        build_program(run_id, 4, status=Status.EDIT_ERROR), source=None, id=attempt_id(4)
    )
    for program in (plain, other, crlf, failed):
        archive.add_program(program)
        assert stored_source(archive, run_id, program.id) == program.source
        assert archive.get_program(run_id, program.id).source == program.source


def test_a_refused_program_leaves_no_files(archive: Archive, run_id: str) -> None:
    seed = build_program(run_id, 0, bundle())
    archive.add_program(seed)
    child = build_program(run_id, 0, bundle(window=WINDOW.replace("3", "7")))  # seq taken
    try:
        archive.add_program(child)
    except Exception:  # noqa: BLE001 - the refusal is tested elsewhere
        pass
    assert count(archive, "program_files") == 0
    assert count(archive, "file_blobs") == 2


_text = st.text(st.characters(codec="utf-8", exclude_characters="\r"), max_size=60).filter(
    lambda t: "EVOLVE-BLOCK" not in t and "# === FILE:" not in t
)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(base=st.lists(_text, min_size=1, max_size=3), data=st.data())
def test_every_bundle_reads_back_exactly(shared_archive: Archive, problem, base, data) -> None:
    run = new_run(shared_archive, problem)
    paths = [f"src/f{i}.txt" for i in range(len(base))]
    children = data.draw(st.lists(st.lists(_text, min_size=len(base), max_size=len(base))))
    sources = [make_bundle(dict(zip(paths, files, strict=True))) for files in [base, *children]]
    stored = []
    for seq, source in enumerate(dict.fromkeys(sources)):
        program = build_program(run, seq, source)
        shared_archive.add_program(program)
        stored.append(program)
    shared_archive._program_cache.clear()
    assert [p.source for p in shared_archive.programs(run)] == [p.source for p in stored]


def _write_old_archive(path: Path, run_id: str, problem) -> list[str]:
    """An archive of schema m007 (before files were stored by content) holding bundles."""
    with Archive(path) as archive:
        archive.create_run(problem, config={}, seed=0, run_id=run_id)
    db = sqlite_utils.Database(path)
    db.executescript(
        "ALTER TABLE programs DROP COLUMN source_files; DROP TABLE program_files; "
        "DROP TABLE run_files; DROP TABLE file_blobs; "
        "DELETE FROM _sqlite_migrations WHERE name = 'm008_repository_files';"
    )
    sources = [bundle(), bundle(window=WINDOW.replace("3", "4"))]
    for seq, source in enumerate(sources):
        program = build_program(run_id, seq, source)
        db.execute(
            "INSERT INTO programs (run_id, id, seq, source, island, generation, status, "
            "edit_kind, score, cell, created_at) VALUES (?, ?, ?, ?, 0, 0, 'ok', 'seed', ?, 0, 0)",
            (run_id, program.id, seq, source, float(seq)),
        )
    db.close()
    return sources


def test_an_archive_of_the_old_schema_opens_and_keeps_working(tmp_path: Path, problem) -> None:
    path = tmp_path / "m007.db"
    old = _write_old_archive(path, "old", problem)
    with Archive(path, read_only=True) as reader:  # not migrated: views stand in
        assert reader.pending_migrations == ("m008_repository_files",)
        assert [p.source for p in reader.programs("old")] == old
    with Archive(path) as archive:
        assert migrations.pending(archive.db) == []
        assert [p.source for p in archive.programs("old")] == old  # kept whole, as written
        new = bundle(window=WINDOW.replace("3", "9"))
        added = build_program("old", 2, new)
        archive.add_program(added)
        assert stored_source(archive, "old", added.id) is None
        archive._program_cache.clear()
        assert [p.source for p in archive.programs("old")] == [*old, new]
    conn = sqlite3.connect(path)
    (base,) = conn.execute("SELECT count(DISTINCT rf_run) FROM run_files").fetchone()
    assert base == 1  # the first bundle stored after the upgrade is the run's base
