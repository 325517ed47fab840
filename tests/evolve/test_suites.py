"""A suite as one run with one budget: spent exactly, allocated, stopped and resumed, and a
task that fails giving its share back."""

from __future__ import annotations

import asyncio
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from evoforge.archive import Archive
from evoforge.evolve.config import SuiteConfig
from evoforge.evolve.mining import ENDED, suite_view
from evoforge.evolve.run import resolve, resume_suite, start_suite

SPEC = """
    name = "{name}"
    objectives = {{"score": "maximize"}}
    timeout_s = 5
    memory_mb = 512

    def evaluate(output):
        a, b = output
        return {{"score": 1.0 / (1e-3 + (a - {target}) ** 2 + (b - 2.0) ** 2)}}
"""
SEED = """
    # EVOLVE-BLOCK-START
    def main():
        a = 0.5
        b = 0.25
        return [a, b]
    # EVOLVE-BLOCK-END
"""
pytestmark = pytest.mark.slow  # each task's session starts its proposal workers
BROKEN_SEED = """
    # EVOLVE-BLOCK-START
    def main():
        raise RuntimeError("no")
    # EVOLVE-BLOCK-END
"""


@pytest.fixture
def suite_folder(tmp_path) -> Path:
    """A folder of three small problems (a suite)."""
    folder = tmp_path / "tasks"
    for name, target in (("ta", 1.0), ("tb", 3.0), ("tc", -2.0)):
        (folder / name).mkdir(parents=True)
        (folder / name / "problem.py").write_text(
            textwrap.dedent(SPEC.format(name=name, target=target))
        )
        (folder / name / "seed.py").write_text(textwrap.dedent(SEED))
    return folder


def _settings(seed: int = 3):
    return lambda problem: {
        "problem": str(problem.spec_path.parent),
        "workers": 1,
        "seed": seed,
        "max_failed_streak": 1000,
    }


def _start(folder, db, budget, config, stop=None, progress=None):
    problems = resolve(str(folder)).problems
    return asyncio.run(
        start_suite(
            "tasks",
            problems,
            _settings(),
            db,
            budget=budget,
            config=config,
            stop=stop,
            progress=progress,
        )
    )


def _check_books(db: Path, suite_id: str) -> list:
    """The budget rule: each task's grants add up to its cap, which is its run's budget and
    at least what it spent; the caps add up to no more than the suite's budget."""
    with Archive(db) as archive:
        suite = archive.suite(suite_id)
        grants = archive.grants(suite_id)
        view = suite_view(archive, suite_id)
        for task in view.tasks:
            own = [g for g in grants if g.ord == task.ord]
            assert sum(g.evaluations for g in own) == task.granted >= task.spent
            if task.run_id is not None:
                assert archive.run(task.run_id).config["budget"] == task.granted
        assert view.granted <= suite.budget
    return view.tasks


def test_a_suite_spends_its_budget_exactly_floors_first_then_by_the_bandit(suite_folder, tmp_path):
    db = tmp_path / "s.db"
    report = _start(suite_folder, db, 40, SuiteConfig(allocation="bandit", floor=5, grant=5))
    assert report.status == "finished"
    assert sum(a.spent for a in report.arms) == 40
    tasks = _check_books(db, report.suite_id)
    assert all(t.spent >= 5 and t.status == "finished" for t in tasks)
    with Archive(db) as archive:
        grants = archive.grants(report.suite_id)
        assert [(g.ord, g.why) for g in grants[:3]] == [(0, "floor"), (1, "floor"), (2, "floor")]
        assert all(g.why.startswith("bandit: index") for g in grants[3:])
        assert archive.suite(report.suite_id).status == "finished"
        for task in tasks:  # every evaluated program is counted against the suite
            programs = archive.programs(task.run_id)
            assert sum(p.evaluations for p in programs if p.status.evaluated) == task.spent
    assert [r.problem for r in report.results] == ["ta", "tb", "tc"]


def test_the_equal_split_gives_every_task_the_same_share(suite_folder, tmp_path):
    db = tmp_path / "e.db"
    report = _start(suite_folder, db, 31, SuiteConfig(allocation="equal"))
    assert [a.spent for a in report.arms] == [11, 10, 10]
    with Archive(db) as archive:
        assert [g.why for g in archive.grants(report.suite_id)] == ["equal share"] * 3


