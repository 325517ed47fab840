"""OpenEvolve's semantics for OpenEvolve folders, as OpenEvolve 0.4.0 has them: the cascade
(a program below a threshold keeps the stages it ran), its two scores, nested metric returns,
feature dimensions as descriptors, and a stand-in that a folder named ``openevolve`` in the
working directory cannot hide."""

from __future__ import annotations

import asyncio
import os
import shutil
import tempfile
import textwrap
from pathlib import Path

import pytest
from hypothesis import given, strategies as st

from evoforge.archive import Archive
from evoforge.evaluators import OpenEvolveEvaluator, Status
from evoforge.evaluators.openevolve import fitness, passes_threshold
from evoforge.evaluators.openevolve._scores import merge_stage, unnest
from evoforge.evolve import RunConfig, resolve, start_run


@pytest.fixture(autouse=True)
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("EVOFORGE_CACHE", str(tmp_path / "cache"))


# A program whose quality is one number; stage 1 reports it, stage 2 adds a second score.
PROGRAM = "# EVOLVE-BLOCK-START\nQUALITY = {quality}\n# EVOLVE-BLOCK-END\n"
CASCADE = """
import importlib.util


def _quality(path):
    spec = importlib.util.spec_from_file_location("p", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return float(module.QUALITY)


def evaluate_stage1(path):
    return {"quality": _quality(path), "note": "stage 1 ran"}


def evaluate_stage2(path):
    q = _quality(path)
    if q > 0.95:
        raise RuntimeError("stage 2 breaks on this one")
    return {"quality": q, "combined_score": q / 2 + 0.5}


def evaluate(path):
    return evaluate_stage2(path)
"""
CONFIG = """
evaluator:
  cascade_thresholds: [0.5]
"""


def _folder(root, name="oe", *, evaluator=CASCADE, config=CONFIG, quality=0.3):
    folder = root / name
    folder.mkdir(parents=True)
    (folder / "initial_program.py").write_text(PROGRAM.format(quality=quality))
    (folder / "evaluator.py").write_text(textwrap.dedent(evaluator))
    if config is not None:
        (folder / "config.yaml").write_text(config)
    return folder


def _evaluate(folder, *sources):
    (problem,) = resolve(str(folder)).problems

    async def go():
        async with OpenEvolveEvaluator(problem, workers=2) as evaluator:
            return await asyncio.gather(*(evaluator.evaluate(s) for s in sources))

    return problem, asyncio.run(go())


# --- the scores ----------------------------------------------------------------------------


def test_fitness_is_combined_score_else_the_mean_of_numbers_without_flags_or_features():
    assert fitness({"combined_score": 0.3, "a": 1.0}) == 0.3
    assert fitness({"combined_score": "0.25"}) == 0.25  # OpenEvolve converts with float()
    assert fitness({"combined_score": "n/a", "a": 1.0}) == 1.0
    assert fitness({"a": 1.0, "b": 0.5, "ok": True, "error": 0.0}) == 0.5  # error counts here
    assert fitness({"a": 1.0, "spread": 9.0}, exclude=("spread",)) == 1.0
    assert fitness({"spread": 9.0}, exclude=("spread",)) == 9.0  # only features: all of them
    assert fitness({"timeout": True, "msg": "x"}) == 0.0
    assert fitness({"a": 0.2, "fitness": 99.0}) == 0.2  # never its own input


def test_the_threshold_counts_flags_and_leaves_out_error():
    assert passes_threshold({"combined_score": 0.5}, 0.5)
    assert not passes_threshold({"combined_score": 0.49, "a": 1.0}, 0.5)
    assert passes_threshold({"a": 0.0, "ok": True}, 0.5)  # (0 + 1) / 2: a flag counts
    assert not passes_threshold({"a": 0.0, "ok": True}, 0.51)
    assert passes_threshold({"a": 0.6, "error": 0.0}, 0.6)  # error left out
    assert not passes_threshold({}, -1.0) and not passes_threshold({"msg": "x"}, -1.0)


def test_stages_merge_numbers_over_earlier_ones_without_error():
    merged = merge_stage({"a": 1, "ok": True, "error": 0.0, "msg": "x"}, {"a": 0.5, "b": 2})
    assert merged == {"a": 0.5, "ok": 1.0, "b": 2.0}


@given(st.dictionaries(st.text(max_size=16), st.floats(-10, 10), max_size=6))
def test_without_combined_score_fitness_is_the_plain_mean(metrics):
    for special in ("combined_score", "fitness", "error"):  # each has its own rule
        metrics.pop(special, None)
    mean = sum(metrics.values()) / len(metrics) if metrics else 0.0
    assert fitness(metrics) == pytest.approx(mean)
    assert passes_threshold(metrics, mean - 1e-9) == bool(metrics)


def test_nested_returns_are_read_as_metrics_and_artifacts():
    nested = {"metrics": {"combined_score": 0.0, "accuracy": 0.0}, "artifacts": {"e": "bad"}}
    assert unnest(nested, None) == ({"combined_score": 0.0, "accuracy": 0.0}, {"e": "bad"})
    beside = {"combined_score": 0.8, "artifacts": {"hint": "ok"}}
    assert unnest(beside, {"x": "y"}) == ({"combined_score": 0.8}, {"hint": "ok", "x": "y"})
    plain = {"metrics": 1.0, "other": 2.0}  # a metric that happens to be named "metrics"
    assert unnest(plain, None) == (plain, {})


# --- the cascade -----------------------------------------------------------------------------


