"""The real command in real processes: kill -9 and resume, SIGINT, exit codes."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time

import pytest

from evoforge.archive import Archive
from tests.conftest import ROOT, TRIVIAL_SEED, TRIVIAL_SPEC

pytestmark = pytest.mark.slow


def evoforge(*args, **kwargs) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen(
        [sys.executable, "-m", "evoforge", *map(str, args)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        **kwargs,
    )


def wait_for_programs(db, count, proc, timeout=120.0) -> None:
    """Wait until the running process has committed ``count`` programs."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.communicate()
        if db.exists():
            try:
                with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
                    if conn.execute("select count(*) from programs").fetchone()[0] >= count:
                        return
            except sqlite3.OperationalError:
                pass  # schema not created yet
        time.sleep(0.05)
    raise AssertionError(f"fewer than {count} programs after {timeout} s")


def programs(db):
    with Archive(db) as archive:
        run = archive.latest_run()
        return run, [(p.seq, p.id) for p in archive.programs(run.id)]


@pytest.fixture
def tiny(make_problem):
    return make_problem(TRIVIAL_SPEC, TRIVIAL_SEED)


def test_kill_9_then_resume_loses_nothing_and_spends_the_budget_exactly(tiny, tmp_path):
    db, budget = tmp_path / "k.db", 250
    proc = evoforge("run", tiny, "--budget", budget, "--workers", 1, "--seed", 4, "--db", db, "-q")
    wait_for_programs(db, 40, proc)
    proc.kill()  # SIGKILL: no chance to clean up
    proc.wait()
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    run, before = programs(db)
    assert run.status == "running" and run.evaluations < budget

    resumed = evoforge("resume", run.id, "--db", db, "-q")
    out, err = resumed.communicate(timeout=300)
    assert resumed.returncode == 0, err
    assert "finished" in out
    run, after = programs(db)
    assert set(before) <= set(after)  # every committed program survived
    assert run.evaluations == budget
    with Archive(db) as archive:
        # each program's evaluations: its tuning trials count (the constants its edit moved)
        spent = sum(p.evaluations for p in archive.programs(run.id) if p.status.evaluated)
        assert spent == budget
        kinds = [e.kind for e in archive.events(run.id)]
    assert "unclean_stop" in kinds and kinds[-1] == "run_finish"

    # Resumed after a kill, the run is the same as one never interrupted.
    whole = tmp_path / "whole.db"
    straight = evoforge(
        "run", tiny, "--budget", budget, "--workers", 1, "--seed", 4, "--db", whole, "-q"
    )
    straight.communicate(timeout=300)
    assert programs(whole)[1] == after


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_signal_stops_cleanly_with_exit_0_and_resume_finishes(tiny, tmp_path, signum):
    db = tmp_path / "i.db"
    proc = evoforge("run", tiny, "--budget", 100_000, "--workers", 2, "--db", db, "-q")
    wait_for_programs(db, 20, proc)
    proc.send_signal(signum)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert f"stopped by {signum.name}" in out and "evoforge resume" in out
    run, _ = programs(db)
    assert run.status == "stopped"
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"

    resumed = evoforge("resume", "--db", db, "--budget", run.evaluations + 10, "-q")
    out, err = resumed.communicate(timeout=120)
    assert resumed.returncode == 0, err
    assert programs(db)[0].evaluations == run.evaluations + 10


def test_bad_problem_is_one_clear_line_and_exit_1(tmp_path):
    proc = evoforge("run", "no_such_problem", "--db", tmp_path / "x.db", "-q")
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 1
    assert "Error: no problem 'no_such_problem'" in err and "Traceback" not in err


def wait_for_grants(db, count, proc, timeout=180.0) -> None:
    """Wait until the running suite has recorded ``count`` allocation decisions."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.communicate()
        if db.exists():
            try:
                with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
                    if conn.execute("select count(*) from suite_grants").fetchone()[0] >= count:
                        return
            except sqlite3.OperationalError:
                pass  # schema not created yet
        time.sleep(0.05)
    raise AssertionError(f"fewer than {count} grants after {timeout} s")


def test_a_suite_killed_with_kill_9_resumes_with_its_allocation_and_budget_intact(
    make_problem, tmp_path
):
    folder = tmp_path / "suite"
    folder.mkdir()
    for name in ("ta", "tb", "tc"):
        spec = TRIVIAL_SPEC.replace('name = "tiny"', f'name = "{name}"')
        make_problem(spec, TRIVIAL_SEED, name=f"suite/{name}")
    config = tmp_path / "suite.toml"
    config.write_text('[suite]\nallocation = "bandit"\nfloor = 5\ngrant = 5\n')
    db, budget = tmp_path / "s.db", 70
    proc = evoforge(
        "run", folder, "--budget", budget, "--workers", 1, "--seed", 2, "--config", config,
        "--db", db, "-q",
    )  # fmt: skip
    wait_for_grants(db, 6, proc)  # the floors and some of the bandit's grants
    proc.kill()  # SIGKILL: no chance to clean up
    proc.wait()
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    with Archive(db) as archive:
        suite = archive.suites()[0]
        assert suite.status == "running"
        before = archive.grants(suite.id)
        programs_before = {r.id: [p.id for p in archive.programs(r.id)] for r in archive.runs()}
    assert sum(map(len, programs_before.values())) < budget

    resumed = evoforge("resume", "--db", db, "-q")  # the latest run is a task: its suite resumes
    out, err = resumed.communicate(timeout=600)
    assert resumed.returncode == 0, err
    assert f"Suite {suite.id} finished" in out
    with Archive(db) as archive:
        assert archive.suite(suite.id).status == "finished"
        after = archive.grants(suite.id)
        assert after[: len(before)] == before  # the allocation's history is intact
        assert sum(g.evaluations for g in after) == budget
        runs = {r.id: r for r in archive.runs()}
        assert len(runs) == 3 and sum(r.evaluations for r in runs.values()) == budget
        for task in archive.suite_tasks(suite.id):
            run = runs[task.run_id]
            cap = sum(g.evaluations for g in after if g.ord == task.ord)
            assert run.status == "finished" and run.evaluations == cap == run.config["budget"]
            ids = [p.id for p in archive.programs(run.id)]
            assert ids[: len(programs_before.get(run.id, []))] == programs_before.get(run.id, [])
            kinds = [e.kind for e in archive.events(run.id)]
            assert kinds[-1] == "run_finish"
