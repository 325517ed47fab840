"""Tuning the constants a model's edit changed (``[search] tune_changed``)."""

from __future__ import annotations

import pytest

from evoforge.evaluators import Status
from evoforge.evaluators.tuning import TrialBudget, write_back
from evoforge.evaluators.tuning._changed import MAX_CHANGED, changed_constants
from evoforge.problems import load_problem
from tests.evaluators.test_tuning import SPEC as TUNED_SPEC, _evaluate

PARENT = """\
import math

RATE = 0.25  # outside the block: fixed
# EVOLVE-BLOCK-START
def f(x):
    scale = 0.3  # a comment with 0.5 in it
    count = 8
    label = "0.1"
    return scale * x + 1e-3 + RATE
# EVOLVE-BLOCK-END
"""


def test_the_float_literals_an_edit_replaced_are_found_where_the_child_has_them() -> None:
    child = PARENT.replace("scale = 0.3", "scale = 0.35").replace("1e-3", "2e-3")
    (scale, tiny) = changed_constants(PARENT, child)
    assert (scale.default, tiny.default) == (0.35, 2e-3)
    assert child[scale.start : scale.end] == "0.35" and child[tiny.start : tiny.end] == "2e-3"
    assert scale.name == "line 6:13"
    # a range around the new value on the scale of the model's step (0.05): +-3 steps
    assert scale.low == pytest.approx(0.2) and scale.high == pytest.approx(0.5)
    assert write_back(child, [scale], {scale.name: 0.4}) == child.replace("0.35", "0.4")


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("count = 8", "count = 9"),  # an int: a count, not a quantity
        ('label = "0.1"', 'label = "0.2"'),  # a string
        ("with 0.5 in it", "with 0.6 in it"),  # a comment
        ("RATE = 0.25", "RATE = 0.5"),  # outside the EVOLVE-BLOCK
        ("scale = 0.3", "scale = 0.3 * 2.0"),  # an added literal: no step to scale by
        ("scale * x", "scale * 0.5"),  # a name replaced by a number
    ],
)
def test_what_is_not_a_changed_constant(old: str, new: str) -> None:
    assert changed_constants(PARENT, PARENT.replace(old, new)) == []


def test_a_moved_line_is_not_a_change_and_broken_code_gives_none() -> None:
    moved = PARENT.replace("    count = 8\n", "").replace("    label", "    count = 8\n    label")
    assert changed_constants(PARENT, moved) == []
    assert changed_constants(PARENT, PARENT.replace("(x):", "(x:")) == []  # does not tokenize


def test_at_most_so_many_constants_are_tuned() -> None:
    parent = "# EVOLVE-BLOCK-START\n" + "".join(f"C{i} = {i}.5\n" for i in range(9))
    parent += "# EVOLVE-BLOCK-END\n"
    child = parent.replace(".5\n", ".75\n")
    knobs = changed_constants(parent, child)
    assert len(knobs) == MAX_CHANGED and [k.default for k in knobs] == [0.75, 1.75, 2.75, 3.75]


# test_tuning's problem without its own tuning: the changed constants are what is tuned
SPEC = TUNED_SPEC.replace('tuning = {"trials": 12}\n', "").replace("tune_me", "changed")
SEED = """
# EVOLVE-BLOCK-START
def main():
    return 1.0
# EVOLVE-BLOCK-END
"""


def test_a_child_whose_edit_moved_a_constant_is_tuned_around_it(make_problem) -> None:
    pytest.importorskip("optuna", reason="tuning needs optuna: pip install 'evoforge[tune]'")
    problem = load_problem(make_problem(SPEC, SEED))
    parent = problem.seed_source
    child = parent.replace("return 1.0", "return 1.5")  # a step of 0.5 towards 2.0
    budget = TrialBudget(lambda: True, parent_score=-1.0, parent_source=parent, changed_trials=8)
    result = _evaluate(problem, child, budget)
    assert result.status is Status.OK
    assert budget.taken == result.metrics["tuning_trials"] == 8
    assert result.evaluations == 9 and result.metrics["untuned_score"] == -0.25
    assert result.objectives["score"] > -0.25  # a trial went nearer 2.0 than the model did
    (name,) = result.metrics["knobs"]
    assert name == "line 4:12"
    assert result.source == child.replace("1.5", repr(result.metrics["knobs"][name]))
    assert result.artifacts["tuning"].startswith("tuned 1 knobs with 8 trials (0 failed)")


@pytest.mark.parametrize(
    ("changed_trials", "parent_score", "parent_source"),
    [
        (0, -1.0, "seed"),  # the run does not tune changed constants
        (8, 0.0, "seed"),  # the child scored below its parent
        (8, -1.0, None),  # no parent (the seed itself)
    ],
)
def test_no_trials_unless_asked_for_and_the_child_held_its_parents_score(
    make_problem, changed_trials, parent_score, parent_source
) -> None:
    problem = load_problem(make_problem(SPEC, SEED))
    parent = problem.seed_source if parent_source == "seed" else None
    child = problem.seed_source.replace("return 1.0", "return 1.5")
    budget = TrialBudget(lambda: True, parent_score, parent, changed_trials)
    result = _evaluate(problem, child, budget)
    assert result.status is Status.OK and result.evaluations == 1 and budget.taken == 0
    assert result.source is None and "tuning" not in result.artifacts
