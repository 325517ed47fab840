"""The ``openevolve`` evaluator: an OpenEvolve folder's own evaluator, run unmodified in the
sandbox with each candidate (cascade, artifacts, EvaluationResult without OpenEvolve
installed, programs run by the evaluator as subprocesses, the candidate still contained)."""

from __future__ import annotations

import asyncio
import importlib.util
import os
import subprocess
import sys
import uuid

import pytest

from evoforge.archive import Archive
from evoforge.evaluators import OpenEvolveEvaluator, Status
from evoforge.evaluators.openevolve import fitness
from evoforge.evolve import RunConfig, SeedError, resolve, start_run
from tests.problems.formats import CONFIG, INITIAL_PROGRAM, LITERAL_KEY, write_openevolve

OPENEVOLVE_INSTALLED = importlib.util.find_spec("openevolve") is not None


@pytest.fixture(autouse=True)
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("EVOFORGE_CACHE", str(tmp_path / "cache"))


def _evaluate(folder, *sources):
    (problem,) = resolve(str(folder)).problems

    async def go():
        async with OpenEvolveEvaluator(problem, workers=2) as evaluator:
            return await asyncio.gather(*(evaluator.evaluate(s) for s in sources))

    return problem, asyncio.run(go())


def test_fitness_is_combined_score_or_the_mean_of_numbers():
    assert fitness({"combined_score": 0.3, "a": 1.0}) == 0.3
    assert fitness({"a": 1.0, "b": 0.5, "ok": True, "error": "x", "c": float("nan")}) == 0.75
    assert fitness({"a": 1.0, "complexity": 9.0}, exclude=("complexity",)) == 1.0
    assert fitness({"error": "everything failed"}) == 0.0


def test_the_cascade_runs_the_folders_evaluator_with_artifacts(tmp_path):
    folder = write_openevolve(tmp_path / "minimize")
    broken = INITIAL_PROGRAM.replace("value = objective(*candidate)", "value = objective()")
    problem, (seed, failing) = _evaluate(folder, INITIAL_PROGRAM.lstrip(), broken.lstrip())
    assert seed.status is Status.OK, seed.artifacts
    assert seed.artifacts["cascade"] == "ran 2 of 2 stages"
    assert 0 < seed.objectives["fitness"] == seed.metrics["combined_score"] <= 1
    # merged as OpenEvolve merges: stage 2's value_score over stage 1's, stage 1's runs kept
    assert seed.metrics["runs"] == 1.0 and "speed_score" in seed.metrics
    assert len(seed.artifacts["values"].split(", ")) == 10  # the evaluator ran it 10 times
    assert failing.status is Status.RUNTIME_ERROR
    assert "evaluate_stage1(program.py) raised TypeError" in failing.artifacts["error"]
    assert "objective()" in failing.artifacts["traceback"]


def test_a_candidate_below_the_threshold_keeps_stage_ones_score(tmp_path):
    # stage 1's score is the mean of runs (1.0) and value_score: 0.5 at worst, so 0.6
    config = CONFIG.replace("cascade_thresholds: [0.5, 0.75]", "cascade_thresholds: [0.6, 0.75]")
    folder = write_openevolve(tmp_path / "minimize", config=config)
    poor = INITIAL_PROGRAM.replace(
        "return float(best[0]), float(best[1]), float(best_value)", "return 0.0, 0.0, 40.0"
    )
    _, (result,) = _evaluate(folder, poor.lstrip())
    assert result.status is Status.OK, result.artifacts
    assert "stopped after stage 1" in result.artifacts["cascade"]
    assert "cascade_thresholds[0] = 0.6" in result.artifacts["cascade"]
    assert set(result.metrics) == {"runs", "value_score", "fitness"}  # stage 1's, as returned
    mean = (1.0 + result.metrics["value_score"]) / 2
    assert result.objectives == {"fitness": pytest.approx(mean)} and mean < 0.6


@pytest.mark.skipif(OPENEVOLVE_INSTALLED, reason="OpenEvolve is installed: its own class is used")
def test_evaluation_result_works_without_openevolve_installed(tmp_path):
    folder = write_openevolve(tmp_path / "minimize")
    _, (seed,) = _evaluate(folder, INITIAL_PROGRAM.lstrip())
    assert seed.status is Status.OK and "values" in seed.artifacts
    assert importlib.util.find_spec("openevolve") is None  # nothing was installed here


