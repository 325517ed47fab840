"""Batches and their KernelBench metrics; run settings in layers."""

from __future__ import annotations

import math

import pytest

from evoforge.evolve import layered
from evoforge.evolve.run._batch import TaskResult, speedups_of, suite_metrics


def _task(name, correct=True, eager=None, compile_=None, timing="", ran=True):
    speedups = {k: v for k, v in (("eager", eager), ("compile", compile_)) if v is not None}
    return TaskResult(name, f"{name}-run", "finished", "", correct, speedups, timing, ran=ran)


def test_fast_p_and_the_geometric_mean_follow_kernelbench():
    results = [
        _task("a", eager=2.5, compile_=1.2),
        _task("b", eager=1.2, compile_=0.8),
        _task("c", eager=0.5, compile_=0.4),
        _task("d", correct=False),  # counts in the denominator, never as fast
    ]
    metrics = suite_metrics(results)
    assert metrics.tasks == 4 and metrics.correct == 3 and metrics.fast_0 == 0.75
    assert metrics.fast_p["eager"] == {0.0: 0.75, 1.0: 0.5, 1.5: 0.25, 2.0: 0.25}
    assert metrics.fast_p["compile"] == {0.0: 0.75, 1.0: 0.25, 1.5: 0.0, 2.0: 0.0}
    assert metrics.geomean["eager"] == pytest.approx(math.exp(math.log(2.5 * 1.2 * 0.5) / 3))
    assert metrics.untimed == ""


def test_without_timing_only_correctness_is_reported_with_the_reason():
    why = "timing unavailable: no CUDA GPU"
    metrics = suite_metrics([_task("a", timing=why), _task("b", correct=False, timing=why)])
    assert metrics.fast_0 == 0.5
    assert metrics.fast_p == {} and metrics.geomean == {}
    assert metrics.untimed == why


def test_speedups_are_read_from_every_speedup_vs_metric():
    assert speedups_of(
        {"speedup_vs_seed": 1.5, "speedup_vs_O3": 1.2, "speedup_vs_x": float("nan"), "n": 3}
    ) == {"seed": 1.5, "O3": 1.2}
    assert speedups_of({"speedup": 2.0}) == {"eager": 2.0}  # the tpu evaluator's, over eager
    assert speedups_of({"speedup": 2.0, "speedup_vs_eager": 3.0}) == {"eager": 3.0}
    assert speedups_of({"speedup_vs_seed": True, "speedup_vs_O3": 0.0}) == {}


def test_a_native_suite_is_summarised_against_its_own_baselines(capsys, tmp_path):
    from evoforge.evolve.cli._batch import _metrics, _table

    results = [
        TaskResult("pie_a", "a-run", "finished", "", True, {"seed": 2.0, "O3": 1.5}),
        TaskResult("pie_b", "b-run", "finished", "", True, {"seed": 1.0, "O3": 0.9}),
    ]
    _table(results, tmp_path / "x.db")
    _metrics(suite_metrics(results))
    out = capsys.readouterr().out
    header = out.splitlines()[0]
    assert "vs O3" in header and "vs seed" in header and "eager" not in header
    assert "2x" in out.splitlines()[1] and "1.5x" in out.splitlines()[1]
    assert "vs seed: fast_1 = 0.500" in out and "vs O3: fast_1 = 0.500" in out


def test_a_task_whose_reference_never_ran_is_not_run_and_left_out_of_every_share(capsys):
    from evoforge.evolve.cli._batch import _metrics

    results = [
        _task("a", eager=2.5),
        _task("b", correct=False),
        _task("c", correct=False, ran=False),  # its reference failed: nothing was judged
    ]
    metrics = suite_metrics(results)
    assert metrics.tasks == 2 and metrics.not_run == 1 and metrics.correct == 1
    assert metrics.fast_0 == 0.5  # 1 of the 2 that ran, not 1 of 3
    assert metrics.fast_p["eager"] == {0.0: 0.5, 1.0: 0.5, 1.5: 0.5, 2.0: 0.5}
    _metrics(metrics)
    out = capsys.readouterr().out
    assert "over the 2 tasks that ran (1 not run: the task's own reference failed" in out
    assert "correct 1/2 (fast_0 = 0.500)" in out
    nothing = suite_metrics([_task("c", correct=False, ran=False)])
    assert nothing.tasks == 0 and nothing.not_run == 1 and nothing.fast_0 == 0.0


def test_layers_merge_sections_and_a_named_model_replaces_the_ensemble():
    defaults = {
        "budget": 41,
        "models": [{"model": "openai/a"}, {"model": "openai/b"}],
        "islands": {"count": 3, "migration_interval": 10},
    }
    file = {"islands": {"count": 2}, "seed": 5}
    flags = {"model": "offline/mutator", "budget": 6}
    merged = layered(defaults, file, flags)
    assert merged == {
        "budget": 6,
        "model": "offline/mutator",
        "islands": {"count": 2, "migration_interval": 10},
        "seed": 5,
    }
    assert layered(defaults, {})["models"] == defaults["models"]
