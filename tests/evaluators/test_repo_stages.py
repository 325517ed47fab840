"""A repository problem's ``stages``: cheap commands before the check and the measure, run as
the engine's cascade (thresholds, ``stage_reached``), stopping at the first that fails."""

from __future__ import annotations

import asyncio

from evoforge.evaluators import Status
from evoforge.evaluators.repo import RepoEvaluator
from evoforge.problems import make_bundle, split_bundle
from evoforge.problems.adapters import adapt
from tests.repo_helpers import FMT, OPS, TOML, make_repo

BASE_SIZE = len(OPS) + len(FMT)
STAGES = f"""
[[stages]]
name = "smoke"
command = "python -c 'from calc.fmt import label; assert label(1) == \\"value=1\\", label(1)'"
timeout_s = 20

[[stages]]
name = "quick"
command = "python measure.py"
threshold = {{ metric = "size", max = {BASE_SIZE + 10} }}
"""


def evaluate(problem, sources):
    async def main():
        async with RepoEvaluator(problem, workers=1) as evaluator:
            return [await evaluator.evaluate(s) for s in sources]

    return asyncio.run(main())


def with_fmt(problem, fmt: str) -> str:
    return make_bundle({**split_bundle(problem.seed_source), "calc/fmt.py": fmt})


def test_stages_run_before_check_and_measure_as_a_cascade(tmp_path):
    slow_check = 'check = "sleep 2 && python check.py"'  # a stop before it is fast
    toml = TOML.replace('check = "python check.py"', slow_check) + STAGES
    (problem,) = adapt(make_repo(tmp_path / "calc", toml=toml)).problems
    assert [s.name for s in problem.stages] == ["smoke", "quick", "check", "measure"]
    assert problem.stages[0].timeout_s == 20 and problem.stages[2].timeout_s == 30
    broken = with_fmt(problem, 'def label(x):\n    return "v=" + str(x)\n')
    padded = with_fmt(problem, FMT + "# " + "x" * 40 + "\n")  # passes, but 43 bytes larger
    base, failed, missed = evaluate(problem, [problem.seed_source, broken, padded])

    assert base.status is Status.OK, base.artifacts
    assert base.objectives == {"size": BASE_SIZE}
    assert base.metrics["stage_reached"] == "measure" and base.metrics["stages_passed"] == 4
    assert base.metrics["quick.size"] == BASE_SIZE  # the earlier stage's, renamed

    assert failed.status is Status.INCORRECT
    assert failed.metrics["stage_reached"] == "smoke"
    assert failed.timings["caller_s"] < 2  # check and measure never ran
    assert "v=1" in failed.artifacts["error"] and failed.artifacts["stage"] == "smoke"

    assert missed.status is Status.INCORRECT
    assert missed.metrics["stage_reached"] == "quick"
    assert f"size {BASE_SIZE + 43} > {BASE_SIZE + 10} (threshold)" in missed.artifacts["error"]
    assert not missed.objectives and missed.timings["caller_s"] < 2


def test_a_stage_without_a_threshold_may_print_anything(tmp_path):
    stages = '\n[[stages]]\nname = "hello"\ncommand = "echo hello"\n'
    (problem,) = adapt(make_repo(tmp_path / "calc", toml=TOML + stages)).problems
    (result,) = evaluate(problem, [problem.seed_source])
    assert result.status is Status.OK and result.metrics["stages_passed"] == 3
