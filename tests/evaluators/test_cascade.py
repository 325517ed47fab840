"""Cascade evaluation: the generic runner, and the python evaluator running real stages."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from evoforge.evaluators import EvalResult, Status
from evoforge.evaluators._cascade import run_cascade
from evoforge.problems import Objective, Problem, Stage, Threshold, load_problem
from tests.evaluators.conftest import run_candidates

PROBLEM = Problem("p", Path("p.py"), "", (Objective("score"),))


def cascade(stages, results: dict[str, EvalResult], problem: Problem = PROBLEM):
    """Run ``run_cascade`` with a stage runner that answers from ``results``; returns
    ``(folded result, names of the stages that ran)``."""
    ran: list[str] = []

    async def run_stage(stage: Stage) -> EvalResult:
        ran.append(stage.name)
        return results[stage.name]

    return asyncio.run(run_cascade(stages, run_stage, problem=problem)), ran


def ok(metrics, **timings) -> EvalResult:
    return EvalResult(Status.OK, metrics=metrics, timings=timings, device={"host": "h"})


QUICK = Stage(
    name="quick",
    timeout_s=1.0,
    threshold=Threshold(metric="accuracy", min=0.9),
    evaluate="evaluate_quick",
)
FULL = Stage(name="full", timeout_s=10.0)


# --- the generic runner -----------------------------------------------------------------------


def test_all_stages_pass_objectives_come_from_the_last_stage():
    result, ran = cascade(
        [QUICK, FULL],
        {"quick": ok({"accuracy": 0.95}), "full": ok({"score": 3.0, "accuracy": 0.99})},
    )
    assert ran == ["quick", "full"]
    assert result.status is Status.OK
    assert result.objectives == {"score": 3.0}
    # The later stage keeps a clashing name; the earlier one's is prefixed.
    assert result.metrics == {
        "quick.accuracy": 0.95,
        "accuracy": 0.99,
        "score": 3.0,
        "stage_reached": "full",
        "stages_passed": 2,
    }
    assert "cascade" not in result.artifacts and "error" not in result.artifacts


def test_missed_threshold_is_incorrect_and_the_next_stage_never_runs():
    result, ran = cascade([QUICK, FULL], {"quick": ok({"accuracy": 0.41})})
    assert ran == ["quick"]
    assert result.status is Status.INCORRECT
    assert result.artifacts["error"] == "stage 'quick': accuracy 0.41 < 0.9 (threshold)"
    assert result.artifacts["cascade"] == (
        "stopped at stage 'quick' (1 of 2): incorrect; not run: full"
    )
    assert result.metrics == {"accuracy": 0.41, "stage_reached": "quick", "stages_passed": 0}
    assert result.objectives == {} and result.descriptors == {}


def test_max_threshold_and_inclusive_bounds():
    lean = Stage(name="lean", timeout_s=1.0, threshold=Threshold(metric="seconds", max=2.0))
    at_bound, _ = cascade([lean, FULL], {"lean": ok({"seconds": 2.0}), "full": ok({"score": 1})})
    assert at_bound.status is Status.OK
    result, ran = cascade([lean, FULL], {"lean": ok({"seconds": 2.5})})
    assert ran == ["lean"] and result.status is Status.INCORRECT
    assert result.artifacts["error"] == "stage 'lean': seconds 2.5 > 2 (threshold)"


@pytest.mark.parametrize(
    ("metrics", "expected"),
    [
        ({"acc": 1.0}, "threshold metric 'accuracy' is not among the metrics its evaluate"),
        ({"accuracy": "high"}, "threshold metric 'accuracy' is 'high'; expected a finite number"),
        ({"accuracy": float("nan")}, "threshold metric 'accuracy' is nan"),
    ],
    ids=["missing-metric", "string-metric", "nan-metric"],
)
def test_threshold_metric_that_cannot_be_compared_fails_with_a_clear_artifact(metrics, expected):
    result, ran = cascade([QUICK, FULL], {"quick": ok(metrics)})
    assert ran == ["quick"] and result.status is Status.INCORRECT
    assert expected in result.artifacts["error"]
    assert result.artifacts["error"].startswith("stage 'quick': ")


def test_a_failing_stage_stops_with_its_own_status_and_artifacts():
    crashed = EvalResult(Status.TIMEOUT, artifacts={"error": "exceeded 1 s"}, timings={"eval_s": 1})
    result, ran = cascade([QUICK, FULL], {"quick": crashed})
    assert ran == ["quick"] and result.status is Status.TIMEOUT
    assert result.artifacts["error"] == "exceeded 1 s"
    assert "stopped at stage 'quick' (1 of 2): timeout" in result.artifacts["cascade"]


def test_early_stage_reporting_incorrect_stops_the_cascade():
    first = Stage(name="first", timeout_s=1.0)
    result, ran = cascade([first, FULL], {"first": ok({"correct": False, "error": "wrong shape"})})
    assert ran == ["first"]
    assert result.status is Status.INCORRECT and result.artifacts["error"] == "wrong shape"


def test_the_last_stage_is_checked_against_the_declared_objectives():
    result, _ = cascade([QUICK, FULL], {"quick": ok({"accuracy": 1.0}), "full": ok({"x": 1})})
    assert result.status is Status.INCORRECT
    assert "no objective 'score'" in result.artifacts["error"]
    assert result.metrics["stage_reached"] == "full" and result.metrics["stages_passed"] == 1


def test_timings_per_stage_and_totals():
    result, _ = cascade(
        [QUICK, FULL],
        {
            "quick": ok({"accuracy": 1.0}, eval_s=0.25, max_rss_mb=30.0),
            "full": ok({"score": 1.0}, eval_s=1.0, max_rss_mb=20.0),
        },
    )
    assert result.timings == {
        "quick.eval_s": 0.25,
        "quick.max_rss_mb": 30.0,
        "full.eval_s": 1.0,
        "full.max_rss_mb": 20.0,
        "eval_s": 1.25,  # seconds add up
        "max_rss_mb": 30.0,  # peaks do not
    }
    assert result.device == {"host": "h"}


def test_no_stages_is_an_error():
    with pytest.raises(ValueError, match="at least one stage"):
        cascade([], {})


# --- the python evaluator ---------------------------------------------------------------------

# main(n, tag) must return the first n squares. Each scoring function (trusted, outside the
# candidate's sandbox) logs the call, so the log shows which stages ran and with which kwargs.
SQUARES_SPEC = """
name = "squares"
objectives = {{"accuracy": "maximize"}}
preload = []
timeout_s = 20
memory_mb = 512
stages = [
    {{"name": "quick", "args": [10], "timeout_s": 1,
      "threshold": {{"metric": "accuracy", "min": 0.9}}}},
    {{"name": "full", "args": [300], "kwargs": {{"tag": "full"}}}},
]
LOG = {log!r}


