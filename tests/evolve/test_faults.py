"""Faults around the archive: a second controller, a write that fails, a full disk.

Each ends with one clear message, never a traceback, and an archive that is whole and can be
resumed; a reader (``evoforge status``) keeps working throughout.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sqlite3
import subprocess
import sys

import pytest

from evoforge.archive import Archive, ArchiveWriteError
from evoforge.evolve import RunConfig, resume_run, start_run
from tests.conftest import ROOT, TRIVIAL_SEED, TRIVIAL_SPEC
from tests.evolve.test_cli_process import evoforge, wait_for_programs

pytestmark = pytest.mark.slow


@pytest.fixture
def tiny(make_problem):
    return make_problem(TRIVIAL_SPEC, TRIVIAL_SEED)


def whole(db) -> tuple[object, list[int]]:
    """The latest run and its programs' seqs, after checking the file's integrity."""
    with Archive(db) as archive:
        assert archive.conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        run = archive.latest_run()
        seqs = [p.seq for p in archive.programs(run.id)]
    assert len(seqs) == len(set(seqs))
    return run, seqs


def test_a_second_controller_is_refused_at_once_and_the_first_runs_on(tiny, tmp_path):
    db = tmp_path / "w.db"
    first = evoforge("run", tiny, "--budget", 100_000, "--workers", 1, "--db", db, "-q")
    try:
        wait_for_programs(db, 3, first)
        with Archive(db) as archive:
            run = archive.latest_run()
            events_before = len(archive.events(run.id))
        second = evoforge("resume", run.id, "--db", db, "-q")
        out, err = second.communicate(timeout=300)
        assert second.returncode == 1, (out, err)
        assert "Traceback" not in err, err
        (line,) = err.strip().splitlines()
        assert line.startswith(f"Error: run {run.id!r}")
        assert f"is being run by another controller (pid {first.pid}" in line
        assert "reserve_seq" not in line
        with Archive(db) as archive:  # the loser wrote nothing, marked nothing
            assert archive.run(run.id).status == "running"
            assert len(archive.events(run.id)) >= events_before
            assert "run_resume" not in {e.kind for e in archive.events(run.id)}
        status = subprocess.run(
            [sys.executable, "-m", "evoforge", "status", run.id, "--db", str(db), "--json"],
            capture_output=True,
            text=True,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            timeout=300,
        )
        assert status.returncode == 0, status.stderr  # readers are never locked out
        assert first.poll() is None  # undisturbed
        first.send_signal(signal.SIGINT)
        first.communicate(timeout=300)
        assert first.returncode == 0
    finally:
        if first.poll() is None:
            first.kill()
            first.communicate()
    run, _ = whole(db)
    assert run.status == "stopped"
    with Archive(db) as archive:
        assert "run_fail" not in {e.kind for e in archive.events(run.id)}


def test_a_failing_write_stops_the_run_with_one_clear_error_and_it_resumes(
    tiny, tmp_path, monkeypatch
):
    """SQLite itself refuses to grow the file (max_page_count): a real SQLITE_FULL."""
    db = tmp_path / "f.db"
    original = Archive.__init__

    def small_disk(self, path):
        original(self, path)
        pages = self.conn.execute("PRAGMA page_count").fetchone()[0]
        self.conn.execute(f"PRAGMA max_page_count = {pages + 6}")

    monkeypatch.setattr(Archive, "__init__", small_disk)
    config = RunConfig(problem=str(tiny), budget=150, workers=1, seed=4)
    with pytest.raises(ArchiveWriteError) as failure:
        asyncio.run(start_run(config, db))
    monkeypatch.setattr(Archive, "__init__", original)
    message = str(failure.value)
    assert "database or disk is full" in message and "Nothing already committed is lost" in message
    assert "evoforge resume" in message and "\n" not in message
    run, seqs = whole(db)
    assert 0 < len(seqs) < 150
    _, report = asyncio.run(resume_run(run.id, db))
    assert report.status == "finished"
    run, seqs = whole(db)
    assert run.evaluations == 150 and run.status == "finished"


def test_a_failing_memory_checkpoint_stops_the_run_like_any_failing_write(
    tiny, tmp_path, monkeypatch
):
    """The prompt memory's checkpoint is written from the prompt path, not from a commit."""
    db = tmp_path / "m.db"

    def full(self, *args):
        raise self._write_error(sqlite3.OperationalError("database or disk is full"))

    monkeypatch.setattr(Archive, "save_memory_state", full)
    config = RunConfig(problem=str(tiny), budget=40, workers=1, seed=4, memory_every=5)
    with pytest.raises(ArchiveWriteError) as failure:
        asyncio.run(start_run(config, db))
    monkeypatch.undo()
    message = str(failure.value)
    assert "database or disk is full" in message and "evoforge resume" in message
    run, seqs = whole(db)
    assert run.status == "failed" and seqs and 5 <= run.evaluations < 40
    _, report = asyncio.run(resume_run(run.id, db))
    assert report.status == "finished"
    with Archive(db) as archive:
        assert archive.memory_state(run.id, 5) is not None
    assert whole(db)[0].evaluations == 40


def _mount_tmpfs(where, size: str) -> str | None:
    if os.geteuid() != 0:
        return "mounting a small tmpfs needs root"
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)],
        capture_output=True,
        text=True,
    )
    return None if done.returncode == 0 else f"cannot mount a tmpfs here: {done.stderr.strip()}"


def test_a_full_disk_stops_the_cli_in_one_line_and_the_run_resumes(tiny, tmp_path):
    small = tmp_path / "small"
    small.mkdir()
    why = _mount_tmpfs(small, "640k")
    if why:
        pytest.skip(why)
    try:
        db = small / "full.db"
        proc = evoforge("run", tiny, "--budget", 200, "--workers", 1, "--db", db, "-q")
        out, err = proc.communicate(timeout=600)
        assert proc.returncode == 1, (out, err)
        assert "Traceback" not in err, err
        last = err.strip().splitlines()[-1]
        assert last.startswith("Error: run ") and "database or disk is full" in last
        assert "free some space" in last and "evoforge resume" in last
        run, seqs = whole(db)
        assert 0 < run.evaluations < 200
        subprocess.run(["mount", "-o", "remount,size=64m", str(small)], check=True)
        again = evoforge("resume", run.id, "--db", db, "-q")
        out, err = again.communicate(timeout=600)
        assert again.returncode == 0, err
        run, seqs = whole(db)
        assert run.status == "finished" and run.evaluations == 200
    finally:
        subprocess.run(["umount", "-l", str(small)], capture_output=True)


def test_a_locked_archive_file_is_named_in_the_error(tmp_path):
    """A write that waits on another process's write lock past the busy timeout."""
    db = tmp_path / "l.db"
    with Archive(db) as archive:
        archive.conn.execute("PRAGMA busy_timeout = 50")
        other = sqlite3.connect(db)
        other.execute("BEGIN IMMEDIATE")
        try:
            with pytest.raises(ArchiveWriteError, match="database is locked.*another process"):
                with archive.transaction():
                    pass
        finally:
            other.rollback()
            other.close()
