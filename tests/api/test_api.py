"""The Python API: run, resume, stop and cancel from anywhere, open and mine an archive."""

from __future__ import annotations

import asyncio
import inspect
import os
import signal
import sqlite3
import threading

import pytest

import evoforge
from evoforge import ArchiveError, ConfigError
from evoforge.archive import Archive
from evoforge.evolve import mining
from tests.conftest import TRIVIAL_SEED, TRIVIAL_SPEC


@pytest.fixture
def tiny(make_problem):
    return make_problem(TRIVIAL_SPEC, TRIVIAL_SEED)


def statuses(db) -> list[tuple[str, str]]:
    with sqlite3.connect(db) as conn:
        return conn.execute("SELECT status, stop_reason FROM runs").fetchall()


def test_run_to_a_budget_then_resume_it(tiny, tmp_path):
    db = tmp_path / "api.db"
    result = evoforge.run(tiny, budget=12, workers=2, seed=5, db=db)
    assert (result.status, result.evaluations, result.db) == ("finished", 12, db)
    assert result.best is not None and result.best.score >= result.seed.score
    again = evoforge.resume(result.run_id, db=db, budget=20)
    assert (again.run_id, again.status, again.evaluations) == (result.run_id, "finished", 20)


def test_settings_are_validated_before_anything_is_written(tiny, tmp_path):
    db = tmp_path / "none.db"
    with pytest.raises(ConfigError, match=r"^evoforge.run\(\): workers = 2.5: expected a whole"):
        evoforge.run(tiny, db=db, workers=2.5)
    with pytest.raises(ConfigError, match=r"unknown setting budgett"):
        evoforge.run(tiny, db=db, budgett=3)
    assert not db.exists()


def test_a_run_from_a_worker_thread_leaves_the_hosts_signal_handlers(tiny, tmp_path):
    def host_handler(signum, frame):  # the host program's own
        raise AssertionError("never called")

    previous = signal.signal(signal.SIGTERM, host_handler)
    # Whatever SIGINT's handler is here (ignored under nohup or in a background job): the run
    # must leave it as it found it.
    sigint_before = signal.getsignal(signal.SIGINT)
    try:
        results = []
        worker = threading.Thread(
            target=lambda: results.append(
                evoforge.run(tiny, budget=6, workers=1, db=tmp_path / "t.db")
            )
        )
        worker.start()
        worker.join(120)
        assert results and results[0].status == "finished"
        assert signal.getsignal(signal.SIGTERM) is host_handler
        assert signal.getsignal(signal.SIGINT) == sigint_before
    finally:
        signal.signal(signal.SIGTERM, previous)


def test_sync_run_inside_a_running_event_loop_works_like_a_notebook_cell(tiny, tmp_path):
    async def cell():
        return evoforge.run(tiny, budget=5, workers=1, db=tmp_path / "nb.db")

    assert asyncio.run(cell()).status == "finished"


def test_a_stop_event_ends_the_run_cleanly_and_it_can_be_resumed(tiny, tmp_path):
    db, stop = tmp_path / "stop.db", threading.Event()

    class StopAfterFive:
        def update(self, snapshot):
            if snapshot.evaluations >= 5:
                stop.set()

    result = evoforge.run(tiny, budget=500, workers=1, db=db, progress=StopAfterFive(), stop=stop)
    assert result.status == "stopped" and "stop event" in result.reason
    assert 5 <= result.evaluations < 500
    assert evoforge.resume(result.run_id, db=db, budget=result.evaluations + 3).status == "finished"


def test_cancelling_the_task_records_a_stop_not_a_running_row(tiny, tmp_path):
    db = tmp_path / "cancel.db"

    async def main():
        started = asyncio.Event()

        class Started:
            def update(self, snapshot):
                if snapshot.evaluations >= 3:
                    started.set()

        task = asyncio.create_task(
            evoforge.run_async(tiny, budget=10_000, workers=1, db=db, progress=Started())
        )
        await asyncio.wait_for(started.wait(), 60)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    [(status, reason)] = statuses(db)
    assert (status, reason) == ("stopped", "cancelled")
    with Archive(db) as archive:
        run = archive.latest_run()
        assert [e.kind for e in archive.events(run.id)][-1] == "run_stop"
    assert evoforge.resume(db=db, budget=run.evaluations + 2).status == "finished"