def test_a_program_below_the_threshold_keeps_stage_ones_metrics_and_score(tmp_path):
    folder = _folder(tmp_path)
    low, high, broken = (PROGRAM.format(quality=q) for q in (0.3, 0.8, 0.99))
    problem, (below, above, failing) = _evaluate(folder, low, high, broken)
    assert [o.name for o in problem.objectives] == ["fitness"]
    # below: stage 2 never ran; stage 1's metrics, as returned, ranked by their mean
    assert below.status is Status.OK
    assert below.metrics == {"quality": 0.3, "note": "stage 1 ran", "fitness": 0.3}
    assert below.objectives == {"fitness": 0.3}
    assert "stopped after stage 1" in below.artifacts["cascade"]
    # above: stages merged (numbers only), ranked by stage 2's combined_score
    assert above.metrics == {"quality": 0.8, "combined_score": 0.9, "fitness": 0.9}
    # stage 2 raised: stage 1's metrics with stage2_passed 0.0, still ranked
    assert failing.status is Status.OK
    assert failing.metrics["stage2_passed"] == 0.0
    assert failing.objectives["fitness"] == pytest.approx((0.99 + 0.0) / 2)
    assert "stage 2 breaks on this one" in failing.artifacts["stage2_stderr"]
    assert failing.artifacts["failure_stage"] == "stage2"


def test_a_seed_below_the_first_threshold_starts_the_run_and_is_ranked(tmp_path):
    folder = _folder(tmp_path, quality=0.2)
    (problem,) = resolve(str(folder)).problems
    config = RunConfig(problem=str(problem.spec_path.parent), budget=3, workers=1)
    config = config.replace(model="offline/mutator")
    db = tmp_path / "run.db"
    asyncio.run(start_run(config, db))
    with Archive(db) as archive:
        run = archive.latest_run()
        seed = next(iter(archive.programs(run.id)))
        assert seed.status == "ok" and seed.score == pytest.approx(0.2)
        assert seed.cell is not None  # ranked in a MAP-Elites cell
        assert "stopped after stage 1" in seed.artifacts["cascade"]


def test_a_first_stage_that_raises_is_a_typed_failure(tmp_path):
    folder = _folder(tmp_path)
    _, (result,) = _evaluate(folder, "# EVOLVE-BLOCK-START\nQUALITY = 'x'\n# EVOLVE-BLOCK-END\n")
    assert result.status is Status.RUNTIME_ERROR
    assert "evaluate_stage1(program.py) raised ValueError" in result.artifacts["error"]


# --- nested returns, end to end --------------------------------------------------------------

NESTED = """
def evaluate(path):
    source = open(path).read()
    if "QUALITY = 0.3" in source:
        return {"metrics": {"combined_score": 0.0, "accuracy": 0.0},
                "artifacts": {"status": "VALIDATION_ERROR"}}
    return {"combined_score": 0.7, "correct": False, "artifacts": {"hint": "fine"}}
"""


def test_nested_metric_returns_are_scored_and_correct_is_just_a_metric(tmp_path):
    folder = _folder(tmp_path, evaluator=NESTED, config=None)
    _, (bad, good) = _evaluate(folder, PROGRAM.format(quality=0.3), PROGRAM.format(quality=1))
    assert bad.status is Status.OK and bad.objectives == {"fitness": 0.0}
    assert bad.metrics == {"combined_score": 0.0, "accuracy": 0.0, "fitness": 0.0}
    assert bad.artifacts["status"] == "VALIDATION_ERROR"
    # OpenEvolve ranks by the score alone: "correct": False does not refuse the program
    assert good.status is Status.OK, good.artifacts
    assert good.objectives == {"fitness": 0.7} and good.artifacts["hint"] == "fine"


# --- the stand-in --------------------------------------------------------------------------

RESULT_EVALUATOR = """
from openevolve.evaluation_result import EvaluationResult


def evaluate(path):
    return EvaluationResult(metrics={"combined_score": 0.4}, artifacts={"who": "stand-in"})
"""


@pytest.fixture
def checkout():
    """A folder the sandboxed evaluator can see (pytest's tmp_path is private to its user,
    so the sandbox covers it), removed afterwards."""
    path = Path(tempfile.mkdtemp(prefix="evoforge-oe-checkout-"))
    path.chmod(0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def test_a_folder_named_openevolve_in_the_working_directory_does_not_hide_the_stand_in(
    checkout, monkeypatch
):
    # an OpenEvolve checkout: its package needs dependencies that are not installed
    (checkout / "openevolve").mkdir(parents=True)
    (checkout / "openevolve" / "__init__.py").write_text("import openai_not_installed_here\n")
    (checkout / "openevolve" / "evaluation_result.py").write_text("")
    folder = _folder(checkout / "examples", evaluator=RESULT_EVALUATOR, config=None)
    monkeypatch.chdir(checkout)
    _, (result,) = _evaluate(folder, PROGRAM.format(quality=0.5))
    assert result.status is Status.OK, result.artifacts
    assert result.objectives == {"fitness": 0.4} and result.artifacts["who"] == "stand-in"


def test_the_stand_in_replaces_an_openevolve_that_fails_to_import(tmp_path, monkeypatch):
    import sys

    from evoforge.evaluators.openevolve._shim import EvaluationResult, install

    broken = tmp_path / "site"
    (broken / "openevolve").mkdir(parents=True)
    (broken / "openevolve" / "__init__.py").write_text("raise ImportError('needs openai')\n")
    monkeypatch.syspath_prepend(str(broken))
    for name in [n for n in sys.modules if n.startswith("openevolve")]:
        monkeypatch.delitem(sys.modules, name)
    try:
        assert install() is True
        from openevolve.evaluation_result import EvaluationResult as Imported

        assert Imported is EvaluationResult
    finally:
        for name in [n for n in sys.modules if n.startswith("openevolve")]:
            del sys.modules[name]
    assert os.path.isdir(broken / "openevolve")
