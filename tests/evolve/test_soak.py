"""kill -9 soak: 20 kills at random moments, a resume after each, and nothing committed lost.

The real command in real processes (controller, proposal workers, fork servers). Kills land
anywhere: during start-up, the seed, model calls, evaluations, commits. After each kill the
archive is read as the next session will find it; at the end every program committed before
any kill is still there, unchanged, the file passes SQLite's integrity check, and the run
spent exactly its budget.
"""

from __future__ import annotations

import random
import signal
import sqlite3
import time

import pytest

from evoforge.archive import Archive
from tests.conftest import TRIVIAL_SEED, TRIVIAL_SPEC
from tests.evolve.test_cli_process import evoforge

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

KILLS = 20
BUDGET = 1_000_000  # never reached while killing; the last resume sets the real one


def committed(db) -> dict[int, tuple[str, str]]:
    """``seq -> (program id, status)`` of every committed program (read-only, as a reader)."""
    if not db.exists():
        return {}
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
            return {s: (i, st) for s, i, st in conn.execute("SELECT seq, id, status FROM programs")}
    except sqlite3.OperationalError:  # killed before the schema was committed
        return {}


def test_twenty_kills_at_random_moments_lose_nothing(make_problem, tmp_path):
    problem = make_problem(TRIVIAL_SPEC, TRIVIAL_SEED)
    db = tmp_path / "soak.db"
    rng = random.Random(20261123)
    seen: dict[int, tuple[str, str]] = {}
    kills = 0
    while kills < KILLS:
        run_exists = bool(committed(db)) or (db.exists() and _has_run(db))
        args = ("resume", "--db", db, "-q") if run_exists else (
            "run", problem, "--budget", BUDGET, "--workers", 2, "--seed", 9, "--db", db, "-q"
        )  # fmt: skip
        proc = evoforge(*args)
        time.sleep(rng.uniform(0.5, 6.0))
        assert proc.poll() is None, proc.communicate()  # still running when killed
        proc.send_signal(signal.SIGKILL)
        proc.communicate()
        kills += 1
        now = committed(db)
        missing = {s: v for s, v in seen.items() if now.get(s) != v}
        assert not missing, f"after kill {kills}: committed programs changed or vanished"
        seen = now
    with Archive(db) as archive:
        budget = archive.latest_run().evaluations + 60
    final = evoforge("resume", "--db", db, "--budget", budget, "-q")
    out, err = final.communicate(timeout=600)
    assert final.returncode == 0, err
    now = committed(db)
    assert all(now.get(s) == v for s, v in seen.items())
    with Archive(db) as archive:
        assert archive.conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        run = archive.latest_run()
        programs = list(archive.programs(run.id))
        unclean = archive.events(run.id, "unclean_stop")
    assert run.status == "finished" and run.evaluations == budget
    assert sum(p.evaluations for p in programs if p.status.evaluated) == budget  # trials too
    assert len({p.seq for p in programs}) == len(programs)
    assert len(unclean) <= KILLS and unclean  # resumes saw sessions that never ended


def _has_run(db) -> bool:
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
            return conn.execute("SELECT count(*) FROM runs").fetchone()[0] > 0
    except sqlite3.OperationalError:
        return False