def _accuracy(function, output, n):
    with open(LOG, "a") as f:
        f.write(f"{{function}}:{{output.get('tag')}}\\n")
    if "raise" in output:
        raise ValueError(output["raise"])
    squares = output["squares"]
    return {{"accuracy": sum(1 for i, v in enumerate(squares[:n]) if v == i * i) / n,
             "length": len(squares)}}


def evaluate_quick(output):
    return _accuracy("evaluate_quick", output, 10)


def evaluate(output):
    return _accuracy("evaluate", output, 300)
"""
SQUARES_SEED = """
# EVOLVE-BLOCK-START
def main(n, tag="none"):
    return {"tag": tag, "squares": [i * i for i in range(n)]}
# EVOLVE-BLOCK-END
"""


@pytest.fixture
def squares(make_problem, tmp_path):
    """The squares problem's folder, and a function that reads its scoring log."""
    log = tmp_path / "scored.log"
    folder = make_problem(SQUARES_SPEC.format(log=str(log)), SQUARES_SEED)
    return folder, lambda: log.read_text().split() if log.exists() else []


def test_python_candidate_passing_every_stage_runs_each_with_its_arguments(squares):
    folder, scored = squares
    (result,) = run_candidates(folder, load_problem(folder).seed_source)
    assert result.status is Status.OK, result.artifacts
    assert scored() == ["evaluate_quick:none", "evaluate:full"]  # each stage, its own kwargs
    assert result.objectives == {"accuracy": 1.0}
    assert result.metrics["length"] == 300 and result.metrics["quick.length"] == 10  # args
    assert result.metrics["quick.accuracy"] == 1.0
    assert result.metrics["stage_reached"] == "full"
    assert {"quick.eval_s", "full.eval_s", "quick.score_s", "caller_s"} <= set(result.timings)


def test_python_candidate_failing_stage_one_never_runs_stage_two(squares):
    folder, scored = squares
    wrong = """
        def main(n, tag="none"):
            return {"tag": tag, "squares": [2 * i for i in range(n)]}
    """
    (result,) = run_candidates(folder, wrong)
    assert result.status is Status.INCORRECT
    assert result.artifacts["error"] == "stage 'quick': accuracy 0.2 < 0.9 (threshold)"
    assert scored() == ["evaluate_quick:none"]  # the full stage never ran
    assert result.metrics["stage_reached"] == "quick"
    assert not any(key.startswith("full.") for key in result.timings)


def test_python_stage_timeout_is_the_stages_own(squares):
    folder, scored = squares
    slow = """
        import time
        def main(n, tag="none"):
            time.sleep(10)
    """
    (result,) = run_candidates(folder, slow)
    assert result.status is Status.TIMEOUT
    assert "wall-clock limit of 1 s" in result.artifacts["error"]  # quick's, not the problem's 20
    assert result.timings["quick.eval_s"] < 5
    assert scored() == []


def test_python_stage_scoring_function_errors_name_it(squares):
    folder, _ = squares
    (result,) = run_candidates(folder, "def main(n):\n    return {'raise': 'bad'}\n")
    assert result.status is Status.INCORRECT
    assert result.artifacts["error"] == "evaluate_quick() raised ValueError: bad"


def test_python_problem_without_stages_has_no_cascade_metrics(probe):
    source = "def main():\n    return {'metrics': {'score': 1, 'size': 1}}\n"
    (result,) = run_candidates(probe(), source)
    assert result.status is Status.OK
    assert "stage_reached" not in result.metrics
    assert not any("." in key for key in result.timings)