SUBPROCESS_EVALUATOR = """
import subprocess
import sys


def evaluate(program_path):
    run = subprocess.run([sys.executable, program_path], capture_output=True, text=True, timeout=30)
    if run.returncode:
        return {"combined_score": 0.0, "error": run.stderr[-300:]}
    return {"combined_score": float(run.stdout.split()[-1])}
"""


def test_an_evaluator_that_runs_the_program_keeps_it_in_the_sandbox(tmp_path):
    escape = f"/tmp/evoforge-escape-{uuid.uuid4().hex}"
    program = "# EVOLVE-BLOCK-START\nprint(0.5)\n# EVOLVE-BLOCK-END\n"
    hostile = (
        "# EVOLVE-BLOCK-START\n"
        f"open({escape!r}, 'w').write('out')\n"
        "print(1.0)\n"
        "# EVOLVE-BLOCK-END\n"
    )
    network = (
        "# EVOLVE-BLOCK-START\n"
        "import socket\n"
        "socket.create_connection(('1.1.1.1', 53), timeout=2)\n"
        "print(1.0)\n"
        "# EVOLVE-BLOCK-END\n"
    )
    folder = write_openevolve(
        tmp_path / "sub",
        config=None,
        **{"initial_program.py": program, "evaluator.py": SUBPROCESS_EVALUATOR},
    )
    _, (honest, writer, caller) = _evaluate(folder, program, hostile, network)
    assert honest.status is Status.OK and honest.objectives == {"fitness": 0.5}
    assert not os.path.exists(escape)  # its /tmp is private: the host's is untouched
    assert writer.objectives == {"fitness": 1.0}  # the write landed in that private /tmp
    assert caller.objectives == {"fitness": 0.0}  # no network in the sandbox
    assert (
        "Network is unreachable" in caller.metrics["error"] or "OSError" in caller.metrics["error"]
    )


def test_an_evaluator_that_fails_to_load_is_blamed_on_the_problem(tmp_path):
    broken = "import no_such_module_anywhere\n\ndef evaluate(program_path):\n    return {}\n"
    folder = write_openevolve(tmp_path / "broken", config=None, **{"evaluator.py": broken})
    (problem,) = resolve(str(folder)).problems
    config = RunConfig(problem=str(problem.spec_path.parent), budget=2, workers=1)
    with pytest.raises(
        SeedError,
        match="the OpenEvolve evaluator failed .not the candidate.*"
        "No module named 'no_such_module_anywhere'",
    ):
        asyncio.run(start_run(config, tmp_path / "b.db"))


@pytest.mark.slow
def test_an_openevolve_folder_runs_unmodified_from_the_command_line(tmp_path):
    """Acceptance: an OpenEvolve folder, untouched: cascade, artifacts, mapped config."""
    folder = write_openevolve(tmp_path / "function_minimization")
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    db = tmp_path / "oe.db"
    env = {**os.environ, "EVOFORGE_CACHE": str(tmp_path / "cache")}
    run = subprocess.run(
        [sys.executable, "-m", "evoforge", "run", str(folder), "--model", "offline/mutator",
         "--budget", "6", "--db", str(db), "-q"],
        capture_output=True, text=True, env=env, timeout=900,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr[-3000:]
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before
    assert "config.yaml: mapped max_iterations -> budget 41" in run.stderr
    assert "config.yaml: ignored checkpoint_interval" in run.stderr
    assert LITERAL_KEY not in run.stderr + run.stdout
    assert "Best  fitness=" in run.stdout
    with Archive(db) as archive:
        info = archive.latest_run()
        assert info.config["workers"] == 2 and info.config["islands"]["count"] == 3  # mapped
        assert info.config["model"] == "offline/mutator" and info.config["models"] == []
        assert info.config["budget"] == 6  # the flag wins over max_iterations
        programs = list(archive.programs(info.id))
        assert len([p for p in programs if Status(p.status).evaluated]) == 6
        seed = programs[0]
        assert seed.status == "ok" and seed.artifacts["cascade"] == "ran 2 of 2 stages"
        assert "values" in seed.artifacts
        assert LITERAL_KEY not in str(info.config)