def test_a_stopped_suite_resumes_with_its_budget_and_its_allocation_history(suite_folder, tmp_path):
    db = tmp_path / "r.db"
    stop = asyncio.Event()

    class StopAfter:
        """Stops the suite once 20 evaluations are spent (a display that pulls the plug)."""

        def task(self, arm, snapshot):
            self.spent[arm.ord] = snapshot.evaluations
            if sum(self.spent.values()) >= 20:
                stop.set()

        def allocation(self, suite, arms, note):
            pass

        spent: dict[int, int] = {}

    first = _start(
        suite_folder, db, 45, SuiteConfig(allocation="bandit", floor=4, grant=4), stop, StopAfter()
    )
    assert first.status == "stopped"
    with Archive(db) as archive:
        before = archive.grants(first.suite_id)
        assert archive.suite(first.suite_id).status == "stopped"
    spent = sum(a.spent for a in first.arms)
    assert 20 <= spent < 45

    report = asyncio.run(resume_suite(first.suite_id, db))
    assert report.status == "finished" and sum(a.spent for a in report.arms) == 45
    with Archive(db) as archive:
        after = archive.grants(first.suite_id)
    assert after[: len(before)] == before  # the history is kept, then extended
    _check_books(db, report.suite_id)

    raised = asyncio.run(resume_suite(first.suite_id, db, budget=55))  # --budget raises it
    assert sum(a.spent for a in raised.arms) == 55


def test_a_task_whose_seed_fails_is_retired_and_its_share_goes_to_the_others(
    suite_folder, tmp_path
):
    (suite_folder / "tb" / "seed.py").write_text(textwrap.dedent(BROKEN_SEED))
    db = tmp_path / "f.db"
    report = _start(suite_folder, db, 24, SuiteConfig(allocation="bandit", floor=4, grant=4))
    assert report.status == "finished"
    broken = report.arms[1]
    assert not broken.live and broken.spent == broken.cap == 1  # its seed, nothing more
    assert sum(a.spent for a in report.arms) == 24  # its share was spent by the others
    with Archive(db) as archive:
        ended = [g for g in archive.grants(report.suite_id) if g.why.startswith(ENDED)]
    assert len(ended) == 1 and ended[0].evaluations == -3 and "failed" in ended[0].why
    _check_books(db, report.suite_id)


def test_budget_per_task_runs_each_task_on_its_own_as_before(suite_folder, tmp_path):
    from evoforge.evolve.cli import cli

    db = tmp_path / "p.db"
    result = CliRunner().invoke(
        cli,
        ["run", str(suite_folder), "--budget-per-task", "4", "--workers", "1", "--db", str(db)],
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.output
    assert "one run each" in result.output
    with Archive(db) as archive:
        assert archive.suites() == []
        assert sorted(r.evaluations for r in archive.runs()) == [4, 4, 4]


def test_a_suite_refuses_a_budget_below_its_floors(suite_folder, tmp_path):
    from evoforge.evolve.config import ConfigError

    with pytest.raises(ConfigError, match="needs a budget of at least 24, not 20"):
        _start(suite_folder, tmp_path / "x.db", 20, SuiteConfig(allocation="bandit", floor=8))
    assert not (tmp_path / "x.db").exists() or not Archive(tmp_path / "x.db").suites()
    with pytest.raises(ConfigError, match="one evaluation each .its seed. needs a budget of at "
                       "least 3, not 2; raise --budget$"):  # fmt: skip
        _start(suite_folder, tmp_path / "y.db", 2, SuiteConfig())


def test_past_open_tasks_the_least_recently_granted_task_is_paused_and_reopened(
    suite_folder, tmp_path
):
    db = tmp_path / "o.db"
    report = _start(
        suite_folder, db, 30, SuiteConfig(allocation="bandit", floor=4, grant=4, open_tasks=1)
    )
    assert report.status == "finished" and sum(a.spent for a in report.arms) == 30
    tasks = _check_books(db, report.suite_id)
    with Archive(db) as archive:
        for task in tasks:
            run = archive.run(task.run_id)
            assert run.status == "finished"  # paused on the way, finished with the suite
            kinds = [e.kind for e in archive.events(run.id)]
            assert kinds[0] == "run_start" and "unclean_stop" not in kinds
        paused = [
            e for t in tasks for e in archive.events(t.run_id, "run_stop")
            if "paused" in e.data["reason"]
        ]  # fmt: skip
    assert paused  # one session open at a time: tasks took turns


def test_a_suite_whose_every_task_failed_ends_failed_and_says_why(suite_folder, tmp_path):
    for name in ("ta", "tb", "tc"):
        (suite_folder / name / "seed.py").write_text(textwrap.dedent(BROKEN_SEED))
    report = _start(suite_folder, tmp_path / "x.db", 30, SuiteConfig(floor=4))
    assert report.status == "failed"
    assert "27 of the 30 evaluations unspent" in report.reason
    assert "failed: the seed program of ta evaluated to 'runtime_error'" in report.reason
    assert [a.live for a in report.arms] == [False, False, False]
