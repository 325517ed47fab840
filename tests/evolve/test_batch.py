"""Batches and their KernelBench metrics; run settings in layers."""

from __future__ import annotations

import math

import pytest

from evoforge.evolve import layered
from evoforge.evolve._batch import TaskResult, suite_metrics


def _task(name, correct=True, eager=None, compile_=None, timing=""):
    speedups = {k: v for k, v in (("eager", eager), ("compile", compile_)) if v is not None}
    return TaskResult(name, f"{name}-run", "finished", "", correct, speedups, timing)


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
