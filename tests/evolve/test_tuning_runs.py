"""Runs with knob tuning and held-out stages: budgets, stored sources, held-out reports."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from evoforge.archive import Archive
from evoforge.evolve.cli import cli

SPEC = """
name = "tune_run"
objectives = {"score": "maximize"}
preload = []
timeout_s = 5
memory_mb = 512
tuning = {"trials": 4, "only_improved": False}
held_out = [{"name": "held_out", "kwargs": {"target": 3.0}}]
baselines = {"reference": {"score": -1.0, "held_out.score": -4.0}}

def evaluate(output):
    return {"score": -(output - 2.0) ** 2}

def evaluate_held_out(output):
    return {"score": -(output - 3.0) ** 2, "note": "held out"}
"""
SEED = """
# EVOLVE-BLOCK-START
X = 1.0  # knob: float 0.0..4.0

def main(target=None):
    return X
# EVOLVE-BLOCK-END
"""


@pytest.mark.slow
def test_tuned_run_spends_exactly_its_budget_and_reports_held_out(make_problem, tmp_path):
    pytest.importorskip("optuna", reason="knob tuning needs optuna: pip install 'evoforge[tune]'")
    folder = make_problem(SPEC, SEED)
    db = tmp_path / "runs.db"
    out = CliRunner().invoke(
        cli, ["run", str(folder), "--budget", "23", "--workers", "1", "--db", str(db), "-q"]
    )
    assert out.exit_code == 0, out.output
    with Archive(db) as archive:
        run = archive.latest_run()
        assert run.evaluations == 23  # trials included, never past the budget
        programs = list(archive.programs(run.id))
        tuned = [p for p in programs if "tuning_trials" in p.metrics]
        assert tuned and all("X = " in p.source for p in tuned)
        assert all("held_out" not in str(p.metrics) for p in programs)  # never with programs
        (event,) = archive.events(run.id, "held_out")
        assert event.data["status"] == "ok" and event.data["metrics"]["note"] == "held out"
        start = archive.events(run.id, "run_start")[0].data
        assert start["tuning"].startswith("on")
    assert (
        "Held-out (program" in out.output and "Held-out vs reference: held_out.score" in out.output
    )


@pytest.mark.slow
def test_no_tune_turns_tuning_off(make_problem, tmp_path):
    folder = make_problem(SPEC, SEED)
    db = tmp_path / "runs.db"
    out = CliRunner().invoke(
        cli,
        ["run", str(folder), "--budget", "6", "--workers", "1", "--no-tune", "--db", str(db), "-q"],
    )
    assert out.exit_code == 0, out.output
    with Archive(db) as archive:
        run = archive.latest_run()
        assert all("tuning_trials" not in p.metrics for p in archive.programs(run.id))
        assert archive.events(run.id, "run_start")[0].data["tuning"] == "off (--no-tune)"