def test_a_session_that_fails_to_start_records_the_failure(tiny, tmp_path, monkeypatch):
    from evoforge.evaluators import PythonEvaluator

    async def broken_start(self):
        raise OSError("no fork servers today")

    monkeypatch.setattr(PythonEvaluator, "start", broken_start)
    with pytest.raises(OSError, match="no fork servers today"):
        evoforge.run(tiny, budget=5, db=tmp_path / "f.db")
    [(status, reason)] = statuses(tmp_path / "f.db")
    assert status == "failed" and "no fork servers today" in reason


def test_open_archive_reads_and_never_creates(tiny, tmp_path):
    with pytest.raises(ArchiveError, match="no archive at"):
        evoforge.open_archive(tmp_path / "missing.db")
    assert not (tmp_path / "missing.db").exists()
    result = evoforge.run(tiny, budget=8, workers=1, db=tmp_path / "m.db")
    with evoforge.open_archive(tmp_path / "m.db") as archive:
        assert [r.id for r in archive.runs()] == [result.run_id]
    with evoforge.open_archive(tmp_path / "m.db", read_only=True) as archive:
        assert archive.read_only and mining.timeline(archive, result.run_id).best
        with pytest.raises(sqlite3.OperationalError, match="readonly"):
            archive.conn.execute("DELETE FROM runs")


def test_to_frame_spreads_mappings_over_columns(tiny, tmp_path):
    pytest.importorskip("pandas")
    result = evoforge.run(tiny, budget=10, workers=1, db=tmp_path / "f.db")
    with result.open_archive() as archive:
        top = archive.top(result.run_id, 3)
        frame = evoforge.to_frame(top)
        runs = evoforge.to_frame(archive.runs())
    assert list(frame.index) == [p.id for p in top]
    assert frame["objectives.score"].tolist() == [p.objectives["score"] for p in top]
    assert set(frame["status"]) == {"ok"} and "metrics.a" in frame.columns
    assert runs.loc[result.run_id, "status"] == "finished"
    with pytest.raises(TypeError, match="archive records"):
        evoforge.to_frame([3])


def test_define_problem_in_python_runs_like_a_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("EVOFORGE_CACHE", str(tmp_path / "cache"))
    from tests.api import defined

    problem = evoforge.define_problem(
        "quadratic",
        seed=defined.SEED,
        evaluate=defined.score,
        objectives={"score": "maximize"},
        preload=[],
        timeout_s=5,
    )
    assert problem.spec_path.parent.parent == tmp_path / "cache" / "problems"
    result = evoforge.run(problem, budget=10, workers=1, db=tmp_path / "d.db")
    assert result.status == "finished" and result.best.score >= result.seed.score
    again = evoforge.define_problem(
        "quadratic", seed=defined.SEED, evaluate=defined.score,
        objectives={"score": "maximize"}, preload=[], timeout_s=5,
    )  # fmt: skip
    assert again.spec_path == problem.spec_path  # the same definition, the same folder


def test_every_public_name_is_documented_with_an_example():
    undocumented = []
    for name in evoforge.__all__:
        value = getattr(evoforge, name)
        if (
            name in ("__version__", "DEFAULT_DB")
            or isinstance(value, type)
            and issubclass(value, Exception)
        ):
            assert inspect.getdoc(value), name
            continue
        doc = inspect.getdoc(value) or ""
        if name == "hookimpl":  # pluggy's marker: its example is the package's
            doc = evoforge.__doc__ or ""
        if "Example" not in doc and "::" not in doc:
            undocumented.append(name)
    assert not undocumented, f"public names without an example: {undocumented}"
    assert set(dir(evoforge)) >= set(evoforge.__all__)


def test_an_interrupt_in_a_notebook_stops_the_run_it_started(tiny, tmp_path):
    """A notebook's stop button raises KeyboardInterrupt in the thread that waits on ``run``:
    the run, which lives on a loop in a worker thread, is cancelled and recorded as stopped."""
    db = tmp_path / "nb.db"

    class InterruptAfterThree:
        sent = False

        def update(self, snapshot):
            # >=: a tuned child's trials add several evaluations at once
            if snapshot.evaluations >= 3 and not self.sent:
                self.sent = True
                os.kill(os.getpid(), signal.SIGINT)  # the kernel's interrupt: a real signal

    async def cell():
        # as in a notebook kernel: SIGINT raises KeyboardInterrupt where the cell waits
        # (asyncio.run's own handler would only cancel this task)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        return evoforge.run(tiny, budget=300, workers=1, db=db, progress=InterruptAfterThree())

    with pytest.raises(KeyboardInterrupt):
        asyncio.run(cell())
    [(status, reason)] = statuses(db)
    assert (status, reason) == ("stopped", "cancelled")
    assert not [t for t in threading.enumerate() if t.name.startswith("evoforge")]
