"""Objectives an evaluator cannot measure on this host: the run ranks by one it can, says so."""

from __future__ import annotations

import asyncio
import sys
import types

import pytest

from evoforge.archive import Archive
from evoforge.evaluators import PythonEvaluator
from evoforge.evolve import ConfigError, RunConfig, measurable_problem, resume_run, start_run
from evoforge.plugins import hookimpl, pm
from evoforge.problems import load_problem

SPEC = """
    name = "timed"
    evaluator = "untimed-python"
    objectives = {"speedup": "maximize", "error": "minimize"}
    preload = []
    timeout_s = 5

    def evaluate(output):
        return {"speedup": 1.0, "error": abs(output - 3.0)}
"""
SEED = """
    # EVOLVE-BLOCK-START
    def main():
        return 1.0
    # EVOLVE-BLOCK-END
"""


class UntimedPython(PythonEvaluator):
    """Runs like ``python`` but, like a kernel evaluator without a GPU, cannot time."""

    name = "untimed-python"

    @classmethod
    def unmeasurable(cls, problem):
        return {"speedup": "timing unavailable: no clock on this test host", "other": "ignored"}


class NothingMeasured(UntimedPython):
    name = "nothing-measured"

    @classmethod
    def unmeasurable(cls, problem):
        return {o.name: "no device" for o in problem.objectives}


class ChecksOnly(NothingMeasured):
    """Like a kernel evaluator in an interpreter: it runs and checks, but cannot time."""

    name = "checks-only"

    @classmethod
    def correctness_only(cls, problem):
        return "no device: the interpreter checks correctness only"


@pytest.fixture
def untimed_plugin():
    plugin = types.ModuleType("untimed_plugin")
    plugin.register_evaluators = hookimpl(
        lambda register: (
            register(UntimedPython),
            register(NothingMeasured),
            register(ChecksOnly),
        )
    )
    sys.modules[plugin.__name__] = plugin
    pm.register(plugin, "untimed-plugin")
    yield
    pm.unregister(name="untimed-plugin")
    del sys.modules[plugin.__name__]


def test_unmeasurable_primary_is_dropped_and_the_next_objective_ranks(make_problem):
    problem = load_problem(make_problem(SPEC, SEED))
    measured, missing = measurable_problem(problem, UntimedPython)
    assert [o.name for o in measured.objectives] == ["error"]
    assert measured.primary.name == "error"
    assert missing == {"speedup": "timing unavailable: no clock on this test host"}
    assert measurable_problem(problem, PythonEvaluator) == (problem, {})


def test_nothing_measurable_is_a_clear_error(make_problem):
    problem = load_problem(make_problem(SPEC, SEED))
    with pytest.raises(ConfigError, match="can measure none of timed's objectives.*no device"):
        measurable_problem(problem, NothingMeasured)


def test_run_ranks_by_the_measured_objective_and_records_why(
    untimed_plugin, make_problem, tmp_path, caplog
):
    folder = make_problem(SPEC, SEED)
    db = tmp_path / "a.db"
    config = RunConfig(problem=str(folder), budget=6, workers=1)
    run, report = asyncio.run(start_run(config, db))
    assert report.status == "finished"
    assert "cannot be measured on this host" in caplog.text
    with Archive(db) as archive:
        seed = next(archive.programs(run.id))
        # ranked by error (minimised: score is -error), and no made-up speedup is stored
        assert seed.objectives == {"error": 2.0}
        assert seed.score == -2.0
        start = next(e for e in archive.events(run.id) if e.kind == "run_start")
        assert start.data["objectives"] == ["error"]
        assert start.data["unmeasurable"] == {
            "speedup": "timing unavailable: no clock on this test host"
        }


def test_resume_on_a_host_that_measures_more_records_the_change(
    untimed_plugin, make_problem, tmp_path
):
    folder = make_problem(SPEC, SEED)
    db = tmp_path / "a.db"
    run, _ = asyncio.run(start_run(RunConfig(problem=str(folder), budget=3, workers=1), db))
    # the same run on a "host with the device": the python evaluator measures everything
    (folder / "problem.py").write_text(
        (folder / "problem.py").read_text().replace('"untimed-python"', '"python"')
    )
    asyncio.run(resume_run(run.id, db, budget=5))
    with Archive(db) as archive:
        changed = [e for e in archive.events(run.id) if e.kind == "objectives_changed"]
    assert [(e.data["from"], e.data["to"]) for e in changed] == [(["error"], ["speedup", "error"])]


def test_checked_but_not_measured_is_a_correctness_only_run(make_problem):
    problem = load_problem(make_problem(SPEC, SEED))
    measured, missing = measurable_problem(problem, ChecksOnly)
    assert [o.name for o in measured.objectives] == ["passed"]
    assert set(missing) == {"speedup", "error"}


def test_a_correctness_only_run_scores_every_correct_program_the_same(
    untimed_plugin, make_problem, tmp_path, caplog
):
    folder = make_problem(SPEC.replace('"untimed-python"', '"checks-only"'), SEED)
    db = tmp_path / "c.db"
    run, report = asyncio.run(start_run(RunConfig(problem=str(folder), budget=5, workers=1), db))
    assert report.status == "finished"
    assert "correctness-only" in caplog.text and "not a score" in caplog.text
    with Archive(db) as archive:
        programs = [p for p in archive.programs(run.id) if p.status == "ok"]
        start = next(e for e in archive.events(run.id) if e.kind == "run_start")
    assert programs and all(p.objectives == {"passed": 1.0} for p in programs)
    assert all("error" in p.metrics for p in programs)  # the measured error stays a metric
    assert start.data["correctness_only"] is True and start.data["objectives"] == ["passed"]
