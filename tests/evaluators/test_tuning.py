"""Knob tuning: the ``# knob:`` form, write-back, and TPE trials that count as evaluations."""

from __future__ import annotations

import asyncio

import pytest

from evoforge.evaluators import Status
from evoforge.evaluators.python import PythonEvaluator
from evoforge.evaluators.tuning import (
    TRIAL_BUDGET,
    KnobError,
    TrialBudget,
    find_knobs,
    write_back,
)
from evoforge.problems import load_problem

PROGRAM = """
import math
# EVOLVE-BLOCK-START
X = 0.5  # knob: float 0.0..4.0
N = 3  # knob: int 1..10
MODE = "a"  # knob: "a" | "b"
SCALE = 1.0  # knob: float 0.1..10 log
Y = 2.0  # not a knob
# EVOLVE-BLOCK-END
OUTSIDE = 1.0  # knob: float 0..2
"""


def test_knobs_inside_blocks_are_found_with_their_ranges():
    knobs = {k.name: k for k in find_knobs(PROGRAM)}
    assert set(knobs) == {"X", "N", "MODE", "SCALE"}  # OUTSIDE is frozen code
    assert (knobs["X"].kind, knobs["X"].default, knobs["X"].low, knobs["X"].high) == (
        "float", 0.5, 0.0, 4.0,
    )  # fmt: skip
    assert knobs["N"].kind == "int" and knobs["SCALE"].log
    assert knobs["MODE"].choices == ("a", "b")


def test_write_back_changes_only_the_literals():
    knobs = find_knobs(PROGRAM)
    tuned = write_back(PROGRAM, knobs, {"X": 1.2345678, "N": 7, "MODE": "b"})
    assert "X = 1.23457  # knob: float 0.0..4.0" in tuned
    assert "N = 7  # knob: int 1..10" in tuned and "MODE = 'b'  # knob:" in tuned
    assert tuned.replace("1.23457", "0.5").replace("7  #", "3  #").replace("'b'  #", '"a"  #') == (
        PROGRAM
    )


@pytest.mark.parametrize(
    ("line", "words"),
    [
        ("X = foo  # knob: float 0..1", "not a literal"),
        ("X = 1  # knob: float 1..0", "LOW < HIGH"),
        ("X = 0.5  # knob: int 0..3", "float default"),
        ("X = 1  # knob: between 0 and 3", "cannot read"),
        ("X = 'c'  # knob: 'a' | 'b'", "not one of its choices"),
        ("X = 1.0  # knob: float 0..2 log", "needs LOW > 0"),
    ],
)
def test_malformed_knobs_say_how_to_write_them(line, words):
    with pytest.raises(KnobError, match=words):
        find_knobs(f"# EVOLVE-BLOCK-START\n{line}\n# EVOLVE-BLOCK-END\n")


def test_a_default_moved_outside_its_range_widens_it():
    (knob,) = find_knobs("# EVOLVE-BLOCK-START\nX = 5.0  # knob: float 0..2\n# EVOLVE-BLOCK-END\n")
    assert (knob.low, knob.high) == (0.0, 5.0)


SPEC = """
name = "tune_me"
objectives = {"score": "maximize"}
preload = []
timeout_s = 5
memory_mb = 512
tuning = {"trials": 12}

def evaluate(output):
    return {"score": -(output - 2.0) ** 2}
"""
SEED = """
# EVOLVE-BLOCK-START
X = 1.0  # knob: float 0.0..4.0

def main():
    return X
# EVOLVE-BLOCK-END
"""


def _evaluate(problem, source, budget=None):
    async def go():
        if budget is not None:
            TRIAL_BUDGET.set(budget)
        async with PythonEvaluator(problem) as evaluator:
            return await evaluator.evaluate(source)

    return asyncio.run(go())


def test_trials_are_evaluations_and_the_best_setting_is_written_back(make_problem):
    pytest.importorskip("optuna", reason="knob tuning needs optuna: pip install 'evoforge[tune]'")
    problem = load_problem(make_problem(SPEC, SEED))
    result = _evaluate(problem, problem.seed_source)
    assert result.status is Status.OK
    assert result.evaluations == 1 + result.metrics["tuning_trials"] == 13
    assert result.metrics["untuned_score"] == -1.0
    assert result.objectives["score"] > -1.0  # moved towards X = 2 within the trust region
    assert result.source is not None and f"X = {result.metrics['knobs']['X']}" in result.source
    assert "tuned 1 knobs with 12 trials" in result.artifacts["tuning"]


def test_the_run_budget_caps_trials(make_problem):
    pytest.importorskip("optuna", reason="knob tuning needs optuna: pip install 'evoforge[tune]'")
    problem = load_problem(make_problem(SPEC, SEED))
    granted = iter([True, True, True])
    budget = TrialBudget(lambda: next(granted, False))
    result = _evaluate(problem, problem.seed_source, budget)
    assert budget.taken == 3 and result.evaluations == 4


def test_candidates_below_their_parent_are_not_tuned(make_problem):
    pytest.importorskip("optuna", reason="knob tuning needs optuna: pip install 'evoforge[tune]'")
    problem = load_problem(make_problem(SPEC, SEED))
    budget = TrialBudget(lambda: True, parent_score=0.0)  # the parent scored better
    result = _evaluate(problem, problem.seed_source, budget)
    assert result.evaluations == 1 and budget.taken == 0 and result.source is None
